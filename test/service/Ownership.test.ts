import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { HttpServer } from "effect/http"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"

// A session belongs to the client key that created it (X-Client-Key): another client — or one without a key — gets the
// 404 an unknown id gets, on every route, on every replica (the owner is in the shared log).

const keyA = "client-key-of-alice-0123456789"
const keyB = "client-key-of-bob-9876543210"
const options = (store?: string): ToolEnvServer.ServerOptions => ({
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  mcp: false,
  ...(store !== undefined ? { store } : {}),
  sessions: { ...ToolEnvServer.defaultOptions.sessions, maxSessions: 32, ttlMs: 60_000 }
})

const call = (base: string, method: string, route: string, key: string | undefined, body?: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(base + route, {
      method,
      headers: { "content-type": "application/json", ...(key !== undefined ? { "x-client-key": key } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.text()
    return { status: res.status, text, json: text === "" ? undefined : JSON.parse(text) }
  })

const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)
const answer = { text: "<answer>the secret answer of alice</answer>" }

describe("sessions belong to their client", () => {
  it.live("another client's session is a 404 on every route, never its data; a create without a key is issued one", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options())))
      const created = yield* call(base, "POST", "/sessions", keyA, { seed: 1, split: "test", level: "I1", index: 0 })
      const id = created.json.sessionId as string
      assert.isUndefined(created.json.clientKey)
      const finished = yield* call(base, "POST", "/sessions", keyA, { seed: 2, split: "test", level: "I1", index: 0 })
      assert.strictEqual((yield* call(base, "POST", `/sessions/${finished.json.sessionId}/step`, keyA, answer)).status, 200)
      const foreign: ReadonlyArray<readonly [string, string, unknown?]> = [
        ["GET", `/sessions/${id}`],
        ["GET", `/sessions/${id}/trajectory`],
        ["POST", `/sessions/${id}/step`, { text: "<answer>stolen</answer>" }],
        ["POST", `/sessions/${finished.json.sessionId}/score`],
        ["POST", "/advantages", { sessions: [finished.json.sessionId] }],
        ["GET", `/state?episode_id=${id}`],
        ["POST", "/step", { action: { text: "<answer>stolen</answer>" }, episode_id: id }],
        ["DELETE", `/sessions/${id}`]
      ]
      const unknown = yield* call(base, "GET", "/sessions/no-such-session", keyB)
      for (const key of [keyB, undefined, "short"]) {
        for (const [method, route, body] of foreign) {
          const r = yield* call(base, method, route, key, body)
          assert.strictEqual(r.status, 404, `${key ?? "no key"}: ${method} ${route}: ${r.text}`)
          assert.strictEqual(r.json._tag, "NotFound")
          assert.notInclude(r.text, "Analyse")
          assert.notInclude(r.text, "secret answer")
          // the same answer an unknown id gets (but for the id)
          assert.strictEqual(r.json.message.replace(/"[^"]*"/, "ID"), unknown.json.message.replace(/"[^"]*"/, "ID"))
        }
      }
      // untouched by all of it: still at round 0, and its owner steps it
      assert.strictEqual((yield* call(base, "GET", `/sessions/${id}`, keyA)).json.rounds, 0)
      assert.strictEqual((yield* call(base, "POST", `/sessions/${id}/step`, keyA, answer)).status, 200)
      assert.strictEqual((yield* call(base, "POST", `/sessions/${id}/score`, keyA)).status, 200)
      assert.strictEqual((yield* call(base, "DELETE", `/sessions/${id}`, keyA)).status, 200)

      // no key: the server issues one, returned once; it is the only way back to the session
      const issued = yield* call(base, "POST", "/sessions", undefined, { seed: 3 })
      assert.strictEqual(issued.status, 200)
      assert.match(issued.json.clientKey, /^[A-Za-z0-9_-]{32}$/)
      assert.strictEqual((yield* call(base, "GET", `/sessions/${issued.json.sessionId}`, undefined)).status, 404)
      const mine = yield* call(base, "GET", `/sessions/${issued.json.sessionId}`, issued.json.clientKey)
      assert.deepStrictEqual([mine.status, mine.json.clientKey], [200, undefined])
      // a malformed key at creation is a 400 naming the header
      const bad = yield* call(base, "POST", "/sessions", "short key!", { seed: 3 })
      assert.deepStrictEqual([bad.status, bad.json._tag, bad.json.field], [400, "InvalidRequest", "X-Client-Key"])
    })))

  it.live("OpenEnv /step and /state without episode_id act on the caller's own last reset only", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options())))
      const a = yield* call(base, "POST", "/reset", keyA, { seed: 1 })
      const b = yield* call(base, "POST", "/reset", keyB, { seed: 2 })
      // B reset last; A's step without episode_id still steps A's episode
      const stepA = yield* call(base, "POST", "/step", keyA, { action: { text: "<search>[{\"slot\":\"s1\",\"query\":\"weather\"}]</search>" } })
      assert.deepStrictEqual([stepA.status, stepA.json.observation.episode_id], [200, a.json.observation.episode_id])
      const stateB = yield* call(base, "GET", "/state", keyB)
      assert.deepStrictEqual([stateB.json.episode_id, stateB.json.step_count], [b.json.observation.episode_id, 0])
      const stateA = yield* call(base, "GET", "/state", keyA)
      assert.deepStrictEqual([stateA.json.episode_id, stateA.json.step_count], [a.json.observation.episode_id, 1])
      // a caller without a key has no episode of its own
      const anonymous = yield* call(base, "POST", "/step", undefined, { action: { text: "<answer>x</answer>" } })
      assert.deepStrictEqual([anonymous.status, anonymous.json.field], [400, "episode_id"])
      // a reset without a key gets its key in the observation, and steps its own episode with it
      const issued = yield* call(base, "POST", "/reset", undefined, { seed: 4 })
      const key = issued.json.observation.client_key as string
      const own = yield* call(base, "POST", "/step", key, { action: { text: "<answer>x</answer>" } })
      assert.deepStrictEqual([own.status, own.json.observation.episode_id], [200, issued.json.observation.episode_id])
    })))

  it.live("posted tasks: another client cannot overwrite one (409), everyone can read it; its owner can revise it", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options())))
      assert.strictEqual((yield* call(base, "POST", "/tasks", keyA, { id: "shared-task", request: "Alice's request" })).status, 200)
      const taken = yield* call(base, "POST", "/tasks", keyB, { id: "shared-task", request: "Bob's request" })
      assert.deepStrictEqual([taken.status, taken.json._tag, taken.json.field], [409, "Conflict", "task.id"])
      const inline = yield* call(base, "POST", "/sessions", keyB, { task: { id: "shared-task", request: "Bob's inline request" } })
      assert.strictEqual(inline.status, 409)
      assert.strictEqual((yield* call(base, "GET", "/tasks/shared-task", keyB)).json.request, "Alice's request")
      assert.strictEqual((yield* call(base, "POST", "/tasks", keyA, { id: "shared-task", request: "Alice's revision" })).status, 200)
      assert.strictEqual((yield* call(base, "GET", "/tasks/shared-task", undefined)).json.request, "Alice's revision")
      // posted without a key: no one can overwrite it
      assert.strictEqual((yield* call(base, "POST", "/tasks", undefined, { id: "keyless-task", request: "first" })).status, 200)
      assert.strictEqual((yield* call(base, "POST", "/tasks", undefined, { id: "keyless-task", request: "second" })).status, 409)
    })))

  it.live("two replicas on one log: the owner travels with the session", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-ownership-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const store = path.join(dir, "sessions.sqlite")
      const one = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store))))
      const two = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store))))
      const id = (yield* call(one, "POST", "/sessions", keyA, { seed: 1 })).json.sessionId as string
      assert.strictEqual((yield* call(two, "POST", `/sessions/${id}/step`, keyB, answer)).status, 404)
      assert.strictEqual((yield* call(two, "DELETE", `/sessions/${id}`, keyB)).status, 404)
      assert.strictEqual((yield* call(two, "POST", `/sessions/${id}/step`, keyA, answer)).status, 200)
      assert.strictEqual((yield* call(one, "GET", `/sessions/${id}`, keyB)).status, 404)
      assert.strictEqual((yield* call(one, "GET", `/sessions/${id}`, keyA)).json.rounds, 1)
    })))
})
