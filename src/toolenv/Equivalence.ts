/**
 * Equivalent providers **[ours]**: two tools that do the same operation on the same entity type (a search for
 * teams by name at two providers, two daily series of one metric), so a task's gold call could be served by either.
 * Read from the generated world's operations; a library without them knows only the exact tool.
 */
import type { Op } from "./world/Ops.ts"

/**
 * The operation signature of a generated endpoint: its kind, the type of what it returns, and what distinguishes
 * operations of one kind on one type (the series' metric, the relation of children, the action or utility).
 */
export const operationKey = (op: Op): string =>
  [op.kind, op.type, op.metric ?? "", op.relation?.name ?? "", op.action ?? "", op.utility ?? ""].join("|")

/** Whether `tool` can stand in for the gold tool: the same tool, or (given the operations) the same operation signature. */
export type Equivalent = (gold: string, tool: string) => boolean

/** The exact tool only. */
export const exact: Equivalent = (gold, tool) => gold === tool

/** Equivalence over a world's operations (by callable name); a tool without one is equivalent only to itself. */
export const fromOperations = (ops: ReadonlyMap<string, Op>): Equivalent => {
  const keys = new Map<string, string>()
  const keyOf = (name: string): string | undefined => {
    const known = keys.get(name)
    if (known !== undefined) return known
    const op = ops.get(name)
    if (op === undefined) return undefined
    const key = operationKey(op)
    keys.set(name, key)
    return key
  }
  return (gold, tool) => {
    if (gold === tool) return true
    const a = keyOf(gold)
    return a !== undefined && a === keyOf(tool)
  }
}
