/**
 * The RunStore over one SQLite file (better-sqlite3): WAL journal, `synchronous = FULL`, foreign keys on, every write
 * one transaction, JSON as text columns, float arrays as raw little-endian float64 blobs, every row read back decoded.
 *
 * Crash safety: WAL makes each transaction atomic across `kill -9`, OS crashes and power loss (a torn write is a WAL
 * frame without its commit, discarded at the next open). `synchronous = FULL` fsyncs the WAL at every commit, so a
 * commit that returned is durable even across power loss; `NORMAL` would also survive `kill -9` (the page cache
 * outlives the process) but could lose the last commits to a power cut, i.e. finished rollouts. Commits here are one
 * per group or checkpoint (a few a second at most), so the fsync per commit costs nothing a trainer notices.
 */
import Database from "better-sqlite3"
import { Clock, Effect, Layer, Schema } from "effect"
import type { Scope, SchemaIssue } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Json } from "../../src/domain/Json.ts"
import { Trajectory } from "../../src/domain/Trajectory.ts"
import { RunStatus, RunStore, RunStoreError } from "../../src/training/RunStore.ts"
import type { Checkpoint, Deleted, GroupInfo, IterationMetrics, PutOutcome, RunInfo, StoredCheckpoint, TrajectoryFilter } from "../../src/training/RunStore.ts"

/** The version of the tables below, kept in `meta`; a file of another version is refused, never migrated silently. */
export const schemaVersion = 1

const ddl = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE runs (
  id TEXT PRIMARY KEY, config TEXT NOT NULL, created_at INTEGER NOT NULL, status TEXT NOT NULL) STRICT;
CREATE TABLE trajectory_groups (
  seq INTEGER PRIMARY KEY, run TEXT NOT NULL REFERENCES runs (id), stage TEXT NOT NULL, key TEXT NOT NULL,
  iteration INTEGER NOT NULL, size INTEGER NOT NULL, created_at INTEGER NOT NULL, UNIQUE (run, stage, key)) STRICT;
CREATE INDEX trajectory_groups_by_iteration ON trajectory_groups (run, stage, iteration);
CREATE TABLE trajectories (
  seq INTEGER PRIMARY KEY, group_seq INTEGER NOT NULL REFERENCES trajectory_groups (seq), position INTEGER NOT NULL,
  body TEXT NOT NULL, UNIQUE (group_seq, position)) STRICT;
CREATE TABLE metrics (
  run TEXT NOT NULL REFERENCES runs (id), stage TEXT NOT NULL, iteration INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (run, stage, iteration)) STRICT;
CREATE TABLE checkpoints (
  run TEXT NOT NULL REFERENCES runs (id), stage TEXT NOT NULL, iteration INTEGER NOT NULL, params BLOB NOT NULL,
  state TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (run, stage, iteration)) STRICT;
CREATE TABLE checkpoint_optimiser (
  run TEXT NOT NULL, stage TEXT NOT NULL, iteration INTEGER NOT NULL, slot INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (run, stage, iteration, slot),
  FOREIGN KEY (run, stage, iteration) REFERENCES checkpoints (run, stage, iteration)) STRICT;
CREATE TABLE stages (
  run TEXT NOT NULL REFERENCES runs (id), stage TEXT NOT NULL, result TEXT NOT NULL, finished_at INTEGER NOT NULL,
  PRIMARY KEY (run, stage)) STRICT;
