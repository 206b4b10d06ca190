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

/** Where a task sits in a generated stream: the parts of its id `gen-<seed>-<split>-<level>-<index>`. */
export interface TaskPosition {
  readonly split: Split
  readonly level: Level
  readonly index: number
  readonly seed: number
}

/** A source of tasks. */
export class TaskSource extends Context.Service<TaskSource, {
  /** `count` tasks; a long draw gives the thread back every few milliseconds (a server keeps answering meanwhile). */
  readonly sample: (options: SampleOptions) => Effect.Effect<ReadonlyArray<Task>>
  /**
   * The one task at a position of a generated stream (the task its id names), drawn alone — no earlier task is drawn;
   * undefined when that position holds no task. Sources without positions leave it out.
   */
  readonly drawAt?: (position: TaskPosition) => Effect.Effect<Task | undefined>
  /**
   * The task at `index` of `sample(options)` (undefined past its end), handed over alone: a source that draws on
   * another thread keeps the draw there (the server creating a session at `index` 9,999 would otherwise take 10,000
   * tasks onto its own thread). Sources without it are asked for the whole draw.
   */
  readonly sampleAt?: (options: SampleOptions, index: number) => Effect.Effect<Task | undefined>
}>()("paraagent/TaskSource") {
  /** The default layer: tasks sampled from the generated world (see {@link layerGenerated}). */
  static readonly layer = (options: Tasks.TaskOptions = {}): Layer.Layer<TaskSource, never, GeneratedWorld> => layerGenerated(options)
}

/** How long a draw holds the thread before it gives it back (a draw of one task takes about a millisecond). */
const sliceMs = 4

/** How many recent draws a generated source keeps (their task lists), so asking again is free. */
export const recentDraws = 4

/**
 * Tasks sampled from the generated world's G_dep (src/toolenv/world/Tasks.ts): I1 / I2 / I3 with gold call DAGs and gold
 * facts, deterministic from the seed; `holdoutTools` makes test tasks use providers no training task uses. A draw of
 * many tasks runs in slices of a few milliseconds with a yield between them, so the fibers beside it (a server's other
 * requests) keep running; the tasks are those of `Tasks.take`. The last {@link recentDraws} draws are kept (frozen:
 * whoever asks again shares them).
 */
export const layerGenerated = (options: Tasks.TaskOptions = {}): Layer.Layer<TaskSource, never, GeneratedWorld> =>
  Layer.effect(TaskSource, Effect.gen(function*() {
    const world = yield* GeneratedWorld
    const generator = Tasks.make(world, options)
    // a draw is a pure function of its options: the pipeline asks for the same training and test tasks once per seed
    const recent = new Map<string, ReadonlyArray<Task>>()
    return TaskSource.of({
      sample: Effect.fn("TaskSource.sample")(function*(o: SampleOptions) {
        const key = JSON.stringify([o.split, o.count, o.levels ?? null, o.seed ?? null])
        const known = recent.get(key)
        if (known !== undefined) return known
        const steps = generator.takeStepwise(o)
        let sliceStart = performance.now()
        for (;;) {
          const next = steps.next()
          if (next.done === true) {
            const tasks = Object.freeze(next.value)
            if (recent.size >= recentDraws) recent.delete(recent.keys().next().value as string)
            recent.set(key, tasks)
            return tasks
          }
          if (performance.now() - sliceStart >= sliceMs) {
            yield* Effect.yieldNow
            sliceStart = performance.now()
          }
        }
      }),
      drawAt: ({ split, level, index, seed }) => Effect.sync(() => generator.draw(split, level, index, seed))
    })
  }))
