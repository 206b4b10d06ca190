/**
 * The four agent paradigms as runtime rules: which of a turn's actions a round may run.
 * The same policy can then be compared under ReAct, Explore-then-Execute, DFSDT and ParaAct.
 */
import type { Paradigm } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"

/** What a paradigm allows in one round. */
export interface Rules {
  /** At most this many actions (searches + calls) run per round; `undefined` = no limit. */
  readonly maxActions: number | undefined
  /** At most this many calls run per round once execution began; `undefined` = no limit. */
  readonly maxCalls: number | undefined
  /** Whether searches may run after the first call was executed (false = "no way back", P1). */
  readonly reExplore: boolean
  /** Whether a dead end (a malformed turn, or a round whose every action failed) backtracks to the parent node. */
  readonly backtrack: boolean
  /** DFSDT: how many children a node may expand before the search moves on regardless. */
  readonly branching: number
  /** One line for prompts and reports. */
  readonly summary: string
}

/** The rules of each paradigm. */
export const rules: Readonly<Record<Paradigm, Rules>> = {
  ParaAct: {
    maxActions: undefined,
    maxCalls: undefined,
    reExplore: true,
    backtrack: false,
    branching: 1,
    summary: "phases alternate freely; all searches or calls of a round run in parallel"
  },
  ReAct: {
    maxActions: 1,
    maxCalls: 1,
    reExplore: true,
    backtrack: false,
    branching: 1,
    summary: "one action (a search or a call) per round, exploration and execution interleaved"
  },
  ExploreThenExecute: {
    maxActions: undefined,
    maxCalls: 1,
    reExplore: false,
    backtrack: false,
    branching: 1,
    summary: "explore first (searches may be batched), then execute one call per round; no exploring after the first call"
  },
  DFSDT: {
    maxActions: 1,
    maxCalls: 1,
    reExplore: true,
    backtrack: true,
    branching: 2,
    summary: "one action per round; a dead end backtracks to its parent and expands a sibling (depth-first tree search)"
  }
}

/** A turn cut down to what the paradigm lets run, and the labels of what was dropped. */
export interface Enforced {
  readonly turn: Turn
  readonly dropped: ReadonlyArray<string>
}

/**
 * Keeps the actions of `turn` that `paradigm` allows this round. Searches come before calls (the order of the
 * protocol), so under a one-action limit the first search wins over any call. `executed` says whether an earlier
 * round already ran a call. Dropped actions are labelled `search:<slot>` / `call:<id>`.
 */
export const enforce = (paradigm: Paradigm, turn: Turn, executed: boolean): Enforced => {
  const rule = rules[paradigm]
  const dropped: Array<string> = []
  let searches = turn.searches
  if (!rule.reExplore && executed && searches.length > 0) {
    for (const s of searches) dropped.push(`search:${s.slot}`)
    searches = []
  }
  let calls = turn.calls
  if (rule.maxCalls !== undefined && calls.length > rule.maxCalls) {
    for (const c of calls.slice(rule.maxCalls)) dropped.push(`call:${c.id}`)
    calls = calls.slice(0, rule.maxCalls)
  }
  if (rule.maxActions !== undefined && searches.length + calls.length > rule.maxActions) {
    const keepSearches = Math.min(searches.length, rule.maxActions)
    const keepCalls = Math.min(calls.length, rule.maxActions - keepSearches)
    for (const s of searches.slice(keepSearches)) dropped.push(`search:${s.slot}`)
    for (const c of calls.slice(keepCalls)) dropped.push(`call:${c.id}`)
    searches = searches.slice(0, keepSearches)
    calls = calls.slice(0, keepCalls)
  }
  if (dropped.length === 0) return { turn, dropped }
  return { turn: { ...turn, searches, calls }, dropped }
}
