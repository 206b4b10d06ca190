import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import onnxProto from "onnx-proto"
import * as RetrieverOnnx from "../../../layers/onnx/RetrieverOnnx.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { toolId, toolName } from "../../../src/domain/Ids.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { rng } from "../../../src/math/Random.ts"
import { Retriever } from "../../../src/retrieval/Retriever.ts"
import * as DenseCorpus from "../../../src/retrieval/DenseCorpus.ts"
import * as DenseModel from "../../../src/retrieval/DenseModel.ts"
import * as DenseOnnx from "../../../src/retrieval/DenseOnnx.ts"
import * as Document from "../../../src/retrieval/Document.ts"
import * as TokenizerHf from "../../../src/retrieval/TokenizerHf.ts"
import * as TokenizerStatic from "../../../src/retrieval/TokenizerStatic.ts"
import { makeLibrary, ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"

const { onnx } = onnxProto

const tool = (name: string, group: string, description: string, category: string): ToolSpec => ({
  id: toolId(`test:${name}`),
  name: toolName(name),
  group,
  apiName: name,
  category,
  description,
  parameters: { type: "object", properties: {}, required: [] },
  source: { kind: "user", ref: name }
})

const tools: ReadonlyArray<ToolSpec> = [
  tool("current_weather", "SkyCast", "Current weather and temperature for a city", "Weather"),
  tool("weather_forecast", "SkyCast", "Seven day weather forecast for a city", "Weather"),
  tool("exchange_rate", "FxNow", "Exchange rate between two currencies", "Finance"),
  tool("stock_quote", "FxNow", "Latest stock quote for a ticker symbol", "Finance"),
  tool("team_roster", "LeagueHub", "Players on the roster of a football team", "Sports"),
  tool("match_results", "LeagueHub", "Results of football matches played this season", "Sports"),
  tool("translate_text", "Lingo", "Translate text from one language to another", "Translation"),
  tool("send_sms", "Relayly", "Send a text message to a phone number", "Communication")
]
const library = makeLibrary("test", tools, DepGraph.make([]))
const libraryLayer = Layer.succeed(ToolLibrary, library)
const docTexts = tools.map((t) => Document.toolText(t))

const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-dense-"))

/** A static encoder over the test documents' stems with random embeddings and weights, written to disk. */
const staticFiles = (() => {
  const vocabList = TokenizerStatic.chooseVocab(docTexts, {
    text: DenseCorpus.textOptions,
    dropNumbers: true,
    minCount: 1,
    maxSize: 1000
  })
  const vocab: TokenizerStatic.StaticVocab = {
    format: "paraagent-static-encoder",
    version: 1,
    text: { splitIdentifiers: true, keepCompounds: false, stopWords: true, stem: true },
    dropNumbers: true,
    vocab: vocabList,
    buckets: 64,
    ngramMin: 3,
    ngramMax: 5,
    hashSeed: 17,
    maxTokens: 64,
    dim: 16
  }
  const tokenizer = TokenizerStatic.make(vocab)
  const random = rng(21)
  const model = DenseModel.init(tokenizer.rows, 16, random)
  for (let i = 0; i < model.weights.length; i++) model.weights[i] = 0.5 + random.next()
  const quantized = DenseModel.quantize(model)
  const onnxPath = path.join(tempDir, "static.onnx")
  const vocabPath = path.join(tempDir, "static.vocab.json")
  fs.writeFileSync(onnxPath, DenseOnnx.staticEncoder(quantized))
  fs.writeFileSync(vocabPath, JSON.stringify(vocab))
  return { onnx: onnxPath, vocab: vocabPath, tokenizer, quantized }
})()

/** Ranks the documents for a query with plain JS vectors (the oracle). */
const oracle = (embed: (text: string) => Float32Array, query: string, k: number) => {
  const q = embed(query)
  return tools
    .map((t, i) => {
      const d = embed(docTexts[i] ?? "")
      let s = 0
      for (let j = 0; j < q.length; j++) s += (q[j] ?? 0) * (d[j] ?? 0)
      return { tool: t.name as string, score: s, i }
    })
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, k)
}

