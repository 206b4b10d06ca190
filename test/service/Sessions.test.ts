import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Sessions from "../../src/service/Sessions.ts"
import * as SessionStore from "../../src/service/SessionStore.ts"
import * as TaskSource from "../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../src/toolenv/ToolLibrary.ts"

// The step path's traffic to the log: two replicas (two Sessions) over one store, each store call recorded by replica,
// so what a step costs in round trips and what it answers when another replica moved the log are both visible.

const world = Layer.mergeAll(Retriever.layerBm25, TaskSource.layerGenerated({ holdoutTools: true })).pipe(
  Layer.provideMerge(ToolLibrary.layerGenerated({ seed: 7, size: 2000 }))
)

interface Replicas {
  readonly a: Sessions.Sessions["Service"]
  readonly b: Sessions.Sessions["Service"]
  /** Every store call, as `replica:operation`. */
  readonly calls: Array<string>
  /** Makes replica A's next append fail after the turn is stored (a connection lost before the answer came back). */
  readonly failNextAppendOfA: () => void
}

const replicas = Effect.gen(function*() {
  const services = yield* Layer.build(world)
  const shared = Context.get(yield* Layer.build(SessionStore.layerMemory()), SessionStore.SessionStore)
  const calls: Array<string> = []
  let failA = false
  const recorded = (name: string): SessionStore.SessionStore["Service"] => {
    const log = (operation: string) => Effect.sync(() => void calls.push(`${name}:${operation}`))
    return SessionStore.SessionStore.of({
      ...shared,
      create: (s) => Effect.andThen(log("create"), shared.create(s)),
      get: (id) => Effect.andThen(log("get"), shared.get(id)),
      head: (id) => Effect.andThen(log("head"), shared.head(id)),
      turns: (id, inc, from) => Effect.andThen(log("turns"), shared.turns(id, inc, from)),
      append: (id, inc, index, turn) =>
        Effect.andThen(log("append"), Effect.flatMap(shared.append(id, inc, index, turn), (outcome) => {
          if (name !== "a" || !failA) return Effect.succeed(outcome)
          failA = false
          return Effect.fail(new SessionStore.SessionStoreError({ operation: "append", session: id, message: "connection lost before the answer" }))
        })),
      close: (id, inc) => Effect.andThen(log("close"), shared.close(id, inc))
    })
  }
  const make = (name: string) =>
    Sessions.make(Sessions.defaultConfig("generated:seed=7:size=2000")).pipe(
      Effect.provideService(SessionStore.SessionStore, recorded(name)),
      Effect.provide(services)
    )
  return { a: yield* make("a"), b: yield* make("b"), calls, failNextAppendOfA: () => void (failA = true) } satisfies Replicas
})

const owner = "owner-digest"
const search = (query: string) => ({ turn: { searches: [{ slot: "s1", query }], calls: [] } })

/** The calls made while `effect` ran. */
const callsOf = <A, E>(r: Replicas, effect: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const from = r.calls.length
    const exit = yield* Effect.exit(effect)
    return { exit, calls: r.calls.slice(from) }
  })

