/**
 * Credit assignment beyond the paper's tables **[ours]**: a coverage term (how much of the task's gold work an
 * action, a step or a phase newly did), an answer-step reward from the judge's fact counts, and the rewards a trainer
 * can attribute to single actions (each call, each search, the plan bit). Pure: no Effect, no I/O.
 */
import type { Step } from "../domain/Trajectory.ts"
import type { CreditConfig, PooledReward, RewardConfig, TrajectoryScore } from "./Reward.ts"

export type { CreditConfig } from "./Reward.ts"

/**
 * The coefficients that change nothing: the paper's reward (no coverage, no answer-step term; an early answer's kind
 * reward left to R_ans — the kind rewards only reach the `…_stop` estimator).
 */
export const paperCredit: CreditConfig = { phaseCoverage: 0, stepCoverage: 0, actionCoverage: 0, answerStep: 0, earlyAnswer: 1 }

/**
 * What the task needs done, as the reward sees it: one need per gold call (its tool), and which tools can stand in
 * for a gold tool — the same tool, or an equivalent provider (same operation on the same entity type, when the
 * environment knows its tools' operations).
 */
export interface GoldNeeds {
  readonly tools: ReadonlyArray<string>
  readonly equivalent: (gold: string, tool: string) => boolean
}

/** Only the exact gold tool satisfies a need. */
export const exactOnly = (gold: string, tool: string): boolean => gold === tool

/** What one step newly did for the needs: per call and per search of its turn (turn order), and the counts. */
export interface StepProgress {
  /** The call newly satisfied a need (a successful call of a gold tool or an equivalent, for a need not yet satisfied). */
  readonly calls: ReadonlyArray<boolean>
  /** The search's hits newly contain a tool for a need no earlier search found. */
  readonly searches: ReadonlyArray<boolean>
  /** Needs newly satisfied by the step's calls, and newly found by its searches. */
  readonly covered: number
  readonly found: number
}

/** The coverage of a trajectory: per step, and the number of needs. */
export interface Progress {
  readonly needs: number
  readonly steps: ReadonlyArray<StepProgress>
}

/** The step fields coverage reads. */
export type ProgressStep = Pick<Step, "turn" | "searches" | "observations">

/**
 * Which needs each action newly served, walking the steps in order: a successful call satisfies the first open need
 * its tool can stand in for (one need per call, so two gold calls of one tool need two calls); a search finds every
 * need, not found before, that one of its hits can stand in for. A call is matched to its observation by id, a
 * search to its result by slot and query in order; an action without one (dropped, refused) served nothing.
 */
export const progressOf = (steps: ReadonlyArray<ProgressStep>, needs: GoldNeeds): Progress => {
  const satisfied = needs.tools.map(() => false)
  const found = needs.tools.map(() => false)
  const openNeed = (tool: string, done: Array<boolean>): number => needs.tools.findIndex((g, k) => !done[k] && needs.equivalent(g, tool))
  const out = steps.map((step): StepProgress => {
    const turn = step.turn
    if (turn === undefined) return { calls: [], searches: [], covered: 0, found: 0 }
    let covered = 0
    let newlyFound = 0
    const calls = turn.calls.map((call) => {
      const observation = step.observations.find((o) => o.callId === call.id)
      if (observation === undefined || observation.outcome._tag !== "ok") return false
      const k = openNeed(observation.tool, satisfied)
      if (k < 0) return false
      satisfied[k] = true
      covered++
      return true
    })
    const used = new Set<number>()
    const searches = turn.searches.map((search) => {
      const at = step.searches.findIndex((r, i) => !used.has(i) && r.slot === search.slot && r.query === search.query)
      if (at < 0) return false
      used.add(at)
      let any = false
      for (const hit of (step.searches[at] as Step["searches"][number]).hits) {
        needs.tools.forEach((g, k) => {
          if (!found[k] && needs.equivalent(g, hit.tool)) {
            found[k] = true
            newlyFound++
            any = true
          }
        })
      }
      return any
    })
    return { calls, searches, covered, found: newlyFound }
  })
  return { needs: needs.tools.length, steps: out }
}

/** A step's coverage: the share of all needs its calls newly satisfied plus those its searches newly found, at most 1. */
export const stepCoverage = (progress: Progress, index: number): number => {
  const s = progress.steps[index]
  if (s === undefined || progress.needs === 0) return 0
  return Math.min(1, (s.covered + s.found) / progress.needs)
}

/**
 * A phase's coverage: the share of the task's needs its steps [start, end) newly served — satisfied by calls in an
 * execute phase, found by searches in an explore phase. A phase that repeats what was done, or does less of what is
 * needed, covers less: the precision-only L1–L4 paid the same for one clean call as for four.
 */
export const phaseCoverage = (progress: Progress, phase: { readonly kind: "explore" | "execute"; readonly start: number; readonly end: number }): number => {
  if (progress.needs === 0) return 0
  let n = 0
  for (let i = phase.start; i < phase.end; i++) {
    const s = progress.steps[i]
    if (s !== undefined) n += phase.kind === "execute" ? s.covered : s.found
  }
  return Math.min(1, n / progress.needs)
}

/** The judge's counts of an answer (`Verdict.counts`). */
export interface AnswerCounts {
  readonly facts: number
  readonly stated: number
  readonly unrequested: number
}

/**
 * The answer's F1 against the requested facts: 2·stated / (2·stated + missing + unrequested), with missing =
 * facts − stated. 1 for an answer stating every fact and nothing unrequested; 0 when it states none.
 */
