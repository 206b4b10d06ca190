/**
 * Tool calls and what the environment answers to them.
 * Errors are observations, not failures: a 404 is information the agent must act on.
 */
import { Schema } from "effect"
import { CallId, ToolName } from "./Ids.ts"
import { Json, JsonObject } from "./Json.ts"

/** One tool call. `arguments` may hold `{"$ref": "c1.path.to.field"}` placeholders before resolution. */
export const ToolCall = Schema.Struct({
  id: CallId,
  tool: ToolName,
  arguments: JsonObject
})
/** One tool call. */
export type ToolCall = typeof ToolCall.Type

/**
 * The kinds of error a tool call can observe, named after what a real HTTP API answers. `tool_defect` is not one of
 * them: the tool's implementation (the simulator, an LLM renderer, a user's tool) crashed — a fault of the machinery,
 * never charged to the agent and not retryable.
 */
export const ErrorKind = Schema.Literals([
  "invalid_arguments",
  "unknown_tool",
  "not_found",
  "rate_limited",
  "server_error",
  "timeout",
  "tool_defect"
])
/** The kinds of error a tool call can observe. */
export type ErrorKind = typeof ErrorKind.Type

/** Transient kinds: retrying the identical call may succeed. */
export const transientErrorKinds: ReadonlySet<ErrorKind> = new Set(["rate_limited", "server_error", "timeout"])

/** The HTTP status a real API would answer for each error kind. */
export const errorStatus: Readonly<Record<ErrorKind, number>> = {
  invalid_arguments: 400,
  unknown_tool: 404,
  not_found: 404,
  rate_limited: 429,
  server_error: 500,
  timeout: 504,
  tool_defect: 500
}

/** Kinds that are faults of the environment's machinery, not of the agent or of the simulated API. */
export const machineryErrorKinds: ReadonlySet<ErrorKind> = new Set(["tool_defect"])

/** A typed tool error. */
export const ToolError = Schema.Struct({
  kind: ErrorKind,
  status: Schema.Finite,
  message: Schema.String
})
/** A typed tool error. */
export type ToolError = typeof ToolError.Type

/** The outcome of one call: a payload, or a typed error. */
export const CallOutcome = Schema.Union([
  Schema.TaggedStruct("ok", { payload: Json }),
  Schema.TaggedStruct("error", { error: ToolError })
])
/** The outcome of one call. */
export type CallOutcome = typeof CallOutcome.Type

/** What a call observed, with its timing (ms since the rollout started). */
export const Observation = Schema.Struct({
  callId: CallId,
  tool: ToolName,
  /** The arguments after `$ref` resolution (what the tool actually received). */
  arguments: JsonObject,
  outcome: CallOutcome,
  /** Calls of earlier rounds whose output this call consumed through `$ref`. */
  refs: Schema.Array(CallId),
  /** How many times the runtime tried the call (1 = no retry). */
  attempts: Schema.Finite,
  startMs: Schema.Finite,
  endMs: Schema.Finite
})
/** What a call observed. */
export type Observation = typeof Observation.Type

/** Builds an error outcome with the status that matches its kind. */
export const errorOutcome = (kind: ErrorKind, message: string): CallOutcome => ({
  _tag: "error",
  error: { kind, status: errorStatus[kind], message }
})
