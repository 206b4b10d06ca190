/**
 * The domain of ParaAgent: ids, JSON schemas, tools, calls, plans, turns, tasks, trajectories, errors.
 */
export * from "./Call.ts"
export * from "./Errors.ts"
export * from "./Ids.ts"
export * from "./Json.ts"
export * from "./Plan.ts"
export * from "./Task.ts"
export * from "./Tool.ts"
export * from "./Trajectory.ts"
export * from "./Turn.ts"
