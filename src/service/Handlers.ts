/**
 * The handlers of the ToolEnv API over the services: Sessions (episodes over the action log), ToolLibrary, the
 * retrievers, TaskSource, Judge and the scoring math. Each typed refusal is counted in the error metric by its tag.
 * Every session route acts for the caller named by `X-Client-Key` (a create without one is issued a key).
 */
import { Context, Effect, Layer, Metric, Option, Scheduler } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { JsonObject } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as Estimators from "../eval/Estimators.ts"
import * as Scoring from "../eval/Scoring.ts"
import * as Equivalence from "../toolenv/Equivalence.ts"
import { Judge } from "../judge/Judge.ts"
import type { Retriever } from "../retrieval/Retriever.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { InvalidRequest, NotFound, ScoringFailed, taskView, ToolEnvApi } from "./Api.ts"
import type { Score, SessionInfo } from "./Api.ts"
import * as Guard from "./Guard.ts"
import * as EpisodeScore from "./EpisodeScore.ts"
import { Readiness } from "./Readiness.ts"
import * as Metrics from "./ServiceMetrics.ts"
import { sessionNotFound, Sessions } from "./Sessions.ts"
import type { Owner, StepResult } from "./Sessions.ts"

/** The retrievers a server loaded, by name; `default` is the one sessions search with. */
export class Retrievers extends Context.Service<Retrievers, {
  readonly default: string
  readonly byName: ReadonlyMap<string, Retriever["Service"]>
}>()("paraagent/service/Retrievers") {}

/** Counts a typed refusal by its tag and passes it on. */
const counted = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapError(effect, (e) => Metrics.countError(e._tag))

/**
 * A step's answer written as JSON directly, the hot path of the server: `StepResponse` has no transformation anywhere,
 * so its encoding is the value itself (tested on served steps in test/service/Server.test.ts) and running the value
 * through the schema again only repeated work. The OpenAPI document still describes the body by that schema.
 */
const stepJson = (result: StepResult): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(JSON.stringify(result), { contentType: "application/json" })

const flag = (value: "true" | "false" | undefined): boolean => value === "true"

/**
 * Judging and scoring run as many small effects (a judge call per trajectory, a reward per step): run with a small
 * operation budget they give the thread back between them, so a group of 64 trajectories does not hold the server's
 * thread for its whole scoring (other clients' requests are answered in between).
 */
const yielding = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.provideService(effect, Scheduler.MaxOpsBeforeYield, 16)

/**
 * The caller's owner, from `X-Client-Key`. Without a key (or with a malformed one) the caller owns nothing: every
 * session is then the 404 an unknown id is, so a missing key never reveals whether a session exists.
 */
const ownerOfRequest = Effect.gen(function*() {
  const key = (yield* HttpServerRequest.HttpServerRequest).headers[Guard.clientKeyHeader]
  return key !== undefined && Guard.isClientKey(key) ? Guard.ownerOf(key) : Guard.noOwner as Owner
})

/** The creator of a session or task: the caller's key, or (without one) a key issued now and returned in the answer. */
const creatorOfRequest = Effect.gen(function*() {
  const key = (yield* HttpServerRequest.HttpServerRequest).headers[Guard.clientKeyHeader]
  if (key === undefined) {
    const issued = Guard.newClientKey()
    return { owner: Guard.ownerOf(issued) as Owner, issued: issued as string | undefined }
  }
  if (!Guard.isClientKey(key)) {
    return yield* new InvalidRequest({ field: "X-Client-Key", message: "a client key is 16 to 256 characters of letters, digits and ._~+/=- (or send none and use the one the answer gives)" })
  }
  return { owner: Guard.ownerOf(key) as Owner, issued: undefined as string | undefined }
})

/** A create's answer, with the issued key when the server issued one. */
const withKey = (info: SessionInfo, issued: string | undefined): SessionInfo => (issued === undefined ? info : { ...info, clientKey: issued })

const system = HttpApiBuilder.group(ToolEnvApi, "system", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const readiness = Option.getOrUndefined(yield* Effect.serviceOption(Readiness))
    const phase = () => readiness?.phase() ?? "ready"
    return handlers
      .handle("health", () =>
        Effect.sync(() => ({ status: "healthy" as const, state: phase() === "draining" ? "draining" as const : "ready" as const, world: sessions.config.world, sessions: sessions.live() })))
      .handle("ready", () => Effect.sync(() => ({ status: phase() })))
  }))

