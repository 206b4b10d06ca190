import { assert, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Tracer } from "effect"
import { HttpServer } from "effect/http"
import { request as httpRequest } from "node:http"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"

const token = "s3cret-token-for-tests"
const options: ToolEnvServer.ServerOptions = {
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  token,
  maxBody: 64 * 1024,
  mcp: false,
  sessions: { ...ToolEnvServer.defaultOptions.sessions, maxSessions: 12, ttlMs: 60_000, maxActions: 16 }
}

interface Answer {
  readonly status: number
  readonly contentType: string | undefined
  readonly body: string
}

/** One request on a fresh connection, sent as given (a chunked body when `chunked`), the answer as bytes. */
const send = (base: string, method: string, path: string, body: string | undefined, headers: Record<string, string>, chunked = false) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(base + path, { method, headers: { connection: "close", ...headers } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: res.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") }))
      })
      req.on("error", reject)
      if (body !== undefined && chunked) {
        req.write(body.slice(0, 3))
        req.end(body.slice(3))
      } else req.end(body)
    }))

/** What may differ between two servers stepping the same turns: the session id and clock readings. */
const comparable = (answer: Answer, sessionId: string): Answer => {
  const body = answer.body.split(sessionId).join("<session>")
  if (answer.status !== 200) return { ...answer, body }
  return {
    ...answer,
    body: JSON.stringify(JSON.parse(body), (k, v) => (k === "startMs" || k === "endMs" || k === "policyMs" || k === "startedAt" || k === "durationMs" ? undefined : v))
  }
}