const staticSource: RetrieverOnnx.ModelSource = { kind: "static", onnx: staticFiles.onnx, vocab: staticFiles.vocab }
const staticEmbed = (text: string) => DenseModel.encodeQuantized(staticFiles.quantized, staticFiles.tokenizer.encode(text))

const searchWith = (layer: Layer.Layer<Retriever, unknown, ToolLibrary>, queries: ReadonlyArray<string>, k: number) =>
  Effect.gen(function*() {
    const retriever = yield* Retriever
    return yield* retriever.search(queries, k)
  }).pipe(Effect.provide(layer.pipe(Layer.provide(libraryLayer))))

describe("RetrieverOnnx.normalizeRows", () => {
  it("divides each row by its L2 norm in place, as the loop it replaced did, and leaves zero rows zero", () => {
    const dim = 5
    const random = rng(21)
    const values = Float32Array.from({ length: 40 * dim }, () => random.normal())
    values.fill(0, dim, 2 * dim)
    const expected = Float32Array.from(values)
    for (let o = 0; o < expected.length; o += dim) {
      let sq = 0
      for (let j = 0; j < dim; j++) sq += (expected[o + j] ?? 0) ** 2
      const n = Math.max(Math.sqrt(sq), 1e-12)
      for (let j = 0; j < dim; j++) expected[o + j] = (expected[o + j] ?? 0) / n
    }
    const out = RetrieverOnnx.normalizeRows(values, dim)
    expect(out).toBe(values)
    expect(Array.from(out)).toEqual(Array.from(expected))
    expect(Array.from(out.subarray(dim, 2 * dim))).toEqual([0, 0, 0, 0, 0])
    expect(Array.from(RetrieverOnnx.normalizeRows(Float32Array.from([3, 4]), 2))).toEqual([0.6000000238418579, 0.800000011920929])
  })
})

