/**
 * The hierarchical reward (spec §2–3, Tables 7–9): R_step from r_base and r_plan, R_phase from L1–L4, R_ans from
 * the judge's Q/F/U bits. Every coefficient is a field of one {@link RewardConfig}; inputs are plain facts.
 */
import type { AnswerReward, Grade, PhaseReward, StepReward, Trajectory } from "../domain/Trajectory.ts"
import * as Controller from "./Controller.ts"
import type { PhaseFacts, Span, StepFacts, TrajectoryFacts, VerdictFacts } from "./TrajectoryFacts.ts"

/** A Q/F/U bit pattern, Quality first: `"101"` = Quality YES, Faithfulness not YES, Utility YES. */
export type AnswerPattern = "000" | "001" | "010" | "011" | "100" | "101" | "110" | "111"

/** The eight patterns. */
export const answerPatterns: ReadonlyArray<AnswerPattern> = ["000", "001", "010", "011", "100", "101", "110", "111"]

/**
 * What an unjudged trajectory (no verdict: the judge failed) contributes **[ours]**. `"mask"` (default): it is
 * left out of the group's advantage computation (every level) and gets 0 advantage, since a failure of the
 * machinery says nothing about the agent; its R_ans is recorded as 0 with pattern "none". `{ penalty }`: R_ans =
 * penalty, normalised with the others (the opt-in for a user who wants unjudged answers charged).
 */
export type UnjudgedPolicy = "mask" | { readonly penalty: number }

/**
 * How a truncated rollout's answer is paid **[ours]**: one whose stop is `max_rounds` (T_max forced the end, an answer
 * at the forced last round included; `Evaluation.Outcome.truncated`). `"score"` (default): its forced answer earns
 * R_ans like any other (the paper's Table 9 applied as written). `{ cap }`: its R_ans is at most `cap` — with `cap` the
 * table's worst value (−0.5) a truncated rollout earns no more than a wrong answer, so waiting for T_max never pays.
 * Only the training reward moves: the verdict, and so Pass@1, is the judge's either way.
 */
export type TruncationPolicy = "score" | { readonly cap: number }

/** The coefficients of the credit terms of src/math/Credit.ts **[ours]** (0 everywhere: the paper's reward). */
export interface CreditConfig {
  /** R_phase = (1 − w)·(w1·L1 + … + w4·L4) + w·C_phase (the phase's coverage of the task's gold calls). */
  readonly phaseCoverage: number
  /** R_step = (1 − w)·(½·r_base + ½·r_plan) + w·C_step, for steps that search or call. */
  readonly stepCoverage: number
  /** A call's own reward = (1 − w)·valid + w·covers; a search's = (1 − w) + w·finds. */
  readonly actionCoverage: number
  /** In the Answer state the second half of R_step is w·F1(stated, missing, unrequested) + (1 − w)·r_plan (r_plan is 0 there). */
  readonly answerStep: number
  /**
   * The kind reward of an answer given before the evidence was complete (`Credit.kindRewards`): 0 scores it as wrong
   * as going on once the evidence was complete, 1 leaves it unscored (R_ans alone judges it).
   */
  readonly earlyAnswer: number
}

/** Every coefficient of the reward and the advantage, in one record. */
export interface RewardConfig {
  /** R_step = baseWeight·r_base + planWeight·r_plan (Eq. 4: ½ and ½). */
  readonly step: {
    readonly baseWeight: number
    readonly planWeight: number
  }
  /** r_plan by controller state and plan status (Table 8). */
  readonly planCredit: Controller.PlanCredit
  /** R_phase = w1·L1 + w2·L2 + w3·L3 + w4·L4 (Table 7; w1..w4 sum to 1); L3 = l3Order·order + l3Batching·batching. */
  readonly phase: {
    readonly w1: number
    readonly w2: number
    readonly w3: number
    readonly w4: number
    readonly l3Order: number
    readonly l3Batching: number
  }
  /** R_ans by Q/F/U pattern (Table 9), what a trajectory with no verdict (not judged) gets, what a truncated one gets. */
  readonly answer: {
    readonly table: { readonly [P in AnswerPattern]: number }
    readonly unjudged: UnjudgedPolicy
    readonly truncation: TruncationPolicy
  }
  /**
   * A = λτ·A_traj + λp·A_phase + λs·A_step (Eq. 7, Table 7); ε in (r − mean)/(std + ε); a pool whose rewards all
   * lie within `tolerance` of each other (max − min < tolerance) counts as constant and gets 0 **[ours]**.
   */
  readonly advantage: {
    readonly lambdaTraj: number
    readonly lambdaPhase: number
    readonly lambdaStep: number
    readonly epsilon: number
    readonly tolerance: number
  }
  /** The credit terms **[ours]** (coverage, the answer step from the judge's counts, the per-action rewards' mix). */
  readonly credit: CreditConfig
}

