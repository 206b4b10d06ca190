/**
 * `npm run compare -- --otlp <url>` end to end: the program, spawned as a user runs it, exports its spans to a
 * loopback OTLP collector: one Rollout.run trace per rollout linked to the job, the job's judge and scoring spans,
 * the program's resource, credentials of the URL sent as Basic auth and nowhere in what was sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as OtlpReceiver from "../support/OtlpReceiver.ts"
import { spawnProgram } from "../support/Spawn.ts"

describe("compare --otlp", () => {
  it.effect("exports the job's spans: a trace per rollout with its rounds and calls, linked to Job.run", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const out = join(mkdtempSync(join(tmpdir(), "paraagent-otlp-")), "run")
      const secret = "s3cret-pw"
      const url = `http://otel:${secret}@${receiver.url.slice("http://".length)}`
      const args = ["--tasks", "1", "--levels", "I2", "--world-size", "500", "--group", "2", "--paradigms", "ParaAct,ReAct", "--out", out, "--otlp", url]
      const ran = yield* Effect.promise(() => spawnProgram("programs/compare.ts", args))
      assert.strictEqual(ran.code, 0, ran.stderr)
      const spans = yield* receiver.spans
      const job = spans.filter((s) => s.name === "Job.run")
      assert.strictEqual(job.length, 1)
      assert.strictEqual(job[0]!.resource["paraagent.program"], "compare")
      const runs = spans.filter((s) => s.name === "Rollout.run")
      // 1 task × 2 paradigms × G = 2
      assert.strictEqual(runs.length, 4)
      assert.deepStrictEqual(new Set(runs.map((r) => r.attributes["rollout.paradigm"])), new Set(["ParaAct", "ReAct"]))
      for (const run of runs) {
        assert.deepStrictEqual(run.links, [{ traceId: job[0]!.traceId, spanId: job[0]!.spanId }])
        const rounds = spans.filter((s) => s.name === "Rollout.round" && s.parentSpanId === run.spanId)
        assert.strictEqual(rounds.length, run.attributes["rollout.rounds"])
        const calls = spans.filter((s) => s.name === "Rollout.call" && rounds.some((r) => r.spanId === s.parentSpanId) && s.attributes["call.executed"] === true)
        assert.strictEqual(calls.length, run.attributes["rollout.calls"])
        assert.isTrue(calls.every((c) => typeof c.attributes["tool.name"] === "string" && typeof c.attributes["call.outcome"] === "string"))
      }
      assert.strictEqual(spans.filter((s) => s.name === "Judge.judge" && s.traceId === job[0]!.traceId).length, 4)
      assert.strictEqual(spans.filter((s) => s.name === "Scoring.scoreGroup" && s.traceId === job[0]!.traceId).length, 2)
      const requests = yield* receiver.requests
      assert.isTrue(requests.every((r) => r.headers["authorization"] === `Basic ${Buffer.from(`otel:${secret}`).toString("base64")}`))
      assert.isTrue(requests.every((r) => !r.bodyText.includes(secret)))
    }))
})
