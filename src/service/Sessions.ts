/**
 * The Sessions service: served episodes over the action log. A replica holds live Sessions in a bounded LRU keyed by
 * id and, before each step, reads the session's head in the log: closed or unknown → 404 (a close on any replica ends
 * it everywhere); another incarnation → rebuild; equal turn count → step the cached Session; behind → catch up from
 * the log (or `Session.replay` when it holds none). The store accepts a step's turn only at the log's head, so two
 * replicas racing for one round give one winner and one typed 409. Every session belongs to the client key that
 * created it (its digest, the `owner`, is in the log): any other caller gets the 404 an unknown id gets.
 */
import { Clock, Context, Effect, Layer, Metric, Option, Semaphore } from "effect"
import { randomUUID } from "node:crypto"
import type { Task } from "../domain/Task.ts"
import type { Step, StepReward, Trajectory } from "../domain/Trajectory.ts"
import type { PolicyOutput } from "../agent/Policy.ts"
import * as Reward from "../math/Reward.ts"
import { Retriever } from "../retrieval/Retriever.ts"
import * as Session from "../runtime/Session.ts"
import { Simulator, fromEngine } from "../toolenv/Simulator.ts"
import { Engine } from "../toolenv/simulator/Engine.ts"
import * as Faults from "../toolenv/simulator/Faults.ts"
import { TaskSource } from "../toolenv/TaskSource.ts"
import type * as TaskSourceModule from "../toolenv/TaskSource.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { GeneratedWorld } from "../toolenv/world/World.ts"
import type { CreateSession, PostedTask, SessionInfo, StepRequest, StepResponse } from "./Api.ts"
import { AtCapacity, Conflict, InvalidRequest, limits, maxTaskIndex, NotFound, StepConflict, StoreFailure, WrongWorld } from "./Api.ts"
import * as Metrics from "./ServiceMetrics.ts"
import { SessionStore } from "./SessionStore.ts"
import type { SessionSpec, SessionStoreError, StoredTurn } from "./SessionStore.ts"

/** How a replica serves sessions. */
export interface SessionsConfig {
  /** The world this replica serves (`generated:seed=7:size=50011`, or `library:<dir>:<digest>`); sessions name it. */
  readonly world: string
  /** Sessions held in memory at once; a create beyond it (with none evictable) is a 503. */
  readonly maxSessions: number
  /** A session untouched this long leaves memory (and the memory store). */
  readonly ttlMs: number
  /** The most searches + calls one structured turn may carry. */
  readonly maxActions: number
  /** The longest turn text accepted. */
  readonly maxTurnChars: number
  /** Fault rate when a session does not name one. */
  readonly faultRate: number
  /** T_max when a session does not name one. */
  readonly maxRounds: number
  /**
   * Under `--workers`: whether this process owns a session id (the worker front routes each id to its owner), so a
   * session this process opens gets an id it owns and its steps find it warm. Absent: every id.
   */
  readonly ownsId?: (id: string) => boolean
}

/** Defaults: 1,024 sessions, 10 minutes idle, 64 actions per turn, 64k characters, 5% faults, T_max 12. */
export const defaultConfig = (world: string): SessionsConfig => ({
  world,
  maxSessions: 1024,
  ttlMs: 10 * 60_000,
  maxActions: 64,
  maxTurnChars: 65_536,
  faultRate: Faults.defaultFaultRate,
  maxRounds: Session.defaultConfig.maxRounds
})

/** What a step answers. */
export type StepResult = StepResponse

/** Anything a session operation can refuse with. */
export type SessionFailure = InvalidRequest | NotFound | StepConflict | WrongWorld | StoreFailure

/**
 * Who is asking: the digest of the caller's client key (`Guard.ownerOf`). Sessions and posted tasks are stored with
 * their creator's owner; a session is answered only to the same owner.
 */
export type Owner = string

