/**
 * The handlers of the ToolEnv API over the services: Sessions (episodes over the action log), ToolLibrary, the
 * retrievers, TaskSource, Judge and the scoring math. Each typed refusal is counted in the error metric by its tag.
 */
import { Context, Effect, Layer, Metric } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { JsonObject } from "../domain/Json.ts"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as Estimators from "../eval/Estimators.ts"
import * as Scoring from "../eval/Scoring.ts"
import { Judge } from "../judge/Judge.ts"
import * as Reward from "../math/Reward.ts"
import type { Retriever } from "../retrieval/Retriever.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import { InvalidRequest, NotFound, ScoringFailed, taskView, ToolEnvApi } from "./Api.ts"
import type { SessionInfo } from "./Api.ts"
import * as Metrics from "./ServiceMetrics.ts"
import { Sessions } from "./Sessions.ts"
import type { StepResult } from "./Sessions.ts"

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

const system = HttpApiBuilder.group(ToolEnvApi, "system", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers.handle("health", () => Effect.succeed({ status: "healthy" as const, world: sessions.config.world, sessions: sessions.live() }))
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
      .handle("post", ({ payload }) => counted(Effect.map(sessions.postTask(payload), (t) => taskView(t, true))))
  }))

const sessionsGroup = HttpApiBuilder.group(ToolEnvApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    return handlers
      .handle("create", ({ payload }) => counted(sessions.create(payload)))
      .handle("step", ({ params, payload }) => counted(Effect.map(sessions.step(params.id, payload), stepJson)))
      .handle("get", ({ params }) => counted(sessions.info(params.id)))
      .handle("trajectory", ({ params }) => counted(Effect.map(sessions.trajectory(params.id), (x) => x.trajectory)))
      .handle("close", ({ params }) =>
        counted(Effect.flatMap(sessions.close(params.id), (closed) =>
          closed
            ? Effect.succeed({ sessionId: params.id, closed })
            : Effect.fail(new NotFound({ field: "sessionId", value: params.id, message: `no session ${JSON.stringify(params.id)}` })))))
  }))

const scoring = HttpApiBuilder.group(ToolEnvApi, "scoring", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const judge = yield* Judge
    const library = yield* ToolLibrary
    const deps = (from: string, to: string) => library.graph.kind(from, to)
    // the registry and the equivalence of the layer's context: an estimator a program registered is served here
    const registry = yield* Estimators.current
    const equivalent = yield* Scoring.equivalence
    return handlers
      .handle("score", ({ params }) =>
        counted(Effect.gen(function*() {
          const info = yield* sessions.info(params.id)
          if (!info.done) return yield* new ScoringFailed({ field: "sessionId", message: `session ${params.id} is still running (${info.rounds} rounds): score it once it is done` })
          const { trajectory, task } = yield* sessions.trajectory(params.id)
          const verdict = yield* judge.judge(task, trajectory).pipe(Effect.mapError((e) => new ScoringFailed({ field: "judge", message: e.message })))
          const score = Scoring.rewardsOf(task, { ...trajectory, verdict }, { deps, equivalent, reward: Reward.defaultRewardConfig })
          return {
            sessionId: params.id,
            verdict,
            answer: score.answer,
            phases: score.phases.map(({ kind, start, end, l1, l2, l3, l4, rPhase }) => ({ kind, start, end, reward: { l1, l2, l3, l4, rPhase } })),
            steps: score.steps
          }
        })))
      .handle("advantages", ({ payload }) =>
        counted(Effect.gen(function*() {
          const group = yield* groupOf(sessions, payload)
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
        })))
  }))

/** The trajectories and task of an advantage request: finished sessions of one task, or trajectories with a task id. */
const groupOf = (
  sessions: Sessions["Service"],
  payload: { readonly sessions?: ReadonlyArray<string>; readonly taskId?: string; readonly trajectories?: ReadonlyArray<Trajectory> }
) =>
  Effect.gen(function*() {
    if (payload.sessions !== undefined && payload.trajectories !== undefined) {
      return yield* new InvalidRequest({ field: "sessions", message: "give `sessions` or `trajectories` (with `taskId`), not both" })
    }
    if (payload.sessions !== undefined) {
      if (payload.sessions.length === 0) return yield* new InvalidRequest({ field: "sessions", message: "an empty group has no advantages" })
      const members: Array<{ readonly trajectory: Trajectory; readonly task: Task }> = []
      for (const [i, id] of payload.sessions.entries()) {
        const info = yield* sessions.info(id)
        if (!info.done) return yield* new ScoringFailed({ field: `sessions[${i}]`, message: `session ${id} is still running` })
        members.push(yield* sessions.trajectory(id))
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

const openenv = HttpApiBuilder.group(ToolEnvApi, "openenv", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    // OpenEnv's HTTP server keeps no episode between requests; here `episode_id` names a session, and without one
    // this replica steps the episode it reset last (use `episode_id` behind a load balancer).
    let last: string | undefined
    const episode = (id: string | undefined): string | undefined => id ?? last
    const resetObservation = (info: SessionInfo) => observation({ episode_id: info.sessionId, ...info })
    const stepObservation = (r: StepResult) => observation({ episode_id: r.sessionId, step: r.step, ...(r.next !== undefined ? { next: r.next } : {}), ...(r.stop !== undefined ? { stop: r.stop } : {}) })
    return handlers
      .handle("reset", ({ payload }) =>
        counted(Effect.gen(function*() {
          const { episode_id, ...request } = payload
          const info = yield* sessions.create(request, episode_id)
          last = info.sessionId
          return { observation: resetObservation(info), reward: null, done: false }
        })))
      .handle("step", ({ payload }) =>
        counted(Effect.gen(function*() {
          const id = episode(payload.episode_id)
          if (id === undefined) return yield* new InvalidRequest({ field: "episode_id", message: "no episode: POST /reset first, or name one with `episode_id`" })
          const result = yield* sessions.step(id, payload.action)
          return { observation: stepObservation(result), reward: result.reward.rStep, done: result.done }
        })))
      .handle("state", ({ query }) =>
        counted(Effect.gen(function*() {
          const id = episode(query.episode_id)
          if (id === undefined) return yield* new InvalidRequest({ field: "episode_id", message: "no episode: POST /reset first, or name one with `episode_id`" })
          const info = yield* sessions.info(id)
          return { episode_id: id, step_count: info.rounds, done: info.done, info: observation(info) }
        })))
  }))

/** Every group's handlers (over Sessions, ToolLibrary, Retrievers, Judge, and TaskSource when there is one). */
export const layer = Layer.mergeAll(system, tools, tasks, sessionsGroup, scoring, openenv)
