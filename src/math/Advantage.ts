/**
 * Group-normalised advantages (spec §4, Eq. 7): estimators over the G rollouts of one task, kept in a registry
 * keyed by name so a trainer picks one by name. Flat Float64Array kernels; pure, no Effect import.
 */
import type { Step, StepAdvantage, Trajectory } from "../domain/Trajectory.ts"
import type { PooledReward, RewardConfig, TrajectoryScore } from "./Reward.ts"
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
  /**
   * Each phase's pool key **[ours]** ({@link phaseKindKey}: explore 0, execute 1): the `…_phase_kind` and
   * `paraagent_credit` estimators normalise a phase only against phases of its kind. Absent: one pool.
   */
  readonly phaseKind?: ReadonlyArray<number>
  /**
   * Per step, the rewards of the actions a reward can be attributed to **[ours]** (its calls, then its searches, in
   * turn order), each with its pool key (call 0, search 1). `paraagent_credit` gives each its own advantage.
   */
  readonly actions?: ReadonlyArray<ReadonlyArray<ActionReward>>
  /** Per step, r_plan of its plan decision and the pool key (the controller state), or undefined for a step without one. */
  readonly plans?: ReadonlyArray<ActionReward | undefined>
  /**
   * Per step, the reward of its kind decision (go on or answer) and its pool key, or undefined for a step without a
   * free one (src/math/Credit.ts `kindRewards`) **[ours]**: `paraagent_attributed_stop` gives the kind factor its z.
   */
  readonly kinds?: ReadonlyArray<ActionReward | undefined>
}

/** One attributable reward: its value and the key of the pool it is normalised in. */
export type ActionReward = PooledReward

/** The phase pool key of a phase kind: explore 0, execute 1. */
export const phaseKindKey = (kind: "explore" | "execute"): number => (kind === "explore" ? 0 : 1)

