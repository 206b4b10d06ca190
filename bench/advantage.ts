/**
 * Advantage estimators: the flat Float64Array kernels against the straightforward loop implementation, timed
 * side by side in one run on the same seeded groups. Run: `npx tsx bench/advantage.ts`.
 */
import * as Advantage from "../src/math/Advantage.ts"
import { rng } from "../src/math/Random.ts"
import { defaultRewardConfig } from "../src/math/Reward.ts"
import * as Stats from "../src/math/Stats.ts"
import { loopEstimate } from "../test/math/AdvantageLoop.ts"
import * as BenchFlags from "./BenchFlags.ts"

// no flags: an unknown one is refused before any work
await BenchFlags.parse("advantage", "Advantage estimators: the flat Float64Array kernels against the loop implementation", {})

const config = defaultRewardConfig.advantage
const random = rng(20260927)

/** A group of G rollouts of 1–12 steps (T_max) in 1–4 phases, rewards uniform in [0, 1). */
const makeGroup = (size: number): ReadonlyArray<Advantage.RolloutRewards> =>
  Array.from({ length: size }, () => {
    const steps = 1 + random.int(12)
    const phases = Math.min(steps, 1 + random.int(4))
    return {
      traj: random.next(),
      phases: Array.from({ length: phases }, () => random.next()),
      steps: Array.from({ length: steps }, () => random.next()),
      stepPhase: Array.from({ length: steps }, (_, i) => Math.floor((i * phases) / steps))
    }
  })

/** Median µs per call of `f` over 7 timed repetitions of `n` calls, after a warm-up. */
const time = (n: number, f: () => unknown): number => {
  for (let i = 0; i < n; i++) f()
  const samples: Array<number> = []
  for (let rep = 0; rep < 7; rep++) {
    const t0 = performance.now()
    for (let i = 0; i < n; i++) f()
    samples.push(((performance.now() - t0) / n) * 1e3)
  }
  return Stats.p50(samples)
}

console.log("estimator paraagent: loop implementation vs flat kernels (median µs per group; ratio = loop / flat)")
for (const size of [8, 16, 64]) {
  const group = makeGroup(size)
  const flat = Advantage.flatten(group)
  if (flat._tag === "InvalidGroup") {
    console.log(`G=${size}: invalid group: ${flat.message}`)
    continue
  }
  const n = Math.max(200, Math.round(40_000 / size))
  const loop = time(n, () => loopEstimate("paraagent", group, config))
  const kernel = time(n, () => Advantage.paraagent(flat.group, config))
  const endToEnd = time(n, () => Advantage.compute("paraagent", group, config))
  const steps = group.reduce((a, r) => a + r.steps.length, 0)
  console.log(
    `G=${String(size).padStart(2)} steps=${String(steps).padStart(3)}  loop ${loop.toFixed(1).padStart(6)}  ` +
      `kernel ${kernel.toFixed(1).padStart(6)} (x${(loop / kernel).toFixed(1)})  ` +
      `compute incl. flatten/unflatten ${endToEnd.toFixed(1).padStart(6)} (x${(loop / endToEnd).toFixed(1)})`
  )
}
