/**
 * The rule judge on 1 MB adversarial answers (issues 13, 24: each judged in ≤ 1 s), side by side with the honest answer
 * in one run, and how each case's time grows from 64 KB to 1 MB of the same text (the reader normalises a few read
 * limits at most, so flat; linear would be 16×, the old quadratic extractor 256×); then the fact extractor alone.
 * The cases are test/judge/fixtures.ts's `adversarialAnswers` (the test checks their verdicts).
 * Run: `npx tsx bench/judge-linear.ts [--reps 3] [--json]`.
 */
import { Flag } from "effect/cli"
import { intFlag } from "../src/eval/RunConfig.ts"
import * as Text from "../src/judge/FactTokens.ts"
import * as RuleJudge from "../src/judge/RuleJudge.ts"
import { adversarialAnswers, fullEvidence, makeTrajectory, scorerTask } from "../test/judge/fixtures.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("judge-linear", "The rule judge on 1 MB adversarial answers; the growth with input size", {
  reps: intFlag("reps", { minimum: 1, maximum: 20 }, "repetitions per measurement (the best is kept)").pipe(Flag.withDefault(3)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line"), Flag.withDefault(false))
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

const judged = (answer: string): number => {
  const trajectory = makeTrajectory(scorerTask, [[fullEvidence()]], answer)
  return best(() => RuleJudge.judgeRule(scorerTask, trajectory))
}

const targetMs = 1_000
const honestAnswer = "The Golden State Warriors' top scorer was Stephen Curry with 31 points."
judged(honestAnswer)
const honest = judged(honestAnswer)
console.log(`honest answer: ${honest.toFixed(2)} ms (best of ${flags.reps})\n`)
console.log("| 1 MB answer | judged in ms | × honest | ratio to the 1 s target | 64 KB ms | 1 MB / 64 KB |")
console.log("|---|---:|---:|---:|---:|---:|")
const rows: Array<{ readonly name: string; readonly ms: number; readonly small: number }> = []
for (const [name, answer] of adversarialAnswers) {
  const ms = judged(answer)
  const small = judged(answer.slice(0, 64 * 1024))
  rows.push({ name, ms, small })
  const growth = ms / Math.max(small, 0.01)
  console.log(`| ${name} | ${ms.toFixed(1)} | ${(ms / honest).toFixed(0)} | ${(ms / targetMs).toFixed(2)} | ${small.toFixed(1)} | ${growth.toFixed(2)} |`)
}

// the inputs are built before the clock starts: only the extraction is timed
const extract = (n: number) => {
  const capitals = "A".repeat(n)
  const words = "AB ".repeat(Math.floor(n / 3))
  return () => {
    Text.extractFactTokens(capitals)
    Text.extractFactTokens(words)
  }
}
best(extract(4_000))
const small = best(extract(64 * 1024))
const large = best(extract(1024 * 1024))
const worst = rows.reduce((w, r) => (r.ms > w.ms ? r : w))
const growth = Math.max(...rows.map((r) => r.ms / Math.max(r.small, 0.01)))
console.log(`\nextraction 64 KiB ${small.toFixed(1)} ms, 1 MiB ${large.toFixed(1)} ms: 16× the input took ${(large / Math.max(small, 0.01)).toFixed(1)}× the time (it reads a bounded head: flat; linear 16×, quadratic 256×)`)
console.log(`worst 1 MB answer: ${worst.name} ${worst.ms.toFixed(0)} ms: ratio ${(worst.ms / targetMs).toFixed(2)} of the 1 s target; largest 64 KB → 1 MB growth of a judged case ${growth.toFixed(1)}×`)
if (flags.json) console.log(JSON.stringify({ honestMs: honest, cases: rows, worst: { name: worst.name, ms: worst.ms }, growth, extraction: { smallMs: small, largeMs: large } }))