describe("RetrieverOnnx static encoder", () => {
  const queries = ["weather forecast for Paris", "football team players", "currency exchange", "translate a message"]

  it.effect("ranks as the plain-JS forward pass and cosine do (ONNX scorer and JS scorer agree)", () =>
    Effect.gen(function*() {
      for (const scorer of ["onnx", "js"] as const) {
        const results = yield* searchWith(RetrieverOnnx.layer({ model: staticSource, scorer }), queries, 3)
        queries.forEach((q, qi) => {
          const expected = oracle(staticEmbed, q, 3)
          const got = results[qi] ?? []
          expect(got.map((h) => h.tool)).toEqual(expected.map((e) => e.tool))
          got.forEach((h, i) => expect(Math.abs(h.score - (expected[i]?.score ?? NaN))).toBeLessThan(1e-5))
        })
      }
    }))

  it.effect("with provider evidence, scores every API as cos(q, api) + λ · cos(q, its provider's document)", () =>
    Effect.gen(function*() {
      const lambda = 0.7
      const groups = Document.groups(tools)
      const documents = tools.map((t) => Document.fromTool(t))
      const groupText = (g: number) =>
        Document.text({
          tool: tools[0]?.name ?? toolName("x"),
          fields: Document.groupDocument(Array.from(groups.members.subarray(groups.memberStart[g], groups.memberStart[g + 1]), (t) => documents[t] as Document.ToolDocument))
        })
      const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, j) => sum + x * (b[j] ?? 0), 0)
      const results = yield* searchWith(RetrieverOnnx.layer({ model: staticSource, group: { weight: lambda } }), queries, tools.length)
      queries.forEach((query, qi) => {
        const q = staticEmbed(query)
        const expected = tools
          .map((t, i) => ({
            tool: t.name as string,
            i,
            score: dot(q, staticEmbed(docTexts[i] ?? "")) + lambda * dot(q, staticEmbed(groupText(groups.groupOf[i] as number)))
          }))
          .sort((a, b) => b.score - a.score || a.i - b.i)
        const got = results[qi] ?? []
        expect(got.map((h) => h.tool)).toEqual(expected.map((e) => e.tool))
        got.forEach((h, i) => expect(Math.abs(h.score - (expected[i]?.score ?? NaN))).toBeLessThan(1e-5))
      })
    }))

  it.effect("encodes unit-norm vectors, and the zero vector for a text with no tokens", () =>
    Effect.scoped(Effect.gen(function*() {
      const encoder = yield* RetrieverOnnx.openEncoder(staticSource)
      const vectors = yield* encoder.encode(["weather in a city", "", "the of and"])
      const norm = (i: number) => Math.hypot(...vectors.subarray(i * 16, (i + 1) * 16))
      expect(norm(0)).toBeCloseTo(1, 5)
      expect(norm(1)).toBe(0)
      expect(norm(2)).toBe(0)
      expect(encoder.dim).toBe(16)
    })))

  it.effect("caches the document matrix by model and texts, and reuses it", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(tempDir, "cache")
      const first = yield* searchWith(RetrieverOnnx.layer({ model: staticSource, cacheDir }), queries, 3)
      const files = fs.readdirSync(cacheDir).filter((f) => f.endsWith(".f32"))
      expect(files.length).toBe(1)
      expect(fs.statSync(path.join(cacheDir, files[0] ?? "")).size).toBe(tools.length * 16 * 4)
      const second = yield* searchWith(RetrieverOnnx.layer({ model: staticSource, cacheDir }), queries, 3)
      expect(second).toEqual(first)
    }))

  it.effect("fuses clause rankings when asked, and rejects a bad k", () =>
    Effect.gen(function*() {
      const query = "I need the weather forecast. Also, send a text message."
      const [hits] = yield* searchWith(RetrieverOnnx.layer({ model: staticSource, clauses: { wholeWeight: 1, rrfK: 60 } }), [query], 8)
      const names = (hits ?? []).map((h) => h.tool as string)
      expect(names.length).toBe(8)
      expect(new Set(names).size).toBe(8)
      const error = yield* Effect.flip(searchWith(RetrieverOnnx.layer({ model: staticSource }), ["x"], 0))
      expect(String(error)).toContain("k must be a positive integer")
    }))

  it.effect("serves an empty library and an empty batch of queries", () =>
    Effect.gen(function*() {
      const empty = Layer.succeed(ToolLibrary, makeLibrary("empty", [], DepGraph.make([])))
      const results = yield* Effect.gen(function*() {
        const retriever = yield* Retriever
        return [yield* retriever.search(["weather"], 3), yield* retriever.search([], 3)] as const
      }).pipe(Effect.provide(RetrieverOnnx.layer({ model: staticSource }).pipe(Layer.provide(empty))))
      expect(results[0]).toEqual([[]])
      expect(results[1]).toEqual([])
    }))

  it.effect("names the file when the model or vocabulary is missing or malformed", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.flip(searchWith(
        RetrieverOnnx.layer({ model: { kind: "static", onnx: path.join(tempDir, "nope.onnx"), vocab: staticFiles.vocab } }),
        ["x"],
        1
      ))
      expect(String(missing)).toContain("nope.onnx")
      const badVocab = path.join(tempDir, "bad.vocab.json")
      fs.writeFileSync(badVocab, JSON.stringify({ format: "paraagent-static-encoder", version: 1 }))
      const bad = yield* Effect.flip(searchWith(
        RetrieverOnnx.layer({ model: { kind: "static", onnx: staticFiles.onnx, vocab: badVocab } }),
        ["x"],
        1
      ))
      expect(String(bad)).toContain("bad.vocab.json")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// A user's sentence-transformers export: a tiny BERT-shaped ONNX graph and a hand-written tokenizer.json

const bertVocab: Record<string, number> = {
  "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, weather: 4, forecast: 5, city: 6, "##s": 7, football: 8, team: 9,
  exchange: 10, rate: 11, stock: 12, translate: 13, text: 14, send: 15, message: 16, for: 17, a: 18, the: 19, ".": 20,
  current: 21, and: 22, temperature: 23, players: 24, results: 25, language: 26, phone: 27, number: 28, quote: 29
}
const tokenizerJson = {
  version: "1.0",
  truncation: { max_length: 24, strategy: "LongestFirst", stride: 0, direction: "Right" },
  padding: null,
  added_tokens: [{ id: 0, content: "[PAD]", special: true }, { id: 2, content: "[CLS]", special: true }, { id: 3, content: "[SEP]", special: true }],
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: { type: "BertProcessing", sep: ["[SEP]", 3], cls: ["[CLS]", 2] },
  model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: bertVocab }
}
const V = 30
const H = 8
const random = rng(5)
const wordEmb = Float32Array.from({ length: V * H }, () => random.normal())
const typeEmb = Float32Array.from({ length: 2 * H }, () => random.normal() * 0.1)
const dense = Float32Array.from({ length: H * H }, () => random.normal() / Math.sqrt(H))

