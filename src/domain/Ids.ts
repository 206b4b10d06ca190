/**
 * Branded identifiers shared by every ParaAgent module.
 * A brand keeps a tool name from being passed where a call id is expected.
 */
import { Schema } from "effect"

/** The callable name of a tool interface, unique within one library (what a model writes in `<call>`). */
export const ToolName = Schema.NonEmptyString.pipe(Schema.brand("ToolName"))
/** The callable name of a tool interface. */
export type ToolName = typeof ToolName.Type

/** A stable identifier of a tool interface across library rebuilds (e.g. `toolbench:Data/random_word_api/get_word`). */
export const ToolId = Schema.NonEmptyString.pipe(Schema.brand("ToolId"))
/** A stable identifier of a tool interface. */
export type ToolId = typeof ToolId.Type

/** The id a turn gives one of its calls (`c1`); plan nodes and `$ref`s use the same namespace. */
export const CallId = Schema.NonEmptyString.pipe(Schema.brand("CallId"))
/** The id of a call within one trajectory. */
export type CallId = typeof CallId.Type

/** The id of a task. */
export const TaskId = Schema.NonEmptyString.pipe(Schema.brand("TaskId"))
/** The id of a task. */
export type TaskId = typeof TaskId.Type

/** The id of one rollout of a task. */
export const TrajectoryId = Schema.NonEmptyString.pipe(Schema.brand("TrajectoryId"))
/** The id of one rollout of a task. */
export type TrajectoryId = typeof TrajectoryId.Type

/** Brands a plain string as a ToolName without a check (for values already validated by a library). */
export const toolName = (s: string): ToolName => s as ToolName
/** Brands a plain string as a CallId without a check (for ids already validated by the protocol parser). */
export const callId = (s: string): CallId => s as CallId
/** Brands a plain string as a TaskId without a check. */
export const taskId = (s: string): TaskId => s as TaskId
/** Brands a plain string as a ToolId without a check. */
export const toolId = (s: string): ToolId => s as ToolId
/** Brands a plain string as a TrajectoryId without a check. */
export const trajectoryId = (s: string): TrajectoryId => s as TrajectoryId