/** The coefficients of the paper (Tables 7–9) and our choices where it is silent (marked in docs/reward.md). */
export const defaultRewardConfig: RewardConfig = {
  step: { baseWeight: 0.5, planWeight: 0.5 },
  planCredit: {
    Need: { none: 0, invalid: 0, stale: 0, repeated: 1, new: 1 },
    May: { none: 1, invalid: 0, stale: 0, repeated: 0, new: 1 },
    No: { none: 1, invalid: 0, stale: 0, repeated: 0, new: 0 },
    Answer: { none: 0, invalid: 0, stale: 0, repeated: 0, new: 0 }
  },
  phase: { w1: 0.1, w2: 0.2, w3: 0.2, w4: 0.5, l3Order: 0.5, l3Batching: 0.5 },
  answer: {
    table: { "000": -0.5, "010": -0.5, "100": -0.5, "001": 0, "101": 0, "011": 0.5, "110": 0.5, "111": 1.5 },
    unjudged: "mask",
    truncation: "score"
  },
  // tolerance 0.02: R_step and R_ans move in steps of 0.5, so it never hides a real difference there; on R_phase
  // it is one event of the lightest component (w1 = 0.1) among 5 items — below that is noise (docs/reward.md)
  advantage: { lambdaTraj: 1.0, lambdaPhase: 0.5, lambdaStep: 0.25, epsilon: 1e-6, tolerance: 0.02 },
  // earlyAnswer 0: a stop decision is scored against the evidence both ways; on sixteen validation seeds ours gained
  // +1.8 points over 1 (unscored) and answered 1.4 rounds later, still before GRPO (docs/training.md §6)
  credit: { phaseCoverage: 0.5, stepCoverage: 0.5, actionCoverage: 0.5, answerStep: 1, earlyAnswer: 0 }
}

/** A patch of a config value: numbers by numbers, string choices by a choice, records field by field. */
type Patch<T> = T extends number ? number : T extends string ? T : { readonly [K in keyof T]?: Patch<T[K]> }

/** Any subset of a {@link RewardConfig}, at any depth. */
export type RewardConfigPatch = Patch<RewardConfig>

/** One problem with a config override: the dotted field, the offending value, why. */
export interface RewardConfigIssue {
  readonly field: string
  readonly value: string
  readonly message: string
}

/** The result of {@link configure}. */
export type ConfigResult =
  | { readonly _tag: "Ok"; readonly config: RewardConfig }
  | { readonly _tag: "InvalidRewardConfig"; readonly issues: readonly [RewardConfigIssue, ...Array<RewardConfigIssue>] }

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

const show = (u: unknown): string => {
  if (typeof u === "number") return String(u)
  return JSON.stringify(u) ?? String(u)
}

/** `answer.unjudged`: `"mask"` or `{ penalty: <finite number> }`, nothing else. */
const mergeUnjudged = (base: unknown, patch: unknown, path: string, issues: Array<RewardConfigIssue>): unknown => {
  if (patch === "mask") return patch
  if (isRecord(patch) && Object.keys(patch).length === 1 && typeof patch["penalty"] === "number" && Number.isFinite(patch["penalty"])) {
    return { penalty: patch["penalty"] }
  }
  issues.push({ field: path, value: show(patch), message: `expected "mask" or { "penalty": <finite number> }` })
  return base
}

/** `answer.truncation`: `"score"` or `{ cap: <finite number> }`, nothing else. */
const mergeTruncation = (base: unknown, patch: unknown, path: string, issues: Array<RewardConfigIssue>): unknown => {
  if (patch === "score") return patch
  if (isRecord(patch) && Object.keys(patch).length === 1 && typeof patch["cap"] === "number" && Number.isFinite(patch["cap"])) {
    return { cap: patch["cap"] }
  }
  issues.push({ field: path, value: show(patch), message: `expected "score" or { "cap": <finite number> }` })
  return base
}

/**
 * A truncation policy from its command-line spelling: `score`, or `cap:<number>` (e.g. `cap:-0.5`, the worst verdict's
 * R_ans); undefined for anything else.
 */
