import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Layer, Logger } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SessionStoreSqlite from "../../../layers/storage/SessionStoreSqlite.ts"
import type { TaskId } from "../../../src/domain/Ids.ts"
import { SessionStore } from "../../../src/service/SessionStore.ts"
import type { SessionSpec } from "../../../src/service/SessionStore.ts"
import { sessionStoreContract } from "../../support/SessionStoreContract.ts"

const dirs: Array<string> = []
const tempDir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-sessionstore-"))
  dirs.push(dir)
  return dir
}

sessionStoreContract({
  name: "SQLite (layers/storage/SessionStoreSqlite.ts)",
  newLog: () => {
    const dir = tempDir()
    const file = path.join(dir, "sessions.sqlite")
    return { open: () => SessionStoreSqlite.layer(file), dispose: () => fs.rmSync(dir, { recursive: true, force: true }) }
  },
  shared: true
})

const spec: SessionSpec = {
  task: { id: "t" as TaskId, request: "Find the weather in Paris.", level: "I1", categories: ["Weather"], gold: [], facts: [], split: "test", seed: 0, source: "posted" },
  paradigm: "ParaAct",
  seed: 1,
  policy: "remote",
  maxRounds: 12,
  topK: 5,
  faults: true,
  faultRate: 0.05
}

/** Opens the store at `file` with a log capture; the failure (if any) and the warnings said. */
const open = (file: string) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => void logs.push(`${logLevel}: ${Array.isArray(message) ? message.join(" ") : String(message)}`))
    const result = yield* Effect.result(Effect.scoped(Effect.gen(function*() {
      const store = Context.get(yield* Layer.build(SessionStoreSqlite.layer(file)), SessionStore)
      const made = yield* store.create({ id: "probe", world: "w", owner: "o", spec })
      return made !== undefined
    })).pipe(Effect.provide(Logger.layer([capture]))))
    return { result, logs }
  })

/** A store file holding `n` sessions of 3 turns each, closed. */
const filled = (file: string, n: number) =>
  Effect.scoped(Effect.gen(function*() {
    const store = Context.get(yield* Layer.build(SessionStoreSqlite.layer(file)), SessionStore)
    for (let i = 0; i < n; i++) {
      const made = (yield* store.create({ id: `s${i}`, world: "w", owner: "o", spec: { ...spec, task: { ...spec.task, request: `${"filler ".repeat(40)}${i}` } } }))!
      for (let r = 0; r < 3; r++) yield* store.append(`s${i}`, made.incarnation, r, { text: `<search>${"q".repeat(200)}${r}</search>`, usage: { promptTokens: 1, completionTokens: 1 } })
    }
  }))

const failureOf = (r: { readonly result: { readonly _tag: string } }): string => {
  const result = r.result as { readonly _tag: "Failure"; readonly failure: { readonly _tag: string; readonly message: string } } | { readonly _tag: "Success" }
  assert.strictEqual(result._tag, "Failure")
  return result._tag === "Failure" ? `${result.failure._tag}: ${result.failure.message}` : ""
}

