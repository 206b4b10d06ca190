import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import type { Grade, Verdict } from "../../src/domain/Trajectory.ts"
import { Judge } from "../../src/judge/Judge.ts"
import * as Agreement from "../../src/judge/Agreement.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { makeTask, makeTrajectory, patternCases, scorerTask } from "./fixtures.ts"
import { safetyBoundMs } from "../support/Bounds.ts"

const g = (bit: string, partial = false): Grade => (bit === "1" ? "YES" : partial ? "PARTIAL" : "NO")

/**
 * Human verdicts on the eight pattern trajectories: equal to the rule judge's bits except where noted.
 * Quality: 100 → human PARTIAL (1 disagreement). Faithfulness: 111 → PARTIAL, 001 → YES (2).
 * Utility: 010 → YES, 011 → PARTIAL, 101 → NO (3).
 */
const humanFor = (p: string) => {
  const [q = "0", f = "0", u = "0"] = p.split("")
  const human = { quality: g(q), faithfulness: g(f), utility: g(u) }
  if (p === "100") human.quality = "PARTIAL"
  if (p === "111") human.faithfulness = "PARTIAL"
  if (p === "001") human.faithfulness = "YES"
  if (p === "010") human.utility = "YES"
  if (p === "011") human.utility = "PARTIAL"
  if (p === "101") human.utility = "NO"
  return human
}

const goodLines = () =>
  patternCases().map((c) => JSON.stringify({ id: `case-${c.pattern}`, task: scorerTask, trajectory: c.trajectory, human: humanFor(c.pattern) }))

const noFactsTask = makeTask("nofacts", "Say hello.", [])

/** 8 good lines, a blank line, malformed JSON, a bad grade, a trajectory of another task, and an item the rule judge cannot grade. */
const jsonl = (): string => {
  const lines = goodLines()
  return [
    ...lines.slice(0, 4),
    "",
    "{\"task\": ",
    JSON.stringify({ task: scorerTask, trajectory: patternCases()[0]!.trajectory, human: { quality: "MAYBE", faithfulness: "YES", utility: "YES" } }),
    ...lines.slice(4),
    JSON.stringify({ task: noFactsTask, trajectory: patternCases()[0]!.trajectory, human: humanFor("111") }),
    JSON.stringify({ id: "no-facts", task: noFactsTask, trajectory: makeTrajectory(noFactsTask, [], "Hello!"), human: humanFor("111") })
  ].join("\n")
}

