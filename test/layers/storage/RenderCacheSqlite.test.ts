import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Layer, Logger } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as SimulatorLlm from "../../../layers/model/SimulatorLlm.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { callId, taskId, toolId, toolName } from "../../../src/domain/Ids.ts"
import type { Json } from "../../../src/domain/Json.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { canonicalJson } from "../../../src/math/CanonicalJson.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { makeLibrary, ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import { LoopbackServer, Reply } from "../../support/LoopbackServer.ts"

// A damaged render cache (real SQLite files, damaged as a user's disk or a teammate would) never turns a call into an
// error: every call below ends `ok` with a payload that keeps the backend facts, and the damage is said in ONE warning.
// Tests run as root here, where chmod does not stop writes: RenderCacheSqlite treats a file or folder without any write
// bit as read-only for everyone (the chmod states the intent), so the read-only cases hold for root and non-root alike.

const trackInfo: ToolSpec = {
  id: toolId("toolbench:Music/tunebase/track_info"),
  name: toolName("track_info_for_tunebase"),
  group: "TuneBase",
  apiName: "track info",
  category: "Music",
  description: "Get a track's title, play count and genre by its id.",
  parameters: { type: "object", properties: { track: { type: "string" } }, required: ["track"] },
  response: {
    type: "object",
    properties: {
      title: { type: "string", "x-entity": "track.title" },
      plays: { type: "integer", "x-entity": "track.plays" },
      genre: { type: "string" }
    },
    required: ["title", "plays", "genre"]
  },
  source: { kind: "toolbench", ref: "Music/tunebase.json#track_info" }
}
const library = makeLibrary("cache-test", [trackInfo], DepGraph.empty)
const seed = 1

const completion = (content: string) => ({
  id: "chatcmpl-r",
  object: "chat.completion",
  model: "renderer",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 }
})

/** A model that answers with the backend facts from the prompt plus a genre. */
const echoFacts = LoopbackServer.make({
  fallback: (request) => {
    const body = request.body as { messages: Array<{ content: string }> }
    const factsText = /Backend facts \(keep every value exactly\): (.*)$/m.exec(body.messages[1]?.content ?? "")?.[1] ?? "{}"
    return Reply.json(completion(JSON.stringify({ ...JSON.parse(factsText), genre: "Synthwave" })))
  }
})

const tempDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), "rendercache-"))

const simulatorFor = (server: LoopbackServer, cachePath: string) =>
  SimulatorLlm.layer({ cachePath, simulator: { faultRate: 0, seed } }).pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(ToolLibrary, library),
      Layer.unwrap(OpenAiClient.validateConfig({ baseUrl: `${server.url}/v1`, model: "renderer", timeoutMs: 5_000, maxRetries: 0 }).pipe(Effect.map(OpenAiClient.layer)))
    ))
  )

const callOne = (track: string) =>
  Effect.gen(function*() {
    const sim = yield* Simulator.Simulator
    const episode = yield* sim.open({ taskId: taskId("cache"), seed: 0, request: "", faults: false })
    return (yield* episode.execute({ id: callId("c1"), tool: trackInfo.name, arguments: { track } })).outcome
  })

/** The deterministic payload of a call (the facts a rendering must keep). */
const deterministic = (track: string) =>
  Effect.gen(function*() {
    const outcome = yield* callOne(track)
    return outcome._tag === "ok" ? outcome.payload : null
  }).pipe(Effect.provide(Simulator.layer({ faultRate: 0, seed }).pipe(Layer.provide(Layer.succeed(ToolLibrary, library)))))

interface Run {
  readonly outcomes: ReadonlyArray<{ readonly _tag: string }>
  readonly payloads: ReadonlyArray<Json>
  readonly stats: SimulatorLlm.RenderStats
  readonly warnings: ReadonlyArray<string>
  readonly logs: ReadonlyArray<string>
}

