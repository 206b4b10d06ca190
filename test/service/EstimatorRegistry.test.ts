/**
 * The estimator registry reaches the server: an estimator a program registers (`Estimators.register`) under the
 * server's layer is the one `/advantages` uses by name; the built-ins stay; a name nobody registered is a 400.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import * as ToolEnvServer from "../../layers/server/ToolEnvServer.ts"
import * as Estimators from "../../src/eval/Estimators.ts"
import type * as Advantage from "../../src/math/Advantage.ts"
import { ToolEnvApi } from "../../src/service/Api.ts"

const token = "registry-token"
const options: ToolEnvServer.ServerOptions = { ...ToolEnvServer.defaultOptions, worldSize: 2000, token }

/** Recognisable advantages: every step 0.125, whatever the rewards. */
const mine: Advantage.Estimator = (group) => {
  const n = group.stepReward.length
  return { traj: new Float64Array(n), phase: new Float64Array(n), step: new Float64Array(n), combined: new Float64Array(n).fill(0.125), stepOffsets: group.stepOffsets }
}

const server = Layer.mergeAll(ToolEnvServer.layer(options).pipe(Layer.provide(Estimators.register("mine", mine))), FetchHttpClient.layer)

layer(server, { timeout: 60_000 })("the server's estimator registry", (it) => {
  it.effect("/advantages scores a group with the estimator the program registered, and still with the built-ins", () =>
    Effect.gen(function*() {
      const url = yield* ToolEnvServer.url
      // sessions belong to the client key that created them
      const api = yield* HttpApiClient.make(ToolEnvApi, {
        baseUrl: url,
        transformClient: HttpClient.mapRequest((r) => r.pipe(HttpClientRequest.bearerToken(token), HttpClientRequest.setHeader("x-client-key", "estimator-registry-test")))
      })
      const { tasks } = yield* api.tasks.list({ query: { split: "test", level: "I1", count: 1 } })
      const ids: Array<string> = []
      for (const [seed, text] of [[1, "<answer>nothing found</answer>"], [2, "<answer>I could not find it</answer>"]] as const) {
        const created = yield* api.sessions.create({ payload: { taskId: tasks[0]!.id, seed } })
        const step = yield* api.sessions.step({ params: { id: created.sessionId }, payload: { text, round: 0 } })
        assert.isTrue(step.done)
        ids.push(created.sessionId)
      }
      const scored = yield* api.scoring.advantages({ payload: { sessions: ids, estimator: "mine" } })
      assert.strictEqual(scored.estimator, "mine")
      assert.deepStrictEqual(scored.group.map((g) => g.steps.map((s) => s.combined)), [[0.125], [0.125]])
      const builtIn = yield* api.scoring.advantages({ payload: { sessions: ids, estimator: "grpo" } })
      assert.strictEqual(builtIn.group.length, 2)
      const unknown = yield* Effect.flip(api.scoring.advantages({ payload: { sessions: ids, estimator: "nobody" } }))
      assert.strictEqual(unknown._tag, "InvalidRequest")
      assert.include(JSON.stringify(unknown), "mine")
    }))
})

describe("Estimators", () => {
  layer(Estimators.register("mine", mine))("register", (it) => {
    it.effect("adds to the registry of its context and keeps the built-ins", () =>
      Effect.gen(function*() {
        const registry = yield* Estimators.current
        assert.isTrue(registry.has("mine"))
        assert.isTrue(registry.has("grpo"))
        assert.strictEqual((yield* Estimators.lookup("mine"))._tag, "Found")
      }))
  })
})
