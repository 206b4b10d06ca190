/**
 * The Open Reward Standard routes of the ToolEnv server over the same Sessions as the native API: discovery
 * (`/list_environments`, `/toolenv/tools`, `/splits`, `/num_tasks`, `/task`, `/task_range`), the session lifecycle
 * (`/create_session`, `/create`, `/ping`, `/delete`, `/delete_session`, `X-Session-ID`), the prompt, and tool calls
 * answered as server-sent events with `reward` and `finished` inline (src/service/Ors.ts has the mapping).
 */
import { Cause, Data, Effect, Exit, Option, Schema, Stream } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { oneLine } from "../domain/Errors.ts"
import type { JsonObject } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import { Judge } from "../judge/Judge.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { CreateSession, taskView } from "./Api.ts"
import type { Score } from "./Api.ts"
import * as Scoring from "../eval/Scoring.ts"
import { scoreSession } from "./Handlers.ts"
import * as Ors from "./Ors.ts"
import { Sessions } from "./Sessions.ts"
import type { Owner } from "./Sessions.ts"
import * as Guard from "./Guard.ts"

/** An ORS error: FastAPI's `{"detail": ...}` (what the SDK client reads), with the tag and field of ours. */
class OrsHttpError extends Data.TaggedError("OrsHttpError")<{
  readonly status: number
  readonly detail: string
  readonly extra: Record<string, unknown>
}> {}

const orsError = (status: number, detail: string, extra: Record<string, unknown> = {}) => new OrsHttpError({ status, detail, extra })

const statusOfFailure: Readonly<Record<string, number>> = {
  InvalidRequest: 400,
  NotFound: 404,
  StepConflict: 409,
  WrongWorld: 409,
  Conflict: 409,
  ScoringFailed: 422,
  AtCapacity: 503,
  StoreFailure: 500
}

/** A typed refusal of the Sessions as the ORS error body, with the status the native API gives it. */
const fromFailure = (e: { readonly _tag: string; readonly message: string; readonly field?: string }): OrsHttpError =>
  orsError(statusOfFailure[e._tag] ?? 500, e.message, { _tag: e._tag, ...(e.field !== undefined ? { field: e.field } : {}) })

const errorResponse = (e: OrsHttpError) => HttpServerResponse.jsonUnsafe({ detail: e.detail, ...e.extra }, { status: e.status })

const ok = (body: unknown) => HttpServerResponse.jsonUnsafe(body)

/** Runs a route: an OrsHttpError becomes its JSON answer. */
const route = <R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, OrsHttpError, R>) =>
  Effect.catch(effect, (e) => Effect.succeed(errorResponse(e)))

/**
 * The session and who acts on it: the `X-Client-Key` owner when the request has one (docs/service.md, ownership),
 * else the session id itself is the credential (ORS clients hold the id `/create_session` issued, a random UUID).
 */
const sessionId = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const sid = request.headers["x-session-id"]?.trim()
  return sid === undefined || sid === "" ? Effect.fail(orsError(400, "X-Session-ID header is required", { field: "X-Session-ID" })) : Effect.succeed(sid)
})

const ownerOf = (sid: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request): Owner => {
    const key = request.headers[Guard.clientKeyHeader]
    return key !== undefined && Guard.isClientKey(key) ? Guard.ownerOf(key) : Guard.ownerOf(`ors-session\u0000${sid}`)
  })

const body = <A>(schema: Schema.Codec<A, unknown>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    request.json.pipe(
      Effect.mapError(() => orsError(400, "the body is not JSON", { field: "body" })),
      Effect.flatMap((json) => Schema.decodeUnknownEffect(schema)(json, { onExcessProperty: "error" })),
      Effect.mapError((e) => (e instanceof OrsHttpError ? e : orsError(400, oneLine(e.message), { field: "body" })))
    ))

/** Python's slice bounds over `total` items. */
const sliceBounds = (total: number, start: number | null | undefined, stop: number | null | undefined): readonly [number, number] => {
  const norm = (x: number) => Math.min(total, x < 0 ? Math.max(total + x, 0) : x)
  return [norm(start ?? 0), norm(stop ?? total)]
}

