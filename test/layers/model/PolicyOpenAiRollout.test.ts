import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Rollout from "../../../src/runtime/Rollout.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as PolicyOpenAi from "../../../layers/model/PolicyOpenAi.ts"
import { libraryLayer, makeLog, retrieverLayer, simulatorLayer, task } from "../../support/RolloutKit.ts"
import { type LoopbackServer, LoopbackServer as Loopback, Reply } from "../../support/LoopbackServer.ts"

/** An end-to-end check that the OpenAI policy plugs into the rollout runtime: a scripted model over real HTTP. */
const names = ["alpha", "beta"]

const completion = (message: Record<string, unknown>, logprobs: ReadonlyArray<number>) => ({
  model: "loop-model",
  choices: [{
    message: { role: "assistant", ...message },
    finish_reason: "stop",
    logprobs: { content: logprobs.map((logprob, i) => ({ token: `t${i}`, logprob })) }
  }],
  usage: { prompt_tokens: 100, completion_tokens: logprobs.length }
})

const rolloutWith = (server: LoopbackServer, options: PolicyOpenAi.PolicyOpenAiOptions) =>
  Effect.gen(function*() {
    const log = yield* makeLog()
    const policy = PolicyOpenAi.layer({ logprobs: true, ...options }).pipe(
      Layer.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "loop-model", maxRetries: 0 }))
    )
    const layer = Rollout.layer({ faults: false }).pipe(
      Layer.provide(Layer.mergeAll(libraryLayer(names), retrieverLayer(names), policy, simulatorLayer({}, log)))
    )
    const rollout = yield* Effect.provide(Rollout.Rollout, layer)
    return yield* rollout.run(task, { paradigm: "ParaAct", seed: 3 })
  })

const messagesOf = (body: unknown) =>
  (body as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | null }> }).messages

describe("the OpenAI policy inside a rollout", () => {
  it.live("text protocol: search, parallel calls, answer; logprobs and usage land on the steps", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [
          Reply.json(completion({ content: "<search>[{\"slot\":\"s1\",\"query\":\"alpha beta\"}]</search>" }, [-0.5, -0.5])),
          Reply.json(completion({
            content: "<call>[{\"id\":\"c1\",\"name\":\"alpha\",\"arguments\":{\"q\":\"x\"}},{\"id\":\"c2\",\"name\":\"beta\",\"arguments\":{\"q\":\"y\"}}]</call>"
          }, [-1, -0.25, -0.25])),
          Reply.json(completion({ content: "<answer>alpha and beta both answered</answer>" }, [-0.1]))
        ]
      })
      const trajectory = yield* rolloutWith(server, {})
      assert.strictEqual(trajectory.stop, "answer")
      assert.strictEqual(trajectory.answer, "alpha and beta both answered")
      assert.deepStrictEqual(trajectory.steps.map((s) => s.logprob), [-1, -1.5, -0.1])
      assert.deepStrictEqual(trajectory.steps.map((s) => s.usage.completionTokens), [2, 3, 1])
      assert.deepStrictEqual(trajectory.steps[1]?.observations.map((o) => o.outcome._tag), ["ok", "ok"])
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 3)
      // round 2 sees the tools found in round 1 documented in its system prompt, and the search observation
      const second = messagesOf(requests[1]?.body)
      assert.include(second[0]?.content ?? "", "### alpha\nThe alpha tool.")
      assert.include(second[3]?.content ?? "", "<search slot=\"s1\"")
      // round 3 sees both call results
      const third = messagesOf(requests[2]?.body)
      assert.include(third.at(-1)?.content ?? "", "<result id=\"c2\" tool=\"beta\" status=\"ok\">")
    }))

  it.live("native tool calls: the same episode through function calls", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [
          Reply.json(completion({
            content: null,
            tool_calls: [{ id: "s-1", type: "function", function: { name: "search_tools", arguments: "{\"slot\":\"s1\",\"query\":\"alpha beta\"}" } }]
          }, [-0.5])),
          Reply.json(completion({
            content: null,
            tool_calls: [
              { id: "c1", type: "function", function: { name: "alpha", arguments: "{\"q\":\"x\"}" } },
              { id: "c2", type: "function", function: { name: "beta", arguments: "{\"q\":\"y\"}" } }
            ]
          }, [-0.5, -0.5])),
          Reply.json(completion({ content: "both answered" }, [-0.2]))
        ]
      })
      const trajectory = yield* rolloutWith(server, { mode: "native" })
      assert.strictEqual(trajectory.stop, "answer")
      assert.strictEqual(trajectory.answer, "both answered")
      assert.deepStrictEqual(trajectory.steps[1]?.turn?.calls.map((c) => c.tool), ["alpha", "beta"])
      assert.deepStrictEqual(trajectory.steps.map((s) => s.logprob), [-0.5, -1, -0.2])
      const third = (yield* server.requests)[2]?.body as {
        readonly messages: ReadonlyArray<{ readonly role: string; readonly tool_call_id?: string }>
        readonly tools: ReadonlyArray<{ readonly function: { readonly name: string } }>
      }
      assert.deepStrictEqual(third.tools.map((t) => t.function.name).sort(), ["alpha", "beta", "search_tools"])
      assert.deepStrictEqual(third.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id), ["search-1", "c1", "c2"])
    }))
})
