/**
 * The straightforward implementation of the advantage estimators: nested arrays, a two-pass mean and std per
 * pool, one object per step. The flat kernels of src/math/Advantage.ts are checked against it (and timed against it in bench/advantage.ts).
 */
import type { StepAdvantage } from "../../src/domain/Trajectory.ts"
import type { AdvantageConfig, RolloutRewards } from "../../src/math/Advantage.ts"
import * as Stats from "../../src/math/Stats.ts"

/** (x − mean)/(std + ε) with a two-pass mean and population std; an all-equal (or single) pool gives 0. */
export const zscores = (xs: ReadonlyArray<number>, epsilon: number): Array<number> => {
  const m = Stats.mean(xs)
  const s = Stats.std(xs)
  const degenerate = xs.every((x) => x === xs[0])
  return xs.map((x) => (degenerate ? 0 : (x - m) / (s + epsilon)))
}

/** Normalises values grouped by a key; returns each value's score in input order. */
const byPools = (items: ReadonlyArray<{ readonly key: number; readonly value: number }>, epsilon: number): Array<number> => {
  const pools = new Map<number, Array<number>>()
  items.forEach(({ key }, i) => {
    const pool = pools.get(key)
    if (pool === undefined) pools.set(key, [i])
    else pool.push(i)
  })
  const out = items.map(() => 0)
  for (const indices of pools.values()) {
    const z = zscores(indices.map((i) => items[i]?.value ?? 0), epsilon)
    indices.forEach((i, j) => (out[i] = z[j] ?? 0))
  }
  return out
}

/** The estimators `grpo`, `paraagent` and `grpo_per_index`, written as plainly as possible. */
export const loopEstimate = (
  name: "grpo" | "paraagent" | "grpo_per_index",
  rollouts: ReadonlyArray<RolloutRewards>,
  config: AdvantageConfig
): Array<Array<StepAdvantage>> => {
  const traj = zscores(rollouts.map((r) => r.traj), config.epsilon)
  const phaseZ = byPools(rollouts.flatMap((r) => r.phases.map((value, p) => ({ value, key: name === "paraagent" ? 0 : p }))), config.epsilon)
  const stepZ = byPools(rollouts.flatMap((r) => r.steps.map((value, i) => ({ value, key: name === "paraagent" ? 0 : i }))), config.epsilon)
  let phaseStart = 0
  let stepStart = 0
  return rollouts.map((r, g) => {
    const t = traj[g] ?? 0
    const rows = r.steps.map((_, i) => {
      if (name === "grpo") return { traj: t, phase: 0, step: 0, combined: t }
      const p = phaseZ[phaseStart + (r.stepPhase[i] ?? 0)] ?? 0
      const s = stepZ[stepStart + i] ?? 0
      return { traj: t, phase: p, step: s, combined: config.lambdaTraj * t + config.lambdaPhase * p + config.lambdaStep * s }
    })
    phaseStart += r.phases.length
    stepStart += r.steps.length
    return rows
  })
}