/** Served episodes; every session operation names its caller's owner. */
export class Sessions extends Context.Service<Sessions, {
  readonly config: SessionsConfig
  readonly create: (request: CreateSession, owner: Owner, id?: string) => Effect.Effect<SessionInfo, InvalidRequest | NotFound | AtCapacity | Conflict | StoreFailure>
  readonly step: (id: string, owner: Owner, request: StepRequest) => Effect.Effect<StepResult, SessionFailure>
  readonly info: (id: string, owner: Owner) => Effect.Effect<SessionInfo, NotFound | WrongWorld | StepConflict | StoreFailure>
  readonly trajectory: (id: string, owner: Owner) => Effect.Effect<{ readonly trajectory: Trajectory; readonly task: Task }, NotFound | WrongWorld | StepConflict | StoreFailure>
  /** Closes the caller's session on every replica; false when the caller has no open session of that id. */
  readonly close: (id: string, owner: Owner) => Effect.Effect<boolean, StoreFailure>
  readonly postTask: (task: PostedTask, owner: Owner) => Effect.Effect<Task, InvalidRequest | Conflict | StoreFailure>
  readonly findTask: (id: string) => Effect.Effect<Task | undefined, InvalidRequest | StoreFailure>
  /** The rewards of every step taken so far (r_base, r_plan, r_step), in order. */
  readonly stepRewards: (id: string, owner: Owner) => Effect.Effect<ReadonlyArray<StepReward>, NotFound | WrongWorld | StepConflict | StoreFailure>
  /** Draws tasks from the catalogue (remembered by id for sessions that name them); undefined without one. */
  readonly sample: ((options: TaskSourceModule.SampleOptions) => Effect.Effect<ReadonlyArray<Task>>) | undefined
  /** Drops idle sessions from memory (and from a memory store); the server runs it on a schedule. */
  readonly sweep: Effect.Effect<void>
  /** Sessions in memory. */
  readonly live: () => number
}>()("paraagent/Sessions") {}

/** The rewards of the session's last step: the same facts the trainer scores (`TrajectoryFacts`), kept by the session. */
export const stepRewardOf = (session: Session.Session): StepReward => {
  const last = session.stepScore(session.status().rounds - 1)
  return last === undefined ? { rBase: 0, rPlan: 0, rStep: 0 } : Reward.stepReward(last)
}

/**
 * The one answer for a session the caller cannot have: unknown, closed, expired, or another client's — worded the same
 * for all of them, so a caller learns nothing about sessions that are not its own.
 */
export const sessionNotFound = (id: string, config: Pick<SessionsConfig, "ttlMs">): NotFound =>
  new NotFound({ field: "sessionId", value: id, message: `no session ${JSON.stringify(id)} of this client (never created, closed, expired after ${Math.round(config.ttlMs / 1000)} s idle, or created with another X-Client-Key)` })

/** The most tasks the draw cache of a replica holds (over all its draws). */
const maxDrawnTasks = 10_000

const generatedId = /^gen-(\d+)-(train|validation|test)-(I[123])-(\d+)$/

interface Entry {
  readonly lock: Semaphore.Semaphore
  session: Session.Session | undefined
  /** The incarnation `stored` and `session` belong to; a head naming another one means the id was created again. */
  incarnation: string | undefined
  stored: SessionSpecRow | undefined
  touched: number
  /**
   * Another replica stepped this session since this one cached it (an optimistic append met a conflict): its steps
   * read the log's head first from then on (a balancer that does not route by session sends it everywhere).
   */
  contended: boolean
}

interface SessionSpecRow {
  readonly world: string
  readonly owner: Owner
  readonly spec: SessionSpec
}

/**
 * A store failure as the API answers it: logged with everything the store said (file, operation, session), answered
 * as a 500 problem body naming the session or task (never the file).
 */
const storeFailure = (field: string, value: string) => <A, E, R>(effect: Effect.Effect<A, E | SessionStoreError, R>): Effect.Effect<A, Exclude<E, SessionStoreError> | StoreFailure, R> =>
  Effect.catchIf(
    effect,
    (e): e is SessionStoreError => (e as { readonly _tag?: string })._tag === "SessionStoreError",
    (e) =>
      Effect.logError(`session store failed: ${e.message}`).pipe(
        Effect.annotateLogs({ operation: e.operation, ...(e.session !== undefined ? { session: e.session } : {}) }),
        Effect.andThen(Effect.fail(new StoreFailure({ field, value, message: `the session log failed to ${e.operation === "read" ? "read" : e.operation} ${field === "taskId" ? "task" : "session"} ${JSON.stringify(value)}; the server logged the cause` })))
      )
  ) as Effect.Effect<A, Exclude<E, SessionStoreError> | StoreFailure, R>