`

// ---- edges: SQLite failures, JSON and trajectories, float blobs, row decoding ----

/** SQLite's code of a thrown value and its first line. */
const describe = (e: unknown): { readonly code: string; readonly text: string } => {
  const code = e instanceof Error && "code" in e && typeof e.code === "string" ? e.code : "ERROR"
  const text = e instanceof Error ? e.message : String(e)
  return { code, text: text.split("\n")[0] ?? text }
}

/**
 * Runs one throwing better-sqlite3 / node:fs call as an Effect failing with a RunStoreError that says what was being
 * done; `known` words the failures a caller can cause (a missing run, a duplicate id) by SQLite code.
 */
const attempt = <A>(file: string, doing: string, f: () => A, known: Readonly<Record<string, string>> = {}): Effect.Effect<A, RunStoreError> =>
  Effect.try({
    try: f,
    catch: (e) => {
      const { code, text } = describe(e)
      return new RunStoreError({ path: file, message: `${doing}: ${known[code] ?? `${code}: ${text}`}` })
    }
  })

const noRun = (run: string) => ({ SQLITE_CONSTRAINT_FOREIGNKEY: `run ${JSON.stringify(run)} does not exist` })

const JsonText = Schema.fromJsonString(Json)
const encodeJson = Schema.encodeUnknownEffect(JsonText)
const encodeTrajectory = Schema.encodeEffect(Schema.fromJsonString(Trajectory))

/** A JSON value as text; a value JSON cannot carry (NaN, a function) is an error naming what it was. */
const jsonText = (file: string, what: string, value: Json): Effect.Effect<string, RunStoreError> =>
  encodeJson(value).pipe(Effect.mapError((e) => new RunStoreError({ path: file, message: `${what} is not JSON: ${e.message}` })))

const hostLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** The raw little-endian float64 bytes of an array. */
const floatBytes = (values: Float64Array): Buffer => {
  const view = Buffer.from(values.buffer, values.byteOffset, values.byteLength)
  return hostLittleEndian ? view : Buffer.from(view).swap64()
}

/** The array whose little-endian float64 bytes these are (a fresh, aligned copy). */
const bytesFloats = (bytes: Uint8Array): Float64Array => {
  const copy = Buffer.alloc(bytes.length)
  copy.set(bytes)
  if (!hostLittleEndian) copy.swap64()
  return new Float64Array(copy.buffer, copy.byteOffset, bytes.length / 8)
}

/** A short rendering of a column's value for an error: text cut at 60 characters, a blob by its size. */
const preview = (value: unknown): string => {
  if (value instanceof Uint8Array) return `a blob of ${value.length} bytes`
  const text = typeof value === "string" ? JSON.stringify(value) : String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The column (the first key of the first path) a row's decoding issue is about. */
const columnOf = (issue: SchemaIssue.Issue): string | undefined => {
  let current = issue
  for (;;) {
    if (current._tag === "Pointer") return current.path.length > 0 ? String(current.path[0]) : undefined
    if (current._tag === "Composite") current = current.issues[0]
    else if (current._tag === "Filter" || current._tag === "Encoding") current = current.issue
    else return undefined
  }
}

/**
 * Decodes one raw row; a row that does not decode is a RunStoreError naming the row by its key columns, the column
 * and its value: `trajectories row (seq=17, key="g3") does not decode: column body = "{\"id\": ...": ...`.
 */
const decodeRow = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, file: string, table: string, keys: ReadonlyArray<string>) => {
  const decode = Schema.decodeUnknownEffect(schema)
  return (raw: unknown): Effect.Effect<S["Type"], RunStoreError> =>
    decode(raw).pipe(Effect.mapError((e) => {
      const record: Readonly<Record<string, unknown>> = typeof raw === "object" && raw !== null ? Object.fromEntries(Object.entries(raw)) : {}
      const row = `${table} row (${keys.map((k) => `${k}=${JSON.stringify(record[k])}`).join(", ")})`
      const column = columnOf(e.issue)
      const where = column === undefined ? "" : `column ${column} = ${preview(record[column])}: `
      return new RunStoreError({ path: file, message: `${row} does not decode: ${where}${e.message.split("\n")[0] ?? ""}` })
    }))
}

/** A float64 blob: whole 8-byte values. */
const FloatBlob = Schema.Uint8Array.pipe(Schema.check(Schema.makeFilter((b) => b.length % 8 === 0 || `a float64 blob of ${b.length} bytes (not a multiple of 8)`)))

const RunRow = Schema.Struct({ id: Schema.String, config: JsonText, created_at: Schema.Int, status: RunStatus })
const TrajectoryRow = Schema.Struct({ seq: Schema.Int, key: Schema.String, body: Schema.fromJsonString(Trajectory) })
const GroupRow = Schema.Struct({ key: Schema.String, iteration: Schema.Int, size: Schema.Int })
const MetricsRow = Schema.Struct({ iteration: Schema.Int, body: JsonText })
const CheckpointRow = Schema.Struct({ iteration: Schema.Int, params: FloatBlob, state: JsonText, created_at: Schema.Int })
const SlotRow = Schema.Struct({ slot: Schema.Int, data: FloatBlob })
const StageRow = Schema.Struct({ result: JsonText })
const VersionRow = Schema.Struct({ value: Schema.String })

/** Fails unless `n` is an integer ≥ `min` (iterations are ≥ 0; `deleteAfter` also takes -1: drop every iteration). */
const checkInteger = (file: string, what: string, n: number, min = 0): Effect.Effect<void, RunStoreError> =>
  Number.isSafeInteger(n) && n >= min
    ? Effect.void
    : Effect.fail(new RunStoreError({ path: file, message: `${what} must be an integer ≥ ${min}, got ${n}` }))

// ---- open: folder, pragmas, schema version ----

/** Opens the connection (closed when the scope ends), sets the pragmas and creates or checks the tables. */
const connect = (file: string): Effect.Effect<Database.Database, RunStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const memory = file === ":memory:"
    if (!memory) yield* attempt(file, "create the folder", () => fs.mkdirSync(path.dirname(file), { recursive: true }))
    const db = yield* Effect.acquireRelease(
      attempt(file, "open", () => new Database(file, { timeout: 5_000 })),
      (db) => Effect.ignore(attempt(file, "close", () => db.close()))
    )
    const journal = yield* attempt(file, "open (journal_mode)", () => db.pragma("journal_mode = WAL", { simple: true }))
    if (journal !== (memory ? "memory" : "wal")) {
      return yield* new RunStoreError({ path: file, message: `open: SQLite kept journal_mode ${String(journal)} (WAL is needed for crash safety)` })
    }
    yield* attempt(file, "open (pragmas)", () => {
      db.pragma("synchronous = FULL")
      db.pragma("foreign_keys = ON")
    })
    // BEGIN IMMEDIATE: two processes opening a new file at once create the tables once.
    const found = yield* attempt(file, "open (schema)", () =>
      db.transaction(() => {
        const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all()
        if (tables.length === 0) {
          db.exec(ddl)
          db.prepare("INSERT INTO meta (key, value) VALUES ('schema_version', ?)").run(String(schemaVersion))
        }
        if (tables.length > 0 && !tables.includes("meta")) return { tables: tables.map(String) }
        return { version: db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() }
      }).immediate())
    if ("tables" in found) {
      return yield* new RunStoreError({ path: file, message: `open: not a run store (no meta table; tables: ${found.tables.join(", ")})` })
    }
    const version = yield* decodeRow(VersionRow, file, "meta", ["value"])(found.version).pipe(
      Effect.mapError((e) => new RunStoreError({ path: file, message: `open: meta has no readable schema_version (${e.message})` }))
    )
    if (version.value !== String(schemaVersion)) {
      return yield* new RunStoreError({
        path: file,
        message: `open: the file has run-store schema version ${version.value}; this build reads version ${schemaVersion}`
      })
    }
    return db
  })

// ---- the service ----

/** Prepares every statement once. */
const prepare = (db: Database.Database) => ({
  insertRun: db.prepare<[string, string, number]>("INSERT INTO runs (id, config, created_at, status) VALUES (?, ?, ?, 'running')"),
  selectRun: db.prepare<[string]>("SELECT id, config, created_at, status FROM runs WHERE id = ?"),
  selectRuns: db.prepare<[]>("SELECT id, config, created_at, status FROM runs ORDER BY rowid"),
  updateStatus: db.prepare<[string, string]>("UPDATE runs SET status = ? WHERE id = ?"),
  insertGroup: db.prepare<[string, string, string, number, number, number]>(
    "INSERT INTO trajectory_groups (run, stage, key, iteration, size, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run, stage, key) DO NOTHING"
  ),
  insertTrajectory: db.prepare<[number | bigint, number, string]>("INSERT INTO trajectories (group_seq, position, body) VALUES (?, ?, ?)"),
  selectTrajectories: db.prepare<[string, string]>(
    `SELECT t.seq, g.key, t.body FROM trajectory_groups g JOIN trajectories t ON t.group_seq = g.seq
     WHERE g.run = ? AND g.stage = ? ORDER BY g.seq, t.position`
  ),
  selectTrajectoriesAt: db.prepare<[string, string, number]>(
    `SELECT t.seq, g.key, t.body FROM trajectory_groups g JOIN trajectories t ON t.group_seq = g.seq
     WHERE g.run = ? AND g.stage = ? AND g.iteration = ? ORDER BY g.seq, t.position`
  ),
  selectGroups: db.prepare<[string, string]>("SELECT key, iteration, size FROM trajectory_groups WHERE run = ? AND stage = ? ORDER BY seq"),
  selectGroupsAt: db.prepare<[string, string, number]>(
    "SELECT key, iteration, size FROM trajectory_groups WHERE run = ? AND stage = ? AND iteration = ? ORDER BY seq"
  ),
  upsertMetrics: db.prepare<[string, string, number, string]>(
    "INSERT INTO metrics (run, stage, iteration, body) VALUES (?, ?, ?, ?) ON CONFLICT (run, stage, iteration) DO UPDATE SET body = excluded.body"
  ),
  selectMetrics: db.prepare<[string, string]>("SELECT iteration, body FROM metrics WHERE run = ? AND stage = ? ORDER BY iteration"),
  deleteSlots: db.prepare<[string, string, number]>("DELETE FROM checkpoint_optimiser WHERE run = ? AND stage = ? AND iteration = ?"),
  deleteCheckpoint: db.prepare<[string, string, number]>("DELETE FROM checkpoints WHERE run = ? AND stage = ? AND iteration = ?"),
  insertCheckpoint: db.prepare<[string, string, number, Buffer, string, number]>(
    "INSERT INTO checkpoints (run, stage, iteration, params, state, created_at) VALUES (?, ?, ?, ?, ?, ?)"
  ),
  insertSlot: db.prepare<[string, string, number, number, Buffer]>(
    "INSERT INTO checkpoint_optimiser (run, stage, iteration, slot, data) VALUES (?, ?, ?, ?, ?)"
  ),
  selectCheckpoint: db.prepare<[string, string, number]>(
    "SELECT iteration, params, state, created_at FROM checkpoints WHERE run = ? AND stage = ? AND iteration = ?"
  ),
  selectLatestIteration: db.prepare<[string, string]>("SELECT max(iteration) FROM checkpoints WHERE run = ? AND stage = ?").pluck(),
  selectSlots: db.prepare<[string, string, number]>(
    "SELECT iteration, slot, data FROM checkpoint_optimiser WHERE run = ? AND stage = ? AND iteration = ? ORDER BY slot"
  ),
  upsertStage: db.prepare<[string, string, string, number]>(
    "INSERT INTO stages (run, stage, result, finished_at) VALUES (?, ?, ?, ?) ON CONFLICT (run, stage) DO UPDATE SET result = excluded.result, finished_at = excluded.finished_at"
  ),
  selectStage: db.prepare<[string, string]>("SELECT run, stage, result FROM stages WHERE run = ? AND stage = ?"),
  deleteTrajectoriesAfter: db.prepare<{ run: string; stage: string; iteration: number }>(
    "DELETE FROM trajectories WHERE group_seq IN (SELECT seq FROM trajectory_groups WHERE run = @run AND stage = @stage AND iteration > @iteration)"
  ),
  deleteGroupsAfter: db.prepare<{ run: string; stage: string; iteration: number }>(
    "DELETE FROM trajectory_groups WHERE run = @run AND stage = @stage AND iteration > @iteration"
  ),
  deleteMetricsAfter: db.prepare<{ run: string; stage: string; iteration: number }>(
    "DELETE FROM metrics WHERE run = @run AND stage = @stage AND iteration > @iteration"
  ),
  deleteSlotsAfter: db.prepare<{ run: string; stage: string; iteration: number }>(
    "DELETE FROM checkpoint_optimiser WHERE run = @run AND stage = @stage AND iteration > @iteration"
  ),
  deleteCheckpointsAfter: db.prepare<{ run: string; stage: string; iteration: number }>(
    "DELETE FROM checkpoints WHERE run = @run AND stage = @stage AND iteration > @iteration"
  )
})

/**
 * Opens (creating it and its folder when missing) the run store at `file`, or an in-memory one for `:memory:`; the
 * connection closes when the scope ends. A file that is not SQLite, not a run store, or of another schema version is a
 * RunStoreError.
 */
export const make = (file: string): Effect.Effect<RunStore["Service"], RunStoreError, Scope.Scope> =>
  Effect.gen(function*() {
    const resolved = file === ":memory:" ? file : path.resolve(file)
    const db = yield* connect(resolved)
    const sql = yield* attempt(resolved, "prepare", () => prepare(db))
    const run = <A>(doing: string, f: () => A, known?: Readonly<Record<string, string>>) => attempt(resolved, doing, f, known)
    const fail = (message: string) => Effect.fail(new RunStoreError({ path: resolved, message }))

    const decodeRun = decodeRow(RunRow, resolved, "runs", ["id"])
    const runInfo = (row: typeof RunRow.Type): RunInfo => ({ id: row.id, config: row.config, createdAt: row.created_at, status: row.status })
    const decodeTrajectory = decodeRow(TrajectoryRow, resolved, "trajectories", ["seq", "key"])
    const decodeGroup = decodeRow(GroupRow, resolved, "trajectory_groups", ["key"])
    const decodeMetrics = decodeRow(MetricsRow, resolved, "metrics", ["iteration"])
    const decodeCheckpoint = decodeRow(CheckpointRow, resolved, "checkpoints", ["iteration"])
    const decodeSlot = decodeRow(SlotRow, resolved, "checkpoint_optimiser", ["iteration", "slot"])
    const decodeStage = decodeRow(StageRow, resolved, "stages", ["run", "stage"])

    const createRun = Effect.fn("RunStore.createRun")(function*(id: string, config: Json) {
      const text = yield* jsonText(resolved, `the config of run ${JSON.stringify(id)}`, config)
      const createdAt = yield* Clock.currentTimeMillis
      yield* run(`create run ${JSON.stringify(id)}`, () => sql.insertRun.run(id, text, createdAt), {
        SQLITE_CONSTRAINT_PRIMARYKEY: "a run with this id exists"
      })
      return { id, config, createdAt, status: "running" as const }
    })

    const getRun = Effect.fn("RunStore.getRun")(function*(id: string) {
      const raw = yield* run(`read run ${JSON.stringify(id)}`, () => sql.selectRun.get(id))
      return raw === undefined ? undefined : runInfo(yield* decodeRun(raw))
    })

    const setStatus = Effect.fn("RunStore.setStatus")(function*(id: string, status: RunStatus) {
      const changed = yield* run(`set the status of run ${JSON.stringify(id)}`, () => sql.updateStatus.run(status, id).changes)
      if (changed === 0) return yield* fail(`set the status of run ${JSON.stringify(id)}: the run does not exist`)
    })

    const listRuns = Effect.fn("RunStore.listRuns")(function*() {
      const rows = yield* run("list runs", () => sql.selectRuns.all())
      return (yield* Effect.forEach(rows, decodeRun)).map(runInfo)
    })

    const putGroup = db.transaction((runId: string, stage: string, key: string, iteration: number, bodies: ReadonlyArray<string>, at: number): PutOutcome => {
      const group = sql.insertGroup.run(runId, stage, key, iteration, bodies.length, at)
      if (group.changes === 0) return "existed"
      bodies.forEach((body, position) => sql.insertTrajectory.run(group.lastInsertRowid, position, body))
      return "inserted"
    })

    const putTrajectories = Effect.fn("RunStore.putTrajectories")(function*(
      runId: string,
      stage: string,
      key: string,
      iteration: number,
      trajectories: ReadonlyArray<Trajectory>
    ) {
      yield* checkInteger(resolved, "iteration", iteration)
      const bodies = yield* Effect.forEach(trajectories, (t, i) =>
        encodeTrajectory(t).pipe(Effect.mapError((e) =>
          new RunStoreError({ path: resolved, message: `trajectory ${i} (${JSON.stringify(t.id)}) of group ${JSON.stringify(key)} does not encode: ${e.message}` })
        )))
      const at = yield* Clock.currentTimeMillis
      return yield* run(`put group ${JSON.stringify(key)} of ${runId}/${stage}`, () => putGroup.immediate(runId, stage, key, iteration, bodies, at), noRun(runId))
    })

    const trajectories = Effect.fn("RunStore.trajectories")(function*(runId: string, stage: string, filter: TrajectoryFilter = {}) {
      const at = filter.iteration
      if (at !== undefined) yield* checkInteger(resolved, "filter.iteration", at)
      const rows = yield* run(`read trajectories of ${runId}/${stage}`, () =>
        at === undefined ? sql.selectTrajectories.all(runId, stage) : sql.selectTrajectoriesAt.all(runId, stage, at))
      return (yield* Effect.forEach(rows, decodeTrajectory)).map((row) => row.body)
    })

    const groups = Effect.fn("RunStore.groups")(function*(runId: string, stage: string, filter: TrajectoryFilter = {}) {
      const at = filter.iteration
      if (at !== undefined) yield* checkInteger(resolved, "filter.iteration", at)
      const rows = yield* run(`read groups of ${runId}/${stage}`, () =>
        at === undefined ? sql.selectGroups.all(runId, stage) : sql.selectGroupsAt.all(runId, stage, at))
      return yield* Effect.forEach(rows, (raw) => Effect.map(decodeGroup(raw), (row): GroupInfo => row))
    })

    const putMetrics = Effect.fn("RunStore.putMetrics")(function*(runId: string, stage: string, iteration: number, metrics: Json) {
      yield* checkInteger(resolved, "iteration", iteration)
      const text = yield* jsonText(resolved, `the metrics of ${runId}/${stage} at iteration ${iteration}`, metrics)
      yield* run(`put metrics of ${runId}/${stage} at iteration ${iteration}`, () => sql.upsertMetrics.run(runId, stage, iteration, text), noRun(runId))
    })

    const metrics = Effect.fn("RunStore.metrics")(function*(runId: string, stage: string) {
      const rows = yield* run(`read metrics of ${runId}/${stage}`, () => sql.selectMetrics.all(runId, stage))
      return yield* Effect.forEach(rows, (raw) => Effect.map(decodeMetrics(raw), (row): IterationMetrics => ({ iteration: row.iteration, metrics: row.body })))
    })

    const writeCheckpoint = db.transaction((
      runId: string,
      stage: string,
      iteration: number,
      blobs: { readonly params: Buffer; readonly optimiser: ReadonlyArray<Buffer> },
      state: string,
      metricsText: string | undefined,
      at: number
    ) => {
      sql.deleteSlots.run(runId, stage, iteration)
      sql.deleteCheckpoint.run(runId, stage, iteration)
      sql.insertCheckpoint.run(runId, stage, iteration, blobs.params, state, at)
      blobs.optimiser.forEach((data, slot) => sql.insertSlot.run(runId, stage, iteration, slot, data))
      if (metricsText !== undefined) sql.upsertMetrics.run(runId, stage, iteration, metricsText)
    })

    const putCheckpoint = Effect.fn("RunStore.putCheckpoint")(function*(
      runId: string,
      stage: string,
      iteration: number,
      checkpoint: Checkpoint,
      metricsValue?: Json
    ) {
      yield* checkInteger(resolved, "iteration", iteration)
      const where = `${runId}/${stage} at iteration ${iteration}`
      const state = yield* jsonText(resolved, `the checkpoint state of ${where}`, checkpoint.state)
      const metricsText = metricsValue === undefined ? undefined : yield* jsonText(resolved, `the metrics of ${where}`, metricsValue)
      const blobs = { params: floatBytes(checkpoint.params), optimiser: checkpoint.optimiser.map(floatBytes) }
      const at = yield* Clock.currentTimeMillis
      yield* run(`put the checkpoint of ${where}`, () => writeCheckpoint.immediate(runId, stage, iteration, blobs, state, metricsText, at), noRun(runId))
    })

    // One read transaction: the checkpoint row and its optimiser slots come from one snapshot.
    const readCheckpoint = db.transaction((runId: string, stage: string, iteration: number | undefined) => {
      const latest: unknown = iteration ?? sql.selectLatestIteration.get(runId, stage)
      if (typeof latest !== "number") return undefined
      const row: unknown = sql.selectCheckpoint.get(runId, stage, latest)
      return row === undefined ? undefined : { row, slots: sql.selectSlots.all(runId, stage, latest) }
    })

    const loadCheckpoint = (runId: string, stage: string, iteration: number | undefined) =>
      Effect.gen(function*() {
        const read = yield* run(`read the checkpoint of ${runId}/${stage}`, () => readCheckpoint(runId, stage, iteration))
        if (read === undefined) return undefined
        const row = yield* decodeCheckpoint(read.row)
        const slots = yield* Effect.forEach(read.slots, decodeSlot)
        const gap = slots.findIndex((s, i) => s.slot !== i)
        if (gap >= 0) {
          return yield* fail(`checkpoint_optimiser rows of ${runId}/${stage} at iteration ${row.iteration}: slot ${gap} is missing`)
        }
        const stored: StoredCheckpoint = {
          iteration: row.iteration,
          params: bytesFloats(row.params),
          optimiser: slots.map((s) => bytesFloats(s.data)),
          state: row.state,
          createdAt: row.created_at
        }
        return stored
      })

    const latestCheckpoint = Effect.fn("RunStore.latestCheckpoint")(function*(runId: string, stage: string) {
      return yield* loadCheckpoint(runId, stage, undefined)
    })

    const checkpoint = Effect.fn("RunStore.checkpoint")(function*(runId: string, stage: string, iteration: number) {
      yield* checkInteger(resolved, "iteration", iteration)
      return yield* loadCheckpoint(runId, stage, iteration)
    })

    const markStage = Effect.fn("RunStore.markStage")(function*(runId: string, stage: string, result: Json) {
      const text = yield* jsonText(resolved, `the result of ${runId}/${stage}`, result)
      const at = yield* Clock.currentTimeMillis
      yield* run(`mark ${runId}/${stage} finished`, () => sql.upsertStage.run(runId, stage, text, at), noRun(runId))
    })

    const stageResult = Effect.fn("RunStore.stageResult")(function*(runId: string, stage: string) {
      const raw = yield* run(`read the result of ${runId}/${stage}`, () => sql.selectStage.get(runId, stage))
      return raw === undefined ? undefined : (yield* decodeStage(raw)).result
    })

    const dropAfter = db.transaction((params: { run: string; stage: string; iteration: number }): Deleted => {
      const trajectoriesDropped = sql.deleteTrajectoriesAfter.run(params).changes
      const groupsDropped = sql.deleteGroupsAfter.run(params).changes
      const metricsDropped = sql.deleteMetricsAfter.run(params).changes
      sql.deleteSlotsAfter.run(params)
      const checkpointsDropped = sql.deleteCheckpointsAfter.run(params).changes
      return { groups: groupsDropped, trajectories: trajectoriesDropped, metrics: metricsDropped, checkpoints: checkpointsDropped }
    })

    const deleteAfter = Effect.fn("RunStore.deleteAfter")(function*(runId: string, stage: string, iteration: number) {
      yield* checkInteger(resolved, "iteration", iteration, -1)
      return yield* run(`delete ${runId}/${stage} after iteration ${iteration}`, () => dropAfter.immediate({ run: runId, stage, iteration }))
    })

    return RunStore.of({
      createRun,
      getRun,
      setStatus,
      listRuns,
      putTrajectories,
      trajectories,
      groups,
      putMetrics,
      metrics,
      putCheckpoint,
      latestCheckpoint,
      checkpoint,
      markStage,
      stageResult,
      deleteAfter
    })
  })

/** The run store in the SQLite file at `path` (created with its folder when missing), closed when the layer's scope ends. */
export const layer = (file: string): Layer.Layer<RunStore, RunStoreError> => Layer.effect(RunStore, make(file))

/** An in-memory run store (`:memory:`), for tests: the same tables and statements, gone when the scope ends. */
export const layerMemory: Layer.Layer<RunStore, RunStoreError> = layer(":memory:")
