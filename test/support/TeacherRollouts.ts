/**
 * Real teacher trajectories for judge tests: the scripted teacher (ParaAct) through the rollout runtime on a small
 * generated world, built once per process and cached.
 */
import { Effect, Layer } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as SimulatorModule from "../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import * as World from "../../src/toolenv/world/World.ts"

/** A task and the teacher's trajectory on it. */
export interface TeacherRollout {
  readonly task: Task
  readonly trajectory: Trajectory
}

let world: World.World | undefined
const cache = new Map<string, ReadonlyArray<TeacherRollout>>()

/** `count` held-out tasks of the seed-7 8k-tool world, each rolled out once by the scripted teacher under ParaAct
 * (default mistake and fault rates unless given). */
export const teacherRollouts = (options: { readonly count: number; readonly mistakeRate?: number; readonly faultRate?: number }) =>
  Effect.gen(function*() {
    const key = JSON.stringify(options)
    const hit = cache.get(key)
    if (hit !== undefined) return hit
    const w = (world ??= World.make({ seed: 7, size: 8_000 }))
    const tasks = Tasks.make(w).take({ split: "test", count: options.count })
    const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, w.library), Layer.succeed(World.GeneratedWorld, w))
    const services = Layer.mergeAll(
      Teacher.layer(options.mistakeRate === undefined ? {} : { mistakeRate: options.mistakeRate }),
      Retriever.layerBm25,
      SimulatorModule.layer(options.faultRate === undefined ? {} : { faultRate: options.faultRate })
    ).pipe(Layer.provideMerge(worldLayer))
    const rollout = yield* Effect.provide(Effect.gen(function*() {
      return yield* Rollout.Rollout
    }), Rollout.layer().pipe(Layer.provide(services)))
    const trajectories = yield* rollout.runAll(tasks.map((task, i) => ({ task, options: { paradigm: "ParaAct" as const, seed: 11 + i } })), { concurrency: 4 })
    const out = tasks.map((task, i) => ({ task, trajectory: trajectories[i]! }))
    cache.set(key, out)
    return out
  })
