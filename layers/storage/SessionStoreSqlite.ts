/**
 * The SessionStore over one SQLite file (better-sqlite3, WAL) that several server processes open at once. Sessions
 * carry their incarnation, owner and turn count; `closed_at` marks a tombstone every replica sees at its next `head`;
 * turns are keyed by (incarnation, index), and an append is one transaction that advances the turn count only when the
 * session is open, in that incarnation, at that index — so the store itself refuses a closed or unknown session and
 * a duplicate round (the contract in src/service/SessionStore.ts).
 *
 * Checked at open, each failure a SessionStoreError naming the file (never a silent empty log):
 * - a path that is a folder, a FIFO or another non-file, or a file or folder without write permission, is refused;
 * - a 0-byte file is initialised as a new log with one warning (there was nothing in it to lose);
 * - a file that is not SQLite, a SQLite file of another application (no session-log mark, other tables) or of another
 *   schema version, is refused (a foreign file) — it is never overwritten;
 * - `PRAGMA quick_check`: a damaged file is refused; moving it aside would silently drop every replica's sessions.
 * At run time a row that does not decode is a SessionStoreError naming its session (the server logs it and answers a
 * problem body), never a skipped row.
 */
import Database from "better-sqlite3"
import { Clock, Effect, Layer, Schema } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { oneLine } from "../../src/domain/Errors.ts"
import { Task } from "../../src/domain/Task.ts"
import { newIncarnation, SessionSpec, SessionStore, SessionStoreError, StoredTurn } from "../../src/service/SessionStore.ts"
import type { AppendOutcome, SessionHead, StoredSession } from "../../src/service/SessionStore.ts"

/** `PRAGMA application_id` of a ParaAgent session log ("PASL"): a file without it is not ours to write. */
export const applicationId = 0x5041534c
/** `PRAGMA user_version`: the schema this code reads and writes (2: incarnations, owners, tombstones). */
export const schemaVersion = 2

const ddl = `
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, incarnation TEXT NOT NULL, world TEXT NOT NULL, owner TEXT NOT NULL, spec TEXT,
  turns INTEGER NOT NULL, created_at INTEGER NOT NULL, touched_at INTEGER NOT NULL, closed_at INTEGER) STRICT;
CREATE TABLE IF NOT EXISTS turns (
  incarnation TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (incarnation, idx)) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, owner TEXT NOT NULL, body TEXT NOT NULL) STRICT;
CREATE INDEX IF NOT EXISTS sessions_closed ON sessions (closed_at) WHERE closed_at IS NOT NULL;
`

const firstLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split("\n")[0] ?? ""

const attempt = <A>(file: string, operation: string, f: () => A, session?: string): Effect.Effect<A, SessionStoreError> =>
  Effect.try({
    try: f,
    catch: (e) => new SessionStoreError({ operation, ...(session !== undefined ? { session } : {}), message: `${file}: ${operation}${session !== undefined ? ` (session ${session})` : ""}: ${firstLine(e)}` })
  })

const refuse = (file: string, operation: string, message: string) => new SessionStoreError({ operation, message: `${file}: ${message}` })

const decodeSpec = Schema.decodeUnknownEffect(Schema.fromJsonString(SessionSpec))
const decodeTurn = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredTurn))
const decodeTask = Schema.decodeUnknownEffect(Schema.fromJsonString(Task))

const noWriteBit = (stats: fs.Stats): boolean => (stats.mode & 0o222) === 0

const sqliteHeader = Buffer.from("SQLite format 3\u0000", "latin1")

/** The first bytes of a file. */
const head16 = (file: string): Buffer => {
  const fd = fs.openSync(file, "r")
  try {
    const buffer = Buffer.alloc(16)
    const n = fs.readSync(fd, buffer, 0, 16, 0)
    return buffer.subarray(0, n)
  } finally {
    fs.closeSync(fd)
  }
}

/** The checks on the path before SQLite opens it; true when the file is new or empty (to be initialised). */
const checkPath = (file: string): Effect.Effect<boolean, SessionStoreError> =>
  Effect.gen(function*() {
    const folder = path.dirname(file)
    yield* attempt(file, "open", () => fs.mkdirSync(folder, { recursive: true }))
    const folderStats = yield* attempt(file, "open", () => fs.statSync(folder))
    if (noWriteBit(folderStats)) {
      return yield* refuse(file, "open", `the folder ${folder} is read-only: the session log needs to write there (its -wal and -shm files too)`)
    }
    const stats = yield* attempt(file, "open", () => (fs.existsSync(file) ? fs.statSync(file) : undefined))
    if (stats === undefined) return true
    if (!stats.isFile()) return yield* refuse(file, "open", "is not a regular file (a folder, FIFO, socket or device): name a file for --store")
    if (noWriteBit(stats)) return yield* refuse(file, "open", "is read-only: the session log must be writable")
    if (stats.size === 0) return true
    const magic = yield* attempt(file, "open", () => head16(file))
    if (!magic.equals(sqliteHeader)) {
      return yield* refuse(file, "check", "is not a SQLite file: refusing to use a foreign file as the session log (name a new file, or move this one)")
    }
    return false
  })