/** The rewards of a scored trajectory (R_ans, R_phase, R_step), its steps pooled by action kind, masked when the score says so. */
export const fromScore = (score: TrajectoryScore, steps: ReadonlyArray<Pick<Step, "turn">>): RolloutRewards => ({
  traj: score.answer.rAns,
  phases: score.phases.map((p) => p.rPhase),
  steps: score.steps.map((s) => s.rStep),
  stepPhase: score.stepPhase,
  stepPool: StepKind.stepPools(steps),
  masked: score.masked,
  phaseKind: score.phases.map((p) => phaseKindKey(p.kind)),
  ...(score.actions !== undefined ? { actions: score.actions } : {}),
  ...(score.plans !== undefined ? { plans: score.plans } : {}),
  ...(score.kinds !== undefined ? { kinds: score.kinds } : {})
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
  /** Each phase's kind pool key from `RolloutRewards.phaseKind` (0 when absent), or −1; and 1 + the largest. */
  readonly phaseKind: Int32Array
  readonly phaseKindCount: number
  /** The attributable actions, step-major: reward, pool key (−1 masked), flat step index. */
  readonly actionReward: Float64Array
  readonly actionPool: Int32Array
  readonly actionPoolCount: number
  readonly actionStep: Int32Array
  /** Actions of flat step s are `[actionOffsets[s], actionOffsets[s + 1])`. */
  readonly actionOffsets: Int32Array
  /** Per flat step: r_plan of its plan decision, and its pool key (−1: no plan decision, or masked). */
  readonly planReward: Float64Array
  readonly planPool: Int32Array
  readonly planPoolCount: number
  /** Per flat step: the reward of its kind decision, and its pool key (−1: no free kind decision, or masked). */
  readonly kindReward: Float64Array
  readonly kindPool: Int32Array
  readonly kindPoolCount: number
  /** Whether any rollout brought action or plan rewards. */
  readonly credited: boolean
}

/** Per-step advantages, flat and aligned with `FlatGroup`'s steps. */
export interface FlatAdvantages {
  readonly traj: Float64Array
  readonly phase: Float64Array
  readonly step: Float64Array
  readonly combined: Float64Array
  readonly stepOffsets: Int32Array
  /**
   * Per-action credit **[ours]**, from estimators that give it: each action's combined advantage
   * (aligned with `FlatGroup.actionReward`, offsets `actionOffsets`), and each step's plan-bit advantage (the step's
   * combined advantage where it made no plan decision).
   */
  readonly action?: Float64Array
  readonly actionOffsets?: Int32Array
  readonly plan?: Float64Array
  /**
   * Each step's kind-decision advantage **[ours]** (go on with a search or a call, or answer), from estimators that
   * judge that decision apart from what the step did; absent: the step's combined advantage.
   */
  readonly kind?: Float64Array
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
  let phaseKindCount = 1
  let actionPoolCount = 1
  let planPoolCount = 1
  let kindPoolCount = 1
  let actionCount = 0
  let credited = false
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
    if (r.phaseKind !== undefined && r.phaseKind.length !== r.phases.length) {
      return invalid(`${r.phases.length} phase rewards but ${r.phaseKind.length} phase-kind keys`)
    }
    if (r.actions !== undefined && r.actions.length !== r.steps.length) {
      return invalid(`${r.steps.length} step rewards but ${r.actions.length} steps of action rewards`)
    }
    if (r.plans !== undefined && r.plans.length !== r.steps.length) {
      return invalid(`${r.steps.length} step rewards but ${r.plans.length} plan rewards`)
    }
    if (r.kinds !== undefined && r.kinds.length !== r.steps.length) {
      return invalid(`${r.steps.length} step rewards but ${r.kinds.length} kind rewards`)
    }
    const key = (what: string, k: number): InvalidGroup | undefined =>
      Number.isInteger(k) && k >= 0 && k < maxStepPools ? undefined : invalid(`${what} has pool key ${k}; keys are integers in [0, ${maxStepPools})`)
    for (let i = 0; i < (r.phaseKind?.length ?? 0); i++) {
      const k = r.phaseKind?.[i] as number
      const bad = key(`phase ${i}`, k)
      if (bad !== undefined) return bad
      phaseKindCount = Math.max(phaseKindCount, k + 1)
    }
    for (let i = 0; i < (r.actions?.length ?? 0); i++) {
      const acts = r.actions?.[i] ?? []
      for (let j = 0; j < acts.length; j++) {
        const a = acts[j] as ActionReward
        if (!Number.isFinite(a.reward)) return invalid(`step ${i} action ${j} reward is ${a.reward}`)
        const bad = key(`step ${i} action ${j}`, a.pool)
        if (bad !== undefined) return bad
        actionPoolCount = Math.max(actionPoolCount, a.pool + 1)
      }
      actionCount += acts.length
      credited = true
    }
    for (let i = 0; i < (r.plans?.length ?? 0); i++) {
      const p = r.plans?.[i]
      if (p === undefined) continue
      if (!Number.isFinite(p.reward)) return invalid(`step ${i} plan reward is ${p.reward}`)
      const bad = key(`step ${i} plan`, p.pool)
      if (bad !== undefined) return bad
      planPoolCount = Math.max(planPoolCount, p.pool + 1)
      credited = true
    }
    for (let i = 0; i < (r.kinds?.length ?? 0); i++) {
      const k = r.kinds?.[i]
      if (k === undefined) continue
      if (!Number.isFinite(k.reward)) return invalid(`step ${i} kind reward is ${k.reward}`)
      const bad = key(`step ${i} kind`, k.pool)
      if (bad !== undefined) return bad
      kindPoolCount = Math.max(kindPoolCount, k.pool + 1)
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
    maxSteps,
    phaseKind: new Int32Array(phaseCount),
    phaseKindCount,
    actionReward: new Float64Array(actionCount),
    actionPool: new Int32Array(actionCount),
    actionPoolCount,
    actionStep: new Int32Array(actionCount),
    actionOffsets: new Int32Array(stepCount + 1),
    planReward: new Float64Array(stepCount),
    planPool: new Int32Array(stepCount).fill(-1),
    planPoolCount,
    kindReward: new Float64Array(stepCount),
    kindPool: new Int32Array(stepCount).fill(-1),
    kindPoolCount,
    credited
  }
  let p0 = 0
  let s0 = 0
  let a0 = 0
  rollouts.forEach((r, g) => {
    const masked = r.masked === true
    group.traj[g] = r.traj
    group.masked[g] = masked ? 1 : 0
    group.trajKey[g] = masked ? -1 : 0
    r.phases.forEach((x, i) => {
      group.phaseReward[p0 + i] = x
      group.phaseKey[p0 + i] = masked ? -1 : 0
      group.phaseIndex[p0 + i] = masked ? -1 : i
      group.phaseKind[p0 + i] = masked ? -1 : r.phaseKind === undefined ? 0 : (r.phaseKind[i] as number)
    })
    group.stepOffsets[g] = s0
    r.steps.forEach((x, i) => {
      group.stepReward[s0 + i] = x
      group.stepKey[s0 + i] = masked ? -1 : 0
      group.stepIndex[s0 + i] = masked ? -1 : i
      group.stepPool[s0 + i] = masked ? -1 : r.stepPool === undefined ? 0 : (r.stepPool[i] as number)
      group.stepRollout[s0 + i] = g
      group.stepPhase[s0 + i] = p0 + (r.stepPhase[i] as number)
      group.actionOffsets[s0 + i] = a0
      for (const a of r.actions?.[i] ?? []) {
        group.actionReward[a0] = a.reward
        group.actionPool[a0] = masked ? -1 : a.pool
        group.actionStep[a0] = s0 + i
        a0++
      }
      const plan = r.plans?.[i]
      if (plan !== undefined) {
        group.planReward[s0 + i] = plan.reward
        group.planPool[s0 + i] = masked ? -1 : plan.pool
      }
      const kind = r.kinds?.[i]
      if (kind !== undefined) {
        group.kindReward[s0 + i] = kind.reward
        group.kindPool[s0 + i] = masked ? -1 : kind.pool
      }
    })
    p0 += r.phases.length
    s0 += r.steps.length
  })
  group.stepOffsets[rollouts.length] = s0
  group.actionOffsets[s0] = a0
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

const phasesByKind = (group: FlatGroup, config: AdvantageConfig): Float64Array =>
  normalise(group.phaseReward, group.phaseKind, group.phaseKindCount, config.epsilon, config.tolerance)

/**
 * The decoupled estimator with phases normalised **by phase kind** **[ours]**: an explore phase only against the
 * group's explore phases, an execute phase against execute phases (pooled together, explore phases carried a
 * kind offset: their L's are not distributed like an execute phase's). Steps by action kind, as `paraagent`.
 */
export const paraagentPhaseKind: Estimator = (group, config) =>
  combine(
    group,
    trajLevel(group, config),
    phasesByKind(group, config),
    normalise(group.stepReward, group.stepPool, group.stepPoolCount, config.epsilon, config.tolerance),
    lambdas(config)
  )

/**
 * {@link paraagentPhaseKind} plus **per-action credit** **[ours]**: each attributable action (a call, a search) gets
 * λτ·A_traj + λp·A_phase + λs·A_action, its own reward normalised among the group's actions of its pool (calls with
 * calls, searches with searches); each plan decision gets λτ·A_traj + λp·A_phase + λs·A_plan, r_plan normalised among
 * the group's plan decisions made in the same controller state. A trainer applies them to the factors of the turn's
 * probability that made those decisions; the step's combined advantage stays for the rest (the kind, unchosen
 * candidates, an answer's facts). Without action or plan rewards in the group it is {@link paraagentPhaseKind}.
 */
export const paraagentCredit: Estimator = (group, config) => {
  const traj = trajLevel(group, config)
  const phase = phasesByKind(group, config)
  const base = combine(group, traj, phase, normalise(group.stepReward, group.stepPool, group.stepPoolCount, config.epsilon, config.tolerance), lambdas(config))
  if (!group.credited) return base
  return withActionCredit(group, config, base, (s) => config.lambdaTraj * (base.traj[s] as number) + config.lambdaPhase * (base.phase[s] as number))
}

/**
 * Per-action credit on top of an estimator's step advantages: each action gets `shared(its step)` + λs·z(its reward |
 * the group's actions of its pool), each plan decision `shared(its step)` + λs·z(r_plan | the group's plan decisions
 * in its controller state); a step that made no plan decision keeps its combined advantage on the plan bit, a masked
 * action gets 0.
 */
const withActionCredit = (group: FlatGroup, config: AdvantageConfig, base: FlatAdvantages, shared: (step: number) => number): FlatAdvantages => {
  const actionZ = normalise(group.actionReward, group.actionPool, group.actionPoolCount, config.epsilon, config.tolerance)
  const planZ = normalise(group.planReward, group.planPool, group.planPoolCount, config.epsilon, config.tolerance)
  const action = new Float64Array(actionZ.length)
  for (let a = 0; a < action.length; a++) {
    action[a] = group.actionPool[a] === -1 ? 0 : shared(group.actionStep[a] as number) + config.lambdaStep * (actionZ[a] as number)
  }
  const plan = new Float64Array(group.stepReward.length)
  for (let s = 0; s < plan.length; s++) {
    plan[s] = group.planPool[s] === -1 ? (base.combined[s] as number) : shared(s) + config.lambdaStep * (planZ[s] as number)
  }
  return { ...base, action, actionOffsets: group.actionOffsets, plan }
}

/**
 * {@link paraagentCredit} with the **kind decision judged by the outcome only** **[ours]**: each step's decision to go
 * on (search, call) or to answer gets λτ·A_traj, not the step's combined advantage. The step and phase rewards grade
 * what a step did, and their coverage terms are front-loaded — the first phases find and satisfy most needs, so a
 * late step scores below an early one of the same kind whatever it did — so on the kind factor they price *when* a
 * decision is made, not whether it was right: in the trained groups of a `paraagent_credit` run the last three
 * "go on" decisions of a rollout carried −0.16 on average (phase −0.20, step −0.25), the earlier ones +0.27, and the
 * policy learned to answer sooner. Candidates and the plan bit keep their credit as in {@link paraagentCredit}.
 */
export const paraagentCreditStop: Estimator = (group, config) => {
  const base = paraagentCredit(group, config)
  return { ...base, kind: base.traj.map((t) => config.lambdaTraj * t) }
}

/**
 * **Attributed credit** **[ours]**: every decision of a turn is judged by the outcome, λτ·A_traj — the kind, an
 * answer's facts, unchosen candidates — and a decision whose own reward is attributable gets it on top: a chosen call
 * or search λτ·A_traj + λs·z(its action reward | the group's actions of its pool), the plan bit λτ·A_traj +
 * λs·z(r_plan | the group's plan decisions in its controller state). No phase or step level: their coverage terms are
 * front-loaded (a late phase or step of a rollout scores below an early one whatever it did), so on the factors they
 * share they price *when* a decision is made — in `paraagent_credit`'s trained groups the answer steps' phase
 * advantage averaged −0.25 and late "go on" decisions −0.16 (docs/reward.md §11). Without action or plan rewards in
 * the group it is {@link grpo} scaled by λτ.
 */
export const paraagentAttributed: Estimator = (group, config) => {
  const base = combine(group, trajLevel(group, config), undefined, undefined, { traj: config.lambdaTraj, phase: 0, step: 0 })
  return group.credited ? withActionCredit(group, config, base, (s) => base.combined[s] as number) : base
}

/**
 * {@link paraagentAttributed} with the **stop decision's own reward** **[ours]**: the kind decision of each step (go on
 * or answer) gets λτ·A_traj + λs·z(r_kind | the group's kind decisions of its pool), r_kind 0 for going on when every
 * gold fact had already been observed (the round was not needed to answer) and 1 otherwise (src/math/Credit.ts
 * `kindRewards`). Without it a round spent after the evidence is complete costs nothing — a
 * rollout that reached T_max is judged like one that answered as soon as it could — and RL policies ran to T_max
 * (docs/training.md §6). Steps without a free kind decision keep the step's advantage on the kind. Without kind
 * rewards in the group it is {@link paraagentAttributed}.
 */
export const paraagentAttributedStop: Estimator = (group, config) => {
  const base = paraagentAttributed(group, config)
  const z = normalise(group.kindReward, group.kindPool, group.kindPoolCount, config.epsilon, config.tolerance)
  const kind = new Float64Array(group.stepReward.length)
  for (let s = 0; s < kind.length; s++) {
    kind[s] = (base.combined[s] as number) + (group.kindPool[s] === -1 ? 0 : config.lambdaStep * (z[s] as number))
  }
  return { ...base, kind }
}

/** The zero-advantage control **[ours]**: every advantage 0, so an update is the KL and entropy terms alone. */
export const zero: Estimator = (group) => {
  const n = group.stepReward.length
  return { traj: new Float64Array(n), phase: new Float64Array(n), step: new Float64Array(n), combined: new Float64Array(n), stepOffsets: group.stepOffsets }
}

/** Estimators by name. */
export type Registry = ReadonlyMap<string, Estimator>

/** The estimator used when none is named. */
export const defaultEstimator = "paraagent"

/**
 * The built-in estimators: `grpo`, `paraagent` (default), `paraagent_single_pool`, `grpo_per_index`,
 * `paraagent_phase_kind`, `paraagent_credit`, `paraagent_credit_stop`, `paraagent_attributed`,
 * `paraagent_attributed_stop` and the `zero` control. A program passes its own registry as a value
 * (`Scoring`'s `Estimators` service): this constant is only the default.
 */
export const estimators: Registry = new Map<string, Estimator>([
  ["grpo", grpo],
  ["paraagent", paraagent],
  ["paraagent_single_pool", paraagentSinglePool],
  ["grpo_per_index", grpoPerIndex],
  ["paraagent_phase_kind", paraagentPhaseKind],
  ["paraagent_credit", paraagentCredit],
  ["paraagent_credit_stop", paraagentCreditStop],
  ["paraagent_attributed", paraagentAttributed],
  ["paraagent_attributed_stop", paraagentAttributedStop],
  ["zero", zero]
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
  const { action, actionOffsets, plan, kind } = advantages
  for (let g = 0; g + 1 < advantages.stepOffsets.length; g++) {
    const rows: Array<StepAdvantage> = []
    for (let i = advantages.stepOffsets[g] as number; i < (advantages.stepOffsets[g + 1] as number); i++) {
      const credit = action === undefined || actionOffsets === undefined || plan === undefined
        ? {}
        : { actions: Array.from(action.subarray(actionOffsets[i] as number, actionOffsets[i + 1] as number)), plan: plan[i] as number }
      rows.push({
        traj: advantages.traj[i] as number,
        phase: advantages.phase[i] as number,
        step: advantages.step[i] as number,
        combined: advantages.combined[i] as number,
        ...credit,
        ...(kind === undefined ? {} : { kind: kind[i] as number })
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
