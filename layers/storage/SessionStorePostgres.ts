/**
 * The SessionStore in PostgreSQL (`--store postgres://user@host/db`), for replicas on several machines: the same
 * three tables as the SQLite log (sessions with incarnation, owner, turn count and tombstone; turns keyed by
 * (incarnation, index); posted tasks with their owner) in a schema of their own, through @effect/sql-pg (Effect's
 * maintained PostgreSQL client, a native wire-protocol driver with a connection pool). Every operation is one
 * statement: `append` advances the turn count and inserts the turn in one CTE only when the session is open, in that
 * incarnation, at that index — the row lock makes two replicas racing for a round one winner and one conflict. Appends
 * of different sessions that arrive while the pool is busy share one such statement, each keeping its own check.
 *
 * At start the server applies the migrations itself (effect/sql's Migrator, which locks its table so replicas that
 * start together run them once), and refuses with one line: an unreachable database (naming host, port, database and
 * the cause, never the password), a schema that holds another application's tables, or a log written by a newer
 * schema version.
 */
import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, Deferred, Effect, Exit, Layer, Queue, Redacted, Schema, Semaphore } from "effect"
import type { Duration } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import { Task } from "../../src/domain/Task.ts"
import { newIncarnation, SessionSpec, SessionStore, SessionStoreError, StoredTurn } from "../../src/service/SessionStore.ts"
import type { AppendOutcome, SessionHead, StoredSession } from "../../src/service/SessionStore.ts"

/** Where the log lives and how the server reaches it. */
export interface PostgresOptions {
  /** `postgres://user[:password]@host[:port]/database` (query options as libpq reads them). */
  readonly url: string
  /** The schema holding the tables (created when absent); default `toolenv`. */
  readonly schema?: string
  /** Connections in this replica's pool; default 8. */
  readonly pool?: number
  /** How long a connection attempt may take; default 10 s. */
  readonly connectTimeout?: Duration.Input
  /**
   * The most appends sent as one statement (appends of different sessions that arrive while earlier statements are
   * in flight travel together); default 64. 1 sends each append alone.
   */
  readonly maxBatch?: number
}

/** The schema the tables go in when none is named. */
export const defaultSchema = "toolenv"

/** The table effect/sql's Migrator records applied migrations in (inside the schema). */
export const migrationsTable = "paraagent_migrations"

/** Whether `--store` names a PostgreSQL database rather than a SQLite file. */
export const isPostgresUrl = (store: string): boolean => /^postgres(ql)?:\/\//i.test(store)

/** A schema name the server accepts (it is quoted in SQL, but kept to plain identifiers). */
export const isSchemaName = (name: string): boolean => /^[a-z_][a-z0-9_]{0,62}$/.test(name)

/** The URL as the log's label and in errors: user, host, port and database, never the password. */
export const describeUrl = (url: string, schema: string): string => {
  try {
    const u = new URL(url)
    const user = u.username === "" ? "" : `${decodeURIComponent(u.username)}@`
    return `postgres://${user}${u.hostname}${u.port === "" ? "" : `:${u.port}`}${u.pathname} (schema ${schema})`
  } catch {
    return `a postgres URL that does not parse (schema ${schema})`
  }
}

/** The migrations, in order: each one statement list, applied in one transaction under the Migrator's lock. */
const migrations: Record<string, Effect.Effect<void, unknown, SqlClient>> = {
  "0001_session_log": Effect.flatMap(SqlClient, (sql) =>
    Effect.forEach([
      `CREATE TABLE sessions (
        id text PRIMARY KEY, incarnation text NOT NULL, world text NOT NULL, owner text NOT NULL, spec text,
        turns integer NOT NULL, created_at bigint NOT NULL, touched_at bigint NOT NULL, closed_at bigint)`,
      `CREATE TABLE turns (incarnation text NOT NULL, idx integer NOT NULL, body text NOT NULL, PRIMARY KEY (incarnation, idx))`,
      `CREATE TABLE tasks (id text PRIMARY KEY, owner text NOT NULL, body text NOT NULL)`,
      `CREATE INDEX sessions_closed ON sessions (closed_at) WHERE closed_at IS NOT NULL`
    ], (statement) => sql.unsafe(statement), { discard: true }))
}