export const parseTruncation = (text: string): TruncationPolicy | undefined => {
  const spelled = text.trim()
  if (spelled === "score") return "score"
  const match = /^cap:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)$/i.exec(spelled)
  return match === null ? undefined : { cap: Number(match[1]) }
}

/** The command-line spelling of a truncation policy (`parseTruncation`'s inverse). */
export const showTruncation = (policy: TruncationPolicy): string => (policy === "score" ? "score" : `cap:${policy.cap}`)

/** Merges a patch into a base of the same shape, reporting unknown fields and non-finite numbers. */
const merge = (base: unknown, patch: unknown, path: string, issues: Array<RewardConfigIssue>): unknown => {
  if (path === "answer.unjudged") return mergeUnjudged(base, patch, path, issues)
  if (path === "answer.truncation") return mergeTruncation(base, patch, path, issues)
  if (typeof base === "number") {
    if (typeof patch === "number" && Number.isFinite(patch)) return patch
    issues.push({ field: path, value: show(patch), message: "expected a finite number" })
    return base
  }
  if (!isRecord(base)) return base
  if (!isRecord(patch)) {
    issues.push({ field: path, value: show(patch), message: "expected an object" })
    return base
  }
  // known fields in the base's order, then unknown ones, so issues come out in a fixed order
  const out: Record<string, unknown> = { ...base }
  for (const key of Object.keys(base)) {
    const value = patch[key]
    if (value !== undefined) out[key] = merge(base[key], value, path === "" ? key : `${path}.${key}`, issues)
  }
  for (const [key, value] of Object.entries(patch)) {
    if (Object.hasOwn(base, key) || value === undefined) continue
    const field = path === "" ? key : `${path}.${key}`
    issues.push({ field, value: show(value), message: `unknown field; known: ${Object.keys(base).join(", ")}` })
  }
  return out
}

const sumsToOne = (values: ReadonlyArray<number>): boolean => Math.abs(values.reduce((a, b) => a + b, 0) - 1) <= 1e-9

/**
 * A config with any subset of the defaults (or of `base`) overridden. Checks: every value a finite number,
 * no unknown field, all weights, ε and the tolerance non-negative, w1..w4 sum to 1, l3Order + l3Batching = 1,
 * the answer table holds all eight patterns, `answer.unjudged` is `"mask"` or `{ penalty: <finite number> }`, and
 * `answer.truncation` is `"score"` or `{ cap: <finite number> }`.
 */
export const configure = (patch: RewardConfigPatch, base: RewardConfig = defaultRewardConfig): ConfigResult => {
  const issues: Array<RewardConfigIssue> = []
  const config = merge(base, patch, "", issues) as RewardConfig
  const nonNegative: ReadonlyArray<readonly [string, number]> = [
    ["step.baseWeight", config.step.baseWeight],
    ["step.planWeight", config.step.planWeight],
    ["phase.w1", config.phase.w1],
    ["phase.w2", config.phase.w2],
    ["phase.w3", config.phase.w3],
    ["phase.w4", config.phase.w4],
    ["phase.l3Order", config.phase.l3Order],
    ["phase.l3Batching", config.phase.l3Batching],
    ["advantage.lambdaTraj", config.advantage.lambdaTraj],
    ["advantage.lambdaPhase", config.advantage.lambdaPhase],
    ["advantage.lambdaStep", config.advantage.lambdaStep],
    ["advantage.epsilon", config.advantage.epsilon],
    ["advantage.tolerance", config.advantage.tolerance]
  ]
  for (const [field, value] of nonNegative) {
    if (value < 0) issues.push({ field, value: show(value), message: "must be >= 0" })
  }
  for (const [field, value] of Object.entries(config.credit)) {
    if (!(value >= 0 && value <= 1)) issues.push({ field: `credit.${field}`, value: show(value), message: "must be in [0, 1]" })
  }
  const { w1, w2, w3, w4, l3Order, l3Batching } = config.phase
  if (!sumsToOne([w1, w2, w3, w4])) {
    issues.push({ field: "phase", value: show([w1, w2, w3, w4]), message: "w1 + w2 + w3 + w4 must equal 1" })
  }
  if (!sumsToOne([l3Order, l3Batching])) {
    issues.push({ field: "phase", value: show([l3Order, l3Batching]), message: "l3Order + l3Batching must equal 1" })
  }
  for (const pattern of answerPatterns) {
    const value: unknown = (config.answer.table as Readonly<Record<string, unknown>>)[pattern]
    if (typeof value !== "number" || !Number.isFinite(value)) {
      issues.push({ field: `answer.table.${pattern}`, value: show(value), message: "the answer table needs all 8 Q/F/U patterns" })
    }
  }
  const [first, ...rest] = issues
  return first === undefined ? { _tag: "Ok", config } : { _tag: "InvalidRewardConfig", issues: [first, ...rest] }
}

