/**
 * The SessionStore service: the action log that makes a served episode rebuildable by any replica — a session's spec
 * (world, task, seed, paradigm, config) and its accepted turns in order, (session, index) unique. Replicas keep only a
 * cache; layers/SessionStoreSqlite.ts shares one SQLite file between processes, `layerMemory` serves one replica.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { Task } from "../domain/Task.ts"
import { Paradigm, Usage } from "../domain/Trajectory.ts"
import { Turn } from "../domain/Turn.ts"

/** The store could not be read or written (I/O, a corrupt row). */
export class SessionStoreError extends Schema.TaggedError<SessionStoreError>()("SessionStoreError", {
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

/** A stored session. */
export interface StoredSession {
  readonly id: string
  readonly world: string
  readonly spec: SessionSpec
}

/** The action log. */
export class SessionStore extends Context.Service<SessionStore, {
  /** Where the log lives (`memory`, or the SQLite file). */
  readonly label: string
  readonly create: (session: StoredSession) => Effect.Effect<void, SessionStoreError>
  /** The session, or undefined when it does not exist (never created, closed, or expired). */
  readonly get: (id: string) => Effect.Effect<StoredSession | undefined, SessionStoreError>
  /** How many turns the session has accepted. */
  readonly count: (id: string) => Effect.Effect<number, SessionStoreError>
  /** The accepted turns from index `from` on, in order. */
  readonly turns: (id: string, from: number) => Effect.Effect<ReadonlyArray<StoredTurn>, SessionStoreError>
  /** Appends the turn of round `index`; false when that round was already taken (the unique constraint). */
  readonly append: (id: string, index: number, turn: StoredTurn) => Effect.Effect<boolean, SessionStoreError>
  /** Removes the session and its turns; false when it did not exist. */
  readonly remove: (id: string) => Effect.Effect<boolean, SessionStoreError>
  /** A posted task, shared by the replicas. */
  readonly putTask: (task: Task) => Effect.Effect<void, SessionStoreError>
  readonly getTask: (id: string) => Effect.Effect<Task | undefined, SessionStoreError>
  /** Drops sessions untouched for `idleMs` (the memory store's bound; a file store keeps its log). */
  readonly expire: (idleMs: number) => Effect.Effect<number, SessionStoreError>
}>()("paraagent/SessionStore") {}

/**
 * One replica's log in memory. Sessions idle for the TTL are dropped by `expire` (the server sweeps), so memory does
 * not grow with finished sessions; posted tasks are kept up to `maxTasks` (oldest dropped first).
 */
export const layerMemory = (options: { readonly maxTasks?: number } = {}): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => {
    const maxTasks = options.maxTasks ?? 10_000
    const sessions = new Map<string, { readonly session: StoredSession; readonly turns: Array<StoredTurn>; touched: number }>()
    const tasks = new Map<string, Task>()
    const touch = (id: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const row = sessions.get(id)
        if (row !== undefined) row.touched = now
        return row
      })
    return SessionStore.of({
      label: "memory",
      create: (session) => Effect.map(Clock.currentTimeMillis, (now) => void sessions.set(session.id, { session, turns: [], touched: now })),
      get: (id) => Effect.map(touch(id), (row) => row?.session),
      count: (id) => Effect.sync(() => sessions.get(id)?.turns.length ?? 0),
      turns: (id, from) => Effect.sync(() => sessions.get(id)?.turns.slice(from) ?? []),
      append: (id, index, turn) =>
        Effect.map(touch(id), (row) => {
          if (row === undefined || row.turns.length !== index) return false
          row.turns.push(turn)
          return true
        }),
      remove: (id) => Effect.sync(() => sessions.delete(id)),
      putTask: (task) =>
        Effect.sync(() => {
          tasks.delete(task.id)
          tasks.set(task.id, task)
          if (tasks.size > maxTasks) {
            const oldest = tasks.keys().next()
            if (oldest.done !== true) tasks.delete(oldest.value)
          }
        }),
      getTask: (id) => Effect.sync(() => tasks.get(id)),
      expire: (idleMs) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          let dropped = 0
          for (const [id, row] of sessions) {
            if (now - row.touched > idleMs) {
              sessions.delete(id)
              dropped++
            }
          }
          return dropped
        })
    })
  })