const tools = HttpApiBuilder.group(ToolEnvApi, "tools", (handlers) =>
  Effect.gen(function*() {
    const library = yield* ToolLibrary
    const retrievers = yield* Retrievers
    return handlers
      .handle("list", ({ query }) =>
        Effect.sync(() => {
          const offset = query.offset ?? 0
          const limit = query.limit ?? 100
          return {
            total: library.tools.length,
            offset,
            tools: library.tools.slice(offset, offset + limit).map((t) => ({ name: t.name, category: t.category, description: t.description }))
          }
        }))
      .handle("describe", ({ params }) => {
        const spec = library.get(params.name)
        return spec === undefined
          ? counted(Effect.fail(new NotFound({ field: "name", value: params.name, message: `no tool named ${JSON.stringify(params.name)} in ${library.label}` })))
          : Effect.succeed(spec)
      })
      .handle("search", ({ payload }) =>
        counted(Effect.gen(function*() {
          const name = payload.retriever ?? retrievers.default
          const retriever = retrievers.byName.get(name)
          if (retriever === undefined) {
            return yield* new InvalidRequest({ field: "retriever", message: `unknown retriever ${JSON.stringify(name)}; loaded: ${[...retrievers.byName.keys()].join(", ")}` })
          }
          const lists = yield* retriever.search([payload.query], payload.k ?? 10).pipe(
            Effect.mapError((e) => new InvalidRequest({ field: "query", message: e.message }))
          )
          yield* Metric.update(Metrics.searches, 1)
          return { retriever: name, hits: lists[0] ?? [] }
        })))
  }))

const tasks = HttpApiBuilder.group(ToolEnvApi, "tasks", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("list", ({ query }) =>
        counted(Effect.gen(function*() {
          if (sessions.sample === undefined) return yield* new InvalidRequest({ field: "split", message: "this library has no task catalogue: post tasks with POST /tasks" })
          const drawn = yield* sessions.sample({
            split: query.split ?? "test",
            count: query.count ?? 10,
            ...(query.level !== undefined ? { levels: [query.level] } : {}),
            ...(query.seed !== undefined ? { seed: query.seed } : {})
          })
          return { tasks: drawn.map((t) => taskView(t, flag(query.gold))) }
        })))
      .handle("get", ({ params, query }) =>
        counted(Effect.gen(function*() {
          const task = yield* sessions.findTask(params.id)
          if (task === undefined) return yield* new NotFound({ field: "id", value: params.id, message: `no task ${JSON.stringify(params.id)}` })
          return taskView(task, flag(query.gold))
        })))
      .handle("post", ({ payload }) =>
        counted(Effect.gen(function*() {
          // a task posted without a key is held by a key nobody has: no one can overwrite it
          const { owner } = yield* creatorOfRequest
          return taskView(yield* sessions.postTask(payload, owner), true)
        })))
  }))

const sessionsGroup = HttpApiBuilder.group(ToolEnvApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) =>
        counted(Effect.gen(function*() {
          const { owner, issued } = yield* creatorOfRequest
          return withKey(yield* sessions.create(payload, owner), issued)
        })))
      .handle("step", ({ params, payload }) => counted(Effect.flatMap(ownerOfRequest, (owner) => Effect.map(sessions.step(params.id, owner, payload), stepJson))))
      .handle("get", ({ params }) => counted(Effect.flatMap(ownerOfRequest, (owner) => sessions.info(params.id, owner))))
      .handle("trajectory", ({ params }) => counted(Effect.flatMap(ownerOfRequest, (owner) => Effect.map(sessions.trajectory(params.id, owner), (x) => x.trajectory))))
      .handle("close", ({ params }) =>
        counted(Effect.flatMap(ownerOfRequest, (owner) =>
          Effect.flatMap(sessions.close(params.id, owner), (closed) =>
            closed
              ? Effect.succeed({ sessionId: params.id, closed })
              : Effect.fail(sessionNotFound(params.id, sessions.config))))))
  }))

