/**
 * The straightforward implementation of the advantage estimators: nested arrays, a two-pass mean and std per
 * pool, one object per step. The flat kernels of src/math/Advantage.ts are checked against it (and timed against it in bench/advantage.ts).
 */
import type { StepAdvantage } from "../../src/domain/Trajectory.ts"
import type { AdvantageConfig, RolloutRewards } from "../../src/math/Advantage.ts"
import * as Stats from "../../src/math/Stats.ts"

/** The estimator names the loop implements. */
export type LoopEstimator = "grpo" | "paraagent" | "paraagent_single_pool" | "grpo_per_index" | "paraagent_phase_kind" | "paraagent_credit" | "paraagent_credit_stop" | "paraagent_attributed" | "paraagent_attributed_stop" | "zero"

/**
 * (x − mean)/(std + ε) with a two-pass mean and population std; a pool whose values all lie within `tolerance`
 * of each other (or are all equal, or a single one) gives 0.
 */
export const zscores = (xs: ReadonlyArray<number>, epsilon: number, tolerance = 0): Array<number> => {
  const m = Stats.mean(xs)
  const s = Stats.std(xs)
  const spread = xs.length === 0 ? 0 : Math.max(...xs) - Math.min(...xs)
  const degenerate = xs.every((x) => x === xs[0]) || spread < tolerance
  return xs.map((x) => (degenerate ? 0 : (x - m) / (s + epsilon)))
}

/** Normalises values grouped by a key; returns each value's score in input order. */
const byPools = (items: ReadonlyArray<{ readonly key: number; readonly value: number }>, epsilon: number, tolerance: number): Array<number> => {
  const pools = new Map<number, Array<number>>()
  items.forEach(({ key }, i) => {
    const pool = pools.get(key)
    if (pool === undefined) pools.set(key, [i])
    else pool.push(i)
  })
  const out = items.map(() => 0)
  for (const indices of pools.values()) {
    const z = zscores(indices.map((i) => items[i]?.value ?? 0), epsilon, tolerance)
    indices.forEach((i, j) => (out[i] = z[j] ?? 0))
  }
  return out
}

