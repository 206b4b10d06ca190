import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import * as TaskSourceWorker from "../../../layers/server/TaskSourceWorker.ts"
import { TaskSource } from "../../../src/toolenv/TaskSource.ts"
import * as TaskSourceModule from "../../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../../src/toolenv/ToolLibrary.ts"

const world = { seed: 7, size: 2000 }

describe("TaskSourceWorker: the server's task draws on a worker thread", () => {
  it.live("draws the tasks the in-thread source draws (a draw's task at an index alone too); a long draw leaves the server's thread free and small draws beside it", () =>
    Effect.scoped(Effect.gen(function*() {
      const inThread = Context.get(yield* Layer.build(TaskSourceModule.layerGenerated({ holdoutTools: true }).pipe(Layer.provide(ToolLibrary.layerGenerated(world)))), TaskSource)
      const worker = Context.get(yield* Layer.build(TaskSourceWorker.layer({ world, holdoutTools: true, idleMs: 300 })), TaskSource)
      for (const options of [{ split: "test" as const, count: 4 }, { split: "train" as const, count: 3, levels: ["I3" as const], seed: 99 }]) {
        assert.deepStrictEqual(yield* worker.sample(options), yield* inThread.sample(options))
      }
      for (const position of [{ split: "test" as const, level: "I2" as const, index: 3, seed: 7 }, { split: "train" as const, level: "I1" as const, index: 9_999, seed: 123 }]) {
        assert.deepStrictEqual(yield* worker.drawAt!(position), yield* inThread.drawAt!(position))
      }
      // the task at an index of a draw, handed over alone (the draw stays on the worker, kept there for the next index)
      const drawOptions = { split: "train" as const, count: 40, levels: ["I2" as const], seed: 31 }
      const whole = yield* inThread.sample(drawOptions)
      for (const index of [39, 0, 17]) assert.deepStrictEqual(yield* worker.sampleAt!(drawOptions, index), whole[index])
      assert.isUndefined(yield* worker.sampleAt!(drawOptions, 40))
      // a long draw in flight: a timer on this thread fires and a small draw is answered before it ends
      const long = yield* Effect.forkChild(worker.sample({ split: "train", count: 300, seed: 4242 }))
      const ticked = yield* Effect.promise(() => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 1)))
      assert.isTrue(ticked)
      const small = yield* worker.sample({ split: "test", count: 2, seed: 5 })
      assert.strictEqual(small.length, 2)
      assert.isUndefined(long.pollUnsafe(), "the small draw was answered while the long one ran")
      assert.strictEqual((yield* Fiber.join(long)).length, 300)
      // idle past idleMs the worker exits; the next draw starts another, with the same answers
      yield* Effect.sleep("600 millis")
      assert.deepStrictEqual(yield* worker.sample({ split: "test", count: 3 }), yield* inThread.sample({ split: "test", count: 3 }))
    })))
})