/** The turn a step request carries, as `Session.step` takes it; bad shapes and sizes past `limits` name their field. */
export const outputOf = (request: StepRequest, config: SessionsConfig): Effect.Effect<StoredTurn, InvalidRequest> => {
  const usage = request.usage ?? { promptTokens: 0, completionTokens: 0 }
  if (request.turn !== undefined) {
    const actions = request.turn.calls.length + request.turn.searches.length
    if (actions > config.maxActions) {
      return Effect.fail(new InvalidRequest({ field: "turn.calls", message: `a turn may carry at most ${config.maxActions} searches and calls; this one has ${actions}` }))
    }
    if (request.text !== undefined && request.text.length > config.maxTurnChars) {
      return Effect.fail(new InvalidRequest({ field: "text", message: `turn text over ${config.maxTurnChars} characters (${request.text.length})` }))
    }
    for (const [i, q] of request.turn.searches.entries()) {
      if (q.query.length > limits.queryChars) return Effect.fail(new InvalidRequest({ field: `turn.searches[${i}].query`, message: `a search query is at most ${limits.queryChars} characters (${q.query.length})` }))
      if (q.slot.length > limits.shortText) return Effect.fail(new InvalidRequest({ field: `turn.searches[${i}].slot`, message: `a slot name is at most ${limits.shortText} characters` }))
    }
    const stored: StoredTurn = { text: request.text ?? "", turn: request.turn, usage, ...(request.logprob !== undefined ? { logprob: request.logprob } : {}) }
    const bytes = JSON.stringify(stored).length
    if (bytes > limits.turnBytes) {
      return Effect.fail(new InvalidRequest({ field: "turn", message: `a turn is stored as at most ${limits.turnBytes} bytes of JSON; this one is ${bytes} (arguments, think, plan and answer count)` }))
    }
    return Effect.succeed(stored)
  }
  if (request.text === undefined) return Effect.fail(new InvalidRequest({ field: "text", message: "a step needs the turn: `text` (ParaAct as a model wrote it) or a structured `turn`" }))
  if (request.text.length > config.maxTurnChars) {
    return Effect.fail(new InvalidRequest({ field: "text", message: `turn text over ${config.maxTurnChars} characters (${request.text.length})` }))
  }
  const stored: StoredTurn = { text: request.text, usage, ...(request.logprob !== undefined ? { logprob: request.logprob } : {}) }
  const bytes = JSON.stringify(stored).length
  if (bytes > limits.turnBytes) {
    return Effect.fail(new InvalidRequest({ field: "text", message: `a turn is stored as at most ${limits.turnBytes} bytes of JSON; this one is ${bytes}` }))
  }
  return Effect.succeed(stored)
}

/** The first field of a posted task past its size limit, as the refusal naming it. */
const oversizedField = (posted: PostedTask): InvalidRequest | undefined => {
  const over = (field: string, message: string) => new InvalidRequest({ field, message })
  const long = (text: string, max: number) => text.length > max
  const bytes = JSON.stringify(posted).length
  if (bytes > limits.taskBytes) return over("task", `a posted task is at most ${limits.taskBytes} bytes of JSON; this one is ${bytes}`)
  const gold = posted.gold ?? []
  const facts = posted.facts ?? []
  const categories = posted.categories ?? []
  if (gold.length > limits.goldCalls) return over("task.gold", `at most ${limits.goldCalls} gold calls (${gold.length})`)
  if (facts.length > limits.facts) return over("task.facts", `at most ${limits.facts} gold facts (${facts.length})`)
  if (categories.length > limits.categories) return over("task.categories", `at most ${limits.categories} categories (${categories.length})`)
  const short = `at most ${limits.shortText} characters`
  for (const [i, c] of categories.entries()) if (long(c, limits.shortText)) return over(`task.categories[${i}]`, short)
  for (const [i, g] of gold.entries()) {
    if (long(g.id, limits.shortText)) return over(`task.gold[${i}].id`, short)
    if (long(g.tool, limits.shortText)) return over(`task.gold[${i}].tool`, short)
    if (g.deps.length > limits.goldCalls) return over(`task.gold[${i}].deps`, `at most ${limits.goldCalls} dependencies`)
  }
  for (const [i, f] of facts.entries()) {
    if (long(f.key, limits.shortText)) return over(`task.facts[${i}].key`, short)
    if (long(f.path, limits.shortText)) return over(`task.facts[${i}].path`, short)
    if (long(f.call, limits.shortText)) return over(`task.facts[${i}].call`, short)
    if (long(f.value, limits.factValue)) return over(`task.facts[${i}].value`, `at most ${limits.factValue} characters`)
  }
  return undefined
}