/** The estimators on the rollouts that are not masked, as if the masked ones were not in the group. */
const estimateUnmasked = (name: LoopEstimator, rollouts: ReadonlyArray<RolloutRewards>, config: AdvantageConfig): Array<Array<StepAdvantage>> => {
  const tol = config.tolerance
  const traj = zscores(rollouts.map((r) => r.traj), config.epsilon, tol)
  const withCredit = name === "paraagent_credit" || name === "paraagent_credit_stop"
  const byKind = name === "paraagent_phase_kind" || withCredit
  const phaseKey = (r: RolloutRewards, p: number) => (name === "grpo_per_index" ? p : byKind ? (r.phaseKind?.[p] ?? 0) : 0)
  const stepKey = (r: RolloutRewards, i: number) =>
    name === "grpo_per_index" ? i : name === "paraagent" || byKind ? (r.stepPool?.[i] ?? 0) : 0
  const phaseZ = byPools(rollouts.flatMap((r) => r.phases.map((value, p) => ({ value, key: phaseKey(r, p) }))), config.epsilon, tol)
  const stepZ = byPools(rollouts.flatMap((r) => r.steps.map((value, i) => ({ value, key: stepKey(r, i) }))), config.epsilon, tol)
  // per-action credit: each action against the group's actions of its pool, each plan decision against the group's of its state
  const actionZ = byPools(rollouts.flatMap((r) => r.steps.flatMap((_, i) => (r.actions?.[i] ?? []).map((a) => ({ value: a.reward, key: a.pool })))), config.epsilon, tol)
  const plans = rollouts.flatMap((r) => r.steps.flatMap((_, i) => { const p = r.plans?.[i]; return p === undefined ? [] : [{ value: p.reward, key: p.pool }] }))
  const planZ = byPools(plans, config.epsilon, tol)
  // the kind decisions (attributed_stop): each against the group's kind decisions of its pool
  const kinds = rollouts.flatMap((r) => r.steps.flatMap((_, i) => { const k = r.kinds?.[i]; return k === undefined ? [] : [{ value: k.reward, key: k.pool }] }))
  const kindZ = byPools(kinds, config.epsilon, tol)
  const credited = rollouts.some((r) => r.actions !== undefined || r.plans !== undefined)
  let phaseStart = 0
  let stepStart = 0
  let actionAt = 0
  let planAt = 0
  let kindAt = 0
  return rollouts.map((r, g) => {
    const t = traj[g] ?? 0
    const rows = r.steps.map((_, i): StepAdvantage => {
      if (name === "zero") return { traj: 0, phase: 0, step: 0, combined: 0 }
      if (name === "grpo") return { traj: t, phase: 0, step: 0, combined: t }
      if (name === "paraagent_attributed" || name === "paraagent_attributed_stop") {
        const combined = config.lambdaTraj * t
        const kind = name === "paraagent_attributed_stop"
          ? { kind: r.kinds?.[i] === undefined ? combined : combined + config.lambdaStep * (kindZ[kindAt++] ?? 0) }
          : {}
        if (!credited) return { traj: t, phase: 0, step: 0, combined, ...kind }
        const actions = (r.actions?.[i] ?? []).map(() => combined + config.lambdaStep * (actionZ[actionAt++] ?? 0))
        const plan = r.plans?.[i] === undefined ? combined : combined + config.lambdaStep * (planZ[planAt++] ?? 0)
        return { traj: t, phase: 0, step: 0, combined, actions, plan, ...kind }
      }
      const p = phaseZ[phaseStart + (r.stepPhase[i] ?? 0)] ?? 0
      const s = stepZ[stepStart + i] ?? 0
      const combined = config.lambdaTraj * t + config.lambdaPhase * p + config.lambdaStep * s
      const kind = name === "paraagent_credit_stop" ? { kind: config.lambdaTraj * t } : {}
      if (!withCredit || !credited) return { traj: t, phase: p, step: s, combined, ...kind }
      const shared = config.lambdaTraj * t + config.lambdaPhase * p
      const actions = (r.actions?.[i] ?? []).map(() => shared + config.lambdaStep * (actionZ[actionAt++] ?? 0))
      const plan = r.plans?.[i] === undefined ? combined : shared + config.lambdaStep * (planZ[planAt++] ?? 0)
      return { traj: t, phase: p, step: s, combined, actions, plan, ...kind }
    })
    phaseStart += r.phases.length
    stepStart += r.steps.length
    return rows
  })
}

/**
 * The estimators `grpo`, `paraagent` (steps pooled by `stepPool`), `paraagent_single_pool` and `grpo_per_index`,
 * written as plainly as possible: the masked rollouts are removed, the rest estimated, and the masked ones put
 * back with 0 at every level.
 */
export const loopEstimate = (name: LoopEstimator, rollouts: ReadonlyArray<RolloutRewards>, config: AdvantageConfig): Array<Array<StepAdvantage>> => {
  const kept = rollouts.filter((r) => r.masked !== true)
  const estimated = estimateUnmasked(name, kept, config)
  let k = 0
  const credited = (name === "paraagent_credit" || name === "paraagent_credit_stop" || name === "paraagent_attributed" || name === "paraagent_attributed_stop") &&
    rollouts.some((r) => r.actions !== undefined || r.plans !== undefined)
  return rollouts.map((r) =>
    r.masked === true
      ? r.steps.map((_, i): StepAdvantage => ({
        traj: 0,
        phase: 0,
        step: 0,
        combined: 0,
        ...(credited ? { actions: (r.actions?.[i] ?? []).map(() => 0), plan: 0 } : {}),
        ...(name === "paraagent_credit_stop" || name === "paraagent_attributed_stop" ? { kind: 0 } : {})
      }))
      : (estimated[k++] ?? [])
  )
}
