import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import type { Task } from "../../src/domain/Task.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import { Policy } from "../../src/agent/Policy.ts"
import type { PolicyContext } from "../../src/agent/Policy.ts"
import * as StudentOracle from "../../src/agent/StudentOracle.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { appLayer, contextOf, lookup, rollouts, sampleTasks, world } from "../support/LearnedWorld.ts"

/** A policy layer that records every context it is given, around the oracle or the learned policy. */
const capturing = <R>(inner: Layer.Layer<Policy, never, R>, seen: Array<PolicyContext>) =>
  Layer.effect(
    Policy,
    Effect.gen(function*() {
      const policy = yield* Policy
      return Policy.of({ ...policy, act: (context) => Effect.andThen(Effect.sync(() => seen.push(context)), policy.act(context)) })
    }).pipe(Effect.provide(inner))
  )

/** The oracle over its own BM25 index of the same library (the runtime's retriever is built the same way: same hits). */
const oracleLayer = (seen: Array<PolicyContext>) =>
  capturing(StudentOracle.layer(StudentOracle.worldEquivalence(world().ops)).pipe(Layer.provideMerge(Retriever.layerBm25)), seen)

describe("StudentOracle", () => {
  it.effect("is privileged (the runtime gives it the task) and the learned policy is not (it gets none)", () =>
    Effect.gen(function*() {
      const oracleContexts: Array<PolicyContext> = []
      const learnedContexts: Array<PolicyContext> = []
      const tasks = yield* sampleTasks("validation", 6).pipe(Effect.provide(appLayer(oracleLayer(oracleContexts))))
      const oracle = yield* rollouts(tasks, 11).pipe(Effect.provide(appLayer(oracleLayer(oracleContexts))))
      const learned = LearnedPolicy.layerFixed(LearnedPolicy.initial(3))
      yield* rollouts(tasks, 11).pipe(Effect.provide(appLayer(capturing(learned, learnedContexts))))
      assert.isTrue(oracle.every((t) => t.stop !== "policy_error"), "the oracle acted every round: it was given the task")
      assert.isTrue(oracleContexts.length > 0 && oracleContexts.every((c) => c.task !== undefined))
      assert.isTrue(learnedContexts.length > 0 && learnedContexts.every((c) => !("task" in c)))
      assert.strictEqual(LearnedPolicy.make(yield* Ref.make(LearnedPolicy.initial(1))).privileged, false)
    }), 120_000)

  it.effect("chooses only among the learned policy's candidates: each of its turns is a choice of that round's space, projected whole", () =>
    Effect.gen(function*() {
      const seen: Array<PolicyContext> = []
      const layer = appLayer(oracleLayer(seen))
      const tasks = yield* sampleTasks("validation", 9).pipe(Effect.provide(layer))
      const trajectories = yield* rollouts(tasks, 5).pipe(Effect.provide(layer))
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      let steps = 0
      for (const t of trajectories) {
        const task = byId.get(t.taskId) as Task
        t.steps.forEach((step, i) => {
          const space = ActionSpace.build(contextOf(t, i, task))
          const projection = ActionSpace.project(space, step.turn!)
          assert.deepStrictEqual(projection.dropped, [], `step ${i} of ${t.id}: ${step.raw}`)
          assert.isDefined(projection.choice)
          steps++
        })
      }
      assert.isAbove(steps, 9)
      // and it does reach answers the judge passes on some of them (the ceiling is not empty)
      const scored = yield* Effect.forEach(trajectories, (t) => Scoring.scoreGroup(byId.get(t.taskId) as Task, [t])).pipe(Effect.provide(layer))
      assert.isAbove(scored.flat().filter((t) => t.verdict?.quality === "YES" && t.verdict.faithfulness === "YES").length, 0)
    }), 120_000)

  it.effect("looks ahead to what the runtime returns: a query asked again shows its next page, and the oracle asks for one when only a later page serves", () =>
    Effect.gen(function*() {
      const seen: Array<PolicyContext> = []
      const layer = appLayer(oracleLayer(seen))
      const tasks = yield* sampleTasks("validation", 30).pipe(Effect.provide(layer))
      const trajectories = yield* rollouts(tasks, 3).pipe(Effect.provide(layer))
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      let paged = 0
      for (const t of trajectories) {
        for (const [i, step] of t.steps.entries()) {
          if (step.searches.length === 0) continue
          const context = contextOf(t, i, byId.get(t.taskId) as Task)
          const lookahead = yield* StudentOracle.lookaheadOf(ActionSpace.build(context), context.history).pipe(Effect.provide(Retriever.layerBm25), Effect.provide(layer))
          for (const search of step.searches) {
            // the look-ahead's next page is exactly what the runtime's search returned
            assert.deepStrictEqual(lookahead.get(search.query)?.next, search.hits.map((h) => h.tool as string), `${t.id} step ${i}: ${search.query}`)
            if (search.page !== undefined) paged++
          }
        }
      }
      assert.isAbove(paged, 0, "some gold tool was only on a later page, and the oracle asked for it")
    }), 180_000)

  it.effect("searches `every`: every query that brings a tool serving an open gold call, a superset of the greedy cover (the default)", () =>
    Effect.gen(function*() {
      const layer = appLayer(LearnedPolicy.layerFixed(LearnedPolicy.initial(5)))
      const tasks = yield* sampleTasks("validation", 12).pipe(Effect.provide(layer))
      const student = yield* rollouts(tasks, 7).pipe(Effect.provide(layer))
      const byId = new Map(tasks.map((t) => [t.id as string, t]))
      const cover: StudentOracle.OracleWorld = { lookup, equivalent: StudentOracle.worldEquivalence(world().ops) }
      const every: StudentOracle.OracleWorld = { ...cover, searches: "every" }
      let searched = 0
      let wider = 0
      for (const t of student) {
        for (let i = 0; i < t.steps.length; i++) {
          const task = byId.get(t.taskId) as Task
          const context = contextOf(t, i, task)
          const space = ActionSpace.build(context)
          const lookahead = yield* StudentOracle.lookaheadOf(space, context.history).pipe(Effect.provide(Retriever.layerBm25), Effect.provide(layer))
          const a = StudentOracle.choose(space, context, task, lookahead, cover)
          const b = StudentOracle.choose(space, context, task, lookahead, every)
          // the rules differ only in a search turn's queries: the same kind, and the calls and answers unchanged
          assert.strictEqual(a.reason, b.reason)
          if (a.reason !== "search") {
            assert.deepStrictEqual(a.choice, b.choice)
            continue
          }
          searched++
          assert.includeMembers([...b.choice.selected], [...a.choice.selected])
          if (b.choice.selected.length > a.choice.selected.length) wider++
          // each query `every` adds is one the acceptable set allows: it brings a needed tool
          const allowed = new Set(a.acceptable.alternatives.flatMap((alt) => alt.allowed))
          for (const r of b.choice.selected) assert.isTrue(allowed.has(r), `${t.id} step ${i}: row ${r}`)
        }
      }
      assert.isAbove(searched, 0)
      assert.isAbove(wider, 0, "some state has two queries that find the same needed tool")
    }), 180_000)

  it("refuses to act without the task, and matches facts by value and entity attribute", () => {
    const fact: ActionSpace.FactCandidate = { callId: "c1" as never, path: ["data", 0, "name"], label: "name", value: "Ada" }
    assert.isTrue(StudentOracle.factMatches(fact, undefined, { key: "k", value: "Ada", call: "c1" as never, path: "results.0.name" }, undefined))
    assert.isFalse(StudentOracle.factMatches(fact, undefined, { key: "k", value: "Bob", call: "c1" as never, path: "results.0.name" }, undefined))
  })
})
