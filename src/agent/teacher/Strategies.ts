/**
 * The orchestrator's per-paradigm strategies: which actions a round may take (search the missing slots, run the
 * ready nodes), in order of preference, read off the board. One strategy per paradigm, named as such. A slot goes
 * back to exploration when an observation shows the tool called for it cannot serve it.
 */
import type { PlanNode } from "../../domain/Plan.ts"
import type { Paradigm } from "../../domain/Trajectory.ts"
import { type Board, type BoundNode, type EmittedPlan, shownUnfit, slotOf } from "./Board.ts"
import type { TeacherOptions } from "./Options.ts"

const isBound = (node: PlanNode): node is BoundNode => node.tool !== undefined

/** Whether a node's tool is known and was retrieved on the path. */
const isFound = (board: Board, node: PlanNode): node is BoundNode => isBound(node) && board.seen.has(node.tool)

/** The plan nodes whose deps are done and whose tool was seen, not done, with attempts left. */
export const readyNodes = (board: Board, options: TeacherOptions): Array<BoundNode> =>
  board.nodes.filter((n): n is BoundNode =>
    !board.done.has(n.id) &&
    isFound(board, n) &&
    (board.attempts.get(n.id) ?? 0) < options.callAttempts &&
    n.deps.every((d) => board.done.has(d))
  )

/** The node that names `node`'s search slot, when that slot has search attempts left. */
const searchableSlot = (board: Board, node: PlanNode, options: TeacherOptions): PlanNode | undefined => {
  const slot = slotOf(board.nodes, node)
  return (board.searched.get(slot) ?? 0) < options.searchAttempts ? (board.nodes.find((o) => o.id === slot) ?? node) : undefined
}

/**
 * Whether a node must be searched for again: a tool called for it answered with an error or an output without a
 * value the node must provide (an observation in the history), and its slot was not searched since.
 */
export const needsResearch = (board: Board, node: PlanNode, options: TeacherOptions): boolean => {
  const misfire = board.misfires.get(node.id)
  return misfire !== undefined && shownUnfit(misfire, options.callAttempts) && !board.done.has(node.id) &&
    (board.searchedAt.get(slotOf(board.nodes, node)) ?? -1) < misfire.index
}

/**
 * One node per slot of the not-done nodes whose tool was not found yet, or whose observation showed the tool
 * called for it cannot serve it ({@link needsResearch}), and that may still be searched for.
 */
export const slotsToFind = (board: Board, options: TeacherOptions): Array<PlanNode> => {
  const out: Array<PlanNode> = []
  for (const n of board.nodes) {
    if (board.done.has(n.id) || (isFound(board, n) && !needsResearch(board, n, options))) continue
    const slot = searchableSlot(board, n, options)
    if (slot !== undefined && !out.some((o) => o.id === slot.id)) out.push(slot)
  }
  return out
}

/**
 * Whether a plan the roles emitted needs revising: tools were found since it was written while a node whose slot
 * was already searched still lacks a found tool (the planner may bind one of them), or a node ran out of attempts
 * after it was written. A slot not searched yet triggers nothing: its own search comes first.
 */
export const needsRevision = (board: Board, emitted: EmittedPlan, options: TeacherOptions): boolean => {
  const open = board.nodes.filter((n) => !board.done.has(n.id))
  const newTools = [...board.seen].some((t) => !emitted.seenBefore.has(t))
  const searchedInVain = (n: PlanNode) => !isFound(board, n) && (board.searched.get(slotOf(board.nodes, n)) ?? 0) > 0
  if (newTools && open.some(searchedInVain)) return true
  return open.some((n) => (board.attempts.get(n.id) ?? 0) >= options.callAttempts && (board.lastTried.get(n.id) ?? -1) > emitted.index)
}

/** What a round may do, before the roles are consulted. */
export type Action =
  | { readonly _tag: "Search"; readonly slots: ReadonlyArray<PlanNode>; readonly think: string }
  | { readonly _tag: "Execute"; readonly nodes: ReadonlyArray<BoundNode>; readonly think: string }

