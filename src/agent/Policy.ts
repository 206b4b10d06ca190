/**
 * The Policy service: given a rollout's context, produce the next model turn, plus what a trainer needs
 * from it (log-probability, token counts). An LLM and a small learned policy plug in the same way.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { Task } from "../domain/Task.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { ControllerState, Decision, Paradigm, Step, Usage } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"

/** The policy could not produce a turn (transport failure after retries, bad response body). */
export class PolicyError extends Schema.TaggedError<PolicyError>()("PolicyError", {
  message: Schema.String,
  /** HTTP status, when the failure came from an endpoint. */
  status: Schema.optionalKey(Schema.Number)
}) {}

/** Everything a policy may look at before a round. */
export interface PolicyContext {
  readonly request: string
  readonly paradigm: Paradigm
  /** 0-based round index and the round limit T_max. */
  readonly round: number
  readonly maxRounds: number
  readonly controller: ControllerState
  readonly history: ReadonlyArray<Step>
  /** The tools the agent has seen so far (retrieved or called), with their documentation. */
  readonly tools: ReadonlyArray<ToolSpec>
  /** The rollout's seed, for sampling policies. */
  readonly seed: number
  /** The task with its gold solution: given only to policies that declare `privileged` (the teacher). */
  readonly task?: Task
  /** DFSDT only: the expansions abandoned so far in the search tree, oldest first (try something else). */
  readonly abandoned?: ReadonlyArray<Step>
}

/** One turn produced by a policy. */
export interface PolicyOutput {
  /** The turn as text in the ParaAct protocol (what is stored and trained on). */
  readonly text: string
  /** The turn already structured, when the policy produced structure directly (native tool_calls). */
  readonly turn?: Turn
  readonly usage: Usage
  /** Sum of the turn's token log-probabilities, when known. */
  readonly logprob?: number
  readonly tokenLogprobs?: ReadonlyArray<number>
  /** The exact prompt the turn was generated from (LLM policies), so a trainer can re-score the same tokens. */
  readonly prompt?: string
  /** A learned policy's choice in its action space, with the behaviour parameter version. */
  readonly decision?: Decision
}

/**
 * Re-scoring a recorded step under the policy's current parameters: the log-probability the policy now gives the
 * turn it took then. A learned policy rebuilds its action space from the context; an LLM layer would re-run the
 * recorded prompt with the recorded completion (per-token log-probs).
 */
export interface Rescore {
  readonly logprob: number
  readonly tokenLogprobs?: ReadonlyArray<number>
}

/**
 * A policy. Its implementations (the teacher, layers/model/PolicyOpenAi.ts, a user's own) import this class, so none of
 * them sits on it as a default layer: pick one (`Teacher.layer`, `PolicyOpenAi.layer`, `Layer.succeed(Policy, ...)`).
 */
export class Policy extends Context.Service<Policy, {
  /** A label for reports (model name, `teacher`, ...). */
  readonly name: string
  /** Whether the policy may see the task's gold solution (the teacher may; an agent under evaluation may not). */
  readonly privileged: boolean
  readonly act: (context: PolicyContext) => Effect.Effect<PolicyOutput, PolicyError>
  /** Optional: the log-probability of a recorded step's output under the current parameters (see {@link Rescore}). */
  readonly rescore?: (context: PolicyContext, step: Step) => Effect.Effect<Rescore, PolicyError>
}>()("paraagent/Policy") {}