/** One append as the sender gets it: the turn already serialised. */
interface AppendInput {
  readonly id: string
  readonly incarnation: string
  readonly index: number
  readonly body: string
}

/** An append waiting for its statement, and where its outcome goes. */
interface PendingAppend extends AppendInput {
  readonly done: Deferred.Deferred<AppendOutcome, SessionStoreError>
}

/** The newest migration this code knows. */
export const schemaVersion = 1

/** An error and its causes as one line (the driver wraps the socket's error: ECONNREFUSED is two causes down). */
const firstLine = (e: unknown): string => {
  const parts: Array<string> = []
  let current: unknown = e
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const message = current instanceof Error ? current.message : typeof current === "object" && "message" in current ? String((current as { message: unknown }).message) : String(current)
    const line = (message.split("\n")[0] ?? "").trim()
    if (line !== "" && !parts.some((p) => p.includes(line))) parts.push(line)
    current = typeof current === "object" ? (current as { cause?: unknown; reason?: unknown }).cause ?? (current as { reason?: unknown }).reason : undefined
  }
  return parts.join(": ").slice(0, 300)
}

const decodeSpec = Schema.decodeUnknownEffect(Schema.fromJsonString(SessionSpec))
const decodeTurn = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredTurn))
const decodeTask = Schema.decodeUnknownEffect(Schema.fromJsonString(Task))