const scoring = HttpApiBuilder.group(ToolEnvApi, "scoring", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const judge = yield* Judge
    const library = yield* ToolLibrary
    // the registry and the equivalence of the layer's context: an estimator a program registered is served here
    const registry = yield* Estimators.current
    const equivalent = yield* Scoring.equivalence
    const score = scoreSession(sessions, judge, library, equivalent)
    return handlers
      .handle("score", ({ params }) => counted(yielding(Effect.flatMap(ownerOfRequest, (owner) => score(params.id, owner)))))
      .handle("advantages", ({ payload }) =>
        counted(yielding(Effect.gen(function*() {
          const group = yield* groupOf(sessions, payload, yield* ownerOfRequest)
          const estimator = payload.estimator ?? Scoring.defaultOptions.estimator
          const scored = yield* Scoring.scoreGroup(group.task, group.trajectories, { ...Scoring.defaultOptions, estimator }).pipe(
            Effect.provideService(Estimators.Estimators, registry),
            Effect.provideService(Judge, judge),
            Effect.provideService(ToolLibrary, library),
            Effect.mapError((e) =>
              e.message.startsWith("unknown advantage estimator")
                ? new InvalidRequest({ field: "estimator", message: e.message })
                : new ScoringFailed({ field: "trajectories", message: e.message }))
          )
          return {
            estimator,
            group: scored.map((t) => ({
              trajectoryId: t.id,
              rAns: t.answerReward?.rAns ?? 0,
              steps: t.steps.flatMap((s) => (s.advantage === undefined ? [] : [s.advantage]))
            }))
          }
        }))))
  }))

/**
 * Judges a finished session: the verdict (redacted for the client: what is missing, never a gold value — the full
 * rationale goes to the debug log), R_ans with its Q/F/U pattern, the phase and step rewards with the credit terms
 * (`Scoring.rewardsOf`; `equivalent`: which tools stand in for a gold tool, default the exact one) — the score body of
 * `POST /sessions/{id}/score` and of the ORS episode end.
 */
export const scoreSession = (sessions: Sessions["Service"], judge: Judge["Service"], library: ToolLibrary["Service"], equivalent: Equivalence.Equivalent = Equivalence.exact) =>
  (id: string, owner: Owner) =>
    Effect.gen(function*() {
      const info = yield* sessions.info(id, owner)
      if (!info.done) return yield* new ScoringFailed({ field: "sessionId", message: `session ${id} is still running (${info.rounds} rounds): score it once it is done` })
      const { trajectory, task } = yield* sessions.trajectory(id, owner)
      const scored = yield* EpisodeScore.score(judge, library, equivalent, task, trajectory, { sessionId: id })
      if (scored.verdict === undefined) return yield* new ScoringFailed({ field: "judge", message: scored.judgeError ?? "the judge gave no verdict" })
      const score = scored.rewards
      const body: Score = {
        sessionId: id,
        verdict: scored.verdict,
        answer: score.answer,
        phases: score.phases.map(({ kind, start, end, l1, l2, l3, l4, rPhase }) => ({ kind, start, end, reward: { l1, l2, l3, l4, rPhase } })),
        steps: score.steps
      }
      return body
    })

/** The trajectories and task of an advantage request: finished sessions of one task, or trajectories with a task id. */
const groupOf = (
  sessions: Sessions["Service"],
  payload: { readonly sessions?: ReadonlyArray<string>; readonly taskId?: string; readonly trajectories?: ReadonlyArray<Trajectory> },
  owner: Owner
) =>
  Effect.gen(function*() {
    if (payload.sessions !== undefined && payload.trajectories !== undefined) {
      return yield* new InvalidRequest({ field: "sessions", message: "give `sessions` or `trajectories` (with `taskId`), not both" })
    }
    if (payload.sessions !== undefined) {
      if (payload.sessions.length === 0) return yield* new InvalidRequest({ field: "sessions", message: "an empty group has no advantages" })
      const members: Array<{ readonly trajectory: Trajectory; readonly task: Task }> = []
      for (const [i, id] of payload.sessions.entries()) {
        const info = yield* sessions.info(id, owner)
        if (!info.done) return yield* new ScoringFailed({ field: `sessions[${i}]`, message: `session ${id} is still running` })
        members.push(yield* sessions.trajectory(id, owner))
      }
      const task = (members[0] as { readonly task: Task }).task
      const other = members.findIndex((m) => m.task.id !== task.id)
      if (other >= 0) return yield* new InvalidRequest({ field: `sessions[${other}]`, message: `a group is one task: session ${payload.sessions[other]} acts on ${members[other]?.task.id}, not ${task.id}` })
      return { task, trajectories: members.map((m) => m.trajectory) }
    }
    if (payload.trajectories === undefined || payload.trajectories.length === 0) {
      return yield* new InvalidRequest({ field: "trajectories", message: "give `sessions` (ids of finished sessions) or `trajectories` with `taskId`" })
    }
    const taskId = payload.taskId ?? payload.trajectories[0]?.taskId
    if (taskId === undefined) return yield* new InvalidRequest({ field: "taskId", message: "the task of the trajectories is needed to judge them" })
    const task = yield* sessions.findTask(taskId)
    if (task === undefined) return yield* new NotFound({ field: "taskId", value: taskId, message: `no task ${JSON.stringify(taskId)}` })
    const other = payload.trajectories.findIndex((t) => t.taskId !== task.id)
    if (other >= 0) return yield* new InvalidRequest({ field: `trajectories[${other}].taskId`, message: `a group is one task: ${payload.trajectories[other]?.taskId} is not ${task.id}` })
    return { task, trajectories: payload.trajectories }
  })

