/**
 * The ParaAct controller (spec Table 8): the state Need / May / No / Answer before each step, decided from the
 * history alone, and the plan score r_plan a step earns in that state. Pure; see docs/reward.md for the rules.
 */
import type { ControllerState, Step } from "../domain/Trajectory.ts"
import { callKey, canonicalJson } from "./CanonicalJson.ts"
import * as History from "./History.ts"
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

/** A call that succeeded (the history's record of it). */
export type Success = History.Success

/** The plan the controller follows: the history's latest valid plan. */
export type ActivePlan = History.LatestPlan

/**
 * Everything the controller remembers of a history: the {@link History.History} fold, plus what each step revealed
 * that was new (results, tools, failures), which decides May against No.
 */
export interface Memory extends History.History {
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
  ...History.empty,
  seenResults: new Set(),
  seenFailures: new Set(),
  lastNews: undefined
}

/** The nodes of the active plan that are completed (see {@link History.completedNodes}). */
export const completedNodes = History.completedNodes

/** Classifies the plan a step emits, against the memory of the steps before it. */
export const classifyPlan = (memory: Memory, step: Step): PlanStatus => {
  const checked = History.validPlanOf(step)
  if (checked === "none" || checked === "invalid") return checked
  if (PlanMath.isExhausted(checked.dag, completedNodes({ plan: checked.plan, emittedAt: memory.steps }, memory.successes))) return "stale"
  if (memory.planKeys.has(PlanMath.planKey(checked.plan))) return "repeated"
  return "new"
}

/** Folds one more step into the memory: the history fold, and the news the step brought. */
export const advance = (memory: Memory, step: Step): Memory => {
  let tools = 0
  const retrievedNow = new Set<string>()
  for (const search of step.searches) {
    for (const hit of search.hits) {
      if (memory.known.has(hit.tool) || retrievedNow.has(hit.tool)) continue
      retrievedNow.add(hit.tool)
      tools++
    }
  }
  const seenResults = new Set(memory.seenResults)
  const seenFailures = new Set(memory.seenFailures)
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
    } else {
      const failure = `${key}!${obs.outcome.error.kind}`
      if (!seenFailures.has(failure)) {
        seenFailures.add(failure)
        failures++
      }
    }
  }
  return { ...History.advance(memory, step), seenResults, seenFailures, lastNews: { results, tools, failures } }
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
  const active = memory.latestPlan
  if (active === undefined) return { state: "Need", reason: "no_plan" }
  if (PlanMath.isExhausted(active.dag, completedNodes(active, memory.successes))) {
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
