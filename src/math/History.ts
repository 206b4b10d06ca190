/**
 * The agent's history as one pure fold: which tools it has retrieved and called, the call ids it used, the outputs
 * its calls returned, the latest valid plan, and — for DFSDT — the path from the root to a node of the search tree.
 * The runtime, the controller, the reward's facts and the policies all read the history through this module.
 */
import type { CallId } from "../domain/Ids.ts"
import type { Json } from "../domain/Json.ts"
import type { Plan } from "../domain/Plan.ts"
import type { Step } from "../domain/Trajectory.ts"
import * as PlanDag from "./PlanDag.ts"

/** A call that succeeded: its id, tool and the position of its step in the history. */
export interface Success {
  readonly id: CallId
  readonly tool: string
  readonly step: number
}

/** The latest valid plan of a history: the plan, its DAG, the position of the step that emitted it. */
export interface LatestPlan {
  readonly plan: Plan
  readonly dag: PlanDag.Dag
  readonly emittedAt: number
  /** The tools retrieved before the emitting step (what the plan could know of). */
  readonly retrievedBefore: ReadonlySet<string>
}

/** What a history holds, folded step by step (immutable: {@link advance} returns a new record). */
export interface History {
  /** How many steps were folded in. */
  readonly steps: number
  /** Tools returned by a search so far: what the agent may call. */
  readonly retrieved: ReadonlySet<string>
  /** Tools retrieved or named in a call so far: what is no longer news to the controller. */
  readonly known: ReadonlySet<string>
  /** The call ids the turns used, in order (a turn's new ids must avoid them). */
  readonly callIds: ReadonlyArray<CallId>
  /** The payload of every successful call, by call id (what `$ref`s resolve against). */
  readonly outputs: ReadonlyMap<string, Json>
  /** Every successful call, in order. */
  readonly successes: ReadonlyArray<Success>
  /** The latest valid plan, if any. */
  readonly latestPlan: LatestPlan | undefined
  /** {@link PlanDag.planKey} of every valid plan emitted so far. */
  readonly planKeys: ReadonlySet<string>
}

/** The history of no steps. */
export const empty: History = {
  steps: 0,
  retrieved: new Set(),
  known: new Set(),
  callIds: [],
  outputs: new Map(),
  successes: [],
  latestPlan: undefined,
  planKeys: new Set()
}

/** A step's plan when it is valid: our validator accepts it and the runtime recorded no `planError`. */
export const validPlanOf = (step: Step): { readonly plan: Plan; readonly dag: PlanDag.Dag } | "none" | "invalid" => {
  const plan = step.turn?.plan
  if (plan === undefined) return "none"
  const result = PlanDag.validate(plan)
  if (result._tag === "Invalid" || step.validation.planError !== undefined) return "invalid"
  return { plan, dag: result.dag }
}

/** Folds one more step into the history. */
export const advance = (history: History, step: Step): History => {
  const position = history.steps
  const checked = validPlanOf(step)
  let latestPlan = history.latestPlan
  let planKeys = history.planKeys
  if (typeof checked !== "string") {
    latestPlan = { ...checked, emittedAt: position, retrievedBefore: history.retrieved }
    planKeys = new Set(planKeys).add(PlanDag.planKey(checked.plan))
  }
  const retrieved = new Set(history.retrieved)
  const known = new Set(history.known)
  for (const search of step.searches) {
    for (const hit of search.hits) {
      retrieved.add(hit.tool)
      known.add(hit.tool)
    }
  }
  let outputs = history.outputs
  let successes = history.successes
  for (const obs of step.observations) {
    if (obs.outcome._tag === "ok") {
      if (outputs === history.outputs) outputs = new Map(outputs)
      ;(outputs as Map<string, Json>).set(obs.callId, obs.outcome.payload)
      successes = [...successes, { id: obs.callId, tool: obs.tool, step: position }]
    }
    known.add(obs.tool)
  }
  const calls = step.turn?.calls ?? []
  for (const call of calls) known.add(call.tool)
  return {
    steps: position + 1,
    retrieved,
    known,
    callIds: calls.length === 0 ? history.callIds : [...history.callIds, ...calls.map((c) => c.id)],
    outputs,
    successes,
    latestPlan,
    planKeys
  }
}

/** The history of a list of steps. */
export const of = (steps: ReadonlyArray<Step>): History => steps.reduce(advance, empty)

/** The tools the agent has retrieved on a list of steps (every tool a search returned). */
export const retrievedTools = (steps: ReadonlyArray<Step>): ReadonlySet<string> => {
  const seen = new Set<string>()
  for (const step of steps) for (const s of step.searches) for (const h of s.hits) seen.add(h.tool)
  return seen
}

/**
 * The call ids used on a list of steps, in order. Ids are unique along the agent's path (DFSDT forgets abandoned
 * branches, so their ids may come back on another branch).
 */
export const callIds = (steps: ReadonlyArray<Step>): ReadonlyArray<CallId> => steps.flatMap((s) => s.turn?.calls.map((c) => c.id) ?? [])

/**
 * The nodes of a plan that are completed. A node is completed by a successful call with its id (and its tool, when
 * the node names one), made at any time; failing that, by a successful call of the node's tool made at or after
 * the plan's step whose id names no node of the plan (each such call completes one node, the first open one in
 * plan order).
 */
export const completedNodes = (active: Pick<LatestPlan, "plan" | "emittedAt">, successes: ReadonlyArray<Success>): ReadonlySet<CallId> => {
  const done = new Set<CallId>()
  const nodeIds = new Set<string>(active.plan.nodes.map((n) => n.id))
  for (const node of active.plan.nodes) {
    if (successes.some((s) => s.id === node.id && (node.tool === undefined || s.tool === node.tool))) done.add(node.id)
  }
  for (const s of successes) {
    if (s.step < active.emittedAt || nodeIds.has(s.id)) continue
    const node = active.plan.nodes.find((n) => !done.has(n.id) && n.tool === s.tool)
    if (node !== undefined) done.add(node.id)
  }
  return done
}

/**
 * DFSDT: the path from the root of the search tree to the step at `last` (inclusive), following each step's
 * `parent` link; `undefined` is the root (an empty path). The runtime shows the policy exactly this path.
 */
export const pathTo = (steps: ReadonlyArray<Step>, last: number | undefined): ReadonlyArray<Step> => {
  const path: Array<Step> = []
  let at = last
  while (at !== undefined) {
    const step = steps[at]
    if (step === undefined) break
    path.push(step)
    at = step.parent
  }
  return path.reverse()
}
