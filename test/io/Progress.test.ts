/**
 * The stage plan's counter and its estimate of the time left (a clock passed in: no wall time here), and the command
 * line a run records.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Progress from "../../src/io/Progress.ts"
import * as Provenance from "../../src/io/Provenance.ts"
import { repoRoot } from "../../src/io/DataPath.ts"

describe("Progress.plan", () => {
  const stages: ReadonlyArray<Progress.PlannedStage> = [
    { name: "demonstrations", kind: "demo", units: 100, weight: 2 },
    { name: "SFT", kind: "sft", units: 1_000, weight: 0.1 },
    { name: "evaluate A", kind: "eval", units: 50, weight: 1 },
    { name: "evaluate B", kind: "eval", units: 50, weight: 1 }
  ]

  it.effect("estimates the rest from what was timed: a kind's own rate once timed, else the weighted rate of all timed work", () =>
    Effect.gen(function*() {
      let now = 0
      const plan = Progress.plan(stages, false, () => now)
      assert.isUndefined(plan.remainingMs())
      yield* plan.start(0)
      now = 10_000 // 100 demo units × weight 2 in 10 s: 50 ms per weighted unit
      yield* plan.finish(0)
      // SFT 1,000 × 0.1 × 50 ms + two evaluations 50 × 1 × 50 ms
      assert.strictEqual(plan.remainingMs(), 5_000 + 2 * 2_500)
      yield* plan.start(1)
      now = 16_000
      yield* plan.finish(1)
      // weighted: 16 s over 300 weighted units; the evaluations are not timed yet: 100 units × 1 × 16000/300
      assert.closeTo(plan.remainingMs() ?? NaN, (100 * 16_000) / 300, 1e-9)
      yield* plan.start(2)
      now = 20_000
      yield* plan.finish(2)
      // an evaluation was timed: 4 s for 50 units → the other takes 4 s
      assert.strictEqual(plan.remainingMs(), 4_000)
      yield* plan.start(3)
      yield* plan.finish(3)
      assert.strictEqual(plan.remainingMs(), 0)
    }))

  it.effect("a restored stage (read back on --resume) teaches the estimate nothing", () =>
    Effect.gen(function*() {
      let now = 0
      const plan = Progress.plan(stages, false, () => now)
      yield* plan.start(0)
      now = 1
      yield* plan.finish(0, true)
      assert.isUndefined(plan.remainingMs())
    }))

  it("durations for a person", () => {
    assert.deepStrictEqual([0, 44_600, 192_000, 3_912_000].map(Progress.humanDuration), ["0 s", "45 s", "3 min 12 s", "1 h 05 min"])
  })
})

describe("Provenance.commandLine", () => {
  it("names the command as it was typed: npm start, npm run, npx tsx for a TypeScript entry point, node otherwise", () => {
    const node = "/usr/bin/node"
    const main = `${repoRoot}/programs/main.ts`
    const start = { npm_lifecycle_event: "start", npm_lifecycle_script: "tsx programs/main.ts" }
    assert.strictEqual(Provenance.commandLine([node, main, "--seeds", "1", "--out", "runs/a b"], start), "npm start -- --seeds 1 --out 'runs/a b'")
    assert.strictEqual(Provenance.commandLine([node, `${repoRoot}/programs/compare.ts`], { npm_lifecycle_event: "compare", npm_lifecycle_script: "tsx programs/compare.ts" }), "npm run compare")
    // a program started by another script (a test spawned under `npm test`) inherits npm's variables: not its command
    assert.strictEqual(Provenance.commandLine([node, main, "--tasks", "5"], { npm_lifecycle_event: "test", npm_lifecycle_script: "tsc --noEmit -p tsconfig.json && vitest run" }), "npx tsx programs/main.ts --tasks 5")
    assert.strictEqual(Provenance.commandLine([node, main, "--tasks", "5"], {}), "npx tsx programs/main.ts --tasks 5")
    assert.strictEqual(Provenance.commandLine([node, "/opt/x/dist/programs/mcp.js", "--size", "2000"], {}), "node /opt/x/dist/programs/mcp.js --size 2000")
    assert.strictEqual(Provenance.commandLine([node, main, "it's"], {}), `npx tsx programs/main.ts 'it'\\''s'`)
  })
})
