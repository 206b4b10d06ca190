/**
 * The shipped trained policy as a Policy (`--policy paraagent`): models/ loads through onnxruntime, acts without the
 * gold task, records its decisions with the shipped version; a folder without a model is a ConfigError naming it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import * as PolicyLearned from "../../../layers/onnx/PolicyLearned.ts"
import * as PolicyScorerOnnx from "../../../layers/onnx/PolicyScorerOnnx.ts"
import * as LearnedPolicy from "../../../src/agent/LearnedPolicy.ts"
import { Policy } from "../../../src/agent/Policy.ts"
import { Rollout } from "../../../src/runtime/Rollout.ts"
import { TaskSource } from "../../../src/toolenv/TaskSource.ts"
import { appLayer } from "../../support/LearnedWorld.ts"

describe("PolicyLearned (the shipped model)", () => {
  it.effect("models/ holds a model of the action space's width, and it acts as a non-privileged policy recording decisions", () =>
    Effect.gen(function*() {
      const model = yield* PolicyScorerOnnx.loadModel(PolicyLearned.shippedDir)
      expect(model.params.shape).toStrictEqual(LearnedPolicy.shape)
      expect(model.metadata.provenance["command"]).toBe("npm start -- --ship models")
      const run = Effect.gen(function*() {
        const policy = yield* Policy
        expect(policy.privileged).toBe(false)
        const tasks = yield* (yield* TaskSource).sample({ split: "test", count: 3, seed: 2 })
        const rollout = yield* Rollout
        return yield* rollout.runAll(tasks.map((task) => ({ task, options: { paradigm: "ParaAct" as const, seed: 4 } })), { concurrency: 3 })
      })
      const trajectories = yield* run.pipe(Effect.provide(appLayer(Layer.orDie(PolicyLearned.layer()))))
      expect(trajectories).toHaveLength(3)
      for (const t of trajectories) {
        expect(t.policy).toBe("paraagent")
        expect(t.steps.length).toBeGreaterThan(0)
        for (const step of t.steps) {
          expect(step.decision?.version).toBe(model.metadata.provenance["version"])
          expect(Number.isFinite(step.logprob)).toBe(true)
        }
      }
    }))

  it.effect("a folder without a model is a ConfigError naming the folder", () =>
    Effect.gen(function*() {
      const dir = path.join(os.tmpdir(), "paraagent-no-model-here")
      const error = yield* Layer.build(PolicyLearned.layer(dir)).pipe(Effect.scoped, Effect.flip)
      expect(error._tag).toBe("ConfigError")
      expect(error.message).toContain(dir)
    }))
})
