/**
 * Equivalent providers **[ours]**: two tools that do the same operation on the same entity type (a search for teams
 * by name at two providers, two daily series of one metric), so a task's gold call could be served by either. The
 * generated world's rule is `StudentOracle.worldEquivalence` (one definition for the ceiling, DAgger's labels, Path≈
 * and the reward's coverage; `Scoring.equivalence` adapts it to tool names); a library without operations knows
 * only the exact tool.
 */

/** Whether `tool` can stand in for the gold tool. */
export type Equivalent = (gold: string, tool: string) => boolean

/** The exact tool only. */
export const exact: Equivalent = (gold, tool) => gold === tool
