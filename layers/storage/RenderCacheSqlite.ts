/**
 * The SQLite render cache of the LLM simulator: rendered payloads keyed by (tool, canonical arguments, seed).
 * A damaged cache never poisons a call: it is checked at open, and any SQLite failure at run time degrades it with one
 * warning (a read failure is a miss, a write failure keeps the rendered payload, a non-JSON row is deleted and
 * re-rendered) instead of failing the call.
 *
 * At open, in order:
 * - the folder is created; a path that cannot be a file (a directory, a file as a parent) is a RenderCacheError;
 * - a file or folder without any write permission bit is opened read-only (also for root, whom the kernel would let
 *   write: the chmod states the intent); a read-only open that cannot read (a WAL file in a read-only folder) bypasses;
 * - `PRAGMA quick_check`: a corrupt file (or one that is not SQLite) is moved aside to `<file>.corrupt-<time>` (with
 *   its -wal and -shm) and a fresh cache is started; read-only, it is bypassed;
 * - a write probe: a file SQLite cannot write to is reopened read-only (hits served, new renderings not stored);
 * - the `renders` table's shape: a table of another shape is renamed aside to `renders_incompatible_<time>` (its rows
 *   are kept there, never read) and a new one created; read-only, the cache is bypassed.
 * Whatever happened at open is said in one warning; each degradation at run time in one more.
 */
import Database from "better-sqlite3"
import { Data, Effect, Option, Schema } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { oneLine } from "../../src/domain/Errors.ts"
import { Json } from "../../src/domain/Json.ts"

/** What the cache was doing when SQLite (or the file system) failed. */
export type CacheOperation = "open" | "check" | "probe" | "migrate" | "move-aside" | "prepare" | "read" | "write" | "repair"

/** A SQLite or file-system failure of the render cache: which file, during which operation, with SQLite's code. */
export class RenderCacheError extends Data.TaggedError("RenderCacheError")<{
  readonly file: string
  readonly operation: CacheOperation
  /** SQLite's extended code (`SQLITE_CORRUPT`, `SQLITE_READONLY_DIRECTORY`) or the errno code (`ENOTDIR`). */
  readonly code: string
  readonly message: string
}> {}

/** How the cache serves: reads and writes, reads only, or not at all (every call rendered). */
export type CacheMode = "read-write" | "read-only" | "bypassed"

/** The key of one rendering. */
export interface RenderKey {
  readonly tool: string
  /** The canonical JSON of the arguments. */
  readonly args: string
  readonly seed: number
}

/** The render cache; no method fails. */
export interface RenderCache {
  /** The resolved path of the cache file. */
  readonly file: string
  /** The current mode (it only ever degrades). */
  readonly mode: Effect.Effect<CacheMode>
  /** Rows with a non-JSON payload deleted (or skipped, read-only) and re-rendered since open. */
  readonly repaired: Effect.Effect<number>
  /** The cached payload, or undefined on a miss (a failed read and a corrupt row are misses). */
  readonly get: (key: RenderKey) => Effect.Effect<Json | undefined>
  /** Stores a payload (the first stored answer wins) and returns the stored one; on any failure, `payload` itself. */
  readonly put: (key: RenderKey, payload: Json, source: string) => Effect.Effect<Json>
}

/** The columns of the `renders` table: name, declared type, position in the primary key (0 = not in it). */
const columns: ReadonlyArray<readonly [string, string, number]> = [
  ["tool", "TEXT", 1],
  ["args", "TEXT", 2],
  ["seed", "INTEGER", 3],
  ["payload", "TEXT", 0],
  ["source", "TEXT", 0],
  ["created_at", "INTEGER", 0]
]

const createTable = `CREATE TABLE IF NOT EXISTS renders (
  tool TEXT NOT NULL, args TEXT NOT NULL, seed INTEGER NOT NULL,
  payload TEXT NOT NULL, source TEXT NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (tool, args, seed))`

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Json))

const TableInfoRow = Schema.Struct({ name: Schema.String, type: Schema.String, pk: Schema.Number })
const decodeTableInfo = Schema.decodeUnknownOption(Schema.Array(TableInfoRow))
const CheckRow = Schema.Struct({ quick_check: Schema.String })
const decodeCheck = Schema.decodeUnknownOption(Schema.Array(CheckRow))

/** SQLite's or Node's code of a thrown value, and its first line (never a stack). */
const describe = (e: unknown): { readonly code: string; readonly message: string } => {
  const code = e instanceof Error && "code" in e && typeof e.code === "string" ? e.code : "ERROR"
  const text = e instanceof Error ? e.message : String(e)
  return { code, message: text.split("\n")[0] ?? text }
}

