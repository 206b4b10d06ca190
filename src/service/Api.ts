/**
 * The ToolEnv service's HTTP API as data (`effect/http-api`): every endpoint's path, request and response schemas and
 * typed errors. The server (layers/server/ToolEnvServer.ts), the typed client and the OpenAPI document all derive from it.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { Json, JsonObject } from "../domain/Json.ts"
import { packageVersion } from "../io/Provenance.ts"
import { GoldCall, GoldFact, Level, Split, Task } from "../domain/Task.ts"
import { ToolSpec } from "../domain/Tool.ts"
import {
  AnswerReward,
  ControllerState,
  Paradigm,
  PhaseReward,
  SearchHit,
  Step,
  StepAdvantage,
  StepReward,
  StopReason,
  Trajectory,
  Verdict
} from "../domain/Trajectory.ts"
import { Turn } from "../domain/Turn.ts"
import { Phase } from "./Readiness.ts"

// ---- errors: each names the field (or the part of the request) that was wrong ----

/** A request that decoded but cannot be served as asked (an unknown estimator, an oversized turn, a bad task ref). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  field: Schema.String,
  message: Schema.String
}, { httpApiStatus: 400 }) {}

/** A session, task or tool that does not exist (or was closed). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}, { httpApiStatus: 404 }) {}

/**
 * A step that lost a race: another step of the same round was accepted first (by this replica or another), or the
 * episode had already ended.
 */
export class StepConflict extends Schema.TaggedError<StepConflict>()("StepConflict", {
  field: Schema.String,
  rounds: Schema.Number,
  message: Schema.String
}, { httpApiStatus: 409 }) {}

/** A session (or a stored one) that names another world than the one this server was started with. */
export class WrongWorld extends Schema.TaggedError<WrongWorld>()("WrongWorld", {
  field: Schema.String,
  expected: Schema.String,
  got: Schema.String,
  message: Schema.String
}, { httpApiStatus: 409 }) {}

/** The server holds its session limit: close or finish sessions, or retry later. */
export class AtCapacity extends Schema.TaggedError<AtCapacity>()("AtCapacity", {
  field: Schema.String,
  limit: Schema.Number,
  message: Schema.String
}, { httpApiStatus: 503 }) {}

/** Scoring that cannot run as asked (a session still running, a group that cannot be normalised). */
export class ScoringFailed extends Schema.TaggedError<ScoringFailed>()("ScoringFailed", {
  field: Schema.String,
  message: Schema.String
}, { httpApiStatus: 422 }) {}

/**
 * The session log failed: a row that does not decode, or the store could not be read or written. The server logs the
 * cause (with the file); the answer names the session or task it was about, never an empty 500.
 */
export class StoreFailure extends Schema.TaggedError<StoreFailure>()("StoreFailure", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}, { httpApiStatus: 500 }) {}

/** An id already held: an open session of that id, or a posted task of another client. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}, { httpApiStatus: 409 }) {}

/** Missing or wrong bearer token (every route but `/health` when the server has a token). */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}, { httpApiStatus: 401 }) {}

/** A request a browser page could have sent: a `Host` not this server's (DNS rebinding) or a foreign `Origin`. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}, { httpApiStatus: 403 }) {}

/** A request body not sent as `application/json`. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}, { httpApiStatus: 415 }) {}

/** A body over the server's size limit, or nested deeper than it accepts. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  field: Schema.String,
  limit: Schema.Number,
  message: Schema.String
}, { httpApiStatus: 413 }) {}

// ---- bodies ----

const Count = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 100 })))
const Index = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 })))
/** The position of a task in a draw: drawing is work done in the request, so it is capped. */
export const maxTaskIndex = 9_999
const TaskIndex = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: maxTaskIndex })))
const SeedInt = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 2 ** 31 - 1 })))
const Id = Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200)))

/**
 * The sizes the server takes and keeps: every posted or stored field is bounded, so memory is bounded in bytes (with
 * the body limit, `--max-body`, in front of them). A value past one is a 400 naming the field.
 */
