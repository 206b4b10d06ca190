/**
 * The Judge service: Quality / Faithfulness / Utility verdicts on a finished trajectory (spec §5).
 * Layers: a rule judge for tasks with gold facts, and an LLM judge over an OpenAI-compatible endpoint.
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory, Verdict } from "../domain/Trajectory.ts"

/** The judge could not give a verdict. */
export class JudgeError extends Schema.TaggedError<JudgeError>()("JudgeError", {
  message: Schema.String
}) {}

/**
 * A judge. Its default implementation (RuleJudge.layer) and the LLM judge (layers/model/JudgeLlm.ts) import this class, so
 * the default layer sits in its own module rather than on the class (here it would make an import cycle).
 */
export class Judge extends Context.Service<Judge, {
  readonly name: string
  readonly judge: (task: Task, trajectory: Trajectory) => Effect.Effect<Verdict, JudgeError>
}>()("paraagent/Judge") {}
