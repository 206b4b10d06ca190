import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ort from "onnxruntime-node"
import { repoRoot } from "../../src/io/DataPath.ts"
import { rng } from "../../src/math/Random.ts"
import * as DenseModel from "../../src/retrieval/DenseModel.ts"
import * as DenseOnnx from "../../src/retrieval/DenseOnnx.ts"
import * as TokenizerStatic from "../../src/retrieval/TokenizerStatic.ts"

const vocab: TokenizerStatic.StaticVocab = {
  format: "paraagent-static-encoder",
  version: 1,
  text: { splitIdentifiers: true, keepCompounds: false, stopWords: true, stem: true },
  dropNumbers: true,
  vocab: ["weather", "forecast", "citi", "team", "player", "currenc", "exchang", "rate"],
  buckets: 256,
  ngramMin: 3,
  ngramMax: 5,
  hashSeed: 17,
  maxTokens: 64,
  dim: 24
}
const tokenizer = TokenizerStatic.make(vocab)
const random = rng(4)
const model = DenseModel.init(tokenizer.rows, vocab.dim, random)
for (let i = 0; i < model.weights.length; i++) model.weights[i] = 0.2 + 2 * random.next()
const quantized = DenseModel.quantize(model)

const texts = [
  "Weather forecast for a city",
  "getTeamPlayers by team id",
  "currency exchange rate USD EUR",
  "transfermarkt vimeo youtube",
  "",
  "the of and 12345",
  "Météo à Paris — prévisions"
]

const runEncoder = async (bytes: Uint8Array, encodings: ReadonlyArray<TokenizerStatic.StaticEncoding>) => {
  const session = await ort.InferenceSession.create(bytes)
  const batch = TokenizerStatic.pad(encodings)
  const out = await session.run({
    [DenseOnnx.staticNames.ids]: new ort.Tensor("int64", batch.ids, [batch.size, batch.length]),
    [DenseOnnx.staticNames.mass]: new ort.Tensor("float32", batch.mass, [batch.size, batch.length])
  })
  await session.release()
  return out[DenseOnnx.staticNames.output]?.data as Float32Array
}

const maxAbsDiff = (onnxOut: Float32Array, q: DenseModel.QuantizedModel, encodings: ReadonlyArray<TokenizerStatic.StaticEncoding>) => {
  let max = 0
  encodings.forEach((e, i) => {
    const js = DenseModel.encodeQuantized(q, e)
    for (let j = 0; j < q.dim; j++) max = Math.max(max, Math.abs((onnxOut[i * q.dim + j] ?? NaN) - (js[j] ?? 0)))
  })
  return max
}

describe("DenseOnnx static encoder", () => {
  const bytes = DenseOnnx.staticEncoder(quantized)

  it("computes what the plain-JS forward pass computes (max |diff| ≤ 1e-5)", async () => {
    const encodings = texts.map(tokenizer.encode)
    const out = await runEncoder(bytes, encodings)
    expect(out.length).toBe(texts.length * vocab.dim)
    expect(maxAbsDiff(out, quantized, encodings)).toBeLessThanOrEqual(1e-5)
  })

  it("outputs unit-norm rows, and zero rows for texts without tokens", async () => {
    const encodings = texts.map(tokenizer.encode)
    const out = await runEncoder(bytes, encodings)
    texts.forEach((text, i) => {
      const norm = Math.hypot(...out.subarray(i * vocab.dim, (i + 1) * vocab.dim))
      if (encodings[i]?.ids.length === 0) expect(norm).toBe(0)
      else expect(norm).toBeCloseTo(1, 5)
    })
  })

  it("the JS forward pass is unit-norm on random texts (property)", () => {
    fc.assert(fc.property(fc.string({ maxLength: 80 }), (text) => {
      const e = tokenizer.encode(text)
      const norm = Math.hypot(...DenseModel.encodeQuantized(quantized, e))
      const floatNorm = Math.hypot(...DenseModel.encode(model, e))
      if (e.ids.length === 0) expect(norm).toBe(0)
      else {
        expect(Math.abs(norm - 1)).toBeLessThan(1e-5)
        expect(Math.abs(floatNorm - 1)).toBeLessThan(1e-5)
      }
    }))
  })

  it("reads its parameters back from the ONNX bytes", () => {
    const back = DenseOnnx.readStaticEncoder(bytes)
    if (!("codes" in back)) return assert.fail(back.message)
    expect(back.rows).toBe(quantized.rows)
    expect(back.dim).toBe(quantized.dim)
    expect(Buffer.from(back.codes.buffer).equals(Buffer.from(quantized.codes.buffer))).toBe(true)
    expect([...back.scales]).toEqual([...quantized.scales])
    expect([...back.weights]).toEqual([...quantized.weights])
    expect("message" in DenseOnnx.readStaticEncoder(DenseOnnx.scorer(new Float32Array(4), 2, 2))).toBe(true)
  })

  it("int8 quantisation errs by at most half a step per value", () => {
    const back = DenseModel.dequantize(quantized)
    for (let r = 0; r < model.rows; r += 7) {
      const step = quantized.scales[r] ?? 0
      for (let j = 0; j < model.dim; j++) {
        const i = r * model.dim + j
        expect(Math.abs((back.embeddings[i] ?? 0) - (model.embeddings[i] ?? 0))).toBeLessThanOrEqual(step / 2 + 1e-7)
      }
    }
  })
})

