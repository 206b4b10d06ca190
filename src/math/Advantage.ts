/**
 * Group-normalised advantages (spec §4, Eq. 7): estimators over the G rollouts of one task, kept in a registry
 * keyed by name so a trainer picks one by name. Flat Float64Array kernels; pure, no Effect import.
 */
import type { Step, StepAdvantage, Trajectory } from "../domain/Trajectory.ts"
import type { RewardConfig, TrajectoryScore } from "./Reward.ts"
import * as StepKind from "./StepKind.ts"

/** The coefficients an estimator reads: λτ, λp, λs, ε and the tolerance below which a pool counts as constant. */
export type AdvantageConfig = RewardConfig["advantage"]

/** The largest step-pool key + 1 that {@link flatten} accepts (keys index small per-pool arrays). */
export const maxStepPools = 1024

/**
 * The rewards of one rollout at the three levels; `stepPhase[i]` indexes `phases` for step i.
 *
 * `stepPool[i]` is step i's pool key **[ours]**: steps sharing a key are normalised together, pooled across the
 * group's rollouts. {@link fromScore} keys steps by action kind ({@link StepKind.stepPoolKey}: search 0, call 1,
 * answer 2, other 3), so an answer step is compared with the group's other answer steps and not with searches
 * (in the Answer state r_plan is 0, so pooled with every step an answer always looked below average). Absent:
 * every step in pool 0 (one pool).
 *
 * `masked` **[ours]**: the rollout is left out of every pool of the group (as if it were not in the group) and
 * gets 0 at every level; it stays in the output. Scoring masks an unjudged trajectory (`answer.unjudged: "mask"`).
 */
export interface RolloutRewards {
  readonly traj: number
  readonly phases: ReadonlyArray<number>
  readonly steps: ReadonlyArray<number>
  readonly stepPhase: ReadonlyArray<number>
  readonly stepPool?: ReadonlyArray<number>
  readonly masked?: boolean
}

/** The rewards of a scored trajectory (R_ans, R_phase, R_step), its steps pooled by action kind, masked when the score says so. */
export const fromScore = (score: TrajectoryScore, steps: ReadonlyArray<Pick<Step, "turn">>): RolloutRewards => ({
  traj: score.answer.rAns,
  phases: score.phases.map((p) => p.rPhase),
  steps: score.steps.map((s) => s.rStep),
  stepPhase: score.stepPhase,
  stepPool: StepKind.stepPools(steps),
  masked: score.masked
})

/**
 * A group of rollouts laid out flat: G trajectories, P phases, S steps in total, rollout-major. The `…Key`,
 * `…Index` and `stepPool` arrays are pool keys; a key of −1 marks a member of a masked rollout, which joins no
 * pool and gets 0.
 */
export interface FlatGroup {
  readonly size: number
  readonly traj: Float64Array
  /** 1 for a masked rollout, else 0. */
  readonly masked: Uint8Array
  /** The one pool of the trajectory rewards: 0, or −1 for a masked rollout. */
  readonly trajKey: Int32Array
  readonly phaseReward: Float64Array
  /** The one pool of all phases of the group: 0, or −1. */
  readonly phaseKey: Int32Array
  /** Position of each phase within its rollout (the per-index pool), or −1. */
  readonly phaseIndex: Int32Array
  readonly stepReward: Float64Array
  /** The one pool of all steps of the group: 0, or −1. */
  readonly stepKey: Int32Array
  /** Position of each step within its rollout (the per-index pool), or −1. */
  readonly stepIndex: Int32Array
  /** Each step's pool key from `RolloutRewards.stepPool` (0 when absent), or −1. */
  readonly stepPool: Int32Array
  /** 1 + the largest step-pool key (at least 1). */
  readonly stepPoolCount: number
  readonly stepRollout: Int32Array
  /** Flat index (into `phaseReward`) of each step's phase. */
  readonly stepPhase: Int32Array
  /** Steps of rollout g are `[stepOffsets[g], stepOffsets[g + 1])`. */
  readonly stepOffsets: Int32Array
  readonly maxPhases: number
  readonly maxSteps: number
}

/** Per-step advantages, flat and aligned with `FlatGroup`'s steps. */
export interface FlatAdvantages {
  readonly traj: Float64Array
  readonly phase: Float64Array
  readonly step: Float64Array
  readonly combined: Float64Array
  readonly stepOffsets: Int32Array
}

/** An advantage estimator. */
export type Estimator = (group: FlatGroup, config: AdvantageConfig) => FlatAdvantages

/** A rollout whose rewards cannot be normalised: which rollout, and why. */
export interface InvalidGroup {
  readonly _tag: "InvalidGroup"
  readonly rollout: number
  readonly message: string
}