export const limits = {
  /** A posted task as JSON. */
  taskBytes: 256 * 1024,
  /** A turn as stored (JSON: text, structured turn, usage). */
  turnBytes: 256 * 1024,
  /** Gold calls of a posted task. */
  goldCalls: 64,
  /** Gold facts of a posted task. */
  facts: 256,
  /** Categories of a posted task. */
  categories: 32,
  /** Ids, tool names, slots, fact keys and paths, categories. */
  shortText: 200,
  /** A gold fact's value. */
  factValue: 4_000,
  /** A search query of a turn (as `/tools/search` takes). */
  queryChars: 2_000,
  /** Tokens a step's usage may report (per field); beyond is not a count a model produced. */
  tokens: 10_000_000,
  /** Trajectories (or sessions) of one `/advantages` group: a GRPO group is 2 to 64 rollouts. */
  groupSize: 64
} as const

/** Token counts as a client reports them: whole, not negative, within {@link limits}. */
export const ServedUsage = Schema.Struct({
  promptTokens: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: limits.tokens }))),
  completionTokens: Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: limits.tokens })))
})

/**
 * `/health`: liveness, the phase (`ready`, or `draining` after SIGTERM), the world this replica serves, and its live
 * sessions. While the server is starting, `/health` is a 503 `{"status": "starting"}` answered by the server's front.
 */
export const Health = Schema.Struct({
  status: Schema.Literal("healthy"),
  state: Schema.Literals(["ready", "draining"]),
  world: Schema.String,
  sessions: Schema.Number
})

/** `/ready`: 200 `{"status": "ready"}`; 503 with `starting` or `draining` (answered by the server's front). */
export const Ready = Schema.Struct({ status: Phase })

/** One line of the tool list. */
export const ToolSummary = Schema.Struct({ name: Schema.String, category: Schema.String, description: Schema.String })

/** A page of the library's tools. */
export const ToolPage = Schema.Struct({ total: Schema.Number, offset: Schema.Number, tools: Schema.Array(ToolSummary) })

/** A retrieval query. */
export const SearchRequest = Schema.Struct({
  query: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(2000))),
  k: Schema.optionalKey(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 100 })))),
  /** A retriever this server loaded (`GET /health` lists none; the default is the session retriever). */
  retriever: Schema.optionalKey(Schema.String)
})

/** Ranked hits, best first. */
export const SearchResponse = Schema.Struct({ retriever: Schema.String, hits: Schema.Array(SearchHit) })

/** A task as listed: the gold DAG and facts only when asked for (`gold=true`). */
export const TaskView = Schema.Struct({
  id: Schema.String,
  request: Schema.String,
  level: Level,
  split: Split,
  categories: Schema.Array(Schema.String),
  source: Schema.String,
  gold: Schema.optionalKey(Schema.Array(GoldCall)),
  facts: Schema.optionalKey(Schema.Array(GoldFact))
})
/** A task as listed. */
export type TaskView = typeof TaskView.Type

/** A caller's own task: the request, and optionally its gold DAG and facts (the rule judge grades against them). */
export const PostedTask = Schema.Struct({
  id: Schema.optionalKey(Id),
  request: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(20_000))),
  level: Schema.optionalKey(Level),
  categories: Schema.optionalKey(Schema.Array(Schema.String)),
  gold: Schema.optionalKey(Schema.Array(GoldCall)),
  facts: Schema.optionalKey(Schema.Array(GoldFact))
})
/** A caller's own task. */
export type PostedTask = typeof PostedTask.Type

/** Which task a session acts on: a listed task by id, a posted task inline, or the `index`-th task of a draw. */
export const TaskRef = Schema.Struct({
  taskId: Schema.optionalKey(Id),
  task: Schema.optionalKey(PostedTask),
  split: Schema.optionalKey(Split),
  level: Schema.optionalKey(Level),
  index: Schema.optionalKey(TaskIndex),
  taskSeed: Schema.optionalKey(SeedInt)
})

