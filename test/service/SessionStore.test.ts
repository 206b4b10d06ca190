import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { CallId, TaskId, ToolName } from "../../src/domain/Ids.ts"
import * as SessionStore from "../../src/service/SessionStore.ts"
import { sessionStoreContract } from "../support/SessionStoreContract.ts"

sessionStoreContract({
  name: "memory",
  newLog: () => ({ open: () => SessionStore.layerMemory(), dispose: () => {} }),
  shared: false
})

describe("SessionStore.layerMemory: bounded in bytes", () => {
  const spec = (request: string): SessionStore.SessionSpec => ({
    task: { id: "t" as TaskId, request, level: "I1", categories: [], gold: [], facts: [], split: "test", seed: 0, source: "posted" },
    paradigm: "ParaAct",
    seed: 0,
    policy: "remote",
    maxRounds: 12,
    topK: 5,
    faults: false,
    faultRate: 0
  })

  it.effect("past maxBytes the least recently used sessions are dropped; the one in use stays", () =>
    Effect.gen(function*() {
      const store = Context.get(yield* Layer.build(SessionStore.layerMemory({ maxBytes: 100_000 })), SessionStore.SessionStore)
      const big = "x".repeat(20_000)
      const made = []
      for (let i = 0; i < 4; i++) made.push((yield* store.create({ id: `s${i}`, world: "w", owner: "o", spec: spec(big) }))!)
      // s0 is used again: s1 becomes the least recently used
      assert.isDefined(yield* store.head("s0"))
      for (let i = 4; i < 6; i++) made.push((yield* store.create({ id: `s${i}`, world: "w", owner: "o", spec: spec(big) }))!)
      const alive = []
      for (let i = 0; i < 6; i++) if ((yield* store.head(`s${i}`)) !== undefined) alive.push(`s${i}`)
      assert.deepStrictEqual(alive, ["s0", "s3", "s4", "s5"])
      // turns count too: appending 40 KB to s5 pushes out the least recently used again
      assert.strictEqual(yield* store.append("s5", made[5]!.incarnation, 0, { text: big + big, usage: { promptTokens: 0, completionTokens: 0 } }), "appended")
      assert.isUndefined(yield* store.head("s0"))
      assert.isDefined(yield* store.head("s5"))
    }).pipe(Effect.scoped))

  it.effect("posted tasks past maxTaskBytes: the least recently used go; an owner's id cannot be taken by another", () =>
    Effect.gen(function*() {
      const store = Context.get(yield* Layer.build(SessionStore.layerMemory({ maxTaskBytes: 50_000 })), SessionStore.SessionStore)
      const task = (id: string) => ({
        id: id as TaskId,
        request: "y".repeat(20_000),
        level: "I1" as const,
        categories: [],
        gold: [{ id: "c1" as CallId, tool: "t" as ToolName, arguments: {}, deps: [] }],
        facts: [],
        split: "test" as const,
        seed: 0,
        source: "posted"
      })
      assert.isTrue(yield* store.putTask(task("p1"), "o1"))
      assert.isTrue(yield* store.putTask(task("p2"), "o1"))
      assert.isFalse(yield* store.putTask(task("p1"), "o2"))
      assert.isTrue(yield* store.putTask(task("p3"), "o1"))
      assert.isUndefined(yield* store.getTask("p1"))
      assert.isDefined(yield* store.getTask("p2"))
      assert.isDefined(yield* store.getTask("p3"))
    }).pipe(Effect.scoped))
})