/** Calls the tool once per track over a fresh simulator on `cachePath`; `during` runs after the layer is built. */
const run = (server: LoopbackServer, cachePath: string, tracks: ReadonlyArray<string>, during: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    const logs: Array<{ level: string; text: string }> = []
    const capture = Logger.make(({ logLevel, message }) => {
      logs.push({ level: logLevel, text: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
    })
    const { outcomes, stats } = yield* Effect.gen(function*() {
      yield* during
      const outcomes = []
      for (const t of tracks) outcomes.push(yield* callOne(t))
      return { outcomes, stats: yield* (yield* SimulatorLlm.SimulatorLlmStats).get }
    }).pipe(Effect.provide(simulatorFor(server, cachePath)), Effect.provide(Logger.layer([capture])))
    return {
      outcomes,
      payloads: outcomes.flatMap((o) => (o._tag === "ok" ? [o.payload] : [])),
      stats,
      warnings: logs.filter((l) => l.level === "Warn").map((l) => l.text),
      logs: logs.map((l) => l.text)
    } satisfies Run
  })

/** Every call ok, each payload keeping its facts, exactly one warning, no stack text anywhere. */
const assertHealthy = (r: Run, tracks: ReadonlyArray<string>, facts: ReadonlyArray<Json>, warning: RegExp) => {
  assert.deepStrictEqual(r.outcomes.map((o) => o._tag), tracks.map(() => "ok"))
  r.payloads.forEach((p, i) => assert.strictEqual(SimulatorLlm.rejection(trackInfo, facts[i] ?? null, p), undefined))
  assert.strictEqual(r.warnings.length, 1, r.warnings.join("\n"))
  assert.match(r.warnings[0] ?? "", warning)
  const everything = [...r.logs, ...r.outcomes.map((o) => JSON.stringify(o))].join("\n")
  assert.notMatch(everything, /\n\s+at |SqliteError|the tool crashed/)
}

/** Renders `tracks` into a new cache file, so it holds real rows; returns the path. */
const filledCache = (server: LoopbackServer, tracks: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const file = path.join(tempDir(), "renders.sqlite")
    const r = yield* run(server, file, tracks)
    assert.strictEqual(r.warnings.length, 0)
    return file
  })

const rows = (file: string): Array<{ tool: string; payload: string }> => {
  const db = new Database(file, { readonly: true })
  const out = db.prepare<[], { tool: string; payload: string }>("SELECT tool, payload FROM renders ORDER BY args").all()
  db.close()
  return out
}

const tracks = ["t-1", "t-2", "t-3"]

