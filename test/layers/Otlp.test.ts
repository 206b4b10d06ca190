import { assert, describe, expect, it } from "@effect/vitest"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option, Result } from "effect"
import { Command } from "effect/cli"
import { FetchHttpClient, HttpClient } from "effect/http"
import { Worker } from "node:worker_threads"
import * as App from "../../layers/App.ts"
import * as Otlp from "../../layers/Otlp.ts"
import * as PipelineWorkers from "../../layers/PipelineWorkers.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import * as Cli from "../../src/io/Cli.ts"
import * as Telemetry from "../../src/io/Telemetry.ts"
import { Rollout } from "../../src/runtime/Rollout.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as OtlpReceiver from "../support/OtlpReceiver.ts"
import type { ReceivedSpan } from "../support/OtlpReceiver.ts"

const endpointOf = (url: string): Otlp.Endpoint => {
  const parsed = Otlp.parse(url)
  assert.isTrue(Result.isSuccess(parsed), url)
  return (parsed as Result.Success<Otlp.Endpoint, string>).success
}

describe("Otlp.parse", () => {
  it.each([
    ["http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"],
    ["http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"],
    ["https://collector.example/otlp", "https://collector.example/otlp/v1/traces"],
    ["https://collector.example/otlp/v1/traces/", "https://collector.example/otlp/v1/traces"],
    ["http://localhost:4318/v1/traces?tenant=a#frag", "http://localhost:4318/v1/traces?tenant=a"]
  ])("%s posts to %s", (given, url) => {
    const e = endpointOf(given)
    assert.strictEqual(e.url, url)
    assert.deepStrictEqual(e.headers, {})
    assert.strictEqual(e.shown, url.replace(/\?.*$/, ""))
  })

  it("moves user-info into a Basic authorization header and out of the URL", () => {
    const e = endpointOf("https://me:p%40ss@collector.example:4318")
    assert.strictEqual(e.url, "https://collector.example:4318/v1/traces")
    assert.deepStrictEqual(e.headers, { authorization: `Basic ${Buffer.from("me:p@ss").toString("base64")}` })
    assert.notInclude(e.shown, "p%40ss")
  })

  it.each([
    ["not a url", "absolute http(s) URL"],
    ["", "absolute http(s) URL"],
    ["ftp://collector.example", "not ftp:"],
    ["file:///tmp/x", "not file:"],
    ["grpc://127.0.0.1:4317", "not grpc:"]
  ])("refuses %j: expected %s", (given, why) => {
    const parsed = Otlp.parse(given)
    assert.isTrue(Result.isFailure(parsed))
    assert.include((parsed as Result.Failure<Otlp.Endpoint, string>).failure, why)
  })
})

describe("Telemetry.redact", () => {
  it.each([
    ["GET https://user:hunter2@api.example/v1?x=1", "GET https://<redacted>@api.example/v1?x=1"],
    ["https://api.example/v1?api-key=hunter2&model=m", "https://api.example/v1?api-key=<redacted>&model=m"],
    ["see http://h/p?a=1&access_token=hunter2#f", "see http://h/p?a=1&access_token=<redacted>#f"],
    ["401: Authorization: Bearer sk-hunter2abc refused", "401: Authorization: Bearer <redacted> refused"],
    ["a plain message with key words", "a plain message with key words"]
  ])("%s", (given, expected) => {
    assert.strictEqual(Telemetry.redact(given), expected)
    assert.notInclude(Telemetry.text(given), "hunter2")
  })
})

/** The spans of the receiver once every layer closed, by name. */
const byName = (spans: ReadonlyArray<ReceivedSpan>, name: string) => spans.filter((s) => s.name === name)

