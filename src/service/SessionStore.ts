/**
 * The SessionStore service: the action log that makes a served episode rebuildable by any replica — a session's spec
 * (world, task, seed, paradigm, config), its owner and its accepted turns in order. Replicas keep only a cache;
 * layers/storage/SessionStoreSqlite.ts shares one SQLite file between processes, `layerMemory` serves one replica.
 *
 * The contract every implementation keeps (one test suite, test/support/SessionStoreContract.ts, runs it against each):
 * - **One lifecycle.** An id is open (created, not closed) or not. `close` ends it for every replica at once: in a
 *   shared store it leaves a tombstone, and `head`, `get`, `turns` and `append` answer for open sessions only, so a
 *   replica that reads `head` before each step (Sessions does) never steps a closed session.
 * - **Incarnations.** Each `create` of an id gives it a new random `incarnation`; turns belong to one incarnation.
 *   A closed id may be created again, and starts with 0 turns: old turns are never read under a new life.
 * - **The store refuses, not the caller.** `append(id, incarnation, index, turn)` is accepted only when the session is
 *   open, in that incarnation, and holds exactly `index` turns; otherwise it is `"conflict"` (another step took the
 *   round) or `"gone"` (closed, unknown, or another incarnation) — a compare-and-set, so replicas racing for a round
 *   get one winner.
 * - **Owners.** A session and a posted task carry the digest of the client key that made them (`owner`); the store
 *   keeps it so every replica can refuse other clients. A posted task's id is held by its owner: `putTask` from
 *   another owner is refused.
 * - **Errors name what failed.** A read, write or decode failure is a SessionStoreError naming the operation and the
 *   session (or task); a row that does not decode is never skipped or returned half-read.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { Task } from "../domain/Task.ts"
import { Paradigm, Usage } from "../domain/Trajectory.ts"
import { Turn } from "../domain/Turn.ts"

/** The store could not be opened, read or written, or a stored row does not decode. */
export class SessionStoreError extends Schema.TaggedError<SessionStoreError>()("SessionStoreError", {
  /** What the store was doing: `open`, `check`, `create`, `read`, `append`, `close`, `put task`, `read task`, `expire`. */
  operation: Schema.String,
  /** The session (or task, for task operations) the failure is about, when it is about one. */
  session: Schema.optionalKey(Schema.String),
  message: Schema.String
}) {}

/** Everything that rebuilds an episode besides its turns. */
export const SessionSpec = Schema.Struct({
  task: Task,
  paradigm: Paradigm,
  seed: Schema.Finite,
  policy: Schema.String,
  maxRounds: Schema.Finite,
  topK: Schema.Finite,
  faults: Schema.Boolean,
  faultRate: Schema.Finite
})
/** Everything that rebuilds an episode besides its turns. */
export type SessionSpec = typeof SessionSpec.Type

/** One accepted turn, as the policy gave it (what `Session.step` takes). */
export const StoredTurn = Schema.Struct({
  text: Schema.String,
  turn: Schema.optionalKey(Turn),
  usage: Usage,
  logprob: Schema.optionalKey(Schema.Finite)
})
/** One accepted turn. */
export type StoredTurn = typeof StoredTurn.Type

/** A session as its creator gives it. */
export interface NewSession {
  readonly id: string
  readonly world: string
  /** The digest of the creating client's key (never the key): only that client may read, step or close it. */
  readonly owner: string
  readonly spec: SessionSpec
}

/** An open session in the log. */
export interface StoredSession extends NewSession {
  /** This life of the id: a new random value at each `create`; turns belong to it. */
  readonly incarnation: string
}

/** Where an open session's log stands: read before every step (the hot path, one keyed read). */
export interface SessionHead {
  readonly incarnation: string
  readonly turns: number
}

/** What `append` did: stored; refused because the log is not at that round; refused because the session is not open. */
export type AppendOutcome = "appended" | "conflict" | "gone"

/** The action log. */
export class SessionStore extends Context.Service<SessionStore, {
  /** Where the log lives (`memory`, or the SQLite file). */
  readonly label: string
  /**
   * Opens a session with a new incarnation and no turns; undefined when an open session already holds the id. A
   * closed (or expired) id is created afresh.
   */
  readonly create: (session: NewSession) => Effect.Effect<StoredSession | undefined, SessionStoreError>
  /** The open session, or undefined (never created, closed, or expired). */
  readonly get: (id: string) => Effect.Effect<StoredSession | undefined, SessionStoreError>
  /** The open session's incarnation and turn count, or undefined when it is not open. */
  readonly head: (id: string) => Effect.Effect<SessionHead | undefined, SessionStoreError>
  /** The turns of that incarnation from index `from` on, in order; empty when the incarnation is not the open one. */
  readonly turns: (id: string, incarnation: string, from: number) => Effect.Effect<ReadonlyArray<StoredTurn>, SessionStoreError>
  /** Appends the turn of round `index` to that incarnation (see {@link AppendOutcome}); touches the session. */
  readonly append: (id: string, incarnation: string, index: number, turn: StoredTurn) => Effect.Effect<AppendOutcome, SessionStoreError>
  /**
   * Closes that incarnation of the session for every replica and drops its turns; false when it is not the open one
   * (already closed, unknown, or created again since the caller read it).
   */
  readonly close: (id: string, incarnation: string) => Effect.Effect<boolean, SessionStoreError>
  /** Stores a posted task under its id for `owner`; false when another owner holds the id. */
  readonly putTask: (task: Task, owner: string) => Effect.Effect<boolean, SessionStoreError>
  /** A posted task, shared by the replicas. */
  readonly getTask: (id: string) => Effect.Effect<Task | undefined, SessionStoreError>
  /**
   * Housekeeping, run on a schedule: the memory store drops sessions untouched for `idleMs` (its bound); a shared
   * store keeps open sessions (the log) and prunes tombstones older than `idleMs`. Returns how many rows went.
   */
  readonly expire: (idleMs: number) => Effect.Effect<number, SessionStoreError>
}>()("paraagent/SessionStore") {}

