import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as App from "../../layers/App.ts"
import { Trajectory } from "../../src/domain/Trajectory.ts"
import { repoRoot } from "../../src/io/DataPath.ts"
import * as Job from "../../src/eval/ComparisonJob.ts"
import * as RunFolder from "../../src/io/RunFolder.ts"

const tmp = () => mkdtempSync(join(tmpdir(), "paraagent-job-"))

const appLayer = Layer.merge(App.layer({ world: { size: 8_000 } }), NodeServices.layer)

describe("Job", () => {
  it.effect("compares paradigms: summary per paradigm and level, every trajectory scored and written", () =>
    Effect.gen(function*() {
      const out = join(tmp(), "run")
      const result = yield* Job.run({
        tasksPerLevel: 6,
        levels: ["I1", "I2", "I3"],
        seed: 3,
        paradigms: ["ParaAct", "ReAct"],
        group: 2,
        concurrency: 4,
        estimator: "paraagent",
        out,
        progress: false
      })
      const read = yield* RunFolder.readJsonl(join(out, "trajectories.jsonl"), Trajectory)
      assert.strictEqual(read.errors.length, 0)
      assert.strictEqual(read.values.length, 2 * 18 * 2)
      for (const t of read.values) {
        assert.isDefined(t.verdict)
        assert.isDefined(t.answerReward)
        assert.isTrue(t.steps.every((s) => s.reward !== undefined && s.advantage !== undefined))
      }
      const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Job.Summary
      for (const p of ["ParaAct", "ReAct"]) {
        for (const l of ["I1", "I2", "I3"]) {
          const c = summary.paradigms[p]?.[l]
          assert.isDefined(c)
          assert.isTrue(c!.pass1 >= 0 && c!.pass1 <= 1 && c!.pass2 >= c!.pass1 - 1e-12)
          assert.strictEqual(c!.tasks, 6)
        }
      }
      // ParaAct batches independent actions: clearly fewer rounds than ReAct on multi-tool tasks
      for (const l of ["I2", "I3"]) {
        assert.isBelow(summary.paradigms["ParaAct"]![l]!.rounds, 0.8 * summary.paradigms["ReAct"]![l]!.rounds)
      }
      assert.include(result.table, "| ParaAct | I2 |")
      // the oracle's table says what it is, and shows truncation and unjudged rollouts per cell
      assert.isTrue(result.table.startsWith(Job.oracleCaption))
      assert.include(result.table, "| Trunc % | Unjudged |")
      for (const p of ["ParaAct", "ReAct"]) {
        const avg = summary.average[p]
        assert.isTrue(avg !== undefined && avg.truncation >= 0 && avg.truncation <= 1 && avg.unjudged === 0)
      }
    }).pipe(Effect.provide(appLayer)))

  it.effect("rejects an unknown estimator before running anything", () =>
    Effect.gen(function*() {
      const error = yield* Job.run({
        tasksPerLevel: 1, levels: ["I1"], seed: 1, paradigms: ["ParaAct"], group: 1, concurrency: 1,
        estimator: "nope", out: join(tmp(), "x"), progress: false
      }).pipe(Effect.flip)
      assert.strictEqual(error._tag, "JobError")
      assert.include((error as Job.JobError).message, "grpo")
    }).pipe(Effect.provide(appLayer)))
})

describe("npm run compare (programs/compare.ts)", () => {
  it("prints the run folder last, holding summary.json in the documented shape", () => {
    const out = join(tmp(), "cli")
    const stdout = execFileSync(
      process.execPath,
      ["--import", "tsx", "programs/compare.ts", "--tasks", "1", "--world-size", "6000", "--paradigms", "ParaAct,ReAct", "--out", out],
      { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }
    )
    const lines = stdout.trim().split("\n")
    assert.strictEqual(lines.at(-1), out)
    const summary = Schema.decodeUnknownSync(Schema.Struct({
      paradigms: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.Struct({
        pass1: Schema.Number, pass2: Schema.Number, path: Schema.Number, rounds: Schema.Number, calls: Schema.Number, searches: Schema.Number
      })))
    }))(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")))
    assert.sameMembers(Object.keys(summary.paradigms), ["ParaAct", "ReAct"])
    assert.sameMembers(Object.keys(summary.paradigms["ParaAct"]!), ["I1", "I2", "I3"])
  })

  it("gives a clear error for a bad flag value", () => {
    let stderr = ""
    try {
      execFileSync(process.execPath, ["--import", "tsx", "programs/compare.ts", "--paradigms", "ParaAct,Nope"], {
        cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"]
      })
    } catch (e) {
      stderr = String((e as { stderr?: string }).stderr ?? "")
    }
    assert.include(stderr, "Nope")
  })
})
