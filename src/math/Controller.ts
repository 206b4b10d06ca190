/**
 * The ParaAct controller (spec Table 8): the state Need / May / No / Answer before each step, decided from the
 * history alone, and the plan score r_plan a step earns in that state. Pure; see docs/reward.md for the rules.
 */
import type { CallId } from "../domain/Ids.ts"
import type { Plan } from "../domain/Plan.ts"
import type { ControllerState, Step } from "../domain/Trajectory.ts"
import { callKey, canonicalJson } from "./CanonicalJson.ts"
import * as PlanMath from "./PlanDag.ts"

/**
 * How a step's `<plan>` stands against the history, checked in this order:
 * `none` no plan; `invalid` fails {@link PlanMath.validate} (or the runtime's `planError`); `stale` valid but
 * every node is already completed (it plans nothing); `repeated` equal to a valid plan emitted earlier
 * (up to node order, see {@link PlanMath.planKey}); `new` any other valid plan.
 */
export type PlanStatus = "none" | "invalid" | "stale" | "repeated" | "new"

/** All controller states. */
export const states: ReadonlyArray<ControllerState> = ["Need", "May", "No", "Answer"]

/** Why the controller chose its state. */
export type Reason =
  | "final_round"
  | "no_plan"
  | "plan_exhausted"
  | "new_observation"
  | "recoverable_failure"
  | "no_new_information"

/** The controller's state before a step, and why. */
export interface Decision {
  readonly state: ControllerState
  readonly reason: Reason
}

/** What one step revealed that had not been seen before in the trajectory. */
export interface News {
  /** Successful calls whose (tool, arguments, payload) had not been observed before. */
  readonly results: number
  /** Tools returned by the step's searches that had been neither retrieved nor called before. */
  readonly tools: number
  /** Failed calls whose (tool, arguments, error kind) had not been observed before. */
  readonly failures: number
}

/** A call that succeeded: its id, tool and the position of its step in the trajectory. */
export interface Success {
  readonly id: CallId
  readonly tool: string
  readonly step: number
}

/** The plan the controller follows: the latest valid plan, and the step that emitted it. */
export interface ActivePlan {
  readonly plan: Plan
  readonly dag: PlanMath.Dag
  readonly emittedAt: number
}

/** Everything the controller remembers of a history (an immutable fold over its steps). */
export interface Memory {
  /** How many steps were folded in. */
  readonly steps: number
  readonly active: ActivePlan | undefined
  /** {@link PlanMath.planKey} of every valid plan emitted so far. */
  readonly plans: ReadonlySet<string>
  readonly successes: ReadonlyArray<Success>
  /** Tools retrieved by a search or named in a call so far. */
  readonly seenTools: ReadonlySet<string>
  readonly seenResults: ReadonlySet<string>
  readonly seenFailures: ReadonlySet<string>
  /** What the last folded step revealed; undefined before the first step. */
  readonly lastNews: News | undefined
}

/** Options of {@link decide}: the runtime sets `finalRound` on the last round it allows (T_max). */
export interface DecideOptions {
  readonly finalRound?: boolean
}

/** r_plan by controller state and plan status (spec Table 8 as a full table; values live in the reward config). */
export type PlanCredit = { readonly [S in ControllerState]: { readonly [P in PlanStatus]: number } }

/** The memory of an empty history. */
export const initial: Memory = {
  steps: 0,
  active: undefined,
  plans: new Set(),
  successes: [],
  seenTools: new Set(),
  seenResults: new Set(),
  seenFailures: new Set(),
  lastNews: undefined
}

/** A step's plan checked: absent, invalid (our validator, or the runtime's recorded `planError`), or a DAG. */
const checkPlan = (step: Step): "none" | "invalid" | { readonly plan: Plan; readonly dag: PlanMath.Dag } => {
  const plan = step.turn?.plan
  if (plan === undefined) return "none"
  const result = PlanMath.validate(plan)
  if (result._tag === "Invalid" || step.validation.planError !== undefined) return "invalid"
  return { plan, dag: result.dag }
}

/**
 * The nodes of the active plan that are completed. A node is completed by a successful call with its id
 * (and its tool, when the node names one), made at any time; failing that, by a successful call of the node's
 * tool made at or after the plan's step whose id names no node of the plan (each such call completes one node,
 * the first open one in plan order).
 */
