import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as SimulatorLlm from "../../../layers/model/SimulatorLlm.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { callId, taskId, toolId, toolName } from "../../../src/domain/Ids.ts"
import type { Json } from "../../../src/domain/Json.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { makeLibrary, ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import { LoopbackServer, Reply } from "../../support/LoopbackServer.ts"

// One imported-style tool with a documented response whose `title` and `plays` are entity facts.
const trackInfo: ToolSpec = {
  id: toolId("toolbench:Music/tunebase/track_info"),
  name: toolName("track_info_for_tunebase"),
  group: "TuneBase",
  apiName: "track info",
  category: "Music",
  description: "Get a track's title, play count and genre by its id.",
  parameters: { type: "object", properties: { track: { type: "string" } }, required: ["track"] },
  response: {
    type: "object",
    properties: {
      title: { type: "string", "x-entity": "track.title" },
      plays: { type: "integer", "x-entity": "track.plays" },
      genre: { type: "string" }
    },
    required: ["title", "plays", "genre"]
  },
  source: { kind: "toolbench", ref: "Music/tunebase.json#track_info" }
}
const library = makeLibrary("llm-test", [trackInfo], DepGraph.empty)

const completion = (content: string) => ({
  id: "chatcmpl-r",
  object: "chat.completion",
  model: "renderer",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 }
})

const tempCache = (): string => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "simllm-")), "renders.sqlite")

/** The LLM simulator over the loopback server, the ToolLibrary above and a cache file. */
const simulatorFor = (server: LoopbackServer, cachePath: string) =>
  SimulatorLlm.layer({ cachePath, simulator: { faultRate: 0, seed: 1 } }).pipe(
    Layer.provide(Layer.mergeAll(
      Layer.succeed(ToolLibrary, library),
      Layer.unwrap(OpenAiClient.validateConfig({ baseUrl: `${server.url}/v1`, model: "renderer", timeoutMs: 5_000, maxRetries: 0 }).pipe(Effect.map(OpenAiClient.layer)))
    ))
  )

/** The deterministic payload of the call (what the renderer must keep). */
const deterministic = Effect.gen(function*() {
  const sim = yield* Simulator.Simulator
  const episode = yield* sim.open({ taskId: taskId("det"), seed: 0, request: "", faults: false })
  const x = yield* episode.execute({ id: callId("c1"), tool: trackInfo.name, arguments: { track: "t-1" } })
  return x.outcome._tag === "ok" ? x.outcome.payload : null
}).pipe(Effect.provide(Simulator.layer({ faultRate: 0, seed: 1 }).pipe(Layer.provide(Layer.succeed(ToolLibrary, library)))))

const callTrack = Effect.gen(function*() {
  const sim = yield* Simulator.Simulator
  const episode = yield* sim.open({ taskId: taskId("llm"), seed: 0, request: "", faults: false })
  const x = yield* episode.execute({ id: callId("c1"), tool: trackInfo.name, arguments: { track: "t-1" } })
  return x.outcome._tag === "ok" ? x.outcome.payload : null
})

const field = (payload: Json, key: string): Json | undefined =>
  payload !== null && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, Json>)[key] : undefined

describe("SimulatorLlm against a loopback server", () => {
  it.live("renders with the model, keeps the facts, caches in SQLite: a repeated call sends no second request", () =>
    Effect.gen(function*() {
      const facts = yield* deterministic
      const server = yield* LoopbackServer.make({
        fallback: (request) => {
          // The backend facts arrive in the prompt; answer with them plus a realistic genre.
          const body = request.body as { messages: Array<{ content: string }> }
          const factsText = /Backend facts \(keep every value exactly\): (.*)$/m.exec(body.messages[1]?.content ?? "")?.[1] ?? "{}"
          return Reply.json(completion(JSON.stringify({ ...JSON.parse(factsText), genre: "Synthwave" })))
        }
      })
      const cachePath = tempCache()
      const [first, second, stats] = yield* Effect.gen(function*() {
        const a = yield* callTrack
        const b = yield* callTrack
        return [a, b, yield* (yield* SimulatorLlm.SimulatorLlmStats).get] as const
      }).pipe(Effect.provide(simulatorFor(server, cachePath)))
      assert.strictEqual(field(first, "genre"), "Synthwave")
      assert.strictEqual(field(first, "title"), field(facts, "title"))
      assert.strictEqual(field(first, "plays"), field(facts, "plays"))
      assert.deepStrictEqual(second, first)
      assert.strictEqual((yield* server.requests).length, 1)
      assert.deepStrictEqual(stats, { llmCalls: 1, cacheHits: 1, accepted: 1, invalid: 0, errors: 0, repaired: 0, cache: "read-write" })
      // A new simulator over the same cache file answers from it, without the model.
      const again = yield* callTrack.pipe(Effect.provide(simulatorFor(server, cachePath)))
      assert.deepStrictEqual(again, first)
      assert.strictEqual((yield* server.requests).length, 1)
      const request = (yield* server.requests)[0]
      assert.deepStrictEqual((request?.body as { response_format?: unknown }).response_format, { type: "json_object" })
    }))

  it.live("falls back to the deterministic payload on malformed output, a schema violation or a dropped fact, and counts it", () =>
    Effect.gen(function*() {
      const facts = yield* deterministic
      for (const bad of ["this is not JSON {", JSON.stringify({ title: 3, plays: 1, genre: "x" }), JSON.stringify({ title: "Another Song", plays: 1, genre: "Pop" })]) {
        const server = yield* LoopbackServer.make({ fallback: Reply.json(completion(bad)) })
        const [out, repeat, stats] = yield* Effect.gen(function*() {
          const a = yield* callTrack
          const b = yield* callTrack
          return [a, b, yield* (yield* SimulatorLlm.SimulatorLlmStats).get] as const
        }).pipe(Effect.provide(simulatorFor(server, tempCache())))
        assert.deepStrictEqual(out, facts)
        assert.deepStrictEqual(repeat, facts)
        assert.strictEqual(stats.invalid, 1)
        assert.strictEqual(stats.accepted, 0)
        assert.strictEqual((yield* server.requests).length, 1)
      }
    }))

  it.live("falls back when the endpoint fails, and counts the error", () =>
    Effect.gen(function*() {
      const facts = yield* deterministic
      const server = yield* LoopbackServer.make({ fallback: Reply.status(500) })
      const [out, stats] = yield* Effect.gen(function*() {
        const a = yield* callTrack
        return [a, yield* (yield* SimulatorLlm.SimulatorLlmStats).get] as const
      }).pipe(Effect.provide(simulatorFor(server, tempCache())))
      assert.deepStrictEqual(out, facts)
      assert.strictEqual(stats.errors, 1)
    }))

  it("lists the x-entity facts a rendering must keep", () => {
    assert.deepStrictEqual(SimulatorLlm.pinnedFacts(trackInfo.response ?? {}, { title: "A", plays: 3, genre: "x" }), ["A", "3"])
    assert.strictEqual(SimulatorLlm.rejection(trackInfo, { title: "A", plays: 3, genre: "x" }, { title: "A", plays: 3, genre: "y" }), undefined)
    assert.match(SimulatorLlm.rejection(trackInfo, { title: "A", plays: 3, genre: "x" }, { title: "B", plays: 3, genre: "y" }) ?? "", /fact "A" missing/)
  })
})