/** An estimator name that is not registered, with the names that are. */
export interface UnknownEstimator {
  readonly _tag: "UnknownEstimator"
  readonly name: string
  readonly known: ReadonlyArray<string>
}

/**
 * Lays a group out flat, checking every reward is finite, every step points at one of its rollout's phases and
 * every step-pool key is an integer in [0, {@link maxStepPools}).
 */
export const flatten = (rollouts: ReadonlyArray<RolloutRewards>): { readonly _tag: "Ok"; readonly group: FlatGroup } | InvalidGroup => {
  let phaseCount = 0
  let stepCount = 0
  let maxPhases = 0
  let maxSteps = 0
  let stepPoolCount = 1
  for (let g = 0; g < rollouts.length; g++) {
    const r = rollouts[g] as RolloutRewards
    const invalid = (message: string): InvalidGroup => ({ _tag: "InvalidGroup", rollout: g, message })
    if (!Number.isFinite(r.traj)) return invalid(`trajectory reward is ${r.traj}`)
    if (r.stepPhase.length !== r.steps.length) {
      return invalid(`${r.steps.length} step rewards but ${r.stepPhase.length} step-to-phase entries`)
    }
    if (r.stepPool !== undefined && r.stepPool.length !== r.steps.length) {
      return invalid(`${r.steps.length} step rewards but ${r.stepPool.length} step-pool keys`)
    }
    for (let i = 0; i < r.phases.length; i++) {
      if (!Number.isFinite(r.phases[i])) return invalid(`phase ${i} reward is ${r.phases[i]}`)
    }
    for (let i = 0; i < r.steps.length; i++) {
      if (!Number.isFinite(r.steps[i])) return invalid(`step ${i} reward is ${r.steps[i]}`)
      const p = r.stepPhase[i] as number
      if (!Number.isInteger(p) || p < 0 || p >= r.phases.length) {
        return invalid(`step ${i} points at phase ${p}, but the rollout has ${r.phases.length} phases`)
      }
      const k = r.stepPool === undefined ? 0 : (r.stepPool[i] as number)
      if (!Number.isInteger(k) || k < 0 || k >= maxStepPools) {
        return invalid(`step ${i} has step-pool key ${k}; keys are integers in [0, ${maxStepPools})`)
      }
      stepPoolCount = Math.max(stepPoolCount, k + 1)
    }
    phaseCount += r.phases.length
    stepCount += r.steps.length
    maxPhases = Math.max(maxPhases, r.phases.length)
    maxSteps = Math.max(maxSteps, r.steps.length)
  }
  const group: FlatGroup = {
    size: rollouts.length,
    traj: new Float64Array(rollouts.length),
    masked: new Uint8Array(rollouts.length),
    trajKey: new Int32Array(rollouts.length),
    phaseReward: new Float64Array(phaseCount),
    phaseKey: new Int32Array(phaseCount),
    phaseIndex: new Int32Array(phaseCount),
    stepReward: new Float64Array(stepCount),
    stepKey: new Int32Array(stepCount),
    stepIndex: new Int32Array(stepCount),
    stepPool: new Int32Array(stepCount),
    stepPoolCount,
    stepRollout: new Int32Array(stepCount),
    stepPhase: new Int32Array(stepCount),
    stepOffsets: new Int32Array(rollouts.length + 1),
    maxPhases,
    maxSteps
  }
  let p0 = 0
  let s0 = 0
  rollouts.forEach((r, g) => {
    const masked = r.masked === true
    group.traj[g] = r.traj
    group.masked[g] = masked ? 1 : 0
    group.trajKey[g] = masked ? -1 : 0
    r.phases.forEach((x, i) => {
      group.phaseReward[p0 + i] = x
      group.phaseKey[p0 + i] = masked ? -1 : 0
      group.phaseIndex[p0 + i] = masked ? -1 : i
    })
    group.stepOffsets[g] = s0
    r.steps.forEach((x, i) => {
      group.stepReward[s0 + i] = x
      group.stepKey[s0 + i] = masked ? -1 : 0
      group.stepIndex[s0 + i] = masked ? -1 : i
      group.stepPool[s0 + i] = masked ? -1 : r.stepPool === undefined ? 0 : (r.stepPool[i] as number)
      group.stepRollout[s0 + i] = g
      group.stepPhase[s0 + i] = p0 + (r.stepPhase[i] as number)
    })
    p0 += r.phases.length
    s0 += r.steps.length
  })
  group.stepOffsets[rollouts.length] = s0
  return { _tag: "Ok", group }
}

