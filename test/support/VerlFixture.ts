/**
 * Real inputs for the verl export tests: 9 training tasks of a 600-tool world and the scripted teacher's judged
 * demonstrations of them (native mode, T_max 8), built once per process.
 */
import { Effect } from "effect"
import * as App from "../../layers/App.ts"
import type { Task } from "../../src/domain/Task.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import * as TeacherDemonstrations from "../../src/training/TeacherDemonstrations.ts"

const app = App.layer({ world: { seed: 7, size: 600 }, tasks: { holdoutTools: true }, policy: { kind: "teacher" }, rollout: { maxRounds: 8 } })
let cached: { readonly tasks: ReadonlyArray<Task>; readonly demos: TeacherDemonstrations.Demonstrations } | undefined
export const verlFixture = Effect.suspend(() =>
  cached !== undefined
    ? Effect.succeed(cached)
    : Effect.gen(function*() {
      const source = yield* TaskSource
      const tasks = yield* source.sample({ split: "train", count: 9, seed: 3 })
      const demos = yield* TeacherDemonstrations.make(tasks, { mode: "native", seed: 3, maxRounds: 8, concurrency: 4 })
      cached = { tasks, demos }
      return cached
    }).pipe(Effect.provide(app))
)