export const answerScore = (counts: AnswerCounts): number => {
  const stated = Math.max(0, Math.min(counts.stated, counts.facts))
  const missing = counts.facts - stated
  const denominator = 2 * stated + missing + Math.max(0, counts.unrequested)
  return denominator > 0 ? (2 * stated) / denominator : 0
}

/**
 * The reward of a step's **kind decision** (go on with a search or a call, or answer) **[ours]**, read against the
 * evidence — whether every gold fact had been observed by an earlier successful call (Utility would be YES): going on
 * scores 1 before the evidence was complete and 0 after it (the round was not needed); answering scores 1 after it and
 * `earlyAnswer` before it (`credit.earlyAnswer`: 0 by default, so a stop is judged both ways; 1 leaves an early answer
 * to R_ans alone, as the first version did — and ours then stopped early: docs/training.md §6). Undefined where the
 * step made no free kind decision (an unparsed turn, or the answer T_max forced). `completeBefore[i]`: the evidence was
 * complete before step i; `forcedLast`: the last step's answer was forced.
 */
export const kindRewards = (
  steps: ReadonlyArray<Pick<Step, "turn">>,
  completeBefore: ReadonlyArray<boolean>,
  forcedLast: boolean,
  earlyAnswer: number
): ReadonlyArray<PooledReward | undefined> =>
  steps.map((step, i) => {
    if (step.turn === undefined || (forcedLast && i === steps.length - 1)) return undefined
    const complete = completeBefore[i] === true
    return { reward: step.turn.answer === undefined ? (complete ? 0 : 1) : complete ? 1 : earlyAnswer, pool: 0 }
  })

/** Action pool keys: calls 0, searches 1. */
export const actionPools = { call: 0, search: 1 } as const

/** Plan pool keys: the controller state the decision was made in. */
export const planPool = (state: Step["controller"]): number => (state === "Need" ? 0 : state === "May" ? 1 : state === "No" ? 2 : 3)

/** The step fields credit reads besides coverage. */
export type CreditStep = ProgressStep & Pick<Step, "validation" | "controller">

/** Whether a call passed r_base's own checks: a seen tool, valid arguments, not a repeat, every `$ref` resolved. */
export const callValid = (step: Pick<Step, "validation">, callId: string): boolean => {
  const v = step.validation
  return !v.unseenTools.includes(callId as never) &&
    !v.invalidArguments.some((x) => x.callId === callId) &&
    !v.repeatedCalls.includes(callId as never) &&
    !v.unresolvedRefs.some((x) => x.callId === callId)
}

/**
 * A trajectory's score with the credit of this module applied: R_phase and R_step mixed with their coverage, the
 * answer step's second half from the judge's counts, and the attributable rewards — per step its calls' then its
 * searches' rewards (pools {@link actionPools}), and its plan decision's r_plan (pool = the state it was made in;
 * a parsed step that does not answer decides whether to plan), and the kind decisions' rewards when given
 * ({@link kindRewards}). With {@link paperCredit} the step and phase rewards are unchanged (the action, plan and kind
 * rewards are still given).
 */
export const apply = (
  score: TrajectoryScore,
  steps: ReadonlyArray<CreditStep>,
  progress: Progress,
  counts: AnswerCounts | undefined,
  config: Pick<RewardConfig, "step" | "credit">,
  kinds?: ReadonlyArray<PooledReward | undefined>
): TrajectoryScore => {
  const c = config.credit
  const phases = score.phases.map((p) => {
    const coverage = phaseCoverage(progress, p)
    return { ...p, coverage, rPhase: (1 - c.phaseCoverage) * p.rPhase + c.phaseCoverage * coverage }
  })
  const rewards = score.steps.map((r, i) => {
    const step = steps[i]
    const answers = step?.turn?.answer !== undefined
    if (answers) {
      if (counts === undefined || c.answerStep === 0) return r
      const answer = answerScore(counts)
      const second = c.answerStep * answer + (1 - c.answerStep) * r.rPlan
      return { ...r, answer, rStep: config.step.baseWeight * r.rBase + config.step.planWeight * second }
    }
    const acted = (step?.turn?.calls.length ?? 0) + (step?.turn?.searches.length ?? 0) > 0
    if (!acted || c.stepCoverage === 0) return r
    const coverage = stepCoverage(progress, i)
    return { ...r, coverage, rStep: (1 - c.stepCoverage) * r.rStep + c.stepCoverage * coverage }
  })
  const actions = steps.map((step, i) => {
    const p = progress.steps[i]
    const turn = step.turn
    if (turn === undefined || p === undefined) return []
    return [
      ...turn.calls.map((call, j) => ({
        reward: (1 - c.actionCoverage) * (callValid(step, call.id) ? 1 : 0) + c.actionCoverage * (p.calls[j] === true ? 1 : 0),
        pool: actionPools.call
      })),
      ...turn.searches.map((_, j) => ({ reward: (1 - c.actionCoverage) + c.actionCoverage * (p.searches[j] === true ? 1 : 0), pool: actionPools.search }))
    ]
  })
  const plans = steps.map((step, i) =>
    step.turn === undefined || step.turn.answer !== undefined ? undefined : { reward: score.steps[i]?.rPlan ?? 0, pool: planPool(step.controller) }
  )
  return { ...score, phases, steps: rewards, actions, plans, ...(kinds !== undefined ? { kinds } : {}) }
}