/** An OpenEnv observation: a JSON object (the encoded step and what the next round sees). */
const observation = (value: object): JsonObject => value as unknown as JsonObject

/** The most clients whose last reset a replica remembers for OpenEnv calls without `episode_id`. */
const maxRememberedClients = 10_000

const openenv = HttpApiBuilder.group(ToolEnvApi, "openenv", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    // OpenEnv's HTTP server keeps no episode between requests; here `episode_id` names a session, and without one a
    // replica steps the episode the same client (its X-Client-Key) reset last here (use `episode_id` behind a balancer)
    const last = new Map<Owner, string>()
    const remember = (owner: Owner, id: string) => {
      last.delete(owner)
      last.set(owner, id)
      if (last.size > maxRememberedClients) last.delete(last.keys().next().value as Owner)
    }
    const episode = (id: string | undefined, owner: Owner): Effect.Effect<string, InvalidRequest> => {
      if (id !== undefined) return Effect.succeed(id)
      const mine = owner === Guard.noOwner ? undefined : last.get(owner)
      return mine !== undefined
        ? Effect.succeed(mine)
        : Effect.fail(new InvalidRequest({
          field: "episode_id",
          message: owner === Guard.noOwner
            ? "no episode: name it with `episode_id`, or send the X-Client-Key your /reset used or was given"
            : "no episode of this client on this replica: POST /reset first, or name one with `episode_id`"
        }))
    }
    const resetObservation = (info: SessionInfo) => observation({ episode_id: info.sessionId, ...(info.clientKey !== undefined ? { client_key: info.clientKey } : {}), ...info })
    const stepObservation = (r: StepResult) => observation({ episode_id: r.sessionId, step: r.step, ...(r.next !== undefined ? { next: r.next } : {}), ...(r.stop !== undefined ? { stop: r.stop } : {}) })
    return handlers
      .handle("reset", ({ payload }) =>
        counted(Effect.gen(function*() {
          const { episode_id, ...request } = payload
          const { owner, issued } = yield* creatorOfRequest
          const info = withKey(yield* sessions.create(request, owner, episode_id), issued)
          remember(owner, info.sessionId)
          return { observation: resetObservation(info), reward: null, done: false }
        })))
      .handle("step", ({ payload }) =>
        counted(Effect.gen(function*() {
          const owner = yield* ownerOfRequest
          const id = yield* episode(payload.episode_id, owner)
          const result = yield* sessions.step(id, owner, payload.action)
          return { observation: stepObservation(result), reward: result.reward.rStep, done: result.done }
        })))
      .handle("state", ({ query }) =>
        counted(Effect.gen(function*() {
          const owner = yield* ownerOfRequest
          const id = yield* episode(query.episode_id, owner)
          const info = yield* sessions.info(id, owner)
          return { episode_id: id, step_count: info.rounds, done: info.done, info: observation(info) }
        })))
  }))

/** Every group's handlers (over Sessions, ToolLibrary, Retrievers, Judge, and TaskSource when there is one). */
export const layer = Layer.mergeAll(system, tools, tasks, sessionsGroup, scoring, openenv)
