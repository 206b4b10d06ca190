/**
 * The TaskSource service: tasks with gold call DAGs and gold facts, by split and level, deterministic from a seed.
 */
import { Context, Effect, Layer } from "effect"
import type { Level, Split, Task } from "../domain/Task.ts"
import * as Tasks from "./world/Tasks.ts"
import { GeneratedWorld } from "./world/World.ts"

/** Which tasks to draw. */
export interface SampleOptions {
  readonly split: Split
  readonly count: number
  /** Levels to draw from, round-robin (default all three). */
  readonly levels?: ReadonlyArray<Level>
  /** Seed of the draw (default the source's own seed). */
  readonly seed?: number
}

/** A source of tasks. */
export class TaskSource extends Context.Service<TaskSource, {
  readonly sample: (options: SampleOptions) => Effect.Effect<ReadonlyArray<Task>>
}>()("paraagent/TaskSource") {
  /** The default layer: tasks sampled from the generated world (see {@link layerGenerated}). */
  static readonly layer = (options: Tasks.TaskOptions = {}): Layer.Layer<TaskSource, never, GeneratedWorld> => layerGenerated(options)
}

/**
 * Tasks sampled from the generated world's G_dep (src/world/Tasks.ts): I1 / I2 / I3 with gold call DAGs and gold
 * facts, deterministic from the seed; `holdoutTools` makes test tasks use providers no training task uses.
 */
export const layerGenerated = (options: Tasks.TaskOptions = {}): Layer.Layer<TaskSource, never, GeneratedWorld> =>
  Layer.effect(TaskSource, Effect.gen(function*() {
    const world = yield* GeneratedWorld
    const generator = Tasks.make(world, options)
    return TaskSource.of({
      sample: Effect.fn("TaskSource.sample")(function*(o: SampleOptions) {
        return generator.take(o)
      })
    })
  }))
