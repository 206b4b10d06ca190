/**
 * The trained embedded policy as a Policy layer: the shipped checkpoint (`models/paraagent-policy.onnx` + `.json`,
 * or any folder `saveModel` wrote) scored by onnxruntime-node, acting through `src/agent/LearnedPolicy.ts`.
 */
import { Effect, Layer, Ref } from "effect"
import * as path from "node:path"
import { ConfigError } from "../../src/domain/Errors.ts"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as LearnedPolicy from "../../src/agent/LearnedPolicy.ts"
import { Policy, PolicyError } from "../../src/agent/Policy.ts"
import { repoRoot } from "../../src/io/DataPath.ts"
import * as PolicyScorerOnnx from "./PolicyScorerOnnx.ts"

/** The folder of the checkpoint `npm start -- --ship models` writes and the repository ships. */
export const shippedDir = path.join(repoRoot, "models")

/** The learned policy over the checkpoint in `dir`, scored by onnxruntime (the session closes with the layer). */
export const layer = (dir: string = shippedDir, options: Omit<LearnedPolicy.LearnedPolicyOptions, "scorer"> = {}): Layer.Layer<Policy, ConfigError> =>
  Layer.effect(
    Policy,
    Effect.gen(function*() {
      const model = yield* PolicyScorerOnnx.loadModel(dir)
      if (model.params.shape.input !== ActionSpace.width) {
        return yield* new ConfigError({
          field: "policy",
          value: dir,
          message: `${dir}: the model's input width ${model.params.shape.input} is not the action space's ${ActionSpace.width} (a model of another version)`
        })
      }
      const scorer = yield* PolicyScorerOnnx.make(model.bytes)
      const recorded = model.metadata.provenance["version"]
      const cell = yield* Ref.make<LearnedPolicy.Weights>({ params: model.params, version: typeof recorded === "number" ? recorded : 0 })
      const score: LearnedPolicy.Scorer = (_weights, x, rows, sets) =>
        scorer.score(x, rows, sets).pipe(Effect.mapError((e) => new PolicyError({ message: `onnx scorer: ${e.message}` })))
      return LearnedPolicy.make(cell, { ...options, scorer: score })
    }).pipe(
      Effect.mapError((e) => (e instanceof ConfigError ? e : new ConfigError({ field: "policy", value: dir, message: `cannot load the learned policy from ${dir}: ${e.message}` })))
    )
  )
