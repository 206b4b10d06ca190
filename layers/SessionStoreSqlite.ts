/**
 * The SessionStore over one SQLite file (better-sqlite3, WAL) that several server processes open at once: the
 * session's spec and its turns, `UNIQUE (session, idx)`, so a concurrent duplicate step loses on the constraint.
 * For replicas on several hosts the same two tables go into a networked database; nothing else is shared.
 */
import Database from "better-sqlite3"
import { Clock, Effect, Layer, Schema } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Task } from "../src/domain/Task.ts"
import { SessionSpec, SessionStore, SessionStoreError, StoredTurn } from "../src/service/SessionStore.ts"

const ddl = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, world TEXT NOT NULL, spec TEXT NOT NULL, created_at INTEGER NOT NULL, touched_at INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS turns (
  session TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session, idx)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, body TEXT NOT NULL) STRICT;
`

const attempt = <A>(file: string, what: string, f: () => A): Effect.Effect<A, SessionStoreError> =>
  Effect.try({
    try: f,
    catch: (e) => new SessionStoreError({ message: `${file}: ${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` })
  })

const decodeSpec = Schema.decodeUnknownEffect(Schema.fromJsonString(SessionSpec))
const decodeTurn = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredTurn))
const decodeTask = Schema.decodeUnknownEffect(Schema.fromJsonString(Task))

const isUniqueViolation = (e: unknown): boolean =>
  e instanceof Error && "code" in e && (e.code === "SQLITE_CONSTRAINT_PRIMARYKEY" || e.code === "SQLITE_CONSTRAINT_UNIQUE")

const connect = (file: string): Effect.Effect<Database.Database, SessionStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    yield* attempt(file, "create the folder", () => fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true }))
    const db = yield* Effect.acquireRelease(
      attempt(file, "open", () => new Database(file, { timeout: 5_000 })),
      (db) => Effect.ignore(attempt(file, "close", () => db.close()))
    )
    yield* attempt(file, "pragmas", () => {
      db.pragma("journal_mode = WAL")
      // the log is rebuilt by the client re-sending a lost turn; NORMAL survives a process crash (not a power cut)
      db.pragma("synchronous = NORMAL")
    })
    yield* attempt(file, "schema", () => db.transaction(() => db.exec(ddl)).immediate())
    return db
  })

/** The store in `file` (created when absent), closed with the layer's scope. */
export const layer = (file: string): Layer.Layer<SessionStore, SessionStoreError> =>
  Layer.effect(SessionStore, Effect.gen(function*() {
    const db = yield* connect(file)
    const q = {
      insertSession: db.prepare<[string, string, string, number, number]>("INSERT INTO sessions (id, world, spec, created_at, touched_at) VALUES (?, ?, ?, ?, ?)"),
      selectSession: db.prepare<[string]>("SELECT world, spec FROM sessions WHERE id = ?"),
      touch: db.prepare<[number, string]>("UPDATE sessions SET touched_at = ? WHERE id = ?"),
      count: db.prepare<[string]>("SELECT count(*) FROM turns WHERE session = ?").pluck(),
      turns: db.prepare<[string, number]>("SELECT body FROM turns WHERE session = ? AND idx >= ? ORDER BY idx").pluck(),
      insertTurn: db.prepare<[string, number, string]>("INSERT INTO turns (session, idx, body) VALUES (?, ?, ?)"),
      deleteTurns: db.prepare<[string]>("DELETE FROM turns WHERE session = ?"),
      deleteSession: db.prepare<[string]>("DELETE FROM sessions WHERE id = ?"),
      putTask: db.prepare<[string, string]>("INSERT OR REPLACE INTO tasks (id, body) VALUES (?, ?)"),
      getTask: db.prepare<[string]>("SELECT body FROM tasks WHERE id = ?").pluck()
    }
    const corrupt = (what: string) => (e: { readonly message: string }) => new SessionStoreError({ message: `${file}: unreadable ${what}: ${e.message}` })
    const remove = db.transaction((id: string) => {
      q.deleteTurns.run(id)
      return q.deleteSession.run(id).changes > 0
    })
    return SessionStore.of({
      label: file,
      create: (session) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          attempt(file, "create session", () => void q.insertSession.run(session.id, session.world, JSON.stringify(session.spec), now, now))),
      get: (id) =>
        Effect.gen(function*() {
          const row = (yield* attempt(file, "read session", () => q.selectSession.get(id))) as { world: string; spec: string } | undefined
          if (row === undefined) return undefined
          const spec = yield* decodeSpec(row.spec).pipe(Effect.mapError(corrupt(`spec of session ${id}`)))
          return { id, world: row.world, spec }
        }),
      count: (id) => Effect.map(attempt(file, "count turns", () => q.count.get(id)), (n) => Number(n ?? 0)),
      turns: (id, from) =>
        Effect.flatMap(attempt(file, "read turns", () => q.turns.all(id, from) as Array<string>), (rows) =>
          Effect.forEach(rows, (body) => decodeTurn(body).pipe(Effect.mapError(corrupt(`turn of session ${id}`))))),
      append: (id, index, turn) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.try({
            try: () => {
              q.insertTurn.run(id, index, JSON.stringify(turn))
              q.touch.run(now, id)
              return true
            },
            catch: (e) => e
          }).pipe(Effect.catch((e) =>
            isUniqueViolation(e)
              ? Effect.succeed(false)
              : Effect.fail(new SessionStoreError({ message: `${file}: append turn: ${e instanceof Error ? e.message : String(e)}` }))))),
      remove: (id) => attempt(file, "remove session", () => remove(id)),
      putTask: (task) => attempt(file, "put task", () => void q.putTask.run(task.id, JSON.stringify(task))),
      getTask: (id) =>
        Effect.gen(function*() {
          const body = (yield* attempt(file, "read task", () => q.getTask.get(id))) as string | undefined
          if (body === undefined) return undefined
          return yield* decodeTask(body).pipe(Effect.mapError(corrupt(`task ${id}`)))
        }),
      // the file is the log: it keeps finished sessions (delete them with DELETE /sessions/{id})
      expire: () => Effect.succeed(0)
    })
  }))
