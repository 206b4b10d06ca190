/**
 * A task: a request, its difficulty level, and the privileged gold solution
 * (call DAG and the facts an answer must contain) used by judges, rewards and the teacher.
 */
import { Schema } from "effect"
import { CallId, TaskId, ToolName } from "./Ids.ts"
import { JsonObject } from "./Json.ts"

/** ToolBench-style level: I1 single tool, I2 several tools of one category, I3 tools across categories. */
export const Level = Schema.Literals(["I1", "I2", "I3"])
/** Task level. */
export type Level = typeof Level.Type

/** Dataset split. */
export const Split = Schema.Literals(["train", "validation", "test"])
/** Dataset split. */
export type Split = typeof Split.Type

/** One call of the gold DAG; `arguments` may hold `$ref`s to earlier gold calls. */
export const GoldCall = Schema.Struct({
  id: CallId,
  tool: ToolName,
  arguments: JsonObject,
  deps: Schema.Array(CallId)
})
/** One call of the gold DAG. */
export type GoldCall = typeof GoldCall.Type

/** A fact a complete answer must state, and where in the gold execution it comes from. */
export const GoldFact = Schema.Struct({
  key: Schema.String,
  value: Schema.String,
  call: CallId,
  path: Schema.String
})
/** A fact a complete answer must state. */
export type GoldFact = typeof GoldFact.Type

/** A task. */
export const Task = Schema.Struct({
  id: TaskId,
  request: Schema.String,
  level: Level,
  /** Categories the gold tools belong to (one for I1/I2). */
  categories: Schema.Array(Schema.String),
  gold: Schema.Array(GoldCall),
  facts: Schema.Array(GoldFact),
  split: Split,
  seed: Schema.Finite,
  /** Which generator or dataset made the task. */
  source: Schema.String
})
/** A task. */
export type Task = typeof Task.Type