/** What r_base and r_plan read from a step. */
export type StepInput = Pick<StepFacts, "state" | "parsed" | "answered" | "plan" | "violations">

/**
 * r_base: 1 when the turn parsed, every call names a seen tool with valid arguments, no call repeats an
 * identical earlier call or another call of the same turn, every `$ref` resolved, the plan (if any) is valid, and — in the Answer state —
 * the turn answers without a `<plan>`; else 0.
 */
export const rBase = (step: StepInput): number => {
  if (!step.parsed || step.plan === "invalid") return 0
  const v = step.violations
  if (v.unseenTools + v.invalidArguments + v.repeatedCalls + v.unresolvedRefs > 0) return 0
  if (step.state === "Answer" && (!step.answered || step.plan !== "none")) return 0
  return 1
}

/** R_step = baseWeight·r_base + planWeight·r_plan, with r_plan from the credit table (0 for a turn that did not parse). */
export const stepReward = (step: StepInput, config: RewardConfig = defaultRewardConfig): StepReward => {
  const base = rBase(step)
  // a malformed turn shows no behaviour to credit, whatever the state
  const plan = step.parsed ? Controller.rPlan(config.planCredit, step.state, step.plan) : 0
  return { rBase: base, rPlan: plan, rStep: config.step.baseWeight * base + config.step.planWeight * plan }
}

/** L1–L4 of a phase, each in [0, 1]. */
export interface PhaseComponents {
  readonly l1: number
  readonly l2: number
  readonly l3: number
  readonly l4: number
}

/** What the phase reward reads from a phase. */
export type PhaseInput = Pick<PhaseFacts, "kind" | "rounds" | "calls" | "searches" | "dependencies">

const clamp01 = (x: number): number => (x <= 0 ? 0 : x >= 1 ? 1 : x)
const fraction = (count: number, total: number, empty: number): number => (total > 0 ? clamp01(count / total) : empty)
const countIf = <A>(items: ReadonlyArray<A>, f: (a: A) => boolean): number => {
  let n = 0
  for (const item of items) if (f(item)) n++
  return n
}

/**
 * L1–L4 (definitions and formulas in docs/reward.md). A phase that issued no search and no call scores 0 on
 * all four; otherwise a ratio over an empty set takes its neutral value (1 for the precision/recall of L2 and
 * for L3's order), and L1/L4 of an empty denominator are 0.
 */
export const phaseComponents = (phase: PhaseInput, config: RewardConfig = defaultRewardConfig): PhaseComponents => {
  const { calls, searches } = phase
  if (calls.length + searches.length === 0) return { l1: 0, l2: 0, l3: 0, l4: 0 }
  const execute = phase.kind === "execute"

  const l1 = execute
    ? fraction(countIf(calls, (c) => c.grounded), calls.length, 0)
    : fraction(countIf(searches, (s) => s.usedLater), searches.length, 0)

  const d = phase.dependencies
  const precision = fraction(d.supported, d.declared, 1)
  const recall = fraction(d.recalled, d.required, 1)
  const l2 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0

  const order = 1 - fraction(countIf(calls, (c) => c.outOfOrder), calls.length, 0)
  let depth = 1
  for (const c of calls) depth = Math.max(depth, c.layer)
  for (const s of searches) depth = Math.max(depth, s.layer)
  const batching = clamp01(depth / Math.max(1, phase.rounds))
  const l3 = clamp01(config.phase.l3Order * order + config.phase.l3Batching * batching)

  const l4 = execute
    ? fraction(countIf(calls, (c) => c.result === "ok" && !c.repeated), calls.length, 0)
    : fraction(countIf(searches, (s) => s.newTools > 0), searches.length, 0)

  return { l1, l2, l3, l4 }
}

/** R_phase = w1·L1 + w2·L2 + w3·L3 + w4·L4, with its components. */
export const phaseReward = (phase: PhaseInput, config: RewardConfig = defaultRewardConfig): PhaseReward => {
  const { l1, l2, l3, l4 } = phaseComponents(phase, config)
  const { w1, w2, w3, w4 } = config.phase
  return { l1, l2, l3, l4, rPhase: w1 * l1 + w2 * l2 + w3 * l3 + w4 * l4 }
}