/** Runs one throwing better-sqlite3 / node:fs call as an Effect failing with a RenderCacheError. */
const attempt = <A>(file: string, operation: CacheOperation, f: () => A): Effect.Effect<A, RenderCacheError> =>
  Effect.try({ try: f, catch: (e) => new RenderCacheError({ file, operation, ...describe(e) }) })

/** One line for a warning: the operation, SQLite's code and message, and what a read-only folder means. */
export const explain = (e: RenderCacheError): string =>
  e.code === "SQLITE_READONLY_DIRECTORY"
    ? `${e.operation} failed: the folder ${path.dirname(e.file)} is not writable (SQLite needs it for the -wal and -shm files)`
    : `${e.operation} failed (${e.code}: ${e.message})`

const isCorrupt = (e: RenderCacheError): boolean => e.code.startsWith("SQLITE_CORRUPT") || e.code === "SQLITE_NOTADB"
const isReadOnly = (e: RenderCacheError): boolean => e.code.startsWith("SQLITE_READONLY") || e.code.startsWith("SQLITE_CANTOPEN")

const noWriteBit = (stats: fs.Stats): boolean => (stats.mode & 0o222) === 0

const closeQuietly = (file: string, db: Database.Database): Effect.Effect<void> =>
  Effect.ignore(attempt(file, "open", () => db.close()))

const stamp = (): string => new Date().toISOString().replace(/[:.]/g, "-")

/** The shape of an existing `renders` table: "missing", "ok", or a description of how it differs. */
const tableShape = (file: string, db: Database.Database): Effect.Effect<"missing" | "ok" | { readonly differs: string }, RenderCacheError> =>
  attempt(file, "check", () => db.pragma("table_info(renders)")).pipe(
    Effect.map((raw) => {
      const rows = Option.getOrElse(decodeTableInfo(raw), () => [])
      if (rows.length === 0) return "missing" as const
      const have = rows.map((r) => `${r.name} ${r.type.toUpperCase()} pk${r.pk}`).join(", ")
      const want = columns.map(([n, t, pk]) => `${n} ${t} pk${pk}`).join(", ")
      return have === want ? "ok" as const : { differs: `columns (${rows.map((r) => r.name).join(", ")})` }
    })
  )

/** Moves a corrupt cache file (and its -wal/-shm) aside; returns where it went. */
const moveAside = (file: string): Effect.Effect<string, RenderCacheError> =>
  attempt(file, "move-aside", () => {
    const aside = `${file}.corrupt-${stamp()}`
    fs.renameSync(file, aside)
    for (const suffix of ["-wal", "-shm"]) if (fs.existsSync(file + suffix)) fs.renameSync(file + suffix, aside + suffix)
    return aside
  })

/** What open settled on: a connection and its mode, or no connection (bypassed). */
type Opened = { readonly db: Database.Database; readonly readOnly: boolean } | { readonly db: undefined }

/**
 * Opens the render cache at `file` (see the module header for the checks). Fails only when the path cannot hold a
 * file at all; every other problem degrades the cache and is said in one warning.
 */