describe("Sessions.step and the log", () => {
  it.effect("a warm step is one store round trip (the append, no head read); a cold replica reads the head and the log", () =>
    Effect.gen(function*() {
      const r = yield* replicas
      const { sessionId: id } = yield* r.a.create({ seed: 3 }, owner)
      for (const round of [0, 1]) {
        const { exit, calls } = yield* callsOf(r, r.a.step(id, owner, { ...search(`weather ${round}`), round }))
        assert.isTrue(Exit.isSuccess(exit))
        assert.deepStrictEqual(calls, ["a:append"])
      }
      const cold = yield* callsOf(r, r.b.step(id, owner, { ...search("exchange rate"), round: 2 }))
      assert.isTrue(Exit.isSuccess(cold.exit))
      assert.deepStrictEqual(cold.calls, ["b:head", "b:head", "b:get", "b:turns", "b:append"])
    }).pipe(Effect.scoped), 120_000)

  it.effect("a warm replica whose copy is behind the log: its append is refused, it answers from the log at the log's head, then reads the head first", () =>
    Effect.gen(function*() {
      const r = yield* replicas
      const { sessionId: id } = yield* r.a.create({ seed: 4 }, owner)
      yield* r.a.step(id, owner, search("weather"))
      yield* r.b.step(id, owner, search("exchange rate"))
      // A still holds round 1 as next; the log is at 2. No `round`: the step goes to the log's head
      const behind = yield* callsOf(r, r.a.step(id, owner, search("news")))
      assert.isTrue(Exit.isSuccess(behind.exit))
      assert.strictEqual(Exit.isSuccess(behind.exit) ? behind.exit.value.step.index : -1, 2)
      assert.deepStrictEqual(behind.calls, ["a:append", "a:head", "a:turns", "a:append"])
      // contended from now on: the head first, then the append
      const next = yield* callsOf(r, r.a.step(id, owner, { ...search("stocks"), round: 3 }))
      assert.isTrue(Exit.isSuccess(next.exit))
      assert.deepStrictEqual(next.calls, ["a:head", "a:append"])
      // both replicas tell the same episode: the turns of the log, in order
      const fromA = yield* r.a.trajectory(id, owner)
      const fromB = yield* r.b.trajectory(id, owner)
      assert.deepStrictEqual(fromA.trajectory.steps.map((s) => s.searches.map((q) => q.query)), [["weather"], ["exchange rate"], ["news"], ["stocks"]])
      assert.deepStrictEqual(fromB.trajectory.steps.map((s) => s.searches.map((q) => q.query)), [["weather"], ["exchange rate"], ["news"], ["stocks"]])
    }).pipe(Effect.scoped), 120_000)

  it.effect("the same round to two warm replicas at once: one 200 and one 409 naming the log's round count", () =>
    Effect.gen(function*() {
      const r = yield* replicas
      const { sessionId: id } = yield* r.a.create({ seed: 5 }, owner)
      yield* r.a.step(id, owner, { ...search("weather"), round: 0 })
      yield* r.b.info(id, owner)
      const both = yield* Effect.all([r.a, r.b].map((s) =>
        s.step(id, owner, { ...search("exchange rate"), round: 1 }).pipe(
          Effect.match({ onSuccess: () => "200", onFailure: (e) => `${e._tag} ${(e as { rounds?: number }).rounds}` })
        )), { concurrency: "unbounded" })
      assert.deepStrictEqual(both.sort(), ["200", "StepConflict 2"])
    }).pipe(Effect.scoped), 120_000)

  it.effect("closed on B, a warm step on A is a 404 and stores nothing (the tombstone wins over the cache)", () =>
    Effect.gen(function*() {
      const r = yield* replicas
      const { sessionId: id } = yield* r.a.create({ seed: 6 }, owner)
      yield* r.a.step(id, owner, search("weather"))
      assert.isTrue(yield* r.b.close(id, owner))
      const stepped = yield* Effect.flip(r.a.step(id, owner, search("exchange rate")))
      assert.strictEqual(stepped._tag, "NotFound")
      const again = yield* r.b.create({ seed: 6 }, owner, id)
      assert.strictEqual(again.rounds, 0)
      // A's cached copy is of the old incarnation: its append is refused, and it steps the new episode from round 0
      const fresh = yield* r.a.step(id, owner, { ...search("news"), round: 0 })
      assert.strictEqual(fresh.step.index, 0)
    }).pipe(Effect.scoped), 120_000)

  it.effect("a store failure after the turn was stored: the retried round is the 409 that says it was taken, and the next round steps from the log", () =>
    Effect.gen(function*() {
      const r = yield* replicas
      const { sessionId: id } = yield* r.a.create({ seed: 7 }, owner)
      yield* r.a.step(id, owner, { ...search("weather"), round: 0 })
      r.failNextAppendOfA()
      const failed = yield* Effect.flip(r.a.step(id, owner, { ...search("exchange rate"), round: 1 }))
      assert.strictEqual(failed._tag, "StoreFailure")
      const retried = yield* Effect.flip(r.a.step(id, owner, { ...search("exchange rate"), round: 1 }))
      assert.deepStrictEqual([retried._tag, (retried as { rounds?: number }).rounds], ["StepConflict", 2])
      const next = yield* r.a.step(id, owner, { ...search("news"), round: 2 })
      assert.strictEqual(next.step.index, 2)
      const { trajectory } = yield* r.b.trajectory(id, owner)
      assert.deepStrictEqual(trajectory.steps.map((s) => s.searches.map((q) => q.query)), [["weather"], ["exchange rate"], ["news"]])
    }).pipe(Effect.scoped), 120_000)
})