/** Opening an episode. */
export const CreateSession = Schema.Struct({
  ...TaskRef.fields,
  seed: Schema.optionalKey(SeedInt),
  paradigm: Schema.optionalKey(Paradigm),
  /** Inject the simulator's transient faults (default true). */
  faults: Schema.optionalKey(Schema.Boolean),
  /** Fault probability per call attempt (default: the server's `--fault-rate`, 5%). */
  faultRate: Schema.optionalKey(Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 })))),
  /** T_max (default 12). */
  maxRounds: Schema.optionalKey(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 64 })))),
  topK: Schema.optionalKey(Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: 1, maximum: 50 })))),
  /** A label stored as the trajectory's `policy`. */
  policy: Schema.optionalKey(Schema.String.pipe(Schema.check(Schema.isMaxLength(200))))
})
/** Opening an episode. */
export type CreateSession = typeof CreateSession.Type

/** What the next round's policy sees, in brief (the full history is the trajectory). */
export const NextRound = Schema.Struct({
  round: Schema.Number,
  maxRounds: Schema.Number,
  controller: ControllerState,
  /** Names of the tools the agent has retrieved so far (describe them with `GET /tools/{name}`). */
  tools: Schema.Array(Schema.String)
})

/** An episode's identity and where it is. */
export const SessionInfo = Schema.Struct({
  sessionId: Schema.String,
  world: Schema.String,
  taskId: Schema.String,
  request: Schema.String,
  paradigm: Paradigm,
  seed: Schema.Number,
  rounds: Schema.Number,
  done: Schema.Boolean,
  stop: Schema.optionalKey(StopReason),
  answer: Schema.optionalKey(Schema.String),
  next: Schema.optionalKey(NextRound),
  /**
   * The client key the server issued with this session, in the answer of a create sent without `X-Client-Key` only:
   * send it as `X-Client-Key` on every later request for the session (it is stored only as a digest).
   */
  clientKey: Schema.optionalKey(Schema.String)
})
/** An episode's identity and where it is. */
export type SessionInfo = typeof SessionInfo.Type

/** One whole round: the turn as text (ParaAct as a model wrote it) or structured; `round` guards against duplicates. */
export const StepRequest = Schema.Struct({
  text: Schema.optionalKey(Schema.String),
  turn: Schema.optionalKey(Turn),
  usage: Schema.optionalKey(ServedUsage),
  /** The turn's log-probability under the policy (a sum of token log-probabilities: at most 0). */
  logprob: Schema.optionalKey(Schema.Finite.pipe(Schema.check(Schema.isLessThanOrEqualTo(0)))),
  /** The round this turn is for (0-based); a step for a round already taken is a 409, not a second round. */
  round: Schema.optionalKey(Index)
})
/** One whole round. */
export type StepRequest = typeof StepRequest.Type

/** A round's result: the step (observations, search hits, validation, controller state), its reward, and done. */
export const StepResponse = Schema.Struct({
  sessionId: Schema.String,
  step: Step,
  reward: StepReward,
  done: Schema.Boolean,
  stop: Schema.optionalKey(StopReason),
  next: Schema.optionalKey(NextRound)
})
/** A round's result. */
export type StepResponse = typeof StepResponse.Type

/** Closing an episode. */
export const Closed = Schema.Struct({ sessionId: Schema.String, closed: Schema.Boolean })

/** A phase's reward with its span. */
export const PhaseScore = Schema.Struct({ kind: Schema.String, start: Schema.Number, end: Schema.Number, reward: PhaseReward })

/** A finished session judged: R_ans (with its Q/F/U pattern), phase and step rewards. */
export const Score = Schema.Struct({
  sessionId: Schema.String,
  verdict: Schema.optionalKey(Verdict),
  answer: AnswerReward,
  phases: Schema.Array(PhaseScore),
  steps: Schema.Array(StepReward)
})
/** A judged session. */
export type Score = typeof Score.Type

/** A GRPO group: finished sessions of one task, or trajectories of one task; and the estimator to use. */
export const AdvantageRequest = Schema.Struct({
  estimator: Schema.optionalKey(Schema.String),
  sessions: Schema.optionalKey(Schema.Array(Id).pipe(Schema.check(Schema.isMaxLength(limits.groupSize)))),
  taskId: Schema.optionalKey(Id),
  trajectories: Schema.optionalKey(Schema.Array(Trajectory).pipe(Schema.check(Schema.isMaxLength(limits.groupSize))))
})