/** A strategy: the round's actions in order of preference (the first that yields an action is taken). */
export type Strategy = (board: Board, options: TeacherOptions) => ReadonlyArray<Action>

/** The round's reason to search: the slots whose last call showed a wrong tool are named with what it showed. */
const searchThink = (board: Board, options: TeacherOptions, slots: ReadonlyArray<PlanNode>, fallback: string): string => {
  const wrong = board.nodes.filter((n) => needsResearch(board, n, options) && slots.some((s) => s.id === slotOf(board.nodes, n)))
  if (wrong.length === 0) return fallback
  const shown = wrong.map((n) => {
    const m = board.misfires.get(n.id)
    return m === undefined ? n.id : `${m.tool} answered ${n.id} with ${m.problem}`
  })
  return `${shown.join("; ")}: not the tool for it, so searching again${slots.length > wrong.length ? ", with the slots still missing" : ""}.`
}

/**
 * ParaAct: search every missing slot at once; then alternate: run every ready node at once while slots whose first
 * search found no tool for them wait, and search those again (with any slot whose call showed a wrong tool) in the
 * round after — Exploration ⇌ Execution. A search round follows a search round only when nothing is ready.
 */
export const parallelStrategy: Strategy = (board, options) => {
  const find = slotsToFind(board, options)
  const ready = readyNodes(board, options)
  const out: Array<Action> = []
  if (find.length > 0 && (ready.length === 0 || board.lastStep !== "explore")) {
    const first = board.lastStep === undefined
    out.push({ _tag: "Search", slots: find, think: searchThink(board, options, find, first ? `Looking for ${find.length} tool(s).` : "Searching again for what is still missing.") })
  }
  if (ready.length > 0) {
    const waiting = find.length > 0 ? ` while ${find.length} slot(s) still lack a tool` : ""
    out.push({ _tag: "Execute", nodes: ready, think: `Running ${ready.length} independent call(s)${waiting}.` })
  }
  if (find.length > 0) out.push({ _tag: "Search", slots: find, think: searchThink(board, options, find, "Searching again for what is still missing.") })
  return out
}

/** Explore-then-Execute: search every missing slot until the first call, then one ready node per round. */
export const exploreThenExecuteStrategy: Strategy = (board, options) => {
  const find = slotsToFind(board, options)
  const ready = readyNodes(board, options)
  const out: Array<Action> = []
  if (!board.executed && find.length > 0) out.push({ _tag: "Search", slots: find, think: "Exploring before executing." })
  for (const next of ready) out.push({ _tag: "Execute", nodes: [next], think: `Executing ${next.id}.` })
  return out
}

/** ReAct and DFSDT: one action a round, decided by the first node in plan order that is not done and whose deps are. */
export const oneActionStrategy: Strategy = (board, options) => {
  const out: Array<Action> = []
  for (const n of board.nodes) {
    if (board.done.has(n.id)) continue
    if (!n.deps.every((d) => board.done.has(d))) continue
    if (!isFound(board, n) || needsResearch(board, n, options)) {
      const slot = searchableSlot(board, n, options)
      if (slot !== undefined) out.push({ _tag: "Search", slots: [slot], think: searchThink(board, options, [slot], `Looking for a tool for ${n.id}.`) })
      if (!isFound(board, n) || slot !== undefined) continue
    }
    if ((board.attempts.get(n.id) ?? 0) >= options.callAttempts) continue
    out.push({ _tag: "Execute", nodes: [n], think: `Calling ${n.tool}.` })
  }
  return out
}

/** The strategy of each paradigm. */
export const strategies: { readonly [P in Paradigm]: Strategy } = {
  ParaAct: parallelStrategy,
  ExploreThenExecute: exploreThenExecuteStrategy,
  ReAct: oneActionStrategy,
  DFSDT: oneActionStrategy
}

/** The round's actions under a paradigm's strategy; with none left the answerer speaks. */
export const decide = (board: Board, paradigm: Paradigm, options: TeacherOptions): ReadonlyArray<Action> =>
  strategies[paradigm](board, options)
