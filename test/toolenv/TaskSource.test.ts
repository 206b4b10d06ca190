import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { TaskSource } from "../../src/toolenv/TaskSource.ts"
import * as TaskSourceModule from "../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import { GeneratedWorld } from "../../src/toolenv/world/World.ts"

const world = { seed: 7, size: 2000 }

describe("TaskSource.layerGenerated", () => {
  it.live("a repeated draw is the kept one (the same frozen list), equal to a fresh draw; other options draw anew", () =>
    Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(TaskSourceModule.layerGenerated({ holdoutTools: true }).pipe(Layer.provideMerge(ToolLibrary.layerGenerated(world))))
      const source = Context.get(context, TaskSource)
      const fresh = Tasks.make(Context.get(context, GeneratedWorld), { holdoutTools: true })
      const options = { split: "train" as const, count: 12, levels: ["I1" as const, "I3" as const], seed: 5 }
      const first = yield* source.sample(options)
      assert.strictEqual(yield* source.sample({ ...options }), first)
      assert.isTrue(Object.isFrozen(first))
      assert.deepStrictEqual(first, fresh.take(options))
      const other = yield* source.sample({ ...options, seed: 6 })
      assert.notStrictEqual(other, first)
      assert.deepStrictEqual(other, fresh.take({ ...options, seed: 6 }))
      // past the kept draws the oldest is drawn again, with the same tasks
      for (let seed = 10; seed < 10 + TaskSourceModule.recentDraws; seed++) yield* source.sample({ ...options, seed })
      const again = yield* source.sample(options)
      assert.notStrictEqual(again, first)
      assert.deepStrictEqual(again, first)
    })))
})
