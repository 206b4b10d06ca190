/**
 * Judge-filtered teacher demonstrations for an export, the way the pipeline's `demonstrations` stage makes them: one
 * ParaAct rollout of the teacher per task, judged and scored, then filtered into SFT lines (Pass@1's rule: Quality,
 * Faithfulness and Utility YES).
 */
import { Effect, Result } from "effect"
import type { Task } from "../domain/Task.ts"
import type { Trajectory } from "../domain/Trajectory.ts"
import * as Scoring from "../eval/Scoring.ts"
import { hashParts } from "../math/Random.ts"
import * as Reward from "../math/Reward.ts"
import { Rollout } from "../runtime/Rollout.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"
import * as Exports from "./Exports.ts"

/** How the demonstrations are made and rendered. */
export interface DemonstrationOptions {
  readonly mode: Exports.Mode
  /** Seed of the rollouts (each task's rollout seed is derived from it and the task id). */
  readonly seed: number
  /** T_max the rollouts ran with (the Rollout layer's; the system prompt states it). */
  readonly maxRounds: number
  readonly concurrency: number
}

/** The rollout seed of a task's demonstration (the pipeline's rule: a hash of the seed, "demo" and the task id). */
export const rolloutSeed = (seed: number, task: Task): number => hashParts(seed, "demo", task.id) & 0x3fffffff

/** What {@link make} returns: the kept lines, every rollout, and the ones left out with why. */
export interface Demonstrations {
  readonly lines: ReadonlyArray<Exports.DemonstrationLine>
  readonly trajectories: ReadonlyArray<Trajectory>
  readonly skipped: ReadonlyArray<Exports.Skipped>
}

/** One judged teacher rollout per task, filtered by {@link Exports.passed} into demonstration lines. */
export const make = Effect.fn("TeacherDemonstrations.make")(function*(tasks: ReadonlyArray<Task>, options: DemonstrationOptions) {
  const rollout = yield* Rollout
  const library = yield* ToolLibrary
  const trajectories = yield* Effect.forEach(tasks, (task) =>
    Effect.gen(function*() {
      const group = yield* rollout.runGroup(task, { paradigm: "ParaAct", seed: rolloutSeed(options.seed, task), size: 1 })
      const scored = yield* Scoring.scoreGroup(task, group, { reward: Reward.defaultRewardConfig, estimator: "grpo" })
      return scored[0] as Trajectory
    }), { concurrency: options.concurrency })
  const exported = Exports.demonstrations(trajectories, { mode: options.mode, tasks, lookup: library.get, maxRounds: options.maxRounds })
  if (Result.isFailure(exported)) return yield* exported.failure
  const result: Demonstrations = { lines: exported.success.lines, trajectories, skipped: exported.success.skipped }
  return result
})
