/**
 * The rule judge on 1 MB adversarial answers (issue 13: judged in ≤ 1 s), and how the fact extractor's time grows
 * with its input: 16× the input against 16× the time (linear) or 256× (the old quadratic extractor), side by side in
 * one run. Run: `npx tsx bench/judge-linear.ts [--reps 3]`.
 */
import { Flag } from "effect/cli"
import { intFlag } from "../src/eval/RunConfig.ts"
import * as Text from "../src/judge/FactTokens.ts"
import * as RuleJudge from "../src/judge/RuleJudge.ts"
import { adversarialAnswers, fullEvidence, makeTrajectory, scorerTask } from "../test/judge/fixtures.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("judge-linear", "The rule judge on 1 MB adversarial answers; the extractor's growth with input size", {
  reps: intFlag("reps", { minimum: 1, maximum: 20 }, "repetitions per measurement (the best is kept)").pipe(Flag.withDefault(3))
})

const best = (f: () => void): number => {
  let ms = Number.POSITIVE_INFINITY
  for (let i = 0; i < flags.reps; i++) {
    const start = performance.now()
    f()
    ms = Math.min(ms, performance.now() - start)
  }
  return ms
}

const targetMs = 1_000
let worst = 0
console.log("| 1 MB answer | judged in ms (best of reps) | ratio to the 1 s target |")
console.log("|---|---:|---:|")
for (const [name, answer] of adversarialAnswers) {
  const trajectory = makeTrajectory(scorerTask, [[fullEvidence()]], answer)
  const ms = best(() => RuleJudge.judgeRule(scorerTask, trajectory))
  worst = Math.max(worst, ms)
  console.log(`| ${name} | ${ms.toFixed(0)} | ${(ms / targetMs).toFixed(2)} |`)
}

const extract = (n: number) => () => {
  Text.extractFactTokens("A".repeat(n))
  Text.extractFactTokens("AB ".repeat(Math.floor(n / 3)))
}
best(extract(4_000))
const small = best(extract(64 * 1024))
const large = best(extract(1024 * 1024))
console.log(`\nextraction 64 KiB ${small.toFixed(1)} ms, 1 MiB ${large.toFixed(1)} ms: 16× the input took ${(large / Math.max(small, 0.01)).toFixed(1)}× the time (linear 16×, quadratic 256×)`)
console.log(`worst 1 MB answer ${worst.toFixed(0)} ms: ratio ${(worst / targetMs).toFixed(2)} of the 1 s target`)