/** The client, reachable, with the schema migrated (or a one-line refusal). */
const connect = (options: PostgresOptions, label: string) =>
  Effect.gen(function*() {
    const schema = options.schema ?? defaultSchema
    const fail = (operation: string, message: string) => new SessionStoreError({ operation, message: `${label}: ${message}` })
    if (!isSchemaName(schema)) return yield* fail("open", `schema name ${JSON.stringify(schema)} is not a plain identifier (a-z, 0-9, _)`)
    const sql = yield* PgClient.PgClient
    // reachable at all: the pool connects lazily, so ask once with a bound
    yield* sql`SELECT 1`.pipe(
      Effect.timeoutOrElse({ duration: options.connectTimeout ?? "10 seconds", orElse: () => Effect.fail(new Error("no answer within the connect timeout")) }),
      Effect.mapError((e) => fail("open", `unreachable: ${firstLine(e)}`))
    )
    const tables = (yield* sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ${schema} ORDER BY table_name`.pipe(
      Effect.mapError((e) => fail("check", `cannot list the tables of schema ${schema}: ${firstLine(e)}`))
    )).map((r) => r.name)
    if (tables.length > 0 && !tables.includes(migrationsTable)) {
      return yield* fail("check", `schema ${schema} holds tables of another application (${tables.slice(0, 6).join(", ")}${tables.length > 6 ? ", …" : ""}): refusing to write into it (name another with --pg-schema)`)
    }
    if (tables.length === 0) {
      // replicas starting together may race to create it: a loser finds it made
      yield* sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).pipe(
        Effect.catch(() => Effect.void),
        Effect.andThen(sql<{ n: number }>`SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = ${schema}`),
        Effect.flatMap((rows) => ((rows[0]?.n ?? 0) > 0 ? Effect.void : Effect.fail(fail("open", `cannot create schema ${schema}`)))),
        Effect.mapError((e) => (e instanceof SessionStoreError ? e : fail("open", `cannot create schema ${schema}: ${firstLine(e)}`)))
      )
    } else {
      const latest = yield* sql<{ id: number }>`SELECT coalesce(max(migration_id), 0)::int AS id FROM ${sql(schema)}.${sql(migrationsTable)}`.pipe(
        Effect.mapError((e) => fail("check", `cannot read ${schema}.${migrationsTable}: ${firstLine(e)}`))
      )
      const version = latest[0]?.id ?? 0
      if (version > schemaVersion) {
        return yield* fail("check", `the session log in schema ${schema} has schema version ${version}; this server knows up to ${schemaVersion} (upgrade the server, or name another schema)`)
      }
    }
    yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: migrationsTable }).pipe(
      Effect.mapError((e) => fail("open", `migrating schema ${schema}: ${firstLine(e)}`))
    )
    return sql
  })

/**
 * The store in a PostgreSQL database, schema `options.schema`. The pool connects with `search_path` set to the
 * schema, so every statement names bare tables.
 */
export const layer = (options: PostgresOptions): Layer.Layer<SessionStore, SessionStoreError> => {
  const schema = options.schema ?? defaultSchema
  const label = describeUrl(options.url, schema)
  const client = PgClient.layer({
    url: Redacted.make(options.url),
    maxConnections: options.pool ?? 8,
    connectTimeout: options.connectTimeout ?? "10 seconds",
    applicationName: "paraagent-toolenv",
    startupParameters: { search_path: isSchemaName(schema) ? schema : "public" }
  }).pipe(Layer.catchCause((cause) => {
    const refused = Effect.fail(new SessionStoreError({ operation: "open", message: `${label}: unreachable: ${firstLine(Cause.squash(cause))}` }))
    return Layer.mergeAll(Layer.effect(PgClient.PgClient, refused), Layer.effect(SqlClient, refused))
  }))
  return Layer.effect(SessionStore, Effect.gen(function*() {
    const sql = yield* connect(options, label)
    const attempt = <A>(operation: string, session: string | undefined, effect: Effect.Effect<A, unknown>): Effect.Effect<A, SessionStoreError> =>
      Effect.mapError(effect, (e) =>
        new SessionStoreError({ operation, ...(session !== undefined ? { session } : {}), message: `${label}: ${operation}${session !== undefined ? ` (session ${session})` : ""}: ${firstLine(e)}` }))
    const undecodable = (operation: string, session: string, what: string) => (e: { readonly message: string }) =>
      new SessionStoreError({ operation, session, message: `${label}: ${what} does not decode: ${firstLine(e)}` })

    /** One append, one statement: the count advances and the turn goes in only for the open incarnation at that index. */
    const appendOne = (a: AppendInput): Effect.Effect<AppendOutcome, SessionStoreError> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // the final SELECT reads the session as it was before (a data-modifying CTE's snapshot), to tell the refusals apart
        const rows = yield* attempt("append", a.id, sql<{ appended: number; open: string | null }>`
          WITH advanced AS (
            UPDATE sessions SET turns = turns + 1, touched_at = ${now}
            WHERE id = ${a.id} AND incarnation = ${a.incarnation} AND closed_at IS NULL AND turns = ${a.index}
            RETURNING incarnation),
          inserted AS (INSERT INTO turns (incarnation, idx, body) SELECT incarnation, ${a.index}, ${a.body} FROM advanced RETURNING 1)
          SELECT (SELECT count(*) FROM inserted)::int AS appended,
                 (SELECT incarnation FROM sessions WHERE id = ${a.id} AND closed_at IS NULL) AS open`)
        const row = rows[0]
        return row !== undefined && row.appended === 1 ? "appended" : row?.open === a.incarnation ? "conflict" : "gone"
      })

    /**
     * Appends of several sessions in one statement, each with exactly the compare-and-set of `appendOne` (a row's
     * count advances and its turn goes in only when it is open, in that incarnation, at that index), so one statement's
     * outcome per session is what one statement each would have given. The statement is atomic: when it fails nothing
     * of it was stored. A deadlock with another replica's batch (two sessions raced in opposite orders) aborts it before
     * anything is stored: those appends then go one by one.
     */
    const appendMany = (batch: ReadonlyArray<AppendInput>): Effect.Effect<ReadonlyArray<AppendOutcome>, SessionStoreError> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const input = JSON.stringify(batch.map((a) => ({ id: a.id, incarnation: a.incarnation, idx: a.index, body: a.body })))
        const rows = yield* sql<{ id: string; appended: boolean; open: string | null }>`
          WITH input AS (SELECT * FROM json_to_recordset(${input}::json) AS i(id text, incarnation text, idx integer, body text)),
          advanced AS (
            UPDATE sessions s SET turns = s.turns + 1, touched_at = ${now}
            FROM input i
            WHERE s.id = i.id AND s.incarnation = i.incarnation AND s.closed_at IS NULL AND s.turns = i.idx
            RETURNING s.id, s.incarnation, i.idx, i.body),
          inserted AS (INSERT INTO turns (incarnation, idx, body) SELECT incarnation, idx, body FROM advanced RETURNING incarnation)
          SELECT i.id, EXISTS (SELECT 1 FROM inserted n WHERE n.incarnation = i.incarnation) AS appended,
                 (SELECT s.incarnation FROM sessions s WHERE s.id = i.id AND s.closed_at IS NULL) AS open
          FROM input i`.pipe(
          Effect.map((rows): ReadonlyArray<AppendOutcome> => {
            const byId = new Map(rows.map((r) => [r.id, r]))
            return batch.map((a) => {
              const row = byId.get(a.id)
              return row !== undefined && row.appended ? "appended" : row?.open === a.incarnation ? "conflict" : "gone"
            })
          }),
          Effect.catchIf(
            (e) => (e as { readonly reason?: { readonly _tag?: string } }).reason?._tag === "DeadlockError",
            () => Effect.forEach(batch, appendOne, { concurrency: "unbounded" })
          ),
          Effect.mapError((e) => (e instanceof SessionStoreError ? e : new SessionStoreError({ operation: "append", message: `${label}: append of ${batch.length} turns (sessions ${batch.slice(0, 3).map((a) => a.id).join(", ")}${batch.length > 3 ? ", …" : ""}): ${firstLine(e)}` })))
        )
        return rows
      })

    // appends wait in a queue; a sender takes everything waiting (each session once per statement, up to maxBatch)
    // whenever one of the pool's connections is free, so batches grow with the load and a lone append goes at once
    const maxBatch = Math.max(1, Math.floor(options.maxBatch ?? 64))
    const appends = yield* Queue.unbounded<PendingAppend>()
    const senders = yield* Semaphore.make(options.pool ?? 8)
    const send = (batch: ReadonlyArray<PendingAppend>) =>
      (batch.length === 1 ? Effect.map(appendOne(batch[0] as PendingAppend), (o) => [o]) : appendMany(batch)).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.forEach(batch, (a, i) =>
            Deferred.done(a.done, exit._tag === "Success" ? Exit.succeed(exit.value[i] as AppendOutcome) : Exit.failCause(exit.cause)), { discard: true })),
        Effect.ensuring(senders.release(1))
      )
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const waiting = yield* Queue.takeAll(appends)
      let batch: Array<PendingAppend> = []
      let ids = new Set<string>()
      for (const a of waiting) {
        if (batch.length >= maxBatch || ids.has(a.id)) {
          yield* senders.take(1)
          yield* Effect.forkChild(send(batch))
          batch = []
          ids = new Set()
        }
        batch.push(a)
        ids.add(a.id)
      }
      yield* senders.take(1)
      yield* Effect.forkChild(send(batch))
    })))

    return SessionStore.of({
      label,
      create: (session) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const stored: StoredSession = { ...session, incarnation: newIncarnation() }
          // a new id, or a closed one reopened as a new incarnation; an open one is left as it is (no row returned)
          const rows = yield* attempt("create", session.id, sql<{ incarnation: string }>`
            INSERT INTO sessions (id, incarnation, world, owner, spec, turns, created_at, touched_at, closed_at)
            VALUES (${stored.id}, ${stored.incarnation}, ${stored.world}, ${stored.owner}, ${JSON.stringify(stored.spec)}, 0, ${now}, ${now}, NULL)
            ON CONFLICT (id) DO UPDATE SET incarnation = excluded.incarnation, world = excluded.world, owner = excluded.owner,
              spec = excluded.spec, turns = 0, created_at = excluded.created_at, touched_at = excluded.touched_at, closed_at = NULL
            WHERE sessions.closed_at IS NOT NULL
            RETURNING incarnation`)
          return rows.length === 1 ? stored : undefined
        }),
      get: (id) =>
        Effect.gen(function*() {
          const rows = yield* attempt("read", id, sql<{ incarnation: string; world: string; owner: string; spec: string }>`
            SELECT incarnation, world, owner, spec FROM sessions WHERE id = ${id} AND closed_at IS NULL`)
          const row = rows[0]
          if (row === undefined) return undefined
          const spec = yield* decodeSpec(row.spec).pipe(Effect.mapError(undecodable("read", id, `the spec of session ${id}`)))
          return { id, incarnation: row.incarnation, world: row.world, owner: row.owner, spec }
        }),
      head: (id) =>
        Effect.map(
          attempt("read", id, sql<SessionHead>`SELECT incarnation, turns FROM sessions WHERE id = ${id} AND closed_at IS NULL`),
          (rows) => rows[0]
        ),
      turns: (id, incarnation, from) =>
        Effect.flatMap(
          attempt("read", id, sql<{ body: string }>`
            SELECT body FROM turns WHERE incarnation = ${incarnation} AND idx >= ${from}
              AND EXISTS (SELECT 1 FROM sessions WHERE id = ${id} AND incarnation = ${incarnation} AND closed_at IS NULL)
            ORDER BY idx`),
          (rows) => Effect.forEach(rows, (row, i) => decodeTurn(row.body).pipe(Effect.mapError(undecodable("read", id, `turn ${from + i} of session ${id}`))))
        ),
      append: (id, incarnation, index, turn) =>
        Effect.gen(function*() {
          if (maxBatch <= 1) return yield* appendOne({ id, incarnation, index, body: JSON.stringify(turn) })
          const done = yield* Deferred.make<AppendOutcome, SessionStoreError>()
          yield* Queue.offer(appends, { id, incarnation, index, body: JSON.stringify(turn), done })
          return yield* Deferred.await(done)
        }),
      close: (id, incarnation) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* attempt("close", id, sql<{ closed: number }>`
            WITH closed AS (
              UPDATE sessions SET closed_at = ${now}, spec = NULL, turns = 0
              WHERE id = ${id} AND incarnation = ${incarnation} AND closed_at IS NULL RETURNING incarnation),
            dropped AS (DELETE FROM turns WHERE incarnation IN (SELECT incarnation FROM closed) RETURNING 1)
            SELECT (SELECT count(*) FROM closed)::int AS closed, (SELECT count(*) FROM dropped)::int AS dropped`)
          return (rows[0]?.closed ?? 0) === 1
        }),
      putTask: (task, owner) =>
        Effect.map(
          attempt("put task", task.id, sql<{ id: string }>`
            INSERT INTO tasks (id, owner, body) VALUES (${task.id}, ${owner}, ${JSON.stringify(task)})
            ON CONFLICT (id) DO UPDATE SET body = excluded.body WHERE tasks.owner = excluded.owner
            RETURNING id`),
          (rows) => rows.length === 1
        ),
      getTask: (id) =>
        Effect.gen(function*() {
          const rows = yield* attempt("read task", id, sql<{ body: string }>`SELECT body FROM tasks WHERE id = ${id}`)
          const row = rows[0]
          if (row === undefined) return undefined
          return yield* decodeTask(row.body).pipe(Effect.mapError(undecodable("read task", id, `task ${id}`)))
        }),
      // open sessions are the log and stay (DELETE /sessions/{id} closes them); tombstones older than the idle time go
      expire: (idleMs) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const rows = yield* attempt("expire", undefined, sql<{ n: number }>`
            WITH gone AS (DELETE FROM sessions WHERE closed_at IS NOT NULL AND closed_at < ${now - idleMs} RETURNING 1)
            SELECT count(*)::int AS n FROM gone`)
          return rows[0]?.n ?? 0
        })
    })
  })).pipe(Layer.provide(client))
}