/**
 * Builds the service over the store, the library, the retriever, the judge and (for the generated world) the task
 * source, in the layer's scope.
 */
export const make = (config: SessionsConfig) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const library = yield* ToolLibrary
    const retriever = yield* Retriever
    const world = Option.getOrUndefined(yield* Effect.serviceOption(GeneratedWorld))
    const source = Option.getOrUndefined(yield* Effect.serviceOption(TaskSource))
    const simulators = new Map<number, Simulator["Service"]>()
    const simulatorFor = (rate: number): Simulator["Service"] => {
      let sim = simulators.get(rate)
      if (sim === undefined) {
        sim = fromEngine(new Engine(library, world, { seed: 0, faultRate: rate, latency: undefined }))
        if (simulators.size < 64) simulators.set(rate, sim)
      }
      return sim
    }
    const cache = new Map<string, Entry>()
    let lastGauge = -1
    const gauge = Effect.suspend(() => {
      if (cache.size === lastGauge) return Effect.void
      lastGauge = cache.size
      return Metric.update(Metrics.sessionsOpen, cache.size)
    })

    const openSession = (spec: SessionSpec) =>
      Session.open(
        { task: spec.task, paradigm: spec.paradigm, seed: spec.seed, policy: spec.policy },
        { maxRounds: spec.maxRounds, topK: spec.topK, faults: spec.faults }
      ).pipe(
        Effect.provideService(Simulator, simulatorFor(spec.faultRate)),
        Effect.provideService(Retriever, retriever),
        Effect.provideService(ToolLibrary, library)
      )

    const outputFromStored = (t: StoredTurn): PolicyOutput => ({
      text: t.text,
      usage: t.usage,
      ...(t.turn !== undefined ? { turn: t.turn } : {}),
      ...(t.logprob !== undefined ? { logprob: t.logprob } : {})
    })

    /**
     * Room for one more entry: evict a finished session, else one idle past the TTL; else a create is refused (503),
     * while a request for a session the log holds evicts the least recently used entry (the log keeps what it drops).
     */
    const makeRoom = (now: number, forExisting: boolean): Effect.Effect<void, AtCapacity> => {
      if (cache.size < config.maxSessions) return Effect.void
      let idle: string | undefined
      for (const [id, entry] of cache) {
        if (entry.session?.status().done === true) {
          cache.delete(id)
          return Effect.void
        }
        if (idle === undefined && now - entry.touched > config.ttlMs) idle = id
      }
      if (idle === undefined && forExisting) idle = cache.keys().next().value
      if (idle !== undefined) {
        cache.delete(idle)
        return Effect.void
      }
      return Effect.fail(new AtCapacity({ field: "sessions", limit: config.maxSessions, message: `this replica holds ${config.maxSessions} running sessions (--max-sessions): finish or close one, or retry later` }))
    }

    const newEntry = (now: number): Entry => ({ lock: Semaphore.makeUnsafe(1), session: undefined, incarnation: undefined, stored: undefined, touched: now, contended: false })

    const notFound = (id: string) => sessionNotFound(id, config)

    /** Drops the entry of `id` from the cache when it is still this one. */
    const forget = (id: string, entry: Entry) => {
      if (cache.get(id) === entry) cache.delete(id)
    }

    /**
     * The cache entry of a session the log holds (404 for one it does not hold, without touching the cache). Never a
     * 503: at the limit the least recently used entry makes room, since the log can rebuild it.
     */
    const entryOf = (id: string): Effect.Effect<Entry, NotFound | StoreFailure> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const found = cache.get(id)
        if (found !== undefined) {
          found.touched = now
          // most recently used last
          cache.delete(id)
          cache.set(id, found)
          return Effect.succeed(found)
        }
        return Effect.gen(function*() {
          if ((yield* store.head(id).pipe(storeFailure("sessionId", id))) === undefined) return yield* notFound(id)
          yield* makeRoom(now, true).pipe(Effect.orDie)
          const entry = newEntry(now)
          cache.set(id, entry)
          return entry
        })
      })

    /** The entry's session brought up to the log, for its owner (under the entry's lock); `stored` is the log's turn count. */
    const current = (id: string, entry: Entry, owner: Owner): Effect.Effect<{ readonly session: Session.Session; readonly stored: number; readonly incarnation: string }, NotFound | WrongWorld | StepConflict | StoreFailure> =>
      storeFailure("sessionId", id)(Effect.gen(function*() {
        const head = yield* store.head(id)
        if (head === undefined) {
          forget(id, entry)
          return yield* notFound(id)
        }
        if (entry.stored === undefined || entry.incarnation !== head.incarnation) {
          const row = yield* store.get(id)
          if (row === undefined) {
            forget(id, entry)
            return yield* notFound(id)
          }
          if (row.incarnation !== head.incarnation) {
            forget(id, entry)
            return yield* new StepConflict({ field: "session", rounds: 0, message: `session ${id} was closed and opened again while it was read: retry` })
          }
          entry.stored = { world: row.world, owner: row.owner, spec: row.spec }
          entry.incarnation = row.incarnation
          entry.session = undefined
        }
        const stored = entry.stored
        if (stored.owner !== owner) return yield* notFound(id)
        if (stored.world !== config.world) {
          forget(id, entry)
          return yield* new WrongWorld({ field: "world", expected: config.world, got: stored.world, message: `session ${id} was opened on world ${stored.world}; this server serves ${config.world}` })
        }
        const incarnation = head.incarnation
        if (entry.session !== undefined && entry.session.status().rounds === head.turns) return { session: entry.session, stored: head.turns, incarnation }
        if (entry.session === undefined || entry.session.status().rounds > head.turns) {
          entry.session = yield* openSession(stored.spec)
          yield* Metric.update(Metrics.replays, 1)
        }
        const session = entry.session
        const missing = yield* store.turns(id, incarnation, session.status().rounds)
        for (const t of missing) {
          if (session.status().done) break
          yield* session.step(outputFromStored(t)).pipe(Effect.orDie)
        }
        return { session, stored: head.turns, incarnation }
      }))

    const nextOf = (session: Session.Session): SessionInfo["next"] | undefined => {
      const context = session.context()
      return context === undefined ? undefined : {
        round: context.round,
        maxRounds: context.maxRounds,
        controller: context.controller,
        tools: context.tools.map((t) => t.name)
      }
    }

    const infoOf = (id: string, spec: SessionSpec, session: Session.Session): SessionInfo => {
      const status = session.status()
      const next = nextOf(session)
      return {
        sessionId: id,
        world: config.world,
        taskId: spec.task.id,
        request: spec.task.request,
        paradigm: spec.paradigm,
        seed: spec.seed,
        rounds: status.rounds,
        done: status.done,
        ...(status.stop !== undefined ? { stop: status.stop } : {}),
        ...(status.answer !== undefined ? { answer: status.answer } : {}),
        ...(next !== undefined ? { next } : {})
      }
    }

    const postTask = Effect.fn("Sessions.postTask")(function*(posted: PostedTask, owner: Owner) {
      const oversized = oversizedField(posted)
      if (oversized !== undefined) return yield* oversized
      const gold = posted.gold ?? []
      const ids = new Set<string>()
      for (const [i, call] of gold.entries()) {
        if (library.get(call.tool) === undefined) {
          return yield* new InvalidRequest({ field: `task.gold[${i}].tool`, message: `unknown tool ${JSON.stringify(call.tool)} in ${library.label}` })
        }
        for (const d of call.deps) {
          if (!ids.has(d)) return yield* new InvalidRequest({ field: `task.gold[${i}].deps`, message: `dependency ${JSON.stringify(d)} is not an earlier gold call` })
        }
        if (ids.has(call.id)) return yield* new InvalidRequest({ field: `task.gold[${i}].id`, message: `duplicate gold call id ${JSON.stringify(call.id)}` })
        ids.add(call.id)
      }
      for (const [i, fact] of (posted.facts ?? []).entries()) {
        if (!ids.has(fact.call)) return yield* new InvalidRequest({ field: `task.facts[${i}].call`, message: `fact names call ${JSON.stringify(fact.call)}, which is not in the gold DAG` })
      }
      const id = posted.id ?? `posted-${randomUUID()}`
      if (generatedId.test(id)) return yield* new InvalidRequest({ field: "task.id", message: "ids of the form gen-<seed>-<split>-<level>-<index> name generated tasks" })
      const task: Task = {
        id: id as Task["id"],
        request: posted.request,
        level: posted.level ?? "I1",
        categories: posted.categories ?? [],
        gold,
        facts: posted.facts ?? [],
        split: "test",
        seed: 0,
        source: "posted"
      }
      if (!(yield* store.putTask(task, owner).pipe(storeFailure("taskId", id)))) {
        return yield* new Conflict({ field: "task.id", value: id, message: `task ${JSON.stringify(id)} was posted by another client: choose another id` })
      }
      return task
    })

    const noCatalogue = (field: string) => new InvalidRequest({ field, message: `${library.label} has no task catalogue: post a task (POST /tasks) or pass one inline` })

    // drawn tasks by id: a draw is CPU work on the request path, done once per task
    const drawn = new Map<string, Task>()
    const remember = (tasks: ReadonlyArray<Task>) => {
      for (const t of tasks) {
        drawn.delete(t.id)
        drawn.set(t.id, t)
      }
      while (drawn.size > 10_000) drawn.delete(drawn.keys().next().value as string)
      return tasks
    }
    // and whole draws by their options (a draw is a pure function of them): creating sessions from `split` + `index`
    // draws the same list again and again. Bounded by the tasks held, oldest draw out first.
    const draws = new Map<string, ReadonlyArray<Task>>()
    let drawnTasks = 0
    const sample = (options: TaskSourceModule.SampleOptions): Effect.Effect<ReadonlyArray<Task>> => {
      const key = JSON.stringify([options.split, options.count, options.levels ?? null, options.seed ?? null])
      const known = draws.get(key)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.map((source as TaskSource["Service"]).sample(options), (tasks) => {
        remember(tasks)
        if (tasks.length > maxDrawnTasks) return tasks
        draws.set(key, tasks)
        drawnTasks += tasks.length
        while (drawnTasks > maxDrawnTasks) {
          const oldest = draws.keys().next().value as string
          drawnTasks -= draws.get(oldest)?.length ?? 0
          draws.delete(oldest)
        }
        return tasks
      })
    }

    const findTask = Effect.fn("Sessions.findTask")(function*(id: string) {
      const known = drawn.get(id)
      if (known !== undefined) return known
      const posted = yield* store.getTask(id).pipe(storeFailure("taskId", id))
      if (posted !== undefined) return posted
      const m = generatedId.exec(id)
      if (m === null) return undefined
      if (source === undefined) return yield* noCatalogue("taskId")
      const [, seed, split, level, index] = m
      if (Number(index) > maxTaskIndex || Number(seed) > 2 ** 31 - 1) return undefined
      const position = { split: split as Task["split"], level: level as Task["level"], index: Number(index), seed: Number(seed) }
      // the task an id names is one draw (not the `index` draws before it), so a far index costs what index 0 does
      if (source.drawAt !== undefined) {
        const task = yield* source.drawAt(position)
        if (task !== undefined) remember([task])
        return task
      }
      const tasks = yield* sample({ split: position.split, levels: [position.level], count: position.index + 1, seed: position.seed })
      return tasks.find((t) => t.id === id)
    })

    const resolveTask = (request: CreateSession, owner: Owner): Effect.Effect<Task, InvalidRequest | NotFound | Conflict | StoreFailure> =>
      Effect.gen(function*() {
        if (request.task !== undefined) return yield* postTask(request.task, owner)
        if (request.taskId !== undefined) {
          const found = yield* findTask(request.taskId)
          if (found === undefined) return yield* new NotFound({ field: "taskId", value: request.taskId, message: `no task ${JSON.stringify(request.taskId)}` })
          return found
        }
        if (source === undefined) return yield* noCatalogue("taskId")
        const index = request.index ?? 0
        const options: TaskSourceModule.SampleOptions = {
          split: request.split ?? "test",
          count: index + 1,
          ...(request.level !== undefined ? { levels: [request.level] } : {}),
          ...(request.taskSeed !== undefined ? { seed: request.taskSeed } : {})
        }
        // a source on another thread hands over the one task (the draw stays there); else the draw, cached here
        const task = source.sampleAt !== undefined
          ? yield* Effect.tap(source.sampleAt(options, index), (t) => Effect.sync(() => t !== undefined && remember([t])))
          : (yield* sample(options))[index]
        if (task === undefined) return yield* new NotFound({ field: "index", value: String(index), message: `the draw has no task at index ${index}` })
        return task
      })

    const create = Effect.fn("Sessions.create")(function*(request: CreateSession, owner: Owner, wanted?: string) {
      let id = wanted ?? randomUUID()
      if (wanted === undefined && config.ownsId !== undefined) while (!config.ownsId(id)) id = randomUUID()
      const task = yield* resolveTask(request, owner)
      const spec: SessionSpec = {
        task,
        paradigm: request.paradigm ?? "ParaAct",
        seed: request.seed ?? 0,
        policy: request.policy ?? "remote",
        maxRounds: request.maxRounds ?? config.maxRounds,
        topK: request.topK ?? Session.defaultConfig.topK,
        faults: request.faults ?? true,
        faultRate: request.faultRate ?? config.faultRate
      }
      const now = yield* Clock.currentTimeMillis
      const stale = cache.get(id)
      if (stale !== undefined) cache.delete(id)
      yield* makeRoom(now, false)
      const stored = yield* store.create({ id, world: config.world, owner, spec }).pipe(storeFailure("sessionId", id))
      if (stored === undefined) {
        return yield* new Conflict({ field: "episode_id", value: id, message: `session ${JSON.stringify(id)} is open: close it first, or choose another id` })
      }
      const session = yield* openSession(spec)
      cache.set(id, { lock: Semaphore.makeUnsafe(1), session, incarnation: stored.incarnation, stored: { world: config.world, owner, spec }, touched: now, contended: false })
      yield* Metric.update(Metrics.sessionsCreated, 1)
      yield* gauge
      return infoOf(id, spec, session)
    })

    const answerOf = (id: string, session: Session.Session, step: Step): StepResult => {
      const after = session.status()
      const next = nextOf(session)
      return {
        sessionId: id,
        step,
        reward: stepRewardOf(session),
        done: after.done,
        ...(after.stop !== undefined ? { stop: after.stop } : {}),
        ...(next !== undefined ? { next } : {})
      }
    }

    /**
     * A step on a warm entry with one store round trip: the cached copy is stepped and its turn appended at the cached
     * count without reading the head first, and the store's compare-and-set decides. "appended" means the log was
     * open, in this incarnation, at exactly this count — what the head read would have shown — so the answer is the
     * one the reading path gives. Any refusal (another replica took the round; the session was closed or created
     * again) or failure leaves the cached copy ahead of the log: it is dropped and undefined sends the step down the
     * reading path, which answers from the log (404, 409, or a replay and the step at the log's head). Undefined too
     * when the entry does not qualify: cold, contended, another owner or world, an ended episode, another round asked.
     */
    const stepWarm = (id: string, entry: Entry, owner: Owner, request: StepRequest, output: StoredTurn): Effect.Effect<StepResult | undefined, StoreFailure> =>
      Effect.gen(function*() {
        const { session, stored, incarnation } = entry
        if (session === undefined || stored === undefined || incarnation === undefined || entry.contended) return undefined
        if (stored.owner !== owner || stored.world !== config.world) return undefined
        const status = session.status()
        if (status.done || (request.round !== undefined && request.round !== status.rounds)) return undefined
        const step = yield* session.step(outputFromStored(output)).pipe(Effect.orDie)
        const appended = yield* store.append(id, incarnation, status.rounds, output).pipe(
          storeFailure("sessionId", id),
          Effect.tapError(() => Effect.sync(() => void (entry.session = undefined)))
        )
        if (appended === "appended") return answerOf(id, session, step)
        entry.session = undefined
        if (appended === "conflict") entry.contended = true
        yield* Metric.update(Metrics.optimisticRetries, 1)
        return undefined
      })

    const step = Effect.fn("Sessions.step")(function*(id: string, owner: Owner, request: StepRequest) {
      const output = yield* outputOf(request, config)
      const started = performance.now()
      const entry = yield* entryOf(id)
      const result = yield* entry.lock.withPermit(Effect.gen(function*() {
        const warm = yield* stepWarm(id, entry, owner, request, output)
        if (warm !== undefined) return warm
        const { session, stored, incarnation } = yield* current(id, entry, owner)
        const status = session.status()
        if (status.done) {
          return yield* new StepConflict({ field: "session", rounds: status.rounds, message: `the episode has ended (${status.stop} after ${status.rounds} rounds): it takes no more turns` })
        }
        if (request.round !== undefined && request.round !== stored) {
          return yield* new StepConflict({ field: "round", rounds: stored, message: `round ${request.round} was asked, but the episode is at round ${stored}` })
        }
        const step = yield* session.step(outputFromStored(output)).pipe(Effect.orDie)
        const appended = yield* store.append(id, incarnation, stored, output).pipe(storeFailure("sessionId", id))
        if (appended === "gone") {
          // closed on another replica between the head read and the append
          forget(id, entry)
          return yield* notFound(id)
        }
        if (appended === "conflict") {
          // another replica took this round first: our copy has diverged from the log
          entry.session = undefined
          return yield* new StepConflict({ field: "round", rounds: stored + 1, message: `round ${stored} was taken by a concurrent step` })
        }
        return answerOf(id, session, step)
      }))
      yield* Metric.update(Metrics.steps, 1)
      yield* Metric.update(Metrics.toolCalls, result.step.observations.length)
      if (result.step.searches.length > 0) yield* Metric.update(Metrics.searches, result.step.searches.length)
      yield* Metric.update(Metrics.stepLatency, performance.now() - started)
      return result
    })

    const withCurrent = <A>(id: string, owner: Owner, f: (session: Session.Session, spec: SessionSpec) => Effect.Effect<A>) =>
      Effect.gen(function*() {
        const entry = yield* entryOf(id)
        return yield* entry.lock.withPermit(Effect.gen(function*() {
          const { session } = yield* current(id, entry, owner)
          return yield* f(session, (entry.stored as SessionSpecRow).spec)
        }))
      })

    const info = Effect.fn("Sessions.info")((id: string, owner: Owner) => withCurrent(id, owner, (session, spec) => Effect.succeed(infoOf(id, spec, session))))

    const trajectory = Effect.fn("Sessions.trajectory")((id: string, owner: Owner) =>
      withCurrent(id, owner, (session, spec) => Effect.map(session.trajectory, (t) => ({ trajectory: t, task: spec.task })))
    )

    const stepRewards = Effect.fn("Sessions.stepRewards")((id: string, owner: Owner) =>
      withCurrent(id, owner, (session) =>
        Effect.sync(() =>
          Array.from({ length: session.status().rounds }, (_, i) => {
            const facts = session.stepScore(i)
            return facts === undefined ? { rBase: 0, rPlan: 0, rStep: 0 } : Reward.stepReward(facts)
          })))
    )

    const close = Effect.fn("Sessions.close")(function*(id: string, owner: Owner) {
      const row = yield* store.get(id).pipe(storeFailure("sessionId", id))
      if (row === undefined || row.owner !== owner) return false
      const closed = yield* store.close(id, row.incarnation).pipe(storeFailure("sessionId", id))
      cache.delete(id)
      yield* gauge
      return closed
    })

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      for (const [id, entry] of cache) if (now - entry.touched > config.ttlMs) cache.delete(id)
      yield* Effect.ignore(store.expire(config.ttlMs).pipe(storeFailure("store", store.label)))
      yield* gauge
    })

    return Sessions.of({ config, create, step, info, trajectory, stepRewards, close, postTask, findTask, sample: source === undefined ? undefined : sample, sweep, live: () => cache.size })
  })

/** The service in a layer (over SessionStore, ToolLibrary, Retriever, and optionally GeneratedWorld and TaskSource). */
export const layer = (config: SessionsConfig): Layer.Layer<Sessions, never, SessionStore | ToolLibrary | Retriever> =>
  Layer.effect(Sessions, make(config))
