import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { HttpServer } from "effect/http"
import { request as httpRequest } from "node:http"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"

// The default server (no token) driven as a web page would drive it: a cross-site request without a preflight (a
// foreign Origin, a form or text/plain body, or none), and a DNS-rebound name in Host. Raw node:http requests, since
// fetch will not send a chosen Host.

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

const send = (base: string, method: string, path: string, headers: Record<string, string>, body?: string) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(base + path, { method, headers: { connection: "close", ...headers } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }))
      })
      req.on("error", reject)
      req.end(body)
    }))

const options: ToolEnvServer.ServerOptions = {
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  sessions: { ...ToolEnvServer.defaultOptions.sessions, maxSessions: 32, ttlMs: 60_000 }
}
const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)
const key = "network-guard-test-client-key"

describe("browser and network hygiene (the default server, no token)", () => {
  it.live("a page of another site cannot change anything: foreign Origin, form and text bodies, a rebound Host — all refused, nothing created", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options)))
      const port = new URL(base).port
      const own = { "content-type": "application/json", "x-client-key": key }
      const created = JSON.parse((yield* send(base, "POST", "/sessions", own, JSON.stringify({ seed: 1 }))).body) as { sessionId: string }
      const id = created.sessionId
      const evil = "https://evil.example"
      const rebound = `attacker.example:${port}`
      // [method, path, headers, body, status, tag]
      const table: ReadonlyArray<readonly [string, string, Record<string, string>, string | undefined, number, string]> = [
        // what a page sends without a preflight: a form or text/plain body, or none, with its Origin
        ["POST", "/reset", { origin: evil }, "{}", 403, "Origin"],
        ["POST", "/reset", { origin: evil, "content-type": "text/plain" }, "{}", 403, "Origin"],
        ["POST", "/reset", { origin: evil, "content-type": "application/x-www-form-urlencoded" }, "seed=1", 403, "Origin"],
        ["POST", "/sessions", { origin: evil, "content-type": "text/plain" }, "{}", 403, "Origin"],
        ["POST", `/sessions/${id}/step`, { origin: evil, "content-type": "text/plain", "x-client-key": key }, "{\"text\":\"<answer>x</answer>\"}", 403, "Origin"],
        ["POST", "/step", { origin: evil, "content-type": "text/plain", "x-client-key": key }, "{\"action\":{\"text\":\"x\"}}", 403, "Origin"],
        ["POST", `/sessions/${id}/score`, { origin: evil, "x-client-key": key }, undefined, 403, "Origin"],
        ["DELETE", `/sessions/${id}`, { origin: evil, "x-client-key": key }, undefined, 403, "Origin"],
        ["POST", "/tasks", { origin: evil, "content-type": "text/plain" }, "{\"request\":\"x\"}", 403, "Origin"],
        ["POST", "/mcp", { origin: evil, "content-type": "text/plain", accept: "application/json, text/event-stream" }, "{}", 403, "Origin"],
        ["POST", "/reset", { origin: "null", "content-type": "application/json" }, "{}", 403, "Origin"],
        // even as JSON (a page would need a preflight, which is refused too), and for reads
        ["POST", "/reset", { origin: evil, "content-type": "application/json" }, "{}", 403, "Origin"],
        ["OPTIONS", "/reset", { origin: evil, "access-control-request-method": "POST" }, undefined, 403, "Origin"],
        ["GET", `/sessions/${id}`, { origin: evil, "x-client-key": key }, undefined, 403, "Origin"],
        // DNS rebinding: the page's own origin, but a Host that is not this server's
        ["POST", "/reset", { host: rebound, origin: `http://${rebound}`, "content-type": "application/json" }, "{}", 403, "Host"],
        ["GET", "/tasks?count=1", { host: rebound }, undefined, 403, "Host"],
        ["GET", "/health", { host: rebound }, undefined, 403, "Host"],
        ["POST", "/mcp", { host: rebound, "content-type": "application/json", accept: "application/json, text/event-stream" }, "{}", 403, "Host"],
        // no Origin (not a browser) but not JSON: a 415 naming the header
        ["POST", "/reset", {}, "{}", 415, "Content-Type"],
        ["POST", "/reset", { "content-type": "text/plain" }, "{}", 415, "Content-Type"],
        ["POST", `/sessions/${id}/step`, { "content-type": "application/x-www-form-urlencoded", "x-client-key": key }, "text=x", 415, "Content-Type"]
      ]
      for (const [method, path, headers, body, status, field] of table) {
        const answer = yield* send(base, method, path, headers, body)
        const label = `${method} ${path} ${JSON.stringify(headers)}`
        assert.strictEqual(answer.status, status, `${label}: ${answer.body}`)
        const json = JSON.parse(answer.body) as { _tag: string; field: string; message: string }
        assert.strictEqual(json.field, field, label)
        assert.strictEqual(json._tag, status === 403 ? "Forbidden" : "UnsupportedMediaType")
        assert.isUndefined(answer.headers["access-control-allow-origin"], label)
      }
      // nothing happened: one session (ours), still at round 0
      const health = JSON.parse((yield* send(base, "GET", "/health", {})).body) as { sessions: number }
      assert.strictEqual(health.sessions, 1)
      assert.strictEqual(JSON.parse((yield* send(base, "GET", `/sessions/${id}`, { "x-client-key": key })).body).rounds, 0)
      // what passes: the server's own pages (same origin, e.g. /docs), IP-literal and localhost Hosts, no Origin + JSON
      const passing: ReadonlyArray<readonly [string, Record<string, string>]> = [
        ["/reset", { origin: base, "content-type": "application/json" }],
        ["/reset", { host: `localhost:${port}`, origin: `http://localhost:${port}`, "content-type": "application/json" }],
        ["/reset", { host: `[::1]:${port}`, "content-type": "application/json; charset=utf-8" }],
        ["/reset", { "content-type": "application/json" }]
      ]
      for (const [path, headers] of passing) assert.strictEqual((yield* send(base, "POST", path, headers, "{}")).status, 200, JSON.stringify(headers))
      // a body-less POST without a Content-Type (curl -X POST) is fine without an Origin
      assert.strictEqual((yield* send(base, "DELETE", `/sessions/${id}`, { "x-client-key": key })).status, 200)
    })))

  it.live("--allow-origin and --allow-host: the named page gets CORS answers and a preflight; the named host passes; others still refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer({ ...options, allowOrigins: ["http://LOCALHOST:3000"], allowHosts: ["toolenv.internal"] })))
      const port = new URL(base).port
      const page = "http://localhost:3000"
      const preflight = yield* send(base, "OPTIONS", "/sessions", { origin: page, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-client-key" })
      assert.strictEqual(preflight.status, 204)
      assert.strictEqual(preflight.headers["access-control-allow-origin"], page)
      assert.include(String(preflight.headers["access-control-allow-headers"]), "x-client-key")
      const created = yield* send(base, "POST", "/sessions", { origin: page, "content-type": "application/json", "x-client-key": key }, JSON.stringify({ seed: 1 }))
      assert.strictEqual(created.status, 200)
      assert.strictEqual(created.headers["access-control-allow-origin"], page)
      const id = (JSON.parse(created.body) as { sessionId: string }).sessionId
      // the step route (served at the node level when it can) answers the page the same way
      const step = yield* send(base, "POST", `/sessions/${id}/step`, { origin: page, "content-type": "application/json", "x-client-key": key }, JSON.stringify({ text: "<answer>x</answer>" }))
      assert.deepStrictEqual([step.status, step.headers["access-control-allow-origin"]], [200, page])
      assert.strictEqual((yield* send(base, "POST", "/reset", { origin: "http://localhost:3001", "content-type": "application/json" }, "{}")).status, 403)
      assert.strictEqual((yield* send(base, "GET", "/health", { host: `toolenv.internal:${port}` })).status, 200)
      assert.strictEqual((yield* send(base, "GET", "/health", { host: `toolenv.internal.evil:${port}` })).status, 403)
    })))
})