/** `quick_check` and the session-log mark; initialises an empty file. */
const checkDatabase = (file: string, db: Database.Database, empty: boolean): Effect.Effect<void, SessionStoreError> =>
  Effect.gen(function*() {
    if (!empty) {
      const check = yield* Effect.result(attempt(file, "check", () => db.pragma("quick_check") as Array<{ quick_check: string }>))
      const problem = check._tag === "Failure" ? check.failure.message : check.success.map((r) => r.quick_check).find((r) => r !== "ok")
      if (problem !== undefined) {
        return yield* refuse(file, "check", `is damaged (SQLite's quick_check: ${oneLine(problem.replace(`${file}: check: `, "")).slice(0, 200)}): move it aside to start a new log (the sessions in it are lost)`)
      }
    }
    const setUp = db.transaction(() => {
      const app = Number(db.pragma("application_id", { simple: true }))
      const version = Number(db.pragma("user_version", { simple: true }))
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as Array<string>)
      if (app === applicationId) {
        if (version !== schemaVersion) return `is a session log of schema version ${version}; this server reads version ${schemaVersion} (start with a new --store file)`
      } else if (app !== 0 || tables.length > 0) {
        return `is a SQLite file of another application or an older ParaAgent (tables: ${tables.join(", ") || "none"}; no session-log mark): refusing to write into it (name a new --store file)`
      } else {
        db.exec(ddl)
        db.pragma(`application_id = ${applicationId}`)
        db.pragma(`user_version = ${schemaVersion}`)
      }
      return undefined
    })
    const foreign = yield* attempt(file, "check", () => setUp.immediate())
    if (foreign !== undefined) return yield* refuse(file, "check", foreign)
  })

const connect = (file: string): Effect.Effect<Database.Database, SessionStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const empty = yield* checkPath(file)
    const existedEmpty = empty && fs.existsSync(file)
    const db = yield* Effect.acquireRelease(
      attempt(file, "open", () => new Database(file, { timeout: 5_000 })),
      (db) => Effect.ignore(attempt(file, "close", () => db.close()))
    )
    yield* checkDatabase(file, db, empty)
    yield* attempt(file, "open", () => {
      db.pragma("journal_mode = WAL")
      // the log is rebuilt by the client re-sending a lost turn; NORMAL survives a process crash (not a power cut)
      db.pragma("synchronous = NORMAL")
    })
    if (existedEmpty) yield* Effect.logWarning(`${file} was an empty file (0 bytes): initialised as a new session log`)
    return db
  })

interface SessionRow {
  readonly incarnation: string
  readonly world: string
  readonly owner: string
  readonly spec: string
}

