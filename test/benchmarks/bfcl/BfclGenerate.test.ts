import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as BfclFiles from "../../../layers/files/BfclFiles.ts"
import * as BfclRun from "../../../layers/BfclRun.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as PolicyLearned from "../../../layers/onnx/PolicyLearned.ts"
import * as PolicyOpenAi from "../../../layers/model/PolicyOpenAi.ts"
import * as Decode from "../../../src/benchmarks/bfcl/BfclDecode.ts"
import * as Generate from "../../../src/benchmarks/bfcl/BfclGenerate.ts"
import * as Score from "../../../src/benchmarks/bfcl/BfclScore.ts"
import * as Py from "../../../src/benchmarks/bfcl/BfclValue.ts"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { LoopbackServer as Loopback, Reply } from "../../support/LoopbackServer.ts"

const jsonl = (rows: ReadonlyArray<unknown>) => rows.map((r) => JSON.stringify(r)).join("\n")

const play = { name: "spotify.play", description: "Play tracks of an artist for some minutes.", parameters: { type: "dict", properties: { artist: { type: "string", description: "The artist." }, duration: { type: "integer", description: "Minutes." } }, required: ["artist", "duration"] } }

/** A parallel category of four hand-written entries (one function each). */
const category = (): Score.Category => {
  const entries = [0, 1, 2, 3].map((i) => ({ id: `parallel_${i}`, question: [[{ role: "user", content: `Play "Taylor Swift" for 20 minutes and "Maroon 5" for 15 minutes (${i}).` }]], function: [play] }))
  const truth = entries.map((e) => ({ id: e.id, ground_truth: [{ "spotify.play": { artist: ["Taylor Swift"], duration: [20] } }, { "spotify.play": { artist: ["Maroon 5"], duration: [15] } }] }))
  const built = Score.category("parallel", { file: "BFCL_v4_parallel.json", text: jsonl(entries) }, { file: "possible_answer/BFCL_v4_parallel.json", text: jsonl(truth) })
  if (Result.isFailure(built)) throw new Error(built.failure.message)
  return built.success
}

const completion = (message: Record<string, unknown>) => ({
  model: "loop-model",
  choices: [{ message: { role: "assistant", content: null, ...message }, finish_reason: "stop" }],
  usage: { prompt_tokens: 10, completion_tokens: 5 }
})

const options = { ...Generate.defaultOptions, lenient: true, concurrency: 1 }
const shipped = fs.existsSync(path.join(PolicyLearned.shippedDir, "paraagent-policy.onnx"))
const bfclDir = dataPathIfPresent("bfcl")

describe("bfcl generate", () => {
  it("the entry's functions are the hits of one retrieval round, every function in every clause's search", () => {
    const cat = category()
    const entry = cat.entries[0] as Score.TestEntry
    const tools = Generate.toolsOf("parallel", entry)
    assert.deepStrictEqual(tools.map((t) => t.apiName), ["spotify.play"])
    const step = Generate.retrievalStep(Generate.requestOf(entry), tools)
    assert.isAtLeast(step.searches.length, 1)
    for (const s of step.searches) assert.deepStrictEqual(s.hits.map((h) => h.tool), tools.map((t) => t.name))
  })

  it.live("an OpenAI-compatible model over loopback HTTP: its calls become FC lines under BFCL's names; malformed output scores as wrong", () =>
    Effect.gen(function*() {
      const cat = category()
      const safe = Generate.toolsOf("parallel", cat.entries[0] as Score.TestEntry)[0]?.name ?? ""
      const call = (id: string, args: string) => ({ id, type: "function", function: { name: safe, arguments: args } })
      const server = yield* Loopback.make({
        replies: [
          // right: both calls in one turn (parallel)
          Reply.json(completion({ tool_calls: [call("a", "{\"artist\": \"Taylor Swift\", \"duration\": 20}"), call("b", "{\"artist\": \"Maroon 5\", \"duration\": 15}")] })),
          // malformed arguments
          Reply.json(completion({ tool_calls: [call("a", "{\"artist\": \"Taylor Swift\", \"duration\": ")] })),
          // prose, no call
          Reply.json(completion({ content: "Sure! I would play them for you." })),
          // the endpoint fails
          Reply.status(500)
        ]
      })
      const policy = PolicyOpenAi.layer({ mode: "native", lenient: true }).pipe(
        Layer.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "loop-model", maxRetries: 0 }))
      )
      const generated = yield* BfclRun.generateCategory(cat, { kind: "layer", layer: policy }, options)
      assert.deepStrictEqual(generated.map((g) => g.outcome), ["calls", "malformed", "no_call", "policy_error"])
      const first = Decode.decodeFc(generated[0]?.result ?? Py.none)
      assert.strictEqual(first.ok ? Py.repr(first.value) : "", "[{'spotify.play': {'artist': 'Taylor Swift', 'duration': 20}}, {'spotify.play': {'artist': 'Maroon 5', 'duration': 15}}]")
      // the lines round-trip through a result file and score as BFCL would
      const text = generated.map((g) => Score.resultLine(g.id, g.result)).join("\n")
      const results = Score.parseResults("out.jsonl", text)
      assert.isTrue(Result.isSuccess(results))
      const { verdicts } = Score.score([cat], Result.isSuccess(results) ? results.success : new Map(), "fc", { underscoreToDot: false })
      assert.deepStrictEqual(verdicts.map((v) => [v.valid, v.error_type]), [
        [true, undefined],
        [false, "ast_decoder:decoder_failed"],
        [false, "ast_decoder:decoder_failed"],
        [false, "ast_decoder:decoder_failed"]
      ])
      // the model saw the function among its tools, under its OpenAI-safe name
      const body = (yield* server.requests)[0]?.body as { readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }> }
      assert.include(body.tools?.map((t) => t.function.name) ?? [], safe)
    }))

  it.effect.skipIf(!shipped)("the embedded learned policy (models/) answers entries; its lines name BFCL's functions and score without error", () =>
    Effect.gen(function*() {
      const cats = bfclDir === undefined ? [category()] : yield* BfclFiles.loadCategories(bfclDir, ["parallel", "irrelevance"])
      for (const cat of cats) {
        const generated = yield* BfclRun.generateCategory(cat, { kind: "paraagent" }, { ...options, limit: 4 })
        assert.strictEqual(generated.length, Math.min(4, cat.entries.length))
        assert.strictEqual(Generate.outcomes(generated).policy_error, 0)
        for (const g of generated) {
          const entry = cat.entries.find((e) => e.id === g.id) as Score.TestEntry
          const names = new Set(entry.functions.map((f) => (f.t === "dict" ? Py.repr(Py.get(f, "name") ?? Py.none) : "")))
          const d = Decode.decodeFc(g.result)
          if (d.ok && d.value.t === "list") for (const c of d.value.items) assert.isTrue(c.t === "dict" && names.has(Py.repr((c.entries[0] as readonly [Py.Py, Py.Py])[0])), g.id)
        }
        const again = yield* BfclRun.generateCategory(cat, { kind: "paraagent" }, { ...options, limit: 4 })
        assert.deepStrictEqual(again.map((g) => Py.repr(g.result)), generated.map((g) => Py.repr(g.result)), "greedy decoding is deterministic")
        const { summary } = Score.score([{ ...cat, entries: cat.entries.slice(0, 4) }], new Map(generated.map((g) => [g.id, g.result] as const)), "fc", { underscoreToDot: false })
        const c = summary.categories[cat.name]
        assert.strictEqual((c?.correct ?? -1) + Object.values(c?.errors ?? {}).reduce((a, b) => a + b, 0), c?.total)
      }
    }))
})