const bit = (grade: Grade): "1" | "0" => (grade === "YES" ? "1" : "0")

/** The Q/F/U pattern of a verdict: a bit is 1 only for YES (PARTIAL and NO are 0). */
export const answerPattern = (verdict: VerdictFacts): AnswerPattern =>
  `${bit(verdict.quality)}${bit(verdict.faithfulness)}${bit(verdict.utility)}` as AnswerPattern

/**
 * An answer reward under a truncation policy **[ours]**: unchanged unless the rollout was truncated and the policy caps
 * it, then R_ans = min(R_ans, cap) with the verdict's pattern kept (the judge's verdict is not touched). A masked
 * answer (unjudged under `"mask"`) stays as it is: it is left out of the advantages whatever its length.
 */
export const truncate = (answer: AnswerReward, truncated: boolean, policy: TruncationPolicy): AnswerReward =>
  !truncated || policy === "score" || answer.rAns <= policy.cap ? answer : { pattern: answer.pattern, rAns: policy.cap }

/**
 * R_ans of a verdict (Table 9); with none, pattern "none" and R_ans 0 (masked) or the `answer.unjudged` penalty; for a
 * truncated rollout (stop `max_rounds`), then {@link truncate} under `answer.truncation`.
 */
export const answerReward = (verdict: VerdictFacts | undefined, config: RewardConfig = defaultRewardConfig, truncated = false): AnswerReward => {
  if (verdict === undefined) {
    if (config.answer.unjudged === "mask") return { pattern: "none", rAns: 0 }
    return truncate({ pattern: "none", rAns: config.answer.unjudged.penalty }, truncated, config.answer.truncation)
  }
  const pattern = answerPattern(verdict)
  return truncate({ pattern, rAns: config.answer.table[pattern] }, truncated, config.answer.truncation)
}

/** One reward that can be attributed to a single decision, with the key of the pool it is normalised in. */
export interface PooledReward {
  readonly reward: number
  readonly pool: number
}

/**
 * The rewards of one trajectory at the three levels; `stepPhase[i]` is the index in `phases` of step i's phase;
 * `masked`: unjudged under `answer.unjudged: "mask"`, so left out of the group's advantages.
 */
export interface TrajectoryScore {
  readonly steps: ReadonlyArray<StepReward>
  readonly phases: ReadonlyArray<PhaseReward & Span>
  readonly stepPhase: ReadonlyArray<number>
  readonly answer: AnswerReward
  readonly masked: boolean
  /** Per step, the attributable actions' rewards and pools (calls, then searches), when credit was assigned (src/math/Credit.ts). */
  readonly actions?: ReadonlyArray<ReadonlyArray<PooledReward>>
  /** Per step, r_plan of its plan decision and its pool (the controller state), when credit was assigned. */
  readonly plans?: ReadonlyArray<PooledReward | undefined>
  /** Per step, the reward of its kind decision and its pool (src/math/Credit.ts `kindRewards`), when given. */
  readonly kinds?: ReadonlyArray<PooledReward | undefined>
}

/** Scores a trajectory from its facts. The trajectory-level reward is R_ans. */
export const score = (facts: TrajectoryFacts, config: RewardConfig = defaultRewardConfig): TrajectoryScore => {
  const stepPhase: Array<number> = facts.steps.map(() => 0)
  const phases = facts.phases.map((phase, p) => {
    for (let k = phase.start; k < phase.end && k < stepPhase.length; k++) stepPhase[k] = p
    return { ...phaseReward(phase, config), kind: phase.kind, start: phase.start, end: phase.end }
  })
  return {
    steps: facts.steps.map((step) => stepReward(step, config)),
    phases,
    stepPhase,
    answer: answerReward(facts.verdict, config, facts.truncated === true),
    masked: facts.verdict === undefined && config.answer.unjudged === "mask"
  }
}

/** The trajectory with its rewards written in: each step's `reward`, the phase spans with theirs, `answerReward`. */
export const attach = (trajectory: Trajectory, scored: TrajectoryScore): Trajectory => ({
  ...trajectory,
  steps: trajectory.steps.map((step, i) => {
    const reward = scored.steps[i]
    return reward === undefined ? step : { ...step, reward }
  }),
  phases: scored.phases.map(({ kind, start, end, l1, l2, l3, l4, rPhase, coverage }) => ({
    kind,
    start,
    end,
    reward: { l1, l2, l3, l4, rPhase, ...(coverage !== undefined ? { coverage } : {}) }
  })),
  answerReward: scored.answer
})