describe("RenderCacheSqlite: a damaged cache never poisons a call", () => {
  it.live("corrupt data pages: moved aside at open (quick_check), a fresh cache serves, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = path.join(tempDir(), "renders.sqlite")
      // A real cache with enough rows to span many pages, then garbage over pages 3..10 (page 1 holds the header).
      const db = new Database(file)
      db.exec("CREATE TABLE renders (tool TEXT NOT NULL, args TEXT NOT NULL, seed INTEGER NOT NULL, payload TEXT NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (tool, args, seed))")
      const insert = db.prepare("INSERT INTO renders VALUES (?, ?, ?, ?, 'llm', 0)")
      db.transaction(() => {
        for (let i = 0; i < 2_000; i++) insert.run(`tool_${i}`, canonicalJson({ i }), seed, JSON.stringify({ filler: "x".repeat(100), i }))
      })()
      db.close()
      const pageSize = 4096
      const bytes = fs.readFileSync(file)
      for (let page = 2; page < 10; page++) for (let i = 0; i < pageSize; i++) bytes[page * pageSize + i] = (i * 7 + page) & 255
      fs.writeFileSync(file, bytes)

      const r = yield* run(server, file, tracks)
      assertHealthy(r, tracks, facts, /corrupt.*moved aside to .*renders\.sqlite\.corrupt-/)
      assert.strictEqual(r.stats.cache, "read-write")
      assert.strictEqual(r.stats.llmCalls, 3)
      assert.isTrue(fs.readdirSync(path.dirname(file)).some((f) => f.startsWith("renders.sqlite.corrupt-")))
      // The fresh cache stored the renderings: a second run is all hits.
      const again = yield* run(server, file, tracks)
      assert.deepStrictEqual(again.payloads, r.payloads)
      assert.strictEqual(again.stats.cacheHits, 3)
      assert.strictEqual(again.warnings.length, 0)
    }))

  it.live("a read-only file (chmod 0444): opened read-only, hits served, misses rendered and not stored, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = yield* filledCache(server, ["t-1"])
      const before = rows(file)
      fs.chmodSync(file, 0o444)
      const sent = (yield* server.requests).length
      const r = yield* run(server, file, tracks)
      fs.chmodSync(file, 0o644)
      assertHealthy(r, tracks, facts, /no write permission: opened read-only/)
      assert.strictEqual(r.stats.cache, "read-only")
      assert.strictEqual(r.stats.cacheHits, 1)
      assert.strictEqual(r.stats.llmCalls, 2)
      assert.strictEqual((yield* server.requests).length - sent, 2)
      assert.deepStrictEqual(rows(file), before)
    }))

  it.live("a read-only folder (chmod 0555): read-only or bypassed, the warning names the folder, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = yield* filledCache(server, ["t-1"])
      const folder = path.dirname(file)
      fs.chmodSync(folder, 0o555)
      const r = yield* run(server, file, tracks)
      // A folder of its own with no file yet: nothing to read, nothing can be created.
      const empty = fs.mkdtempSync(path.join(os.tmpdir(), "rendercache-ro-"))
      fs.chmodSync(empty, 0o555)
      const none = yield* run(server, path.join(empty, "renders.sqlite"), tracks)
      fs.chmodSync(folder, 0o755)
      fs.chmodSync(empty, 0o755)
      assertHealthy(r, tracks, facts, new RegExp(`folder ${folder}`))
      assert.notInclude(r.warnings[0] ?? "", "attempt to write a readonly database")
      // Root can still read through the folder (read-only); another user cannot create the -shm file (bypassed).
      assert.include(["read-only", "bypassed"], r.stats.cache)
      assertHealthy(none, tracks, facts, /cannot create the file: the folder .* has no write permission; cache bypassed/)
      assert.strictEqual(none.stats.cache, "bypassed")
      assert.isFalse(fs.existsSync(path.join(empty, "renders.sqlite")))
    }))

  it.live("a renders table of another shape: renamed aside (rows kept), a new table created, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = path.join(tempDir(), "renders.sqlite")
      const db = new Database(file)
      db.exec("CREATE TABLE renders (key TEXT PRIMARY KEY, value BLOB)")
      db.prepare("INSERT INTO renders VALUES ('k', 'v')").run()
      db.close()
      const r = yield* run(server, file, tracks)
      assertHealthy(r, tracks, facts, /renders table had other columns \(key, value\): renamed to renders_incompatible_\d+/)
      assert.strictEqual(r.stats.cache, "read-write")
      assert.strictEqual(rows(file).length, 3)
      const check = new Database(file, { readonly: true })
      const aside = check.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'renders_incompatible_%'").all()
      assert.strictEqual(aside.length, 1)
      assert.deepStrictEqual(check.prepare(`SELECT key, value FROM ${aside[0]?.name ?? ""}`).all(), [{ key: "k", value: "v" }])
      check.close()
    }))

  it.live("rows with a non-JSON payload: deleted and re-rendered, counted, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = yield* filledCache(server, tracks)
      const db = new Database(file)
      db.prepare("UPDATE renders SET payload = ? WHERE args != ?").run("{not json", canonicalJson({ track: "t-3" }))
      db.close()
      const sent = (yield* server.requests).length
      const r = yield* run(server, file, tracks)
      assertHealthy(r, tracks, facts, /non-JSON payload .* deleted and re-rendered/)
      assert.strictEqual(r.stats.repaired, 2)
      assert.strictEqual(r.stats.cacheHits, 1)
      assert.strictEqual((yield* server.requests).length - sent, 2)
      assert.isTrue(rows(file).every((row) => { try { JSON.parse(row.payload); return true } catch { return false } }))
    }))

  it.live("the table dropped by another process mid-run: reads fail → misses, the cache bypassed, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = yield* filledCache(server, ["t-1"])
      const drop = Effect.sync(() => {
        const other = new Database(file)
        other.exec("DROP TABLE renders")
        other.close()
      })
      const r = yield* run(server, file, tracks, drop)
      assertHealthy(r, tracks, facts, /read failed \(SQLITE_ERROR: no such table: renders\); cache bypassed/)
      assert.strictEqual(r.stats.cache, "bypassed")
      assert.strictEqual(r.stats.llmCalls, 3)
    }))

  it.live("writes refused at run time (a trigger that aborts inserts): payloads still returned, one warning", () =>
    Effect.gen(function*() {
      const facts = yield* Effect.forEach(tracks, deterministic)
      const server = yield* echoFacts
      const file = yield* filledCache(server, ["t-1"])
      const freeze = Effect.sync(() => {
        const other = new Database(file)
        other.exec("CREATE TRIGGER frozen BEFORE INSERT ON renders BEGIN SELECT RAISE(ABORT, 'cache frozen'); END")
        other.close()
      })
      const r = yield* run(server, file, tracks, freeze)
      assertHealthy(r, tracks, facts, /write failed \(SQLITE_CONSTRAINT_TRIGGER: cache frozen\); new renderings are no longer stored/)
      assert.strictEqual(r.stats.cache, "read-only")
      assert.strictEqual(r.stats.cacheHits, 1)
      assert.strictEqual(rows(file).length, 1)
    }))

  it.live("a cache path that cannot hold a file is a typed RenderCacheError naming the file, before any call", () =>
    Effect.gen(function*() {
      const server = yield* echoFacts
      const blocker = path.join(tempDir(), "a-file")
      fs.writeFileSync(blocker, "")
      const error = yield* Effect.flip(callOne("t-1").pipe(Effect.provide(simulatorFor(server, path.join(blocker, "renders.sqlite")))))
      assert.strictEqual(error._tag, "RenderCacheError")
      if (error._tag !== "RenderCacheError") return
      assert.strictEqual(error.operation, "open")
      assert.include(["ENOTDIR", "EEXIST"], error.code)
      assert.include(error.message, "cannot create the folder")
      assert.strictEqual(error.file, path.join(blocker, "renders.sqlite"))
      assert.strictEqual((yield* server.requests).length, 0)
    }))
})