/** Per trajectory of the group: R_ans and each step's advantages (by level and combined). */
export const AdvantageResponse = Schema.Struct({
  estimator: Schema.String,
  group: Schema.Array(Schema.Struct({
    trajectoryId: Schema.String,
    rAns: Schema.Number,
    steps: Schema.Array(StepAdvantage)
  }))
})

// ---- OpenEnv (meta-pytorch/OpenEnv `HTTPEnvServer`): /reset, /step, /state; StepResult = {observation, reward, done} ----

/** OpenEnv `ResetRequest`: `seed`, `episode_id`, plus this environment's session fields. */
export const OpenEnvReset = Schema.Struct({
  ...CreateSession.fields,
  episode_id: Schema.optionalKey(Id)
})

/** OpenEnv `StepRequest`: `action` (a ParaAct turn as text or structured), the episode to step. */
export const OpenEnvStep = Schema.Struct({
  action: Schema.Struct({
    text: Schema.optionalKey(Schema.String),
    turn: Schema.optionalKey(Turn)
  }),
  episode_id: Schema.optionalKey(Id),
  timeout_s: Schema.optionalKey(Schema.Number),
  request_id: Schema.optionalKey(Schema.String)
})

/** OpenEnv's StepResult / ResetResponse: `observation`, `reward`, `done`. */
export const OpenEnvResult = Schema.Struct({
  observation: JsonObject,
  reward: Schema.NullOr(Schema.Number),
  done: Schema.Boolean
})

/** OpenEnv `State`: `episode_id`, `step_count` (plus where the episode is). */
export const OpenEnvState = Schema.Struct({
  episode_id: Schema.String,
  step_count: Schema.Number,
  done: Schema.Boolean,
  info: Json
})

// ---- the API ----

/** Liveness and readiness (no token needed). */
export class SystemGroup extends HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", { success: Health }),
  HttpApiEndpoint.get("ready", "/ready", { success: Ready })
) {}

/** The tool library and retrieval. */
export class ToolsGroup extends HttpApiGroup.make("tools").add(
  HttpApiEndpoint.get("list", "/tools", {
    query: { offset: Schema.optionalKey(Index), limit: Schema.optionalKey(Count) },
    success: ToolPage
  }),
  HttpApiEndpoint.get("describe", "/tools/:name", { params: { name: Schema.String }, success: ToolSpec, error: NotFound }),
  HttpApiEndpoint.post("search", "/tools/search", { payload: SearchRequest, success: SearchResponse, error: InvalidRequest })
).annotateMerge(OpenApi.annotations({ title: "Tools", description: "The tool library: list, describe, retrieve" })) {}

/** Tasks by split and level; posted tasks. */
export class TasksGroup extends HttpApiGroup.make("tasks").add(
  HttpApiEndpoint.get("list", "/tasks", {
    query: {
      split: Schema.optionalKey(Split),
      level: Schema.optionalKey(Level),
      count: Schema.optionalKey(Count),
      seed: Schema.optionalKey(SeedInt),
      gold: Schema.optionalKey(Schema.Literals(["true", "false"]))
    },
    success: Schema.Struct({ tasks: Schema.Array(TaskView) }),
    error: InvalidRequest
  }),
  HttpApiEndpoint.get("get", "/tasks/:id", {
    params: { id: Schema.String },
    query: { gold: Schema.optionalKey(Schema.Literals(["true", "false"])) },
    success: TaskView,
    error: [NotFound, InvalidRequest, StoreFailure]
  }),
  HttpApiEndpoint.post("post", "/tasks", { payload: PostedTask, success: TaskView, error: [InvalidRequest, Conflict, StoreFailure] })
).annotateMerge(OpenApi.annotations({ title: "Tasks", description: "Tasks by split and level; post your own" })) {}