/** The store in `file` (created when absent, checked when present), closed with the layer's scope. */
export const layer = (file: string): Layer.Layer<SessionStore, SessionStoreError> =>
  Layer.effect(SessionStore, Effect.gen(function*() {
    const resolved = path.resolve(file)
    const db = yield* connect(resolved)
    const q = yield* attempt(resolved, "open", () => ({
      insertSession: db.prepare<[string, string, string, string, string, number, number]>(
        "INSERT INTO sessions (id, incarnation, world, owner, spec, turns, created_at, touched_at, closed_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, NULL)"),
      reopen: db.prepare<[string, string, string, string, number, number, string]>(
        "UPDATE sessions SET incarnation = ?, world = ?, owner = ?, spec = ?, turns = 0, created_at = ?, touched_at = ?, closed_at = NULL WHERE id = ? AND closed_at IS NOT NULL"),
      state: db.prepare<[string]>("SELECT incarnation, closed_at AS closedAt, turns FROM sessions WHERE id = ?"),
      selectSession: db.prepare<[string]>("SELECT incarnation, world, owner, spec FROM sessions WHERE id = ? AND closed_at IS NULL"),
      head: db.prepare<[string]>("SELECT incarnation, turns FROM sessions WHERE id = ? AND closed_at IS NULL"),
      turns: db.prepare<[string, string, string, number]>(
        "SELECT body FROM turns WHERE incarnation = ? AND EXISTS (SELECT 1 FROM sessions WHERE id = ? AND incarnation = ? AND closed_at IS NULL) AND idx >= ? ORDER BY idx").pluck(),
      advance: db.prepare<[number, string, string, number]>(
        "UPDATE sessions SET turns = turns + 1, touched_at = ? WHERE id = ? AND incarnation = ? AND closed_at IS NULL AND turns = ?"),
      insertTurn: db.prepare<[string, number, string]>("INSERT INTO turns (incarnation, idx, body) VALUES (?, ?, ?)"),
      closeSession: db.prepare<[number, string, string]>("UPDATE sessions SET closed_at = ?, spec = NULL, turns = 0 WHERE id = ? AND incarnation = ? AND closed_at IS NULL"),
      deleteTurns: db.prepare<[string]>("DELETE FROM turns WHERE incarnation = ?"),
      prune: db.prepare<[number]>("DELETE FROM sessions WHERE closed_at IS NOT NULL AND closed_at < ?"),
      putTask: db.prepare<[string, string, string]>(
        "INSERT INTO tasks (id, owner, body) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body WHERE tasks.owner = excluded.owner"),
      getTask: db.prepare<[string]>("SELECT body FROM tasks WHERE id = ?").pluck()
    }))
    const undecodable = (operation: string, session: string, what: string) => (e: { readonly message: string }) =>
      new SessionStoreError({ operation, session, message: `${resolved}: ${what} does not decode: ${firstLine(e).slice(0, 300)}` })

    const create = db.transaction((s: StoredSession, now: number): boolean => {
      const state = q.state.get(s.id) as { closedAt: number | null } | undefined
      const spec = JSON.stringify(s.spec)
      if (state === undefined) {
        q.insertSession.run(s.id, s.incarnation, s.world, s.owner, spec, now, now)
        return true
      }
      if (state.closedAt === null) return false
      return q.reopen.run(s.incarnation, s.world, s.owner, spec, now, now, s.id).changes === 1
    })
    const append = db.transaction((id: string, incarnation: string, index: number, body: string, now: number): AppendOutcome => {
      if (q.advance.run(now, id, incarnation, index).changes === 1) {
        q.insertTurn.run(incarnation, index, body)
        return "appended"
      }
      const state = q.state.get(id) as { incarnation: string; closedAt: number | null } | undefined
      return state !== undefined && state.closedAt === null && state.incarnation === incarnation ? "conflict" : "gone"
    })
    const close = db.transaction((id: string, incarnation: string, now: number): boolean => {
      if (q.closeSession.run(now, id, incarnation).changes === 0) return false
      q.deleteTurns.run(incarnation)
      return true
    })

    return SessionStore.of({
      label: resolved,
      create: (session) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const stored: StoredSession = { ...session, incarnation: newIncarnation() }
          const made = yield* attempt(resolved, "create", () => create.immediate(stored, now), session.id)
          return made ? stored : undefined
        }),
      get: (id) =>
        Effect.gen(function*() {
          const row = (yield* attempt(resolved, "read", () => q.selectSession.get(id), id)) as SessionRow | undefined
          if (row === undefined) return undefined
          const spec = yield* decodeSpec(row.spec).pipe(Effect.mapError(undecodable("read", id, `the spec of session ${id}`)))
          return { id, incarnation: row.incarnation, world: row.world, owner: row.owner, spec }
        }),
      head: (id) => attempt(resolved, "read", () => q.head.get(id) as SessionHead | undefined, id),
      turns: (id, incarnation, from) =>
        Effect.flatMap(attempt(resolved, "read", () => q.turns.all(incarnation, id, incarnation, from) as Array<string>, id), (rows) =>
          Effect.forEach(rows, (body, i) => decodeTurn(body).pipe(Effect.mapError(undecodable("read", id, `turn ${from + i} of session ${id}`))))),
      append: (id, incarnation, index, turn) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          attempt(resolved, "append", () => append.immediate(id, incarnation, index, JSON.stringify(turn), now), id)),
      close: (id, incarnation) => Effect.flatMap(Clock.currentTimeMillis, (now) => attempt(resolved, "close", () => close.immediate(id, incarnation, now), id)),
      putTask: (task, owner) => attempt(resolved, "put task", () => q.putTask.run(task.id, owner, JSON.stringify(task)).changes === 1, task.id),
      getTask: (id) =>
        Effect.gen(function*() {
          const body = (yield* attempt(resolved, "read task", () => q.getTask.get(id), id)) as string | undefined
          if (body === undefined) return undefined
          return yield* decodeTask(body).pipe(Effect.mapError(undecodable("read task", id, `task ${id}`)))
        }),
      // open sessions are the log and stay (close them with DELETE /sessions/{id}); tombstones are pruned once every
      // replica's cache of the session has expired too
      expire: (idleMs) => Effect.flatMap(Clock.currentTimeMillis, (now) => attempt(resolved, "expire", () => q.prune.run(now - idleMs).changes))
    })
  }))
