/**
 * Real inputs for the verl export tests: 9 training tasks of a 600-tool world and the scripted teacher's judged
 * demonstrations of them (native mode, T_max 8), built once per process.
 */
import { Effect, Layer } from "effect"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { Task } from "../../src/domain/Task.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import * as TaskSourceModule from "../../src/toolenv/TaskSource.ts"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../src/toolenv/ToolLibrary.ts"
import * as TeacherDemonstrations from "../../src/training/TeacherDemonstrations.ts"

// what App.layer composes for `npm run export`, without its ONNX and HTTP layers (seconds of imports per test file)
const services = Layer.mergeAll(
  Simulator.layer(),
  TaskSourceModule.layerGenerated({ holdoutTools: true }),
  Retriever.layerBm25,
  Teacher.layer({}),
  RuleJudge.layer
).pipe(Layer.provideMerge(ToolLibrary.layerGenerated({ seed: 7, size: 600 })))
const app = Rollout.layer({ maxRounds: 8 }).pipe(Layer.provideMerge(services))
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

