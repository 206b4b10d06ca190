/**
 * The TaskSource service: tasks with gold call DAGs and gold facts, by split and level, deterministic from a seed.
 */
import { Context } from "effect"
import type { Effect } from "effect"
import type { Level, Split, Task } from "./domain/Task.ts"

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
}>()("paraagent/TaskSource") {}