/**
 * (x − mean)/(std + ε) per key, population std, in one pass (Welford) plus the output pass. Values sharing a
 * key form one normalisation pool; a negative key leaves the value out of every pool and gives it 0. A pool
 * whose values all lie within `tolerance` of each other (max − min < tolerance; all equal, or one member,
 * whatever the tolerance) gives exactly 0: differences that small are treated as noise, not as signal to be
 * blown up to ±1 by a tiny std. `keys` undefined means one pool of every value.
 */
export const normalise = (
  values: Float64Array,
  keys: Int32Array | undefined,
  keyCount: number,
  epsilon: number,
  tolerance = 0
): Float64Array =>
  keys === undefined ? normalisePooled(values, epsilon, tolerance) : normaliseKeyed(values, keys, keyCount, epsilon, tolerance)

/** Whether a pool with this range is constant for the purpose of normalisation. */
const isConstant = (min: number, max: number, tolerance: number): boolean => !(max - min > 0) || max - min < tolerance

/** {@link normalise} with one pool: the same Welford pass on scalars (no per-key arrays to allocate). */
const normalisePooled = (values: Float64Array, epsilon: number, tolerance: number): Float64Array => {
  let n = 0
  let mean = 0
  let m2 = 0
  let min = Infinity
  let max = -Infinity
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number
    n++
    const delta = x - mean
    mean += delta / n
    m2 += delta * (x - mean)
    if (x < min) min = x
    if (x > max) max = x
  }
  const out = new Float64Array(values.length)
  if (n === 0 || isConstant(min, max, tolerance)) return out
  const scale = 1 / (Math.sqrt(m2 / n) + epsilon)
  for (let i = 0; i < values.length; i++) out[i] = ((values[i] as number) - mean) * scale
  return out
}

const normaliseKeyed = (values: Float64Array, keys: Int32Array, keyCount: number, epsilon: number, tolerance: number): Float64Array => {
  const pools = Math.max(1, keyCount)
  const count = new Float64Array(pools)
  const mean = new Float64Array(pools)
  const m2 = new Float64Array(pools)
  const min = new Float64Array(pools).fill(Infinity)
  const max = new Float64Array(pools).fill(-Infinity)
  for (let i = 0; i < values.length; i++) {
    const k = keys[i] as number
    if (k < 0) continue
    const x = values[i] as number
    const n = (count[k] as number) + 1
    count[k] = n
    const delta = x - (mean[k] as number)
    mean[k] = (mean[k] as number) + delta / n
    m2[k] = (m2[k] as number) + delta * (x - (mean[k] as number))
    if (x < (min[k] as number)) min[k] = x
    if (x > (max[k] as number)) max[k] = x
  }
  const scale = new Float64Array(pools)
  for (let k = 0; k < pools; k++) {
    scale[k] = count[k] === 0 || isConstant(min[k] as number, max[k] as number, tolerance)
      ? 0
      : 1 / (Math.sqrt((m2[k] as number) / (count[k] as number)) + epsilon)
  }
  const out = new Float64Array(values.length)
  for (let i = 0; i < values.length; i++) {
    const k = keys[i] as number
    const s = k < 0 ? 0 : (scale[k] as number)
    out[i] = s === 0 ? 0 : ((values[i] as number) - (mean[k] as number)) * s
  }
  return out
}

/** Broadcasts per-trajectory and per-phase advantages to steps and combines them with the λ weights. */
const combine = (
  group: FlatGroup,
  trajAdv: Float64Array,
  phaseAdv: Float64Array | undefined,
  stepAdv: Float64Array | undefined,
  weights: { readonly traj: number; readonly phase: number; readonly step: number }
): FlatAdvantages => {
  const n = group.stepReward.length
  const traj = new Float64Array(n)
  const phase = new Float64Array(n)
  const step = new Float64Array(n)
  const combined = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t = trajAdv[group.stepRollout[i] as number] as number
    const p = phaseAdv === undefined ? 0 : (phaseAdv[group.stepPhase[i] as number] as number)
    const s = stepAdv === undefined ? 0 : (stepAdv[i] as number)
    traj[i] = t
    phase[i] = p
    step[i] = s
    combined[i] = weights.traj * t + weights.phase * p + weights.step * s
  }
  return { traj, phase, step, combined, stepOffsets: group.stepOffsets }
}

const trajLevel = (group: FlatGroup, config: AdvantageConfig): Float64Array =>
  normalise(group.traj, group.trajKey, 1, config.epsilon, config.tolerance)

const lambdas = (config: AdvantageConfig) => ({ traj: config.lambdaTraj, phase: config.lambdaPhase, step: config.lambdaStep })

/** GRPO, the paper's "RL (GRPO)" baseline: the trajectory level only; A = A_traj (no λ). */
export const grpo: Estimator = (group, config) => combine(group, trajLevel(group, config), undefined, undefined, { traj: 1, phase: 0, step: 0 })

