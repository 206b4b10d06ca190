/**
 * The rule judge's cost per answer stays linear with its caps (issue 13, issue 24): the 1 MB adversarial answers of
 * test/judge/Adversarial.test.ts judged side by side with the honest answer, median of `--runs` runs each, and the
 * growth from 64 KB to 1 MB of the same input (the reader normalises at most a few read limits, so it is flat).
 * Targets: every 1 MB answer ≤ 1 s; the 64 KB → 1 MB ratio far below 16 (linear would be 16, quadratic 256).
 * Run: `npx tsx bench/judge-adversarial.ts [--runs 5] [--json]`.
 */
import { Flag } from "effect/cli"
import * as RuleJudge from "../src/judge/RuleJudge.ts"
import { fullEvidence, makeTrajectory, scorerTask } from "../test/judge/fixtures.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as BenchFlags from "./BenchFlags.ts"

const flags = await BenchFlags.parse("judge-adversarial", "the rule judge on 1 MB adversarial answers, side by side with the honest answer", {
  runs: Flag.Int("runs").pipe(Flag.withSchema(RunConfig.IntIn({ minimum: 1, maximum: 100 })), Flag.withDescription("runs per case (the median is shown)"), Flag.withDefault(5)),
  json: Flag.Boolean("json").pipe(Flag.withDescription("end with one JSON line"), Flag.withDefault(false))
})

const MB = 1 << 20
const fill = (unit: string, size = MB): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size)

/** The cases of test/judge/Adversarial.test.ts, and a few that stress the claim reader's own passes. */
const units: ReadonlyArray<readonly [string, string]> = [
  ["a capital run", "A"],
  ["capital words", "AB "],
  ["dotted capitals", "A."],
  ["a digit run", "7"],
  ["digits with separators", "1.2,"],
  ["a quote run", "\""],
  ["single quotes", "'a"],
  ["backticks", "`x"],
  ["ids", "A-1-"],
  ["dates", "2024-03-05 "],
  ["month dates", "March 5, 2024 "],
  ["list markers", "1.\n"],
  ["bold labels", "**Top Scorer:** "],
  ["mixed", "Stephen Curry 31 \"T-42\" 2024-03-05 ORD-17 12:30 A.B-C 42km "],
  ["copulas", "x is "],
  ["labels", "a: b; "],
  ["hedges and negations", "31 or not "],
  ["number words", "forty one thousand "],
  ["zero-width characters", "31\u200b"],
  ["table rows", "| a | 31 |\n"]
]

const median = (xs: ReadonlyArray<number>): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN

const time = (answer: string): number => {
  const trajectory = makeTrajectory(scorerTask, [[fullEvidence()]], answer)
  const runs: Array<number> = []
  for (let i = 0; i < flags.runs; i++) {
    const start = performance.now()
    RuleJudge.judgeRule(scorerTask, trajectory)
    runs.push(performance.now() - start)
  }
  return median(runs)
}

const honestAnswer = "The Golden State Warriors' top scorer was Stephen Curry with 31 points."
time(honestAnswer)
const honest = time(honestAnswer)
console.log(`honest answer: ${honest.toFixed(2)} ms (median of ${flags.runs}); 1 MB answers:`)
console.log("case                         1 MB ms   × honest   64 KB ms   1 MB / 64 KB")
const rows: Array<{ readonly name: string; readonly ms: number; readonly small: number }> = []
for (const [name, unit] of units) {
  const ms = time(fill(unit))
  const small = time(fill(unit, 64 * 1024))
  rows.push({ name, ms, small })
  console.log(`${name.padEnd(28)} ${ms.toFixed(1).padStart(8)} ${(ms / honest).toFixed(0).padStart(10)} ${small.toFixed(1).padStart(10)} ${(ms / small).toFixed(2).padStart(14)}`)
}
const worst = rows.reduce((w, r) => (r.ms > w.ms ? r : w))
const growth = Math.max(...rows.map((r) => r.ms / r.small))
console.log(`worst 1 MB answer: ${worst.name} ${worst.ms.toFixed(1)} ms (target ≤ 1000); largest 64 KB → 1 MB growth ${growth.toFixed(2)}× (linear 16×, quadratic 256×)`)
if (flags.json) console.log(JSON.stringify({ honestMs: honest, cases: rows, worst: { name: worst.name, ms: worst.ms }, growth }))