/** Episodes stepped one whole round at a time. */
export class SessionsGroup extends HttpApiGroup.make("sessions").add(
  HttpApiEndpoint.post("create", "/sessions", {
    payload: CreateSession,
    success: SessionInfo,
    error: [InvalidRequest, NotFound, AtCapacity, Conflict, StoreFailure]
  }),
  HttpApiEndpoint.post("step", "/sessions/:id/step", {
    params: { id: Schema.String },
    payload: StepRequest,
    success: StepResponse,
    error: [InvalidRequest, NotFound, StepConflict, WrongWorld, StoreFailure]
  }),
  HttpApiEndpoint.get("get", "/sessions/:id", {
    params: { id: Schema.String },
    success: SessionInfo,
    error: [NotFound, WrongWorld, StepConflict, StoreFailure]
  }),
  HttpApiEndpoint.get("trajectory", "/sessions/:id/trajectory", {
    params: { id: Schema.String },
    success: Trajectory,
    error: [NotFound, WrongWorld, StepConflict, StoreFailure]
  }),
  HttpApiEndpoint.delete("close", "/sessions/:id", { params: { id: Schema.String }, success: Closed, error: [NotFound, StoreFailure] })
).annotateMerge(OpenApi.annotations({ title: "Sessions", description: "Episodes: create, step a whole turn, trajectory, close" })) {}

/** Judge, rewards and group advantages. */
export class ScoringGroup extends HttpApiGroup.make("scoring").add(
  HttpApiEndpoint.post("score", "/sessions/:id/score", {
    params: { id: Schema.String },
    success: Score,
    error: [NotFound, ScoringFailed, WrongWorld, StepConflict, StoreFailure]
  }),
  HttpApiEndpoint.post("advantages", "/advantages", {
    payload: AdvantageRequest,
    success: AdvantageResponse,
    error: [InvalidRequest, NotFound, ScoringFailed, WrongWorld, StepConflict, StoreFailure]
  })
).annotateMerge(OpenApi.annotations({ title: "Scoring", description: "Judge a finished session; advantages of a GRPO group" })) {}

/** The OpenEnv adapter over the same sessions. */
export class OpenEnvGroup extends HttpApiGroup.make("openenv").add(
  HttpApiEndpoint.post("reset", "/reset", { payload: OpenEnvReset, success: OpenEnvResult, error: [InvalidRequest, NotFound, AtCapacity, Conflict, StoreFailure] }),
  HttpApiEndpoint.post("step", "/step", {
    payload: OpenEnvStep,
    success: OpenEnvResult,
    error: [InvalidRequest, NotFound, StepConflict, WrongWorld, StoreFailure]
  }),
  HttpApiEndpoint.get("state", "/state", {
    query: { episode_id: Schema.optionalKey(Schema.String) },
    success: OpenEnvState,
    error: [InvalidRequest, NotFound, WrongWorld, StepConflict, StoreFailure]
  })
).annotateMerge(OpenApi.annotations({ title: "OpenEnv", description: "OpenEnv-compatible /reset, /step, /state over the same sessions" })) {}

/** The whole API. */
export class ToolEnvApi extends HttpApi.make("toolenv")
  .add(SystemGroup)
  .add(ToolsGroup)
  .add(TasksGroup)
  .add(SessionsGroup)
  .add(ScoringGroup)
  .add(OpenEnvGroup)
  // a body or query that fails its schema is a 400 problem listing each issue's path (the field) and message
  .middleware(HttpApiMiddleware.ProblemDetails)
  .annotateMerge(OpenApi.annotations({
    title: "ParaAgent ToolEnv",
    // the document's version is the package's (it said 0.0.1, effect's default, while the package was 0.1.0)
    version: packageVersion(),
    description: "Tools, retrieval, the three-layer simulator with seeded faults, the judge and the rewards, over HTTP"
  }))
{}

/** The task fields a listing shows: gold DAG and facts only when asked for. */
export const taskView = (task: Task, gold: boolean): TaskView => ({
  id: task.id,
  request: task.request,
  level: task.level,
  split: task.split,
  categories: task.categories,
  source: task.source,
  ...(gold ? { gold: task.gold, facts: task.facts } : {})
})