/**
 * ParaAgent's decoupled estimator (default): A = λτ·A_traj + λp·A_phase + λs·A_step, phases pooled over the
 * group, steps pooled over the group by step-pool key (by action kind, **[ours]**, see {@link RolloutRewards}).
 */
export const paraagent: Estimator = (group, config) =>
  combine(
    group,
    trajLevel(group, config),
    normalise(group.phaseReward, group.phaseKey, 1, config.epsilon, config.tolerance),
    normalise(group.stepReward, group.stepPool, group.stepPoolCount, config.epsilon, config.tolerance),
    lambdas(config)
  )

/**
 * The decoupled estimator with one pool of all steps of the group (the step-pool keys ignored). Kept for the
 * ablation: an answer step (r_plan = 0 in the Answer state, so R_step ≤ 0.5) then always looks below average.
 */
export const paraagentSinglePool: Estimator = (group, config) =>
  combine(
    group,
    trajLevel(group, config),
    normalise(group.phaseReward, group.phaseKey, 1, config.epsilon, config.tolerance),
    normalise(group.stepReward, group.stepKey, 1, config.epsilon, config.tolerance),
    lambdas(config)
  )

/**
 * The decoupled estimator with position-index pools: phase k (step i) is normalised only against the phase k
 * (step i) of the other rollouts. Kept for the ablation: when the policy decides when to stop, late positions
 * are filled only by some rollouts, so their pools are small and selected, which biases the estimate.
 */
export const grpoPerIndex: Estimator = (group, config) =>
  combine(
    group,
    trajLevel(group, config),
    normalise(group.phaseReward, group.phaseIndex, group.maxPhases, config.epsilon, config.tolerance),
    normalise(group.stepReward, group.stepIndex, group.maxSteps, config.epsilon, config.tolerance),
    lambdas(config)
  )

/** Estimators by name. */
export type Registry = ReadonlyMap<string, Estimator>

/** The estimator used when none is named. */
export const defaultEstimator = "paraagent"

/** The built-in estimators: `grpo`, `paraagent` (default), `paraagent_single_pool`, `grpo_per_index`. */
export const estimators: Registry = new Map<string, Estimator>([
  ["grpo", grpo],
  ["paraagent", paraagent],
  ["paraagent_single_pool", paraagentSinglePool],
  ["grpo_per_index", grpoPerIndex]
])

/** A registry with one more (or a replaced) estimator. */
export const register = (registry: Registry, name: string, estimator: Estimator): Registry =>
  new Map(registry).set(name, estimator)

/** The estimator registered under `name`. */
export const lookup = (
  name: string,
  registry: Registry = estimators
): { readonly _tag: "Found"; readonly name: string; readonly estimator: Estimator } | UnknownEstimator => {
  const estimator = registry.get(name)
  return estimator === undefined
    ? { _tag: "UnknownEstimator", name, known: [...registry.keys()] }
    : { _tag: "Found", name, estimator }
}

/** Per-step advantages of every rollout of a flat result, in rollout order. */
export const unflatten = (advantages: FlatAdvantages): ReadonlyArray<ReadonlyArray<StepAdvantage>> => {
  const out: Array<Array<StepAdvantage>> = []
  for (let g = 0; g + 1 < advantages.stepOffsets.length; g++) {
    const rows: Array<StepAdvantage> = []
    for (let i = advantages.stepOffsets[g] as number; i < (advantages.stepOffsets[g + 1] as number); i++) {
      rows.push({
        traj: advantages.traj[i] as number,
        phase: advantages.phase[i] as number,
        step: advantages.step[i] as number,
        combined: advantages.combined[i] as number
      })
    }
    out.push(rows)
  }
  return out
}

/** Runs the named estimator on a group: per rollout, per step, the advantage by level and combined. */
export const compute = (
  name: string,
  rollouts: ReadonlyArray<RolloutRewards>,
  config: AdvantageConfig,
  registry: Registry = estimators
):
  | { readonly _tag: "Ok"; readonly advantages: ReadonlyArray<ReadonlyArray<StepAdvantage>> }
  | UnknownEstimator
  | InvalidGroup => {
  const found = lookup(name, registry)
  if (found._tag === "UnknownEstimator") return found
  const flat = flatten(rollouts)
  if (flat._tag === "InvalidGroup") return flat
  return { _tag: "Ok", advantages: unflatten(found.estimator(flat.group, config)) }
}

/** The trajectory with each step's `advantage` written in (steps beyond `advantages` are left as they are). */
export const attach = (trajectory: Trajectory, advantages: ReadonlyArray<StepAdvantage>): Trajectory => ({
  ...trajectory,
  steps: trajectory.steps.map((step, i) => {
    const advantage = advantages[i]
    return advantage === undefined ? step : { ...step, advantage }
  })
})