/** input_ids, attention_mask, token_type_ids → tanh((word + type) · W) · mask as last_hidden_state (or its mean as sentence_embedding). */
const tinyBert = (sentenceOutput: boolean): Uint8Array => {
  const vi = (name: string, elemType: number, dims: ReadonlyArray<number | string>) => ({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) } } }
  })
  const raw = (a: Float32Array | BigInt64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
  const nodes = [
    { opType: "Gather", input: ["word_embeddings", "input_ids"], output: ["w"] },
    { opType: "Gather", input: ["type_embeddings", "token_type_ids"], output: ["t"] },
    { opType: "Add", input: ["w", "t"], output: ["e"] },
    { opType: "MatMul", input: ["e", "dense"], output: ["m"] },
    { opType: "Tanh", input: ["m"], output: ["h"] },
    { opType: "Cast", input: ["attention_mask"], output: ["mask_f"], attribute: [{ name: "to", type: 2, i: 1 }] },
    { opType: "Unsqueeze", input: ["mask_f", "axis2"], output: ["mask3"] },
    { opType: "Mul", input: ["h", "mask3"], output: ["last_hidden_state"] },
    ...(sentenceOutput
      ? [{ opType: "ReduceSum", input: ["last_hidden_state", "axis1"], output: ["sentence_embedding"], attribute: [{ name: "keepdims", type: 2, i: 0 }] }]
      : [])
  ]
  const model = {
    irVersion: 8,
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: "tiny_bert",
      input: [vi("input_ids", 7, ["b", "l"]), vi("attention_mask", 7, ["b", "l"]), vi("token_type_ids", 7, ["b", "l"])],
      output: sentenceOutput ? [vi("sentence_embedding", 1, ["b", H]), vi("last_hidden_state", 1, ["b", "l", H])] : [vi("last_hidden_state", 1, ["b", "l", H])],
      initializer: [
        { name: "word_embeddings", dims: [V, H], dataType: 1, rawData: raw(wordEmb) },
        { name: "type_embeddings", dims: [2, H], dataType: 1, rawData: raw(typeEmb) },
        { name: "dense", dims: [H, H], dataType: 1, rawData: raw(dense) },
        { name: "axis2", dims: [1], dataType: 7, rawData: raw(BigInt64Array.from([2n])) },
        { name: "axis1", dims: [1], dataType: 7, rawData: raw(BigInt64Array.from([1n])) }
      ],
      node: nodes
    }
  }
  return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish()
}