describe("agreement harness", () => {
  it("parses JSONL, reporting bad lines by number with the reason", () => {
    const parsed = Agreement.parseJsonl(jsonl())
    assert.strictEqual(parsed.records.length, 9)
    assert.deepStrictEqual(parsed.errors.map((e) => e.line), [6, 7, 12])
    assert.include(parsed.errors[0]?.message ?? "", "JSON")
    assert.include(parsed.errors[1]?.message ?? "", `["human"]["quality"]`)
    assert.include(parsed.errors[2]?.message ?? "", "is not task.id")
    assert.deepStrictEqual(parsed.records.map((r) => r.line), [1, 2, 3, 4, 8, 9, 10, 11, 13])
  })

  it.effect("scores the rule judge against the humans: exact accuracies and confusion counts", () =>
    Effect.gen(function*() {
      const judge = yield* Judge
      const report = yield* Agreement.run(judge, Agreement.parseJsonl(jsonl()))
      assert.strictEqual(report.judge, "rule")
      assert.strictEqual(report.n, 8)
      assert.strictEqual(report.criteria.quality.accuracy, 7 / 8)
      assert.strictEqual(report.criteria.faithfulness.accuracy, 6 / 8)
      assert.strictEqual(report.criteria.utility.accuracy, 5 / 8)
      assert.deepStrictEqual(report.criteria.quality.confusion, { yesYes: 3, yesNo: 1, noYes: 0, noNo: 4 })
      assert.deepStrictEqual(report.criteria.faithfulness.confusion, { yesYes: 3, yesNo: 1, noYes: 1, noNo: 3 })
      assert.deepStrictEqual(report.criteria.utility.confusion, { yesYes: 2, yesNo: 2, noYes: 1, noNo: 3 })
      // raw grades: the rule judge said PARTIAL quality on the 011 case, the human NO
      assert.strictEqual(report.criteria.quality.grades.PARTIAL.NO, 1)
      const cells = Object.values(report.criteria.utility.grades).flatMap((row) => Object.values(row))
      assert.strictEqual(cells.reduce((a, b) => a + b, 0), 8)
      assert.deepStrictEqual(report.judgeErrors.map((e) => [e.line, e.id]), [[13, "no-facts"]])
      assert.isUndefined(report.stability)
      const md = Agreement.renderMarkdown(report)
      assert.include(md, "| rule | 87.5% | 75.0% | 62.5% |")
      assert.include(md, "| Utility | 2 | 2 | 1 | 3 |")
      assert.include(md, "- line 7:")
      assert.include(md, "- line 13 (no-facts):")
    }).pipe(Effect.provide(RuleJudge.layer)))

  it.effect("stability: the deterministic rule judge never flips", () =>
    Effect.gen(function*() {
      const judge = yield* Judge
      const report = yield* Agreement.run(judge, Agreement.parseJsonl(goodLines().join("\n")), { stability: true })
      assert.deepStrictEqual(report.stability?.flipRate, { quality: 0, faithfulness: 0, utility: 0 })
      assert.strictEqual(report.stability?.n, 8)
    }).pipe(Effect.provide(RuleJudge.layer)))

  it.effect("stability: a judge that changes its mind on every other second look", () =>
    Effect.gen(function*() {
      let calls = 0
      const fickle = Judge.of({
        name: "fickle",
        judge: (task, trajectory) =>
          Effect.sync((): Verdict => {
            const base = RuleJudge.judgeRule(task, trajectory)
            const n = calls++
            // second pass (calls 8..15): flip quality YES<->NO on even items, PARTIAL<->NO on utility of odd ones
            if (n < 8) return base
            const i = n - 8
            return i % 2 === 0
              ? { ...base, quality: base.quality === "YES" ? "NO" : "YES" }
              : { ...base, utility: base.utility === "PARTIAL" ? "NO" : base.utility }
          })
      })
      const report = yield* Agreement.run(fickle, Agreement.parseJsonl(goodLines().join("\n")), { stability: true, concurrency: 1 })
      assert.strictEqual(report.stability?.flipRate.quality, 0.5)
      assert.strictEqual(report.stability?.flipRate.utility, 0)
      // case 110 (index 1, odd) has utility PARTIAL: a raw change that does not flip the bit
      assert.strictEqual(report.stability?.gradeChangeRate.utility, 1 / 8)
      assert.strictEqual(report.stability?.flipRate.faithfulness, 0)
    }))

  it("empty input scores nothing and says n/a", () => {
    const scored = Agreement.agreement([])
    assert.isTrue(Number.isNaN(scored.quality.accuracy))
  })

  it("the program prints the Table 10 row and writes the JSON report; bad lines are listed", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "agreement-"))
    try {
      const file = path.join(dir, "human.jsonl")
      const out = path.join(dir, "report.json")
      writeFileSync(file, jsonl())
      const { stdout, code } = await new Promise<{ stdout: string; code: number }>((resolve) => {
        execFile(
          process.execPath,
          ["--import", "tsx", "programs/judge-agreement.ts", "--input", file, "--judge", "rule", "--stability", "--json", out],
          { cwd: path.resolve(import.meta.dirname, "../.."), timeout: safetyBoundMs },
          (error, stdout) => resolve({ stdout, code: error === null ? 0 : typeof error.code === "number" ? error.code : 1 })
        )
      })
      assert.strictEqual(code, 0)
      assert.include(stdout, "| rule | 87.5% | 75.0% | 62.5% |")
      assert.include(stdout, "| binarised flip rate | 0.0% | 0.0% | 0.0% |")
      assert.include(stdout, "Skipped 3 bad line(s)")
      const report = JSON.parse(readFileSync(out, "utf8")) as { readonly n: number; readonly criteria: { readonly utility: { readonly accuracy: number } } }
      assert.strictEqual(report.n, 8)
      assert.strictEqual(report.criteria.utility.accuracy, 0.625)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