/** A new incarnation: random, so an id created again (or after its tombstone was pruned) never matches an old one. */
export const newIncarnation = (): string => randomUUID()

/** Bounds of the memory store. */
export interface MemoryOptions {
  /** Bytes of sessions (spec and turns as JSON) held at most; past it the least recently used sessions are dropped. */
  readonly maxBytes?: number
  /** Bytes of posted tasks (as JSON) held at most; past it the least recently posted or read are dropped. */
  readonly maxTaskBytes?: number
}

/** Defaults of the memory store: 256 MiB of sessions, 64 MiB of posted tasks. */
export const defaultMemoryOptions = { maxBytes: 256 * 1024 * 1024, maxTaskBytes: 64 * 1024 * 1024 } as const

/** A fixed charge per row for the keys and bookkeeping around the JSON (an estimate; the bound is approximate by it). */
const rowOverhead = 256

/**
 * One replica's log in memory, bounded in bytes: sessions idle past the TTL are dropped by `expire` (the server
 * sweeps), and past `maxBytes` the least recently used sessions go at once (a later request for one is a 404, as for
 * an expired one); posted tasks are bounded by `maxTaskBytes` the same way. One replica needs no tombstone: `close`
 * drops the row, and a later `create` of the id starts a new incarnation.
 */
export const layerMemory = (options: MemoryOptions = {}): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => {
    const maxBytes = options.maxBytes ?? defaultMemoryOptions.maxBytes
    const maxTaskBytes = options.maxTaskBytes ?? defaultMemoryOptions.maxTaskBytes
    interface Row {
      readonly session: StoredSession
      readonly turns: Array<StoredTurn>
      touched: number
      bytes: number
    }
    // both maps are in least-recently-used order (a touch moves the row to the end)
    const sessions = new Map<string, Row>()
    const tasks = new Map<string, { readonly task: Task; readonly owner: string; readonly bytes: number }>()
    let sessionBytes = 0
    let taskBytes = 0
    const drop = (id: string) => {
      const row = sessions.get(id)
      if (row === undefined) return false
      sessions.delete(id)
      sessionBytes -= row.bytes
      return true
    }
    const fit = () => {
      while (sessionBytes > maxBytes && sessions.size > 0) drop(sessions.keys().next().value as string)
    }
    const touch = (id: string, now: number) => {
      const row = sessions.get(id)
      if (row === undefined) return undefined
      row.touched = now
      sessions.delete(id)
      sessions.set(id, row)
      return row
    }
    return SessionStore.of({
      label: "memory",
      create: (session) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          if (sessions.has(session.id)) return undefined
          const stored: StoredSession = { ...session, incarnation: newIncarnation() }
          const bytes = rowOverhead + session.id.length + session.world.length + session.owner.length + JSON.stringify(session.spec).length
          sessions.set(session.id, { session: stored, turns: [], touched: now, bytes })
          sessionBytes += bytes
          fit()
          return stored
        }),
      get: (id) => Effect.map(Clock.currentTimeMillis, (now) => touch(id, now)?.session),
      head: (id) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          const row = touch(id, now)
          return row === undefined ? undefined : { incarnation: row.session.incarnation, turns: row.turns.length }
        }),
      turns: (id, incarnation, from) =>
        Effect.sync(() => {
          const row = sessions.get(id)
          return row === undefined || row.session.incarnation !== incarnation ? [] : row.turns.slice(from)
        }),
      append: (id, incarnation, index, turn) =>
        Effect.map(Clock.currentTimeMillis, (now): AppendOutcome => {
          const row = sessions.get(id)
          if (row === undefined || row.session.incarnation !== incarnation) return "gone"
          if (row.turns.length !== index) return "conflict"
          touch(id, now)
          row.turns.push(turn)
          const bytes = rowOverhead + JSON.stringify(turn).length
          row.bytes += bytes
          sessionBytes += bytes
          fit()
          return "appended"
        }),
      close: (id, incarnation) => Effect.sync(() => sessions.get(id)?.session.incarnation === incarnation && drop(id)),
      putTask: (task, owner) =>
        Effect.sync(() => {
          const held = tasks.get(task.id)
          if (held !== undefined && held.owner !== owner) return false
          if (held !== undefined) {
            tasks.delete(task.id)
            taskBytes -= held.bytes
          }
          const bytes = rowOverhead + JSON.stringify(task).length
          tasks.set(task.id, { task, owner, bytes })
          taskBytes += bytes
          while (taskBytes > maxTaskBytes && tasks.size > 0) {
            const oldest = tasks.keys().next().value as string
            taskBytes -= tasks.get(oldest)?.bytes ?? 0
            tasks.delete(oldest)
          }
          return true
        }),
      getTask: (id) =>
        Effect.sync(() => {
          const held = tasks.get(id)
          if (held === undefined) return undefined
          tasks.delete(id)
          tasks.set(id, held)
          return held.task
        }),
      expire: (idleMs) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          let dropped = 0
          for (const [id, row] of sessions) {
            if (now - row.touched > idleMs && drop(id)) dropped++
          }
          return dropped
        })
    })
  })