export const completedNodes = (active: ActivePlan, successes: ReadonlyArray<Success>): ReadonlySet<CallId> => {
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

/** Classifies the plan a step emits, against the memory of the steps before it. */
export const classifyPlan = (memory: Memory, step: Step): PlanStatus => {
  const checked = checkPlan(step)
  if (checked === "none" || checked === "invalid") return checked
  const candidate: ActivePlan = { ...checked, emittedAt: memory.steps }
  if (PlanMath.isExhausted(checked.dag, completedNodes(candidate, memory.successes))) return "stale"
  if (memory.plans.has(PlanMath.planKey(checked.plan))) return "repeated"
  return "new"
}

/** Folds one more step into the memory. */
export const advance = (memory: Memory, step: Step): Memory => {
  const position = memory.steps
  const checked = checkPlan(step)
  let active = memory.active
  let plans = memory.plans
  if (typeof checked !== "string") {
    active = { ...checked, emittedAt: position }
    plans = new Set(plans).add(PlanMath.planKey(checked.plan))
  }

  const seenTools = new Set(memory.seenTools)
  let tools = 0
  for (const search of step.searches) {
    for (const hit of search.hits) {
      if (seenTools.has(hit.tool)) continue
      seenTools.add(hit.tool)
      tools++
    }
  }

  const seenResults = new Set(memory.seenResults)
  const seenFailures = new Set(memory.seenFailures)
  const successes = [...memory.successes]
  let results = 0
  let failures = 0
  for (const obs of step.observations) {
    const key = callKey(obs.tool, obs.arguments)
    if (obs.outcome._tag === "ok") {
      const result = `${key}=${canonicalJson(obs.outcome.payload)}`
      if (!seenResults.has(result)) {
        seenResults.add(result)
        results++
      }
      successes.push({ id: obs.callId, tool: obs.tool, step: position })
    } else {
      const failure = `${key}!${obs.outcome.error.kind}`
      if (!seenFailures.has(failure)) {
        seenFailures.add(failure)
        failures++
      }
    }
    seenTools.add(obs.tool)
  }
  for (const call of step.turn?.calls ?? []) seenTools.add(call.tool)

  return {
    steps: position + 1,
    active,
    plans,
    successes,
    seenTools,
    seenResults,
    seenFailures,
    lastNews: { results, tools, failures }
  }
}

/** The memory of a whole history. */
export const remember = (history: ReadonlyArray<Step>): Memory => history.reduce(advance, initial)

/**
 * The state before the next step. Precedence, first match wins: Answer (final round) > Need (no valid plan
 * yet, or the active plan's DAG is exhausted) > May (the previous step revealed a new result or tool, or a new
 * failure the agent can act on) > No (nothing new: a malformed turn, only repeats, a plan-only step).
 */
export const decide = (memory: Memory, options?: DecideOptions): Decision => {
  if (options?.finalRound === true) return { state: "Answer", reason: "final_round" }
  if (memory.active === undefined) return { state: "Need", reason: "no_plan" }
  if (PlanMath.isExhausted(memory.active.dag, completedNodes(memory.active, memory.successes))) {
    return { state: "Need", reason: "plan_exhausted" }
  }
  const news = memory.lastNews
  if (news !== undefined && news.results + news.tools > 0) return { state: "May", reason: "new_observation" }
  if (news !== undefined && news.failures > 0) return { state: "May", reason: "recoverable_failure" }
  return { state: "No", reason: "no_new_information" }
}

/** The state before the step that follows `history` (what the runtime records and shows the policy). */
export const stateBefore = (history: ReadonlyArray<Step>, options?: DecideOptions): Decision =>
  decide(remember(history), options)

/** The state a step is scored under: Answer when its turn answers (it is the final-answer step), else the decided one. */
export const scoredState = (decided: ControllerState, answered: boolean): ControllerState =>
  answered ? "Answer" : decided

/** r_plan of a step: the credit table's cell for its state and plan status. */
export const rPlan = (credit: PlanCredit, state: ControllerState, status: PlanStatus): number => credit[state][status]
