import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Layer, Logger } from "effect"
import type { HttpServer } from "effect/http"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"

// One lifecycle everywhere, over HTTP: two replicas (two servers in this process) share one SQLite session log, as two
// `npm run serve --store` processes do (test/programs/Serve.test.ts runs that with real processes).

const key = "lifecycle-test-client-key"
const options = (store: string | undefined, maxSessions = 16): ToolEnvServer.ServerOptions => ({
  ...ToolEnvServer.defaultOptions,
  worldSize: 2000,
  ...(store !== undefined ? { store } : {}),
  mcp: false,
  sessions: { ...ToolEnvServer.defaultOptions.sessions, maxSessions, ttlMs: 60_000 }
})

const call = (base: string, method: string, route: string, body?: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(base + route, {
      method,
      headers: { "content-type": "application/json", "x-client-key": key },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    const text = await res.text()
    return { status: res.status, text, json: text === "" ? undefined : JSON.parse(text) }
  })

const urlOf = (context: Context.Context<HttpServer.HttpServer>) => Effect.provide(ToolEnvServer.url, context)

const search = { turn: { searches: [{ slot: "s1", query: "weather forecast" }], calls: [] } }

describe("the session lifecycle over HTTP", () => {
  it.live("two replicas: closed on B, a step on A is a 404 and stores nothing; a new episode with that id starts at round 0", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-lifecycle-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const store = path.join(dir, "sessions.sqlite")
      const a = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store))))
      const b = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store))))
      for (let attempt = 0; attempt < 5; attempt++) {
        const id = `episode-${attempt}`
        assert.strictEqual((yield* call(a, "POST", "/reset", { episode_id: id, seed: attempt })).status, 200)
        // A steps twice (its cache is warm), B steps once (it replays), A steps again (it catches up)
        assert.strictEqual((yield* call(a, "POST", `/sessions/${id}/step`, { ...search, round: 0 })).status, 200)
        assert.strictEqual((yield* call(a, "POST", `/sessions/${id}/step`, { ...search, round: 1 })).status, 200)
        assert.strictEqual((yield* call(b, "POST", `/sessions/${id}/step`, { ...search, round: 2 })).status, 200)
        assert.strictEqual((yield* call(a, "POST", `/sessions/${id}/step`, { ...search, round: 3 })).status, 200)
        assert.strictEqual((yield* call(b, "DELETE", `/sessions/${id}`)).status, 200)
        // A still holds the session warm in its cache: the tombstone wins
        const stepped = yield* call(a, "POST", `/sessions/${id}/step`, search)
        assert.strictEqual(stepped.status, 404, stepped.text)
        assert.strictEqual(stepped.json._tag, "NotFound")
        assert.strictEqual((yield* call(a, "GET", `/sessions/${id}`)).status, 404)
        assert.strictEqual((yield* call(a, "POST", "/step", { action: search, episode_id: id })).status, 404)
        // the log holds no turn of the closed episode
        const db = new Database(store, { readonly: true })
        const turns = db.prepare("SELECT count(*) FROM turns t JOIN sessions s ON s.incarnation = t.incarnation WHERE s.id = ?").pluck().get(id)
        db.close()
        assert.strictEqual(turns, 0)
        // a new episode with the id, opened on B, starts at round 0 on both replicas
        const again = yield* call(b, "POST", "/reset", { episode_id: id, seed: 99 })
        assert.strictEqual(again.status, 200, again.text)
        assert.strictEqual(again.json.observation.rounds, 0)
        const onA = yield* call(a, "GET", `/sessions/${id}`)
        assert.deepStrictEqual([onA.status, onA.json.rounds, onA.json.seed], [200, 0, 99])
        const first = yield* call(a, "POST", `/sessions/${id}/step`, { ...search, round: 0 })
        assert.deepStrictEqual([first.status, first.json.step.index], [200, 0])
        const trajectory = yield* call(b, "GET", `/sessions/${id}/trajectory`)
        assert.strictEqual(trajectory.json.steps.length, 1)
      }
    })))

  it.live("a stored row that does not decode: a 500 problem body naming the session, logged with the file — never an empty 500", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-lifecycle-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const store = path.join(dir, "sessions.sqlite")
      const logs: Array<string> = []
      const capture = Logger.make(({ logLevel, message, fiber: _ }) => void logs.push(`${logLevel}: ${Array.isArray(message) ? message.join(" ") : String(message)}`))
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store)).pipe(Layer.provide(Logger.layer([capture])))))
      const ids: Array<string> = []
      for (const seed of [1, 2]) {
        const created = yield* call(base, "POST", "/sessions", { seed })
        ids.push(created.json.sessionId)
        yield* call(base, "POST", `/sessions/${created.json.sessionId}/step`, search)
      }
      // damage: one session's turn and the other's spec, as a bad disk or a hand edit would
      const db = new Database(store)
      db.prepare("UPDATE turns SET body = 'not json' WHERE incarnation = (SELECT incarnation FROM sessions WHERE id = ?)").run(ids[0])
      db.prepare("UPDATE sessions SET spec = '{}' WHERE id = ?").run(ids[1])
      db.close()
      // a replica that has not seen them (a second server on the file) must read the log
      const fresh = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store)).pipe(Layer.provide(Logger.layer([capture])))))
      for (const [i, route] of [[0, `/sessions/${ids[0]}/trajectory`], [0, `/sessions/${ids[0]}/step`], [1, `/sessions/${ids[1]}`]] as const) {
        const answer = yield* call(fresh, route.endsWith("/step") ? "POST" : "GET", route, route.endsWith("/step") ? search : undefined)
        assert.strictEqual(answer.status, 500, route)
        assert.deepStrictEqual([answer.json._tag, answer.json.field, answer.json.value], ["StoreFailure", "sessionId", ids[i]])
        assert.include(answer.json.message, ids[i])
        assert.notInclude(answer.text, store)
      }
      const errors = logs.filter((l) => l.startsWith("Error"))
      assert.strictEqual(errors.length, 3)
      assert.match(errors[0]!, new RegExp(`session store failed: .*sessions\\.sqlite: turn 0 of session ${ids[0]} does not decode`))
      assert.match(errors[2]!, new RegExp(`the spec of session ${ids[1]} does not decode`))
      // the server is still serving
      assert.strictEqual((yield* call(fresh, "GET", "/health")).status, 200)
    })))

  it.live("garbage over the data pages of a log: the server refuses to start, naming the file (before: it served bare 500s)", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-lifecycle-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      const store = path.join(dir, "sessions.sqlite")
      yield* Effect.scoped(Effect.gen(function*() {
        const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(store))))
        for (let i = 0; i < 20; i++) {
          const created = yield* call(base, "POST", "/sessions", { task: { request: `${"Find the weather and the exchange rate. ".repeat(150)} (${i})` }, seed: i })
          assert.strictEqual(created.status, 200)
          // finished, so the next create finds room
          assert.strictEqual((yield* call(base, "POST", `/sessions/${created.json.sessionId}/step`, { text: "<answer>sunny</answer>" })).status, 200)
        }
      }))
      const db = new Database(store)
      db.pragma("wal_checkpoint(TRUNCATE)")
      db.close()
      const bytes = fs.readFileSync(store)
      const pages = Math.floor(bytes.length / 4096)
      assert.isAbove(pages, 12)
      for (let page = 2; page < pages; page++) for (let i = 0; i < 4096; i++) bytes[page * 4096 + i] = (i * 13 + page) & 255
      fs.writeFileSync(store, bytes)
      const failed = yield* Effect.flip(Layer.build(ToolEnvServer.layer(options(store))))
      assert.strictEqual(failed._tag, "SessionStoreError")
      assert.include(failed.message, store)
      assert.include(failed.message, "is damaged")
    })))

  it.live("at capacity: an unknown session is a 404 and one evicted from memory its record — only a create is a 503", () =>
    Effect.scoped(Effect.gen(function*() {
      const base = yield* urlOf(yield* Layer.build(ToolEnvServer.layer(options(undefined, 2))))
      const finished = (yield* call(base, "POST", "/sessions", { seed: 1 })).json.sessionId as string
      assert.strictEqual((yield* call(base, "POST", `/sessions/${finished}/step`, { text: "<answer>done</answer>" })).status, 200)
      // two running sessions: the finished one leaves memory (it stays in the log)
      const running = [(yield* call(base, "POST", "/sessions", { seed: 2 })).json.sessionId, (yield* call(base, "POST", "/sessions", { seed: 3 })).json.sessionId]
      assert.strictEqual((yield* call(base, "GET", "/health")).json.sessions, 2)
      const unknown = yield* call(base, "GET", "/sessions/never-created")
      assert.deepStrictEqual([unknown.status, unknown.json._tag], [404, "NotFound"])
      const evicted = yield* call(base, "GET", `/sessions/${finished}`)
      assert.deepStrictEqual([evicted.status, evicted.json.rounds, evicted.json.done], [200, 1, true])
      const score = yield* call(base, "POST", `/sessions/${finished}/score`)
      assert.strictEqual(score.status, 200)
      // the running sessions are still served (one was pushed out of memory and is replayed from the log)
      for (const id of running) assert.strictEqual((yield* call(base, "POST", `/sessions/${id}/step`, search)).status, 200)
      const refused = yield* call(base, "POST", "/sessions", { seed: 4 })
      assert.deepStrictEqual([refused.status, refused.json._tag], [503, "AtCapacity"])
    })))
})