describe("the OTLP tracer layer against a loopback collector", () => {
  it.effect("exports a span tree per rollout (round under Rollout.run, policy / calls / searches under round) with task, paradigm, tool and outcome attributes; judge and scoring too; no secret in any attribute", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const secret = "hunter2-secret"
      const endpoint = endpointOf(`http://otel:${secret}@${receiver.url.slice("http://".length)}`)
      const paradigms = ["ParaAct", "DFSDT"] as const
      const trajectories = yield* Effect.gen(function*() {
        assert.isTrue(yield* Telemetry.exporting)
        const source = yield* TaskSource
        const rollout = yield* Rollout
        const tasks = yield* source.sample({ split: "test", count: 1, levels: ["I3"], seed: 11 })
        const out: Array<Trajectory> = []
        for (const task of tasks) {
          for (const paradigm of paradigms) {
            const [t] = yield* rollout.runGroup(task, { paradigm, seed: 3, size: 1 })
            const [scored] = yield* Scoring.scoreGroup(task, [t as Trajectory])
            out.push(scored as Trajectory)
          }
        }
        // an HTTP call with credentials in its URL: effect's client span must not carry them
        const client = yield* HttpClient.HttpClient
        yield* client.get(`http://user:${secret}@${receiver.url.slice("http://".length)}/probe?api_key=${secret}&page=2`).pipe(Effect.ignore)
        return out
      }).pipe(
        Effect.withSpan("Test.job"),
        Effect.provide(Layer.mergeAll(App.layer({ world: { seed: 7, size: 600 }, policy: { kind: "teacher", options: { mistakeRate: 0.3 } } }), FetchHttpClient.layer)),
        Effect.provide(Otlp.layer(endpoint, { program: "otlp-test" }))
      )
      const spans = yield* receiver.spans
      const exports = (yield* receiver.requests).filter((r) => r.url === "/v1/traces")
      assert.isAbove(exports.length, 0)
      for (const r of exports) {
        assert.strictEqual(r.headers["content-type"], "application/json")
        assert.strictEqual(r.headers["authorization"], `Basic ${Buffer.from(`otel:${secret}`).toString("base64")}`)
        assert.notInclude(r.bodyText, secret)
      }
      assert.strictEqual(spans[0]?.resource["service.name"], "paraagent")
      assert.strictEqual(spans[0]?.resource["paraagent.program"], "otlp-test")

      const job = byName(spans, "Test.job")[0]!
      const runs = byName(spans, "Rollout.run")
      assert.strictEqual(runs.length, trajectories.length)
      const ids = new Set(spans.map((s) => s.spanId))
      assert.strictEqual(ids.size, spans.length)
      let calls = 0
      let rejected = 0
      let searches = 0
      for (const t of trajectories) {
        const run = runs.find((s) => s.attributes["trajectory.id"] === t.id)!
        assert.isDefined(run, t.id)
        // its own trace, linked to the job that ran it
        assert.isUndefined(run.parentSpanId)
        assert.notStrictEqual(run.traceId, job.traceId)
        assert.deepStrictEqual(run.links, [{ traceId: job.traceId, spanId: job.spanId }])
        expect(run.attributes).toMatchObject({
          "task.id": t.taskId,
          "rollout.paradigm": t.paradigm,
          "rollout.seed": t.seed,
          "policy.name": "teacher",
          "rollout.stop": t.stop,
          "rollout.rounds": t.steps.length,
          "rollout.answered": t.answer !== undefined
        })
        const rounds = spans.filter((s) => s.name === "Rollout.round" && s.parentSpanId === run.spanId)
        assert.strictEqual(rounds.length, t.steps.length, t.id)
        for (const step of t.steps) {
          const round = rounds.find((s) => s.attributes["round.index"] === step.index)!
          assert.strictEqual(round.traceId, run.traceId)
          assert.strictEqual(round.attributes["round.phase"], step.phase)
          assert.strictEqual(round.attributes["round.outcome"], step.protocolError !== undefined ? "protocol_error" : step.turn?.answer !== undefined ? "answer" : "actions")
          if (step.parent !== undefined) assert.strictEqual(round.attributes["round.parent"], step.parent)
          const children = spans.filter((s) => s.parentSpanId === round.spanId)
          const policy = children.filter((s) => s.name === "Policy.act")
          assert.strictEqual(policy.length, 1)
          expect(policy[0]!.attributes).toMatchObject({ "policy.name": "teacher", "policy.outcome": "ok", "round.index": step.index })
          const callSpans = children.filter((s) => s.name === "Rollout.call")
          assert.strictEqual(callSpans.length, step.observations.length)
          for (const o of step.observations) {
            const c = callSpans.find((s) => s.attributes["call.id"] === o.callId)!
            expect(c.attributes).toMatchObject({
              "tool.name": o.tool,
              "call.executed": o.attempts > 0,
              "call.outcome": o.outcome._tag === "ok" ? "ok" : o.outcome.error.kind,
              "call.status": o.outcome._tag === "ok" ? 200 : o.outcome.error.status,
              "call.attempts": o.attempts
            })
            if (o.attempts > 0) calls++
            else rejected++
          }
          const searchSpans = children.filter((s) => s.name === "Rollout.search")
          assert.strictEqual(searchSpans.length, step.searches.length)
          for (const s of step.searches) {
            const span = searchSpans.find((x) => x.attributes["search.slot"] === s.slot)!
            expect(span.attributes).toMatchObject({ "search.hits": s.hits.length, "search.top_tool": s.hits[0]?.tool ?? "" })
            // the retriever's own span sits under the search
            assert.strictEqual(spans.filter((x) => x.name === "Retriever.search" && x.parentSpanId === span.spanId).length, 1)
            searches++
          }
        }
        const judged = byName(spans, "Judge.judge").find((s) => s.attributes["trajectory.id"] === t.id)!
        expect(judged.attributes).toMatchObject({ "judge.name": "rule", "task.id": t.taskId, "verdict.quality": t.verdict?.quality })
        const scoring = spans.find((s) => s.spanId === judged.parentSpanId)!
        assert.strictEqual(scoring.name, "Scoring.scoreGroup")
        expect(scoring.attributes).toMatchObject({ "task.id": t.taskId, "group.size": 1, "scoring.estimator": "paraagent" })
        assert.strictEqual(scoring.parentSpanId, job.spanId)
      }
      assert.isAbove(calls, 2)
      assert.isAbove(searches, 2)
      assert.strictEqual(byName(spans, "Rollout.call").length, calls + rejected)

      // effect's HTTP client span: credentials and secret-named query parameters redacted
      const http = spans.find((s) => s.attributes["http.request.method"] === "GET")!
      assert.isDefined(http)
      assert.include(String(http.attributes["url.full"]), "page=2")
      for (const s of spans) {
        for (const value of [...Object.values(s.attributes), ...Object.values(s.resource)]) assert.notInclude(String(value), secret, `${s.name}`)
      }
    }))

  it.effect("without --otlp no tracer is installed and no detailed span is made", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* Telemetry.exporting)
      assert.isFalse(yield* Telemetry.exporting.pipe(Effect.provide(Otlp.layer(Option.none(), { program: "x" }))))
      assert.isUndefined(yield* Otlp.carrier.pipe(Effect.provide(Otlp.layer(Option.none(), { program: "x" }))))
    }))

  it.effect("a worker thread started with Otlp.carrier exports its spans under the span that started it", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiver.make
      const started = yield* Effect.gen(function*() {
        const carrier = yield* Otlp.carrier
        assert.isDefined(carrier?.parent)
        const parent = yield* Effect.currentSpan
        yield* Effect.callback<void>((resume) => {
          const worker = new Worker(PipelineWorkers.bootstrap(new URL("../support/OtlpWorker.ts", import.meta.url).href), { eval: true, workerData: { otlp: carrier } })
          worker.on("message", () => {
            void worker.terminate()
            resume(Effect.void)
          })
          worker.on("error", (e) => resume(Effect.die(e)))
        })
        return parent.spanId
      }).pipe(Effect.withSpan("Test.pipeline"), Effect.provide(Otlp.layer(endpointOf(receiver.url), { program: "otlp-test" })))
      const spans = yield* receiver.spans
      const main = byName(spans, "Test.pipeline")[0]!
      assert.strictEqual(main.spanId, started)
      const seed = byName(spans, "Worker.seed")[0]!
      const inner = byName(spans, "Worker.inner")[0]!
      assert.strictEqual(seed.parentSpanId, main.spanId)
      assert.strictEqual(seed.traceId, main.traceId)
      assert.strictEqual(inner.parentSpanId, seed.spanId)
      assert.strictEqual(seed.resource["paraagent.thread"], "test worker")
      assert.strictEqual(seed.resource["paraagent.program"], "otlp-test")
    }))
})

describe("a bad --otlp value", () => {
  const probe = Command.make("probe", {}, () => Effect.void).pipe(Otlp.traced("probe"))
  it.effect.each([
    [["--otlp", "not a url"], "absolute http(s) URL"],
    [["--otlp", "ftp://user:hunter2@collector"], "not ftp:"],
    [["--otlp", "grpc://127.0.0.1:4317"], "not grpc:"]
  ] as const)("%j is the reporter's one line naming --otlp, its secret redacted", ([args, why]) =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const console: Console.Console = { ...globalThis.console, error: (...xs: ReadonlyArray<unknown>) => void lines.push(xs.map(String).join(" ")) }
      const exit = yield* Command.runWith(probe, { version: "0" })(args).pipe(
        Cli.report("probe"),
        Effect.provide(Cli.presenter("probe")),
        Effect.provide(NodeServices.layer),
        Effect.provideService(Console.Console, console),
        Effect.exit
      )
      assert.isTrue(exit._tag === "Failure")
      assert.strictEqual(lines.length, 1, lines.join("\n"))
      assert.include(lines[0], "probe: ")
      assert.include(lines[0], "--otlp")
      assert.include(lines[0], why)
      assert.notInclude(lines[0], "hunter2")
    }))
})