describe("the step fast path (layers/server/StepFastPath.ts)", () => {
  it.effect("answers every step request — good turns, each refusal, malformed and oversized bodies, bad tokens — with the framework's status, content type and bytes", () =>
    Effect.scoped(Effect.gen(function*() {
      const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)
      const fast = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options)))
      const framework = yield* urlOf(yield* Layer.build(ToolEnvServer.layer({ ...options, stepFastPath: false })))
      const auth = { authorization: `Bearer ${token}`, "content-type": "application/json", "x-client-key": "client-key-of-the-fast-path-test" }
      const open = (base: string) =>
        Effect.map(send(base, "POST", "/sessions", JSON.stringify({ seed: 3, split: "test", level: "I2", index: 1, faultRate: 0.3 }), auth), (a) => JSON.parse(a.body).sessionId as string)
      const tools = JSON.parse((yield* send(fast, "POST", "/tools/search", JSON.stringify({ query: "weather forecast", k: 4 }), auth)).body).hits.map((h: { tool: string }) => h.tool) as Array<string>
      const deep = (n: number) => `{"text":"x","turn":${"[".repeat(n)}${"]".repeat(n)}}`
      const calls = (round: number) => JSON.stringify({ turn: { searches: [], calls: tools.map((tool, j) => ({ id: `c${round * 4 + j + 1}`, tool, arguments: {} })) } })
      // [body, extra headers, chunked]: a whole episode with refusals in between, as a client might send them
      const rows: ReadonlyArray<readonly [string, Record<string, string>?, boolean?]> = [
        [JSON.stringify({ turn: { searches: [{ slot: "s1", query: "weather forecast" }], calls: [] }, round: 0 })],
        ["{not json"],
        [""],
        ["[]"],
        ["null"],
        [JSON.stringify({ text: 42 })],
        [JSON.stringify({})],
        [JSON.stringify({ turn: { searches: "x", calls: [] } })],
        [JSON.stringify({ turn: { searches: [], calls: [{ id: "c1", tool: "", arguments: {} }] } })],
        [JSON.stringify({ text: "x", round: -1 })],
        [JSON.stringify({ text: "x", round: 5 })],
        [JSON.stringify({ text: "x", usage: { promptTokens: "many" } })],
        [JSON.stringify({ turn: { searches: [], calls: Array.from({ length: 17 }, (_, i) => ({ id: `c${i + 1}`, tool: "t", arguments: {} })) } })],
        [JSON.stringify({ text: "x".repeat(70_000) })],
        [deep(10_000)],
        [deep(65)],
        [calls(1)],
        [calls(2), {}, true],
        [calls(3), { "content-type": "application/json; charset=utf-8" }],
        [calls(4), { "content-type": "text/plain" }],
        [calls(5), { authorization: "Bearer wrong-token" }],
        [calls(5), { authorization: "" }],
        [calls(5), { origin: "https://evil.example" }],
        [calls(5), { host: "attacker.example" }],
        [calls(5), { "content-type": "" }],
        [calls(5), { "x-client-key": "another-client-key-0000000" }],
        [calls(5), { "x-client-key": "not a key" }],
        [JSON.stringify({ text: "x", round: 4, extra: { ignored: true } })],
        [calls(5), {}, false],
        [JSON.stringify({ turn: { searches: [], calls: [], answer: "the forecast is sunny" } })],
        [JSON.stringify({ text: "<answer>again</answer>" })]
      ]
      // the two servers share this process's metrics: each request is measured by what it adds to them
      const counters = Effect.map(send(fast, "GET", "/metrics", undefined, auth), (a) => {
        const counts = new Map<string, number>()
        for (const line of a.body.split("\n")) {
          const m = /^(toolenv_step_fast_path_total|toolenv_errors_total\{[^}]*\}) (\d+)$/.exec(line)
          if (m !== null) counts.set(m[1] as string, Number(m[2]))
        }
        return counts
      })
      const added = (before: Map<string, number>, after: Map<string, number>) =>
        Object.fromEntries([...after].flatMap(([k, v]) => (v === (before.get(k) ?? 0) ? [] : [[k, v - (before.get(k) ?? 0)]])))
      const ids = { fast: yield* open(fast), framework: yield* open(framework) }
      let served = 0
      for (const [i, [body, headers = {}, chunked = false]] of rows.entries()) {
        const given = { ...auth, ...headers }
        const c0 = yield* counters
        const a = comparable(yield* send(fast, "POST", `/sessions/${ids.fast}/step`, body, given, chunked), ids.fast)
        const c1 = yield* counters
        const b = comparable(yield* send(framework, "POST", `/sessions/${ids.framework}/step`, body, given, chunked), ids.framework)
        const c2 = yield* counters
        expect(a, `row ${i}: ${body.slice(0, 60)}`).toEqual(b)
        // the same refusals counted; the fast path counted only on the fast server
        const { toolenv_step_fast_path_total: fastServed = 0, ...fastErrors } = added(c0, c1)
        expect(fastErrors, `row ${i}`).toEqual(added(c1, c2))
        served += fastServed
      }
      // the fast path served the 11 rows whose body decodes (4 good turns, the answer, and the refusals of Sessions:
      // an empty turn, 17 actions, a taken round, an ended episode, another client's key and a malformed one); it
      // replayed the bodies the schema or the guard refuses, and left a chunked body, another content type and bad
      // tokens to the framework unread
      assert.strictEqual(served, 11)
      // unknown, escaped and queried ids, and the other routes beside it
      const paths: ReadonlyArray<(id: string) => string> = [
        () => "/sessions/no-such-session/step",
        () => "/sessions/no%2Dsuch/step",
        () => "/sessions//step",
        (id) => `/sessions/${id}/step?x=1`,
        (id) => `/sessions/${id}/step/`
      ]
      for (const path of paths) {
        const a = comparable(yield* send(fast, "POST", path(ids.fast), JSON.stringify({ text: "x" }), auth), ids.fast)
        const b = comparable(yield* send(framework, "POST", path(ids.framework), JSON.stringify({ text: "x" }), auth), ids.framework)
        expect(a, path("<id>")).toEqual(b)
      }
      // the trajectories the two servers hold are the same episode
      const trajectory = (base: string, id: string) => Effect.map(send(base, "GET", `/sessions/${id}/trajectory`, undefined, auth), (a) => comparable(a, id))
      assert.deepStrictEqual(yield* trajectory(fast, ids.fast), yield* trajectory(framework, ids.framework))
    })))

  it.effect("under an exporting tracer the fast path stays off: each step keeps the framework's server span", () =>
    Effect.scoped(Effect.gen(function*() {
      const names: Array<string> = []
      const recording = Tracer.make({
        span(options) {
          names.push(options.name)
          return new Tracer.NativeSpan(options)
        }
      })
      const base = yield* Effect.provide(ToolEnvServer.url, yield* Layer.build(ToolEnvServer.layer(options).pipe(Layer.provide(Layer.succeed(Tracer.Tracer, recording)))))
      const auth = { authorization: `Bearer ${token}`, "content-type": "application/json", "x-client-key": "client-key-of-the-fast-path-test" }
      const id = JSON.parse((yield* send(base, "POST", "/sessions", JSON.stringify({ seed: 1 }), auth)).body).sessionId as string
      const metrics = Effect.map(send(base, "GET", "/metrics", undefined, auth), (a) => Number(/toolenv_step_fast_path_total (\d+)/.exec(a.body)?.[1] ?? 0))
      const before = yield* metrics
      const spans = names.length
      const answer = yield* send(base, "POST", `/sessions/${id}/step`, JSON.stringify({ text: "<answer>nothing found</answer>" }), auth)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(yield* metrics, before)
      // the framework's server span (named by the method) around the handler's `Sessions.step`
      const stepSpans = names.slice(spans)
      assert.deepStrictEqual(stepSpans.slice(0, 2), ["POST", "Sessions.step"])
    })))
})
