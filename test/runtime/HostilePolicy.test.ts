import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { Trajectory } from "../../src/domain/Trajectory.ts"
import { Policy } from "../../src/agent/Policy.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import { libraryLayer, makeLog, retrieverLayer, simulatorLayer, task } from "../support/RolloutKit.ts"

/** A policy that throws is guarded like calls and searches: its rollout ends `policy_error`, the others go on. */
const names = ["alpha"]
const turns = [`<search>[{"slot":"s1","query":"alpha"}]</search>`, `<call>[{"id":"c1","name":"alpha","arguments":{"q":"x"}}]</call>`, "<answer>done</answer>"]

const hostile = Layer.succeed(
  Policy,
  Policy.of({
    name: "hostile",
    privileged: false,
    act: (context) => {
      // seed 2 throws outside any Effect on its second round; seed 3 dies inside the Effect on its third
      if (context.seed === 2 && context.round === 1) throw new Error("policy bug")
      return Effect.suspend(() => {
        if (context.seed === 3 && context.round === 2) return Effect.die(new TypeError("cannot read properties of undefined"))
        const text = turns[Math.min(context.round, turns.length - 1)] ?? ""
        return Effect.succeed({ text, usage: { promptTokens: 1, completionTokens: 1 } })
      })
    }
  })
)

describe("a policy that throws", () => {
  it.effect("ends only its own rollout with policy_error, keeping its rounds; every other trajectory is written", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const layer = Rollout.layer({ faults: false }).pipe(
        Layer.provide(Layer.mergeAll(libraryLayer(names), retrieverLayer(names), hostile, simulatorLayer({}, log)))
      )
      const rollout = yield* Effect.provide(Rollout.Rollout, layer)
      const written: Array<number> = []
      const requests = [1, 2, 3, 4].map((seed) => ({ task, options: { paradigm: "ParaAct" as const, seed } }))
      const out = yield* rollout.runAll(requests, { concurrency: 4, onDone: (t) => Effect.sync(() => written.push(t.seed)) })
      assert.deepStrictEqual(out.map((t) => t.stop), ["answer", "policy_error", "policy_error", "answer"])
      assert.sameMembers(written, [1, 2, 3, 4])
      assert.strictEqual(out[1]?.steps.length, 1)
      assert.strictEqual(out[2]?.steps.length, 2)
      assert.include(out[1]?.error ?? "", "policy bug")
      assert.include(out[2]?.error ?? "", "cannot read properties of undefined")
      assert.notInclude(out[1]?.error ?? "", "    at ")
    }))

  it.effect("non-finite numbers from a policy are stored as typed issues, and the trajectory survives a JSON round trip", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const nanPolicy = Layer.succeed(
        Policy,
        Policy.of({
          name: "nan",
          privileged: false,
          act: (context) =>
            Effect.succeed({
              text: turns[Math.min(context.round, turns.length - 1)] ?? "",
              usage: { promptTokens: Number.NaN, completionTokens: Number.POSITIVE_INFINITY },
              logprob: Number.NEGATIVE_INFINITY
            })
        })
      )
      const layer = Rollout.layer({ faults: false }).pipe(
        Layer.provide(Layer.mergeAll(libraryLayer(names), retrieverLayer(names), nanPolicy, simulatorLayer({}, log)))
      )
      const rollout = yield* Effect.provide(Rollout.Rollout, layer)
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      assert.strictEqual(t.stop, "answer")
      assert.deepStrictEqual(t.steps[0]?.usage, { promptTokens: 0, completionTokens: 0 })
      assert.isUndefined(t.steps[0]?.logprob)
      assert.deepStrictEqual(t.steps[0]?.outputIssues, [
        "usage.promptTokens was NaN; recorded as 0",
        "usage.completionTokens was Infinity; recorded as 0",
        "logprob was -Infinity; dropped"
      ])
      const back = Schema.decodeUnknownSync(Schema.fromJsonString(Trajectory))(JSON.stringify(t))
      assert.deepStrictEqual(back, t)
      // and the schema refuses what JSON would have silently turned into null
      assert.throws(() => Schema.decodeUnknownSync(Trajectory)({ ...t, durationMs: Number.NaN }))
    }))

  it.effect("negative, fractional and absurd token counts from a policy are stored as 0 with an issue, never as given", () =>
    Effect.gen(function*() {
      const log = yield* makeLog()
      const absurd = Layer.succeed(
        Policy,
        Policy.of({
          name: "absurd",
          privileged: false,
          act: (context) =>
            Effect.succeed({
              text: turns[Math.min(context.round, turns.length - 1)] ?? "",
              usage: context.round === 0 ? { promptTokens: -5, completionTokens: 1e300 } : { promptTokens: 2.5, completionTokens: 7 }
            })
        })
      )
      const layer = Rollout.layer({ faults: false }).pipe(
        Layer.provide(Layer.mergeAll(libraryLayer(names), retrieverLayer(names), absurd, simulatorLayer({}, log)))
      )
      const rollout = yield* Effect.provide(Rollout.Rollout, layer)
      const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 1 })
      assert.deepStrictEqual(t.steps[0]?.usage, { promptTokens: 0, completionTokens: 0 })
      assert.deepStrictEqual(t.steps[0]?.outputIssues, ["usage.promptTokens was -5; recorded as 0", "usage.completionTokens was 1e+300; recorded as 0"])
      assert.deepStrictEqual(t.steps[1]?.usage, { promptTokens: 0, completionTokens: 7 })
      assert.deepStrictEqual(t.steps[1]?.outputIssues, ["usage.promptTokens was 2.5; recorded as 0"])
    }))
})