const bertPaths = (() => {
  const tokenizerPath = path.join(tempDir, "tokenizer.json")
  fs.writeFileSync(tokenizerPath, JSON.stringify(tokenizerJson))
  const meanPath = path.join(tempDir, "tiny-bert.onnx")
  fs.writeFileSync(meanPath, tinyBert(false))
  const sentencePath = path.join(tempDir, "tiny-bert-sentence.onnx")
  fs.writeFileSync(sentencePath, tinyBert(true))
  return { tokenizer: tokenizerPath, mean: meanPath, sentence: sentencePath }
})()

/** The tiny BERT's sentence vector in plain JS: mean over tokens of tanh((word + type)·W), L2-normalised. */
const bertEmbed = (text: string): Float32Array => {
  const tok = Effect.runSync(TokenizerHf.parse(JSON.stringify(tokenizerJson), "tokenizer.json"))
  const { ids, typeIds } = tok.encode(text)
  const out = new Float32Array(H)
  ids.forEach((id, t) => {
    for (let j = 0; j < H; j++) {
      let s = 0
      for (let i = 0; i < H; i++) s += ((wordEmb[id * H + i] ?? 0) + (typeEmb[(typeIds[t] ?? 0) * H + i] ?? 0)) * (dense[i * H + j] ?? 0)
      out[j] = (out[j] ?? 0) + Math.tanh(s) / ids.length
    }
  })
  const n = Math.hypot(...out)
  return out.map((x) => x / n)
}

describe("RetrieverOnnx sentence-transformers export", () => {
  const queries = ["weather forecast for a city", "football team players", "send a text message", "stock quote"]

  it.effect("tokenises with tokenizer.json, mean-pools last_hidden_state by the mask, and ranks as the JS oracle", () =>
    Effect.gen(function*() {
      const source: RetrieverOnnx.ModelSource = { kind: "transformer", onnx: bertPaths.mean, tokenizer: bertPaths.tokenizer }
      const results = yield* searchWith(RetrieverOnnx.layer({ model: source, batchSize: 3 }), queries, 4)
      queries.forEach((q, qi) => {
        const expected = oracle(bertEmbed, q, 4)
        const got = results[qi] ?? []
        expect(got.map((h) => h.tool)).toEqual(expected.map((e) => e.tool))
        got.forEach((h, i) => expect(Math.abs(h.score - (expected[i]?.score ?? NaN))).toBeLessThan(1e-5))
      })
    }))

  it.effect("prefers a sentence_embedding output when the model has one", () =>
    Effect.scoped(Effect.gen(function*() {
      const withSentence = yield* RetrieverOnnx.openEncoder({ kind: "transformer", onnx: bertPaths.sentence, tokenizer: bertPaths.tokenizer })
      const meanOnly = yield* RetrieverOnnx.openEncoder({ kind: "transformer", onnx: bertPaths.mean, tokenizer: bertPaths.tokenizer })
      // the graph's sentence_embedding is the masked sum, which normalises to the masked mean
      const a = yield* withSentence.encode(["current weather and temperature", "the"])
      const b = yield* meanOnly.encode(["current weather and temperature", "the"])
      expect(withSentence.dim).toBe(H)
      for (let i = 0; i < a.length; i++) expect(Math.abs((a[i] ?? 0) - (b[i] ?? 0))).toBeLessThan(1e-5)
      expect(withSentence.fingerprint).not.toBe(meanOnly.fingerprint)
    })))

  it.effect("reports an unsupported tokenizer with the file name", () =>
    Effect.gen(function*() {
      const bad = path.join(tempDir, "odd-tokenizer.json")
      fs.writeFileSync(bad, JSON.stringify({ ...tokenizerJson, model: { type: "OddModel", vocab: {} } }))
      const error = yield* Effect.flip(searchWith(
        RetrieverOnnx.layer({ model: { kind: "transformer", onnx: bertPaths.mean, tokenizer: bad } }),
        ["x"],
        1
      ))
      expect(String(error)).toContain("odd-tokenizer.json")
      expect(String(error)).toContain("OddModel")
    }))
})