/** A task as ORS lists it: what `/create` takes back as `task_spec` (its `taskId` names it). */
const orsTask = (task: Task): JsonObject => {
  const { id, ...rest } = taskView(task, false)
  return { taskId: id, ...rest } as unknown as JsonObject
}

const sseHeaders = { "cache-control": "no-cache", "x-accel-buffering": "no" }

/** The routes, over the Sessions, the judge and the library in context. */
export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const judge = yield* Judge
    const library = yield* ToolLibrary
    const score = scoreSession(sessions, judge, library, yield* Scoring.equivalence)
    const toolList = { tools: Ors.toolSpecs() }
    const env = `/${Ors.envName}`

    const checkSplit = (split: string) =>
      sessions.sample === undefined
        ? Effect.fail(orsError(400, `${library.label} has no task catalogue: pass the task inline as task_spec {"task": {"request": ...}}`, { field: "split" }))
        : Ors.splits.some((s) => s.name === split)
        ? Effect.succeed(sessions.sample)
        : Effect.fail(orsError(400, "Invalid split", { field: "split" }))

    const taskAt = (split: string, index: number) =>
      Effect.gen(function*() {
        const sample = yield* checkSplit(split)
        if (index < 0 || index >= Ors.tasksPerSplit) return yield* orsError(400, "Invalid index", { field: "index" })
        const drawn = yield* sample({ split: split as Task["split"], count: index + 1 })
        const task = drawn[index]
        if (task === undefined) return yield* orsError(400, "Invalid index", { field: "index" })
        return task
      })

    /** The session's trajectory (a missing or foreign session is the ORS 404). */
    const trajectoryOf = (sid: string, owner: Owner) => Effect.mapError(sessions.trajectory(sid, owner), fromFailure)

    yield* router.add("GET", "/list_environments", ok([Ors.envName]))
    yield* router.add("GET", `${env}/tools`, ok(toolList))
    yield* router.add("GET", `${env}/splits`, ok(sessions.sample === undefined ? [] : Ors.splits))
    yield* router.add("POST", `${env}/tasks`, route(Effect.gen(function*() {
      const { split } = yield* body(Ors.SplitRequest)
      yield* checkSplit(split)
      return yield* orsError(400, `list_tasks is not supported for this environment (each split has ${Ors.tasksPerSplit} tasks drawn on demand): use the index-based API, num_tasks + task or task_range`, { field: "split" })
    })))
    yield* router.add("POST", `${env}/num_tasks`, route(Effect.gen(function*() {
      const { split } = yield* body(Ors.SplitRequest)
      yield* checkSplit(split)
      return ok({ num_tasks: Ors.tasksPerSplit })
    })))
    yield* router.add("POST", `${env}/task`, route(Effect.gen(function*() {
      const { split, index } = yield* body(Ors.TaskRequest)
      return ok({ task: orsTask(yield* taskAt(split, index)) })
    })))
    yield* router.add("POST", `${env}/task_range`, route(Effect.gen(function*() {
      const request = yield* body(Ors.TaskRangeRequest)
      const sample = yield* checkSplit(request.split)
      const [start, stop] = sliceBounds(Ors.tasksPerSplit, request.start, request.stop)
      if (stop - start > Ors.maxRange) return yield* orsError(400, `a range holds at most ${Ors.maxRange} tasks (asked ${stop - start}): page through it`, { field: "stop" })
      if (stop <= start) return ok({ tasks: [] })
      const drawn = yield* sample({ split: request.split as Task["split"], count: stop })
      return ok({ tasks: drawn.slice(start, stop).map(orsTask) })
    })))

    yield* router.add("POST", "/create_session", (request) =>
      Effect.sync(() => {
        const sid = crypto.randomUUID()
        // the reference client reads the id from SSE (`task_id`, then `end`); a plain client reads JSON
        return (request.headers["accept"] ?? "").includes("text/event-stream")
          ? HttpServerResponse.text(Ors.sseEvent("task_id", sid) + Ors.sseEvent("end", ""), { contentType: "text/event-stream", headers: sseHeaders })
          : ok({ sid })
      }))
    yield* router.add("POST", "/create", route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      const request = yield* body(Ors.CreateRequest)
      if (request.env_name !== undefined && request.env_name !== null && request.env_name.toLowerCase() !== Ors.envName) {
        return yield* orsError(404, `unknown environment ${JSON.stringify(request.env_name)}`, { field: "env_name" })
      }
      const hasSpec = request.task_spec !== undefined && request.task_spec !== null
      const hasIndex = request.split !== undefined && request.split !== null && request.index !== undefined && request.index !== null
      if (hasSpec === hasIndex) return yield* orsError(400, "Provide either task_spec or both split and index, not both/neither", { field: "task_spec" })
      let create: CreateSession
      if (hasSpec) {
        const spec = request.task_spec as JsonObject
        // a listed task carries taskId; the session options (seed, paradigm, faults, faultRate, maxRounds, topK) may ride along
        create = yield* Schema.decodeUnknownEffect(CreateSession)(spec).pipe(
          Effect.mapError((e) => orsError(400, `task_spec: ${oneLine(e.message)}`, { field: "task_spec" }))
        )
      } else {
        yield* checkSplit(request.split as string)
        if ((request.index as number) < 0 || (request.index as number) >= Ors.tasksPerSplit) return yield* orsError(400, "Invalid index", { field: "index" })
        create = { split: request.split as Task["split"], index: request.index as number }
      }
      const created = yield* sessions.create(create, owner, sid).pipe(
        Effect.mapError((e) => ((e._tag === "InvalidRequest" || e._tag === "Conflict") && e.field === "episode_id" ? orsError(400, "Session already exists", { field: "X-Session-ID" }) : fromFailure(e)))
      )
      return ok({ sid: created.sessionId })
    })))
    yield* router.add("POST", "/ping", route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      yield* sessions.info(sid, owner).pipe(Effect.mapError(() => orsError(404, "Active environment not found", { field: "X-Session-ID" })))
      return ok({ status: "ok" })
    })))
    yield* router.add("POST", "/delete", route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      yield* Effect.mapError(sessions.close(sid, owner), fromFailure)
      return ok({ sid })
    })))
    yield* router.add("POST", "/delete_session", route(Effect.map(sessionId, (sid) => ok({ sid }))))
    yield* router.add("GET", `${env}/task_tools`, route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      yield* Effect.mapError(sessions.info(sid, owner), fromFailure)
      return ok(toolList)
    })))
    yield* router.add("GET", `${env}/prompt`, route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      const info = yield* Effect.mapError(sessions.info(sid, owner), fromFailure)
      return ok(Ors.promptBlocks(info))
    })))

    /** A round of the session as a tool call: the step, and at the end of the episode its score. */
    const runRound = (sid: string, owner: Owner, round: number, name: string, input: JsonObject, usedCallIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const wanted = Ors.roundInput(name, input, usedCallIds)
        if (wanted._tag === "error") return { ok: false, error: wanted.error } as const
        if (wanted._tag === "describe") {
          const { trajectory } = yield* trajectoryOf(sid, owner)
          const info = yield* Effect.mapError(sessions.info(sid, owner), fromFailure)
          const retrieved = new Set([...(info.next?.tools ?? []), ...trajectory.steps.flatMap((s) => s.searches.flatMap((q) => q.hits.map((h) => h.tool as string)))])
          const spec = library.get(wanted.name)
          if (spec === undefined || !retrieved.has(spec.name)) {
            return { ok: false, error: `tool ${JSON.stringify(wanted.name)} has not been retrieved in this episode: search_tools for it first` } as const
          }
          return { ok: true, output: Ors.textOutput(JSON.stringify(spec), { tool: spec.name } as JsonObject) } as const
        }
        const stepped = yield* Effect.exit(sessions.step(sid, owner, { ...wanted.request, round }))
        if (Exit.isFailure(stepped)) {
          const failure = Cause.findErrorOption(stepped.cause)
          if (Option.isNone(failure)) return yield* Effect.failCause(stepped.cause)
          return { ok: false, error: failure.value.message } as const
        }
        const result = stepped.value
        let scored: Score | undefined
        let scoreError: string | undefined
        if (result.done) {
          const s = yield* Effect.exit(score(sid, owner))
          if (Exit.isSuccess(s)) scored = s.value
          else scoreError = Option.match(Cause.findErrorOption(s.cause), { onNone: () => "scoring failed", onSome: (e) => e.message })
        }
        return { ok: true, output: Ors.toolOutput(result, scored, scoreError) } as const
      })

    /** A past round rebuilt from the log (a reconnect with its task id): the step and its rewards as they were. */
    const pastRound = (sid: string, owner: Owner, round: number) =>
      Effect.gen(function*() {
        const { trajectory } = yield* trajectoryOf(sid, owner)
        const step = trajectory.steps[round]
        if (step === undefined) return { ok: false, error: "unknown task_id" } as const
        const info = yield* Effect.mapError(sessions.info(sid, owner), fromFailure)
        const last = round === trajectory.steps.length - 1
        const done = last && info.done
        const rewards = yield* Effect.mapError(sessions.stepRewards(sid, owner), fromFailure)
        let scored: Score | undefined
        let scoreError: string | undefined
        if (done) {
          const s = yield* Effect.exit(score(sid, owner))
          if (Exit.isSuccess(s)) scored = s.value
          else scoreError = Option.match(Cause.findErrorOption(s.cause), { onNone: () => "scoring failed", onSome: (e) => e.message })
        }
        const result = {
          sessionId: sid,
          step,
          reward: rewards[round] ?? { rBase: 0, rPlan: 0, rStep: 0 },
          done,
          ...(done && info.stop !== undefined ? { stop: info.stop } : {}),
          ...(last && info.next !== undefined ? { next: info.next } : {})
        }
        return { ok: true, output: Ors.toolOutput(result, scored, scoreError) } as const
      })

    yield* router.add("POST", `${env}/call`, route(Effect.gen(function*() {
      const sid = yield* sessionId
      const owner = yield* ownerOf(sid)
      const call = yield* body(Ors.ToolCallRequest)
      const { trajectory } = yield* trajectoryOf(sid, owner)
      const rounds = trajectory.steps.length
      const usedCallIds = trajectory.steps.flatMap((s) => s.turn?.calls.map((c) => c.id as string) ?? [])
      const asked = call.task_id ?? undefined
      const askedRound = asked === undefined ? undefined : Ors.roundOfTaskId(asked, sid)
      const head = (round: number) => Ors.sseEvent("task_id", Ors.taskIdOf(sid, round))
      let events: Stream.Stream<string>
      if (asked !== undefined && (askedRound === undefined || askedRound > rounds)) {
        events = Stream.make(Ors.sseEvent("error", "unknown task_id"))
      } else {
        const round = askedRound ?? rounds
        const run = askedRound !== undefined && askedRound < rounds ? pastRound(sid, owner, askedRound) : runRound(sid, owner, round, call.name, call.input, usedCallIds)
        const result = Stream.fromEffect(run.pipe(
          Effect.map((r) => Ors.resultEvents(JSON.stringify(r))),
          Effect.catchCause((cause) =>
            Effect.logError("ORS call failed", cause).pipe(Effect.as(Ors.sseEvent("error", Option.match(Cause.findErrorOption(cause), { onNone: () => "internal error", onSome: (e) => (e instanceof OrsHttpError ? e.detail : String(e)) })))))
        ))
        // a comment every 10 s keeps proxies from closing a long call (the SDK's server pings every 10 s)
        const pings = Stream.tick("10 seconds").pipe(Stream.drop(1), Stream.map(() => ": ping\n\n"))
        events = Stream.concat(Stream.make(head(round)), Stream.merge(result, pings, { haltStrategy: "left" }))
      }
      return HttpServerResponse.stream(Stream.encodeText(events), { contentType: "text/event-stream", headers: sseHeaders })
    })))
  })
)
