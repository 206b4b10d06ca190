import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Api from "../src/index.ts"

describe("public API", () => {
  it("exports every module as a namespace", () => {
    for (const name of ["Domain", "ParaAct", "Refs", "PlanDag", "History", "Controller", "Reward", "Advantage", "Rollout", "Teacher", "Scoring", "ComparisonJob", "TrajectoryFacts", "ImportReport", "Library", "RunConfig", "Cli", "ToolLibrary", "Simulator", "TaskSource", "Retriever", "Policy", "Judge", "Bm25"]) {
      assert.strictEqual(typeof (Api as Record<string, unknown>)[name], "object", name)
    }
  })

  it.effect("services with a default implementation carry it on their class", () =>
    Effect.gen(function*() {
      assert.strictEqual(Api.Retriever.Retriever.layer, Api.Retriever.Retriever.layerBm25)
      const library = yield* Effect.provide(Effect.gen(function*() {
        return yield* Api.ToolLibrary.ToolLibrary
      }), Api.ToolLibrary.ToolLibrary.layer({ seed: 3, size: 500 }))
      assert.strictEqual(library.tools.length, 500)
      const tasks = yield* Effect.provide(
        Effect.gen(function*() {
          return yield* (yield* Api.TaskSource.TaskSource).sample({ split: "test", count: 2 })
        }),
        Api.TaskSource.TaskSource.layer({ seed: 1 }).pipe(Layer.provide(Api.World.GeneratedWorld.layer({ seed: 3, size: 2_000 })))
      )
      assert.strictEqual(tasks.length, 2)
      for (const layer of [Api.Simulator.Simulator.layer(), Api.Rollout.Rollout.layer()]) assert.isTrue(Layer.isLayer(layer))
    }))

})