describe("DenseModel.topIndices", () => {
  it("gives the k best indices, best first, ties to the lower index", () => {
    const scores = Float32Array.from([0.5, 0.9, 0.5, -1, 0.9, 0.7])
    expect(DenseModel.topIndices(scores, 3)).toEqual([1, 4, 5])
    expect(DenseModel.topIndices(scores, 5)).toEqual([1, 4, 5, 0, 2])
    expect(DenseModel.topIndices(scores, 10)).toEqual([1, 4, 5, 0, 2, 3])
    expect(DenseModel.topIndices(scores, 0)).toEqual([])
    expect(DenseModel.topIndices(new Float32Array(0), 3)).toEqual([])
  })
})

describe("DenseOnnx scorer", () => {
  it("returns the exact top-k by dot product, ties to the lower index", async () => {
    const matrix = Float32Array.from([1, 0, 0, 1, 0.6, 0.8, 1, 0, -1, 0])
    const session = await ort.InferenceSession.create(DenseOnnx.scorer(matrix, 5, 2))
    const out = await session.run({
      queries: new ort.Tensor("float32", Float32Array.from([1, 0, 0, 1]), [2, 2]),
      k: new ort.Tensor("int64", BigInt64Array.from([3n]), [1])
    })
    await session.release()
    expect([...(out["indices"]?.data as BigInt64Array)].map(Number)).toEqual([0, 3, 2, 1, 2, 0])
    expect([...(out["scores"]?.data as Float32Array)].map((x) => Math.round(x * 100) / 100)).toEqual([1, 1, 0.6, 1, 0.8, 0])
  })
})

const shippedOnnx = path.join(repoRoot, "models", "paraagent-static.onnx")
const shippedVocab = path.join(repoRoot, "models", "paraagent-static.vocab.json")
const shipped = fs.existsSync(shippedOnnx) && fs.existsSync(shippedVocab)

describe.skipIf(!shipped)("the shipped encoder (models/paraagent-static.*; skipped until it is trained)", () => {
  it("is at most 30 MB and its ONNX graph matches the JS forward pass on its own vocabulary", async () => {
    const bytes = new Uint8Array(fs.readFileSync(shippedOnnx))
    expect(bytes.byteLength).toBeLessThanOrEqual(30 * 1024 * 1024)
    const tok = Effect.runSync(TokenizerStatic.parse(fs.readFileSync(shippedVocab, "utf8"), shippedVocab))
    const q = DenseOnnx.readStaticEncoder(bytes)
    if (!("codes" in q)) return assert.fail(q.message)
    expect(q.rows).toBe(tok.rows)
    expect(q.dim).toBe(tok.vocab.dim)
    const samples = [...texts, "Can you search for videos related to horror on a video platform?", "football club transfers"]
    const encodings = samples.map(tok.encode)
    expect(maxAbsDiff(await runEncoder(bytes, encodings), q, encodings)).toBeLessThanOrEqual(1e-5)
  })

  it("tokenises as it did when trained (a change of the shared Text tokeniser needs a retrain)", () => {
    const tok = Effect.runSync(TokenizerStatic.parse(fs.readFileSync(shippedVocab, "utf8"), shippedVocab))
    const stems = (text: string) => [...tok.encode(text).ids].map((id) => tok.vocab.vocab[id] ?? "#")
    expect(stems("Get the weather forecasts for these cities")).toEqual(["weather", "forecast", "citi"])
    expect(stems("getTeamPlayers")).toEqual(["team", "player"])
  })
})
