import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import type { ToolCall } from "../../../src/domain/Call.ts"
import type { Json } from "../../../src/domain/Json.ts"
import * as Refs from "../../../src/protocol/Refs.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../../src/toolenv/world/Tasks.ts"
import * as World from "../../../src/toolenv/world/World.ts"

/**
 * A crashing tool is recorded as `tool_defect` (a fault of the machinery, never charged to the agent): the generated
 * world must have none. Every gold call of thousands of tasks runs through the simulator service, with faults on.
 */
describe("the generated world's simulator", () => {
  it.effect("produces no defect over 10,000+ gold calls (faults on, refs resolved as an agent would)", () =>
    Effect.gen(function*() {
      const world = World.make({ seed: 7, size: 12_000 })
      const tasks = Tasks.make(world).take({ split: "train", count: 3_300 })
      const layer = Simulator.layer({ faultRate: 0.05 }).pipe(
        Layer.provide(Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world)))
      )
      const simulator = yield* Effect.provide(Simulator.Simulator, layer)
      let calls = 0
      let goldCalls = 0
      let defects = 0
      let ok = 0
      for (const task of tasks) {
        const episode = yield* simulator.open({ taskId: task.id, seed: 11, request: task.request })
        const outputs = new Map<string, Json>()
        for (const g of task.gold) {
          goldCalls++
          const call: ToolCall = { id: g.id, tool: g.tool, arguments: Refs.resolveRefs(g.arguments, (id) => outputs.get(id)).arguments }
          // an agent retries transient faults: up to three attempts
          for (let attempt = 0; attempt < 3; attempt++) {
            const exit = yield* Effect.exit(episode.execute(call))
            calls++
            if (Exit.isFailure(exit)) {
              defects++
              break
            }
            const outcome = exit.value.outcome
            if (outcome._tag === "ok") {
              ok++
              outputs.set(g.id, outcome.payload)
              break
            }
            if (outcome.error.kind === "tool_defect") defects++
          }
        }
      }
      assert.isAtLeast(goldCalls, 10_000)
      assert.strictEqual(defects, 0)
      // and the gold calls mostly succeed, so the count is not of calls that never reached a tool
      assert.isAbove(ok / calls, 0.9)
    }))
})
