/**
 * Scored teacher rollouts on a small generated world, with every PolicyContext the runtime gave the policy recorded:
 * for tests that check a context rebuilt from a trajectory (and what is built from it) against the real one.
 */
import { Effect, Layer } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import type { Paradigm, Trajectory } from "../../src/domain/Trajectory.ts"
import { Policy, type PolicyContext } from "../../src/agent/Policy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import * as TaskSource from "../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../src/toolenv/ToolLibrary.ts"

/** What to roll out. */
export interface RecordOptions {
  readonly worldSize: number
  readonly tasks: number
  readonly paradigms: ReadonlyArray<Paradigm>
  readonly group: number
  readonly maxRounds: number
  readonly mistakeRate: number
}

/** The rollouts, scored per (task, paradigm) group, and the contexts the policy was given. */
export interface Recorded {
  readonly tasks: ReadonlyArray<Task>
  /** Every trajectory, judged, rewarded and with its advantages (`Scoring.scoreGroup` per task and paradigm). */
  readonly trajectories: ReadonlyArray<Trajectory>
  /** The same rollouts before scoring. */
  readonly unscored: ReadonlyArray<Trajectory>
  /** The context of each round, by {@link contextKey}. */
  readonly contexts: ReadonlyMap<string, PolicyContext>
  readonly lookup: (name: string) => ToolSpec | undefined
  readonly estimator: string
}

/** The key of a round's context: paradigm, rollout seed, round, request. */
export const contextKey = (paradigm: Paradigm, seed: number, round: number, request: string): string =>
  JSON.stringify([paradigm, seed, round, request])

/** Rolls the scripted teacher out on held-out tasks of a generated world (seed 3) and scores each group. */
export const recordedRollouts = (options: RecordOptions) => {
  const contexts = new Map<string, PolicyContext>()
  // the teacher, with every context it is given kept (the privileged task included, as the runtime passed it)
  const recording = Layer.effect(Policy, Effect.gen(function*() {
    const teacher = yield* Policy
    return Policy.of({
      ...teacher,
      act: (context) =>
        Effect.suspend(() => {
          contexts.set(contextKey(context.paradigm, context.seed, context.round, context.request), context)
          return teacher.act(context)
        })
    })
  })).pipe(Layer.provide(Teacher.layer({ mistakeRate: options.mistakeRate })))
  const layer = Rollout.layer({ maxRounds: options.maxRounds }).pipe(Layer.provideMerge(Layer.mergeAll(
    Simulator.layer({ faultRate: 0.05 }),
    TaskSource.layerGenerated({ seed: 5 }),
    Retriever.layerBm25,
    recording,
    RuleJudge.layer
  ).pipe(Layer.provideMerge(ToolLibrary.layerGenerated({ seed: 3, size: options.worldSize })))))
  return Effect.gen(function*() {
    const tasks = yield* (yield* TaskSource.TaskSource).sample({ split: "test", count: options.tasks })
    const rollout = yield* Rollout.Rollout
    const library = yield* ToolLibrary.ToolLibrary
    const estimator = Scoring.defaultOptions.estimator
    const groups = yield* Effect.forEach(tasks.flatMap((task, t) => options.paradigms.map((paradigm) => ({ task, t, paradigm }))), ({ task, t, paradigm }) =>
      Effect.gen(function*() {
        const group = yield* rollout.runGroup(task, { paradigm, seed: 1_000 * (t + 1), size: options.group })
        const scored = yield* Scoring.scoreGroup(task, group)
        return { group, scored }
      }), { concurrency: 2 })
    const recorded: Recorded = {
      tasks,
      trajectories: groups.flatMap((g) => g.scored),
      unscored: groups.flatMap((g) => g.group),
      contexts,
      lookup: (name) => library.get(name),
      estimator
    }
    return recorded
  }).pipe(Effect.provide(layer))
}
