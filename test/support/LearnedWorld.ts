/**
 * A small generated world for the learned policy's tests: App.layer's composition (seed-7 world of 3,000 tools,
 * simulator with its default faults, held-out test providers, BM25, the rule judge, the rollout runtime) with the
 * policy swappable, over one world built once per process (building it is most of a layer's cost).
 */
import { Effect, Layer } from "effect"
import type { ConfigError } from "../../src/domain/Errors.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import type { Policy } from "../../src/agent/Policy.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import * as TaskSource from "../../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as World from "../../src/toolenv/world/World.ts"

/** The world's size and seed (App.layer's default seed). */
export const worldOptions = { seed: 7, size: 3_000 } as const

let cached: World.World | undefined

/** The world, built on first use. */
export const world = (): World.World => (cached ??= World.make(worldOptions))

/** A tool of the world by name (what `LearnedPolicy.contextAt` looks tools up with). */
export const lookup = (name: string): ToolSpec | undefined => world().library.get(name)

/** App.layer's services with the given policy, over the shared world. */
export const appLayer = (policy: Layer.Layer<Policy, ConfigError, ToolLibrary>, rollout: Partial<Rollout.RolloutConfig> = {}) => {
  const w = world()
  const env = Layer.mergeAll(Layer.succeed(ToolLibrary, w.library), Layer.succeed(World.GeneratedWorld, w))
  const parts = Layer.mergeAll(
    Simulator.layer({}),
    TaskSource.layerGenerated({ holdoutTools: true }),
    Retriever.layerBm25,
    policy,
    RuleJudge.layer
  ).pipe(Layer.provideMerge(env))
  return Rollout.layer(rollout).pipe(Layer.provideMerge(parts))
}

/** `count` tasks of a split, drawn round-robin over the three levels. */
export const sampleTasks = (split: Task["split"], count: number) =>
  Effect.gen(function*() {
    const source = yield* TaskSource.TaskSource
    return yield* source.sample({ split, count })
  })

/** One ParaAct rollout per task, task i with seed `seed + i`, four at a time. */
export const rollouts = (tasks: ReadonlyArray<Task>, seed: number) =>
  Effect.gen(function*() {
    const rollout = yield* Rollout.Rollout
    return yield* rollout.runAll(tasks.map((task, i) => ({ task, options: { paradigm: "ParaAct" as const, seed: seed + i } })), { concurrency: 4 })
  })

/** The context the runtime gave the policy before step `index` of a trajectory, rebuilt (12 rounds, the default). */
export const contextOf = (trajectory: Trajectory, index: number, task: Task): PolicyContext =>
  LearnedPolicy.contextAt(trajectory, index, task.request, Rollout.defaultConfig.maxRounds, lookup)