export const open = (file: string): Effect.Effect<RenderCache, RenderCacheError, Scope.Scope> =>
  Effect.gen(function*() {
    const resolved = path.resolve(file)
    const folder = path.dirname(resolved)
    yield* attempt(resolved, "open", () => fs.mkdirSync(folder, { recursive: true })).pipe(
      Effect.mapError((e) => new RenderCacheError({ ...e, message: `cannot create the folder ${folder}: ${e.message}` }))
    )
    const stats = yield* attempt(resolved, "open", () => fs.statSync(resolved, { throwIfNoEntry: false }))
    if (stats?.isDirectory() === true) {
      return yield* new RenderCacheError({ file: resolved, operation: "open", code: "EISDIR", message: "the cache path is a directory" })
    }
    const folderStats = yield* attempt(resolved, "open", () => fs.statSync(folder))
    const notes: Array<string> = []
    const connect = (readOnly: boolean) =>
      attempt(resolved, "open", () => new Database(resolved, { readonly: readOnly, fileMustExist: readOnly, timeout: 2_000 }))
    const bypass = (db: Database.Database | undefined, why: string): Effect.Effect<Opened> =>
      Effect.as(db === undefined ? Effect.void : closeQuietly(resolved, db), { db: undefined }).pipe(
        Effect.tap(() => Effect.sync(() => void notes.push(`${why}; cache bypassed: every call is rendered`)))
      )

    const settle: Effect.Effect<Opened> = Effect.gen(function*() {
      const readOnlyWhy = stats !== undefined && noWriteBit(stats)
        ? "the file has no write permission"
        : noWriteBit(folderStats) ? `the folder ${folder} has no write permission` : undefined
      if (readOnlyWhy !== undefined && stats === undefined) return yield* bypass(undefined, `cannot create the file: ${readOnlyWhy}`)
      let readOnly = readOnlyWhy !== undefined
      const first = yield* Effect.result(connect(readOnly))
      if (first._tag === "Failure") return yield* bypass(undefined, explain(first.failure))
      let conn = first.success

      // Integrity: a corrupt file is moved aside (writable) or bypassed (read-only).
      const checked = conn
      const check = yield* Effect.result(attempt(resolved, "check", () => checked.pragma("quick_check")))
      const problem = check._tag === "Failure"
        ? (isCorrupt(check.failure) ? explain(check.failure) : undefined)
        : Option.match(decodeCheck(check.success), {
          onNone: () => "quick_check answered in an unknown shape",
          onSome: (rows) => rows.map((r) => oneLine(r.quick_check)).find((r) => r !== "ok")
        })
      if (check._tag === "Failure" && problem === undefined) return yield* bypass(conn, explain(check.failure))
      if (problem !== undefined) {
        if (readOnly) return yield* bypass(conn, `the file is corrupt (${problem})`)
        yield* closeQuietly(resolved, conn)
        const aside = yield* Effect.result(moveAside(resolved))
        if (aside._tag === "Failure") return yield* bypass(undefined, `the file is corrupt (${problem}) and ${explain(aside.failure)}`)
        notes.push(`the file was corrupt (${problem}): moved aside to ${aside.success}; a fresh cache was started`)
        const fresh = yield* Effect.result(connect(false))
        if (fresh._tag === "Failure") return yield* bypass(undefined, explain(fresh.failure))
        conn = fresh.success
      }

      // Writability: WAL lets processes share the file; a file SQLite cannot write to is reopened read-only.
      if (!readOnly) {
        const probed = conn
        const probe = yield* Effect.result(attempt(resolved, "probe", () => {
          probed.pragma("journal_mode = WAL")
          probed.exec("SAVEPOINT write_probe; CREATE TABLE write_probe (x); ROLLBACK TO write_probe; RELEASE write_probe")
        }))
        if (probe._tag === "Failure") {
          yield* closeQuietly(resolved, conn)
          if (!isReadOnly(probe.failure) || stats === undefined) return yield* bypass(undefined, explain(probe.failure))
          notes.push(`the file is not writable (a write probe got ${probe.failure.code}: ${probe.failure.message}): opened read-only (hits served, new renderings not stored)`)
          readOnly = true
          const again = yield* Effect.result(connect(true))
          if (again._tag === "Failure") return yield* bypass(undefined, explain(again.failure))
          conn = again.success
        }
      }

      // Shape: a `renders` table of another shape is renamed aside (writable) or bypassed (read-only).
      const shaped = conn
      const shape = yield* Effect.result(tableShape(resolved, shaped))
      if (shape._tag === "Failure") return yield* bypass(conn, explain(shape.failure))
      if (readOnly && shape.success !== "ok") {
        return yield* bypass(conn, shape.success === "missing" ? "the file has no renders table" : `the renders table has other ${shape.success.differs}`)
      }
      if (!readOnly && shape.success !== "ok") {
        const differs = shape.success === "missing" ? undefined : shape.success.differs
        const aside = `renders_incompatible_${Date.now()}`
        const migrated = yield* Effect.result(attempt(resolved, "migrate", () => {
          if (differs !== undefined) shaped.exec(`ALTER TABLE renders RENAME TO ${aside}`)
          shaped.exec(createTable)
        }))
        if (migrated._tag === "Failure") return yield* bypass(conn, explain(migrated.failure))
        if (differs !== undefined) notes.push(`the renders table had other ${differs}: renamed to ${aside}; a new one was created`)
      }
      if (readOnlyWhy !== undefined) notes.push(`${readOnlyWhy}: opened read-only (hits served, new renderings not stored)`)
      return { db: conn, readOnly }
    })

    const opened = yield* settle
    if (notes.length > 0) yield* Effect.logWarning(`SimulatorLlm render cache ${resolved}: ${notes.join("; ")}`)
    if (opened.db === undefined) return bypassed(resolved)
    const db = opened.db
    yield* Effect.addFinalizer(() => closeQuietly(resolved, db))
    const statements = yield* Effect.result(attempt(resolved, "prepare", () => ({
      select: db.prepare<[string, string, number], { payload: string }>("SELECT payload FROM renders WHERE tool = ? AND args = ? AND seed = ?"),
      insert: opened.readOnly ? undefined : db.prepare<[string, string, number, string, string, number]>("INSERT OR IGNORE INTO renders (tool, args, seed, payload, source, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
      remove: opened.readOnly ? undefined : db.prepare<[string, string, number]>("DELETE FROM renders WHERE tool = ? AND args = ? AND seed = ?")
    })))
    if (statements._tag === "Failure") {
      yield* Effect.logWarning(`SimulatorLlm render cache ${resolved}: ${explain(statements.failure)}; cache bypassed: every call is rendered`)
      return bypassed(resolved)
    }
    return running(resolved, opened.readOnly ? "read-only" : "read-write", statements.success)
  })

/** A cache that serves nothing. */
const bypassed = (file: string): RenderCache => ({
  file,
  mode: Effect.succeed("bypassed"),
  repaired: Effect.succeed(0),
  get: () => Effect.succeed(undefined),
  put: (_key, payload) => Effect.succeed(payload)
})

interface Statements {
  readonly select: Database.Statement<[string, string, number], { payload: string }>
  readonly insert: Database.Statement<[string, string, number, string, string, number]> | undefined
  readonly remove: Database.Statement<[string, string, number]> | undefined
}

/** The cache over an open connection; each degradation (reads off, writes off, first repair) warns once. */
const running = (file: string, initial: CacheMode, statements: Statements): RenderCache => {
  const state = { reads: initial !== "bypassed", writes: initial === "read-write", repaired: 0, repairWarned: false }
  const warn = (text: string) => Effect.logWarning(`SimulatorLlm render cache ${file}: ${text}`)
  const readFailed = (e: RenderCacheError) =>
    Effect.suspend(() => {
      if (!state.reads) return Effect.void
      state.reads = false
      state.writes = false
      return warn(`${explain(e)}; cache bypassed for the rest of the run: every call is rendered`)
    })
  const writeFailed = (e: RenderCacheError) =>
    Effect.suspend(() => {
      if (!state.writes) return Effect.void
      state.writes = false
      return warn(`${explain(e)}; new renderings are no longer stored (hits still served)`)
    })
  const read = (key: RenderKey): Effect.Effect<{ readonly payload: string } | undefined> =>
    Effect.suspend(() =>
      state.reads
        ? attempt(file, "read", () => statements.select.get(key.tool, key.args, key.seed)).pipe(
          Effect.catchTag("RenderCacheError", (e) => Effect.as(readFailed(e), undefined))
        )
        : Effect.succeed(undefined)
    )
  const repair = (key: RenderKey): Effect.Effect<void> =>
    Effect.gen(function*() {
      state.repaired++
      const remove = statements.remove
      if (state.writes && remove !== undefined) {
        yield* attempt(file, "repair", () => remove.run(key.tool, key.args, key.seed)).pipe(Effect.catchTag("RenderCacheError", writeFailed))
      }
      if (state.repairWarned) return
      state.repairWarned = true
      yield* warn(`a row with a non-JSON payload (${key.tool}) was ${state.writes ? "deleted" : "skipped"} and re-rendered; further ones are counted, not logged`)
    })
  const get = (key: RenderKey): Effect.Effect<Json | undefined> =>
    Effect.flatMap(read(key), (row) => {
      if (row === undefined) return Effect.succeed(undefined)
      const payload = Option.getOrUndefined(decodeJson(row.payload))
      return payload === undefined ? Effect.as(repair(key), undefined) : Effect.succeed(payload)
    })
  const put = (key: RenderKey, payload: Json, source: string): Effect.Effect<Json> =>
    Effect.gen(function*() {
      const insert = statements.insert
      if (!state.writes || insert === undefined) return payload
      const stored = yield* attempt(file, "write", () => insert.run(key.tool, key.args, key.seed, JSON.stringify(payload), source, Date.now())).pipe(
        Effect.as(true),
        Effect.catchTag("RenderCacheError", (e) => Effect.as(writeFailed(e), false))
      )
      if (!stored) return payload
      // The first stored answer wins (a concurrent identical call may have stored one meanwhile): read it back.
      const row = yield* read(key)
      return (row === undefined ? undefined : Option.getOrUndefined(decodeJson(row.payload))) ?? payload
    })
  return {
    file,
    mode: Effect.sync(() => state.reads ? (state.writes ? "read-write" : "read-only") : "bypassed"),
    repaired: Effect.sync(() => state.repaired),
    get,
    put
  }
}