describe("SessionStoreSqlite: integrity at open", () => {
  it.effect("a 0-byte file is initialised as a new log with one warning naming it", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "empty.sqlite")
      fs.writeFileSync(file, "")
      const r = yield* open(file)
      assert.strictEqual(r.result._tag, "Success")
      const warnings = r.logs.filter((l) => l.startsWith("Warn"))
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], `${file} was an empty file (0 bytes): initialised as a new session log`)
      // and it is a session log now: it opens again without a word
      const again = yield* open(file)
      assert.deepStrictEqual(again.logs, [])
    }))

  it.effect("a file that is not SQLite is refused, naming the file, and left as it was", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "notes.sqlite")
      fs.writeFileSync(file, "these are my notes, not a database\n".repeat(200))
      const before = fs.readFileSync(file)
      const message = failureOf(yield* open(file))
      assert.match(message, /^SessionStoreError: .*notes\.sqlite: is not a SQLite file: refusing to use a foreign file as the session log/)
      assert.deepStrictEqual(fs.readFileSync(file), before)
    }))

  it.effect("a SQLite file of another application, and a log of the schema before tombstones, are refused untouched", () =>
    Effect.gen(function*() {
      const foreign = path.join(tempDir(), "app.sqlite")
      const db = new Database(foreign)
      db.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users VALUES (1, 'ada')")
      db.close()
      assert.match(failureOf(yield* open(foreign)), /app\.sqlite: is a SQLite file of another application or an older ParaAgent \(tables: users; no session-log mark\)/)
      const check = new Database(foreign)
      assert.deepStrictEqual(check.prepare("SELECT name FROM users").pluck().all(), ["ada"])
      check.close()

      const older = path.join(tempDir(), "v1.sqlite")
      const v1 = new Database(older)
      v1.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, world TEXT NOT NULL, spec TEXT NOT NULL, created_at INTEGER NOT NULL, touched_at INTEGER NOT NULL) STRICT;
        CREATE TABLE turns (session TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, idx)) STRICT, WITHOUT ROWID;
        CREATE TABLE tasks (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;`)
      v1.close()
      assert.match(failureOf(yield* open(older)), /v1\.sqlite: is a SQLite file of another application or an older ParaAgent \(tables: sessions, tasks, turns/)

      const future = path.join(tempDir(), "v9.sqlite")
      yield* filled(future, 1)
      const v9 = new Database(future)
      v9.pragma("user_version = 9")
      v9.close()
      assert.match(failureOf(yield* open(future)), /v9\.sqlite: is a session log of schema version 9; this server reads version 2/)
    }))

  it.effect("garbage over data pages is caught at open (quick_check) and refused naming the file — never an empty 500 later", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "sessions.sqlite")
      yield* filled(file, 300)
      // checkpoint the WAL into the file, then overwrite pages 3..12 (page 1 holds the header)
      const db = new Database(file)
      db.pragma("wal_checkpoint(TRUNCATE)")
      db.close()
      const bytes = fs.readFileSync(file)
      assert.isAbove(bytes.length, 14 * 4096)
      for (let page = 2; page < 12; page++) for (let i = 0; i < 4096; i++) bytes[page * 4096 + i] = (i * 13 + page) & 255
      fs.writeFileSync(file, bytes)
      const message = failureOf(yield* open(file))
      assert.match(message, /sessions\.sqlite: is damaged \(SQLite's quick_check: .+\): move it aside to start a new log/)
      // quick_check reports a damaged page a line: the message is still one line
      assert.notInclude(message, "\n")
    }))

  it.effect("a folder, a FIFO, a read-only file and a read-only folder are refused, naming what is wrong, without blocking", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      assert.match(failureOf(yield* open(dir)), /is not a regular file \(a folder, FIFO, socket or device\)/)
      const fifo = path.join(dir, "pipe.sqlite")
      execFileSync("mkfifo", [fifo])
      assert.match(failureOf(yield* open(fifo)), /pipe\.sqlite: is not a regular file/)
      const readOnly = path.join(dir, "ro.sqlite")
      yield* filled(readOnly, 1)
      fs.chmodSync(readOnly, 0o444)
      assert.match(failureOf(yield* open(readOnly)), /ro\.sqlite: is read-only: the session log must be writable/)
      fs.chmodSync(readOnly, 0o644)
      const roDir = path.join(dir, "ro-folder")
      fs.mkdirSync(roDir)
      fs.chmodSync(roDir, 0o555)
      const inside = path.join(roDir, "sessions.sqlite")
      assert.match(failureOf(yield* open(inside)), new RegExp(`the folder ${roDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is read-only`))
      assert.isFalse(fs.existsSync(inside))
      fs.chmodSync(roDir, 0o755)
    }))
})

describe("SessionStoreSqlite: integrity at read", () => {
  it.effect("a turn or a spec that does not decode is a SessionStoreError naming the session, never a skipped row", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "sessions.sqlite")
      yield* filled(file, 2)
      const db = new Database(file)
      db.prepare("UPDATE turns SET body = '{\"text\": 42' WHERE idx = 1 AND incarnation = (SELECT incarnation FROM sessions WHERE id = 's0')").run()
      db.prepare("UPDATE sessions SET spec = '{\"task\": null}' WHERE id = 's1'").run()
      db.close()
      const errors = yield* Effect.scoped(Effect.gen(function*() {
        const store = Context.get(yield* Layer.build(SessionStoreSqlite.layer(file)), SessionStore)
        const s0 = (yield* store.get("s0"))!
        const turns = yield* Effect.flip(store.turns("s0", s0.incarnation, 0))
        const spec1 = yield* Effect.flip(store.get("s1"))
        // the head still reads (it holds no JSON): a replica learns the session exists, then its read fails loudly
        assert.deepStrictEqual((yield* store.head("s0"))?.turns, 3)
        return [turns, spec1]
      }))
      assert.deepStrictEqual(errors.map((e) => [e._tag, e.operation, e.session]), [["SessionStoreError", "read", "s0"], ["SessionStoreError", "read", "s1"]])
      assert.match(errors[0]!.message, /turn 1 of session s0 does not decode/)
      assert.match(errors[1]!.message, /the spec of session s1 does not decode/)
    }))
})

process.on("exit", () => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
})
