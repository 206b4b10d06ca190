import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { layer, program } from "../../examples/custom-pipeline.ts"

describe("examples/custom-pipeline.ts", () => {
  it.effect("runs a custom policy + plain-BM25 retriever + even phase weights end to end", () =>
    Effect.gen(function*() {
      const results = yield* program
      assert.strictEqual(results.length, 3)
      assert.sameMembers(results.map((r) => r.task.level), ["I1", "I2", "I3"])
      for (const { scored } of results) {
        assert.strictEqual(scored.length, 2)
        for (const t of scored) {
          assert.strictEqual(t.policy, "greedy-example")
          assert.isAbove(t.steps.length, 0)
          assert.isDefined(t.answerReward)
          for (const step of t.steps) {
            assert.isDefined(step.reward)
            assert.isDefined(step.advantage)
          }
          // the changed weights are the ones applied: R_phase = 0.25·(L1 + L2 + L3 + L4)
          for (const phase of t.phases) {
            const r = phase.reward
            assert.isDefined(r)
            assert.closeTo(r!.rPhase, 0.25 * (r!.l1 + r!.l2 + r!.l3 + r!.l4), 1e-12)
          }
        }
      }
    }).pipe(Effect.provide(layer)))
})
