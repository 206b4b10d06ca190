/**
 * The Simulator service: ToolEnv's three-layer simulator (interface validation, consistent world state,
 * response rendering) with deterministic transient faults. One Episode holds the state of one rollout.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { CallOutcome, ToolCall } from "./domain/Call.ts"
import type { TaskId } from "./domain/Ids.ts"

/** What an episode is opened for. */
export interface EpisodeSpec {
  readonly taskId: TaskId
  /** Rollout seed: faults are a function of (seed, task, call, attempt). */
  readonly seed: number
  /** The user's request: values it mentions count as known to the agent (not a 404). */
  readonly request: string
  /** Inject the configured transient faults (default true). */
  readonly faults?: boolean
}

/** The result of executing one call inside an episode. */
export interface Execution {
  readonly outcome: CallOutcome
  /** 1 for the first time this exact call (tool + arguments) is made in the episode, 2 for the next, ... */
  readonly attempt: number
}

/** The world state of one rollout. */
export interface Episode {
  /**
   * Executes one call whose `$ref`s are already resolved. Never fails: every error is an outcome.
   * May sleep when a latency model is configured; safe to run many calls concurrently.
   */
  readonly execute: (call: ToolCall) => Effect.Effect<Execution>
}

/** The three-layer simulator. */
export class Simulator extends Context.Service<Simulator, {
  readonly open: (spec: EpisodeSpec) => Effect.Effect<Episode>
}>()("paraagent/Simulator") {}
