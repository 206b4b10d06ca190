import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import onnxProto from "onnx-proto"
import * as ActionSpace from "../../../src/agent/ActionSpace.ts"
import * as PolicyScorerOnnx from "../../../layers/onnx/PolicyScorerOnnx.ts"
import * as PolicyOnnxGraph from "../../../src/agent/PolicyOnnxGraph.ts"
import { rng } from "../../../src/math/Random.ts"
import * as SetScorer from "../../../src/math/SetScorer.ts"

const { onnx } = onnxProto

/** Random parameters (not SetScorer.init's zero biases, so every weight and bias is exercised). */
const randomParams = (shape: SetScorer.Shape, seed: number): SetScorer.Params => {
  const r = rng(seed)
  const data = new Float64Array(SetScorer.size(shape))
  for (let i = 0; i < data.length; i++) data[i] = r.normal() * 0.5
  return { shape, data }
}

const randomInput = (input: number, rows: number, seed: number): Float64Array => {
  const r = rng(seed)
  return Float64Array.from({ length: rows * input }, () => (2 * r.next() - 1) * 3)
}

/** A learned encoder of `width` units. */
const learned = (width: number): SetScorer.Encoder => ({ kind: "learned", width })

/**
 * Shapes with random input widths in [8, 64]: learned encoders (4 to 32 units) and identity encoders over a column
 * range; head hidden [16] and [32, 16], and no hidden layer.
 */
const shapes: ReadonlyArray<SetScorer.Shape> = (() => {
  const r = rng(2024)
  const width = () => 8 + r.int(57)
  const identity = (input: number): SetScorer.Shape["encoder"] => {
    const from = r.int(input - 1)
    return { kind: "identity", from, width: 1 + r.int(input - from) }
  }
  const withIdentity = (input: number, hidden: ReadonlyArray<number>): SetScorer.Shape => ({ input, encoder: identity(input), hidden })
  return [
    { input: 8, encoder: learned(4), hidden: [16] },
    { input: 64, encoder: learned(32), hidden: [32, 16] },
    { input: width(), encoder: learned(8), hidden: [16] },
    withIdentity(width(), [16]),
    { input: width(), encoder: learned(16), hidden: [32, 16] },
    withIdentity(width(), [32, 16]),
    { input: width(), encoder: learned(4), hidden: [] },
    withIdentity(width(), [])
  ]
})()

/** Random sets over `rows` rows: 0–5 sets of random members (a row may be in several, a set may be empty), each row reading one or none. */
const randomSets = (rows: number, seed: number): SetScorer.Sets => {
  const r = rng(seed)
  const count = r.int(6)
  const members = Array.from({ length: count }, () => Array.from({ length: rows }, (_, i) => i).filter(() => r.next() < 0.4))
  const reads = Array.from({ length: rows }, () => (count === 0 || r.next() < 0.2 ? -1 : r.int(count)))
  return { members, reads }
}

const bitEqual = (a: Float64Array, b: Float64Array): boolean => a.length === b.length && a.every((v, i) => Object.is(v, b[i]))

/** Re-encodes a model after `edit` changed its decoded graph. */
const edited = (bytes: Uint8Array, edit: (g: onnxProto.onnx.IGraphProto) => void): Uint8Array => {
  const model = onnx.ModelProto.decode(bytes)
  const graph = model.graph ?? {}
  edit(graph)
  model.graph = graph
  return onnx.ModelProto.encode(model).finish()
}

const initializer = (g: onnxProto.onnx.IGraphProto, name: string): onnxProto.onnx.ITensorProto =>
  (g.initializer ?? []).find((t) => t.name === name) ?? {}

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-policy-"))

describe("PolicyOnnxGraph", () => {
  it("fromOnnx(toOnnx(p)) gives p back bit for bit, and the metadata as given", () => {
    shapes.forEach((shape, i) => {
      const p = randomParams(shape, i)
      const back = PolicyOnnxGraph.read(PolicyOnnxGraph.toOnnx(p, { seed: String(i), command: "train --x" }))
      assert.isFalse(back instanceof PolicyOnnxGraph.PolicyOnnxError, String(back))
      if (back instanceof PolicyOnnxGraph.PolicyOnnxError) return
      assert.deepStrictEqual(back.params.shape, { input: shape.input, encoder: shape.encoder, hidden: [...shape.hidden] })
      assert.isTrue(bitEqual(back.params.data, p.data), `shape ${JSON.stringify(shape)}`)
      assert.deepStrictEqual(back.metadata, { seed: String(i), command: "train --x" })
      const params = PolicyOnnxGraph.fromOnnx(PolicyOnnxGraph.toOnnx(p))
      assert.isTrue(!(params instanceof PolicyOnnxGraph.PolicyOnnxError) && bitEqual(params.data, p.data))
    })
  })

  it("writes the same bytes for the same parameters and metadata (metadata keys sorted)", () => {
    const p = randomParams({ input: 8, encoder: learned(4), hidden: [16] }, 1)
    assert.deepStrictEqual(PolicyOnnxGraph.toOnnx(p, { b: "2", a: "1" }), PolicyOnnxGraph.toOnnx(p, { a: "1", b: "2" }))
  })

  it("names what is wrong with a malformed model", () => {
    const shape: SetScorer.Shape = { input: 12, encoder: learned(8), hidden: [32, 16] }
    const bytes = PolicyOnnxGraph.toOnnx(randomParams(shape, 3))
    const failure = (b: Uint8Array): PolicyOnnxGraph.PolicyOnnxError => {
      const r = PolicyOnnxGraph.fromOnnx(b)
      assert.instanceOf(r, PolicyOnnxGraph.PolicyOnnxError)
      return r as PolicyOnnxGraph.PolicyOnnxError
    }
    const truncated = failure(bytes.subarray(0, Math.floor(bytes.length / 2)))
    assert.strictEqual(truncated._tag, "PolicyOnnxError")
    assert.strictEqual(truncated.part, "model")
    assert.match(truncated.message, /not an ONNX model/)

    const relu = failure(edited(bytes, (g) => {
      const n = g.node?.[1]
      if (n) n.opType = "Relu"
    }))
    assert.strictEqual(relu.part, "node 1")
    assert.match(relu.message, /is Relu\(encoder\.z\) -> h, expected Tanh\(encoder\.z\) -> h/)

    const noBias = failure(edited(bytes, (g) => {
      g.initializer = (g.initializer ?? []).filter((t) => t.name !== "layer1.bias")
    }))
    assert.strictEqual(noBias.part, "layer1.bias")
    assert.strictEqual(noBias.message, "missing")

    const float = failure(edited(bytes, (g) => {
      initializer(g, "layer2.weight").dataType = 1
    }))
    assert.strictEqual(float.part, "layer2.weight")
    assert.match(float.message, /element type 1, expected DOUBLE/)

    const short = failure(edited(bytes, (g) => {
      const t = initializer(g, "layer0.weight")
      t.rawData = (t.rawData ?? new Uint8Array(0)).subarray(0, 80)
    }))
    assert.strictEqual(short.part, "layer0.weight")
    assert.strictEqual(SetScorer.headInput(shape), 12 + 8 + 2 * 8)
    assert.match(short.message, /raw data is 80 bytes, dims \[32, 36\] need 9216/)

    const noEncoder = failure(edited(bytes, (g) => {
      g.initializer = (g.initializer ?? []).filter((t) => t.name !== "encoder.weight")
    }))
    assert.strictEqual(noEncoder.part, "encoder.weight")
    assert.match(noEncoder.message, /missing/)

    const renamed = failure(edited(bytes, (g) => {
      const input = g.input?.[0]
      if (input) input.name = "x"
    }))
    assert.strictEqual(renamed.part, "input")
    assert.match(renamed.message, /inputs are \[x, members, reads\], expected \[features, members, reads\]/)
  })
})

describe("PolicyScorerOnnx", () => {
  it.effect("scores as SetScorer.forward does (float64 graph): max |Δ| ≤ 1e-5 over random shapes, inputs and sets, rows 1 to 200", () =>
    Effect.scoped(Effect.gen(function*() {
      let maxDelta = 0
      let logits = 0
      for (const [i, shape] of shapes.entries()) {
        const p = randomParams(shape, 100 + i)
        const scorer = yield* PolicyScorerOnnx.make(PolicyOnnxGraph.toOnnx(p))
        assert.deepStrictEqual(scorer.shape, { input: shape.input, encoder: shape.encoder, hidden: [...shape.hidden] })
        for (const rows of [1, 200, 1 + rng(i).int(64)]) {
          const x = randomInput(shape.input, rows, 1000 * i + rows)
          // with sets (empty ones and rows in several included) and without any
          for (const sets of [randomSets(rows, 7 * i + rows), undefined]) {
            const got = yield* scorer.score(x, rows, sets)
            const want = SetScorer.forward(p, x, rows, sets).logits
            assert.strictEqual(got.length, rows)
            for (let r = 0; r < rows; r++) maxDelta = Math.max(maxDelta, Math.abs((got[r] as number) - (want[r] as number)))
            logits += rows
          }
        }
        yield* scorer.close
      }
      console.log(`PolicyScorerOnnx: max |ORT - SetScorer.forward| = ${maxDelta.toExponential(3)} over ${logits} logits, ${shapes.length} shapes`)
      assert.isAtMost(maxDelta, 1e-5)
      // float64 end to end: the differences are summation-order rounding, not float32's ~1e-7
      assert.isAtMost(maxDelta, 1e-12)
    })))

  it.effect("rejects a wrong input width, bad rows and a closed scorer with typed errors; zero rows score to nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const p = randomParams({ input: 10, encoder: learned(4), hidden: [16] }, 9)
      const scorer = yield* PolicyScorerOnnx.make(PolicyOnnxGraph.toOnnx(p))
      const wide = yield* Effect.flip(scorer.score(randomInput(11, 3, 1), 3))
      assert.strictEqual(wide._tag, "ScorerError")
      assert.strictEqual(wide.reason, "input")
      assert.strictEqual(wide.message, "features hold 33 numbers for 3 rows (width 11), the model's input width is 10")
      const fractional = yield* Effect.flip(scorer.score(new Float64Array(10), 1.5))
      assert.strictEqual(fractional.reason, "input")
      assert.match(fractional.message, /rows must be a non-negative integer, got 1.5/)
      assert.deepStrictEqual(yield* scorer.score(new Float64Array(0), 0), new Float64Array(0))
      const badSets = yield* Effect.flip(scorer.score(new Float64Array(20), 2, { members: [[0, 2]], reads: [0, -1] }))
      assert.strictEqual(badSets.reason, "input")
      assert.strictEqual(badSets.message, "sets: set 0 has row 2, outside [0, 2)")
      yield* scorer.close
      yield* scorer.close
      const closed = yield* Effect.flip(scorer.score(new Float64Array(10), 1))
      assert.strictEqual(closed.reason, "closed")
    })))

  it.effect("will not open truncated or foreign bytes, naming the fault", () =>
    Effect.scoped(Effect.gen(function*() {
      const bytes = PolicyOnnxGraph.toOnnx(randomParams({ input: 8, encoder: learned(4), hidden: [16] }, 4))
      const truncated = yield* Effect.flip(PolicyScorerOnnx.make(bytes.subarray(0, bytes.length - 40)))
      assert.strictEqual(truncated._tag, "ScorerError")
      assert.strictEqual(truncated.reason, "model")
      assert.match(truncated.message, /^model: not an ONNX model/)
    })))

  it.effect("saves and loads a checkpoint folder: same weights bit for bit, same metadata, same scores", () =>
    Effect.scoped(Effect.gen(function*() {
      const dir = path.join(tempDir(), "nested", "checkpoint")
      const p = randomParams({ input: 24, encoder: learned(8), hidden: [32, 16] }, 5)
      const provenance = { command: "train-policy --seed 5", seed: 5, commit: "abc123", metrics: { successRate: 0.625, steps: 1200 } }
      const saved = yield* PolicyScorerOnnx.saveModel(dir, p, provenance)
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), ["paraagent-policy.json", "paraagent-policy.onnx"])
      const loaded = yield* PolicyScorerOnnx.loadModel(dir)
      assert.isTrue(bitEqual(loaded.params.data, p.data))
      assert.deepStrictEqual(loaded.params.shape, { input: 24, encoder: learned(8), hidden: [32, 16] })
      assert.deepStrictEqual(loaded.bytes, saved.bytes)
      assert.strictEqual(loaded.metadata.format, "paraagent-policy")
      assert.strictEqual(loaded.metadata.version, 2)
      assert.strictEqual(loaded.metadata.parameters, SetScorer.size(p.shape))
      assert.deepStrictEqual(loaded.metadata.shape, { input: 24, encoder: learned(8), hidden: [32, 16] })
      assert.deepStrictEqual(loaded.metadata.provenance, provenance)
      // the ONNX file alone carries the provenance too
      const inOnnx = PolicyOnnxGraph.read(loaded.bytes)
      assert.isFalse(inOnnx instanceof PolicyOnnxGraph.PolicyOnnxError)
      if (!(inOnnx instanceof PolicyOnnxGraph.PolicyOnnxError)) {
        assert.strictEqual(inOnnx.metadata["command"], "train-policy --seed 5")
        assert.strictEqual(inOnnx.metadata["metrics"], JSON.stringify(provenance.metrics))
        assert.strictEqual(inOnnx.metadata["paraagent.format"], "paraagent-policy")
      }
      const scorer = yield* PolicyScorerOnnx.make(loaded.bytes)
      const x = randomInput(24, 7, 6)
      const sets = randomSets(7, 6)
      assert.deepStrictEqual(yield* scorer.score(x, 7, sets), yield* (yield* PolicyScorerOnnx.make(PolicyOnnxGraph.toOnnx(p))).score(x, 7, sets))
    })))

  it.effect("loadModel names the missing file, the bad JSON field, the corrupt ONNX and a metadata file that disagrees", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const missing = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(missing._tag, "PolicyModelError")
      assert.strictEqual(missing.reason, "missing")
      assert.strictEqual(missing.file, path.join(dir, "paraagent-policy.json"))

      const p = randomParams({ input: 16, encoder: learned(4), hidden: [16] }, 7)
      const saved = yield* PolicyScorerOnnx.saveModel(dir, p, { seed: 7 })
      const json = fs.readFileSync(saved.metadata, "utf8")
      const rewrite = (f: (m: Record<string, unknown>) => Record<string, unknown>) =>
        fs.writeFileSync(saved.metadata, JSON.stringify(f(JSON.parse(json) as Record<string, unknown>)))

      fs.writeFileSync(saved.metadata, "{ not json")
      const bad = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(bad.reason, "metadata")
      assert.strictEqual(bad.file, saved.metadata)

      rewrite((m) => ({ ...m, shape: { input: "16", hidden: [16] } }))
      const badField = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(badField.reason, "metadata")
      assert.match(badField.message, /input/)

      rewrite((m) => ({ ...m, shape: { input: 16, encoder: learned(4), hidden: [32] } }))
      const shape = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(shape.reason, "mismatch")
      assert.strictEqual(shape.message, "shape: the metadata says input 16, learned encoder 4, hidden [32], paraagent-policy.onnx has input 16, learned encoder 4, hidden [16]")
      rewrite((m) => ({ ...m, shape: { input: 16, encoder: { kind: "identity", from: 0, width: 4 }, hidden: [16] } }))
      const encoder = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(encoder.reason, "mismatch")
      assert.match(encoder.message, /^shape: the metadata says input 16, identity encoder \[0, 4\), hidden \[16\]/)

      rewrite((m) => ({ ...m, parameters: 5 }))
      const count = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(count.reason, "mismatch")
      assert.strictEqual(SetScorer.size(p.shape), 4 * 17 + (16 + 4 + 8) * 16 + 16 + 16 + 1)
      assert.match(count.message, new RegExp(`^parameters: the metadata says 5, paraagent-policy.onnx holds ${SetScorer.size(p.shape)}`))

      // a model of another action space (same width, other features), and one saved before the hash was recorded
      assert.strictEqual((JSON.parse(json) as { featureSchema: string }).featureSchema, ActionSpace.featureSchemaHash)
      rewrite((m) => ({ ...m, featureSchema: "0badc0de" }))
      const schema = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(schema.reason, "mismatch")
      assert.strictEqual(
        schema.message,
        `featureSchema: the model was trained on action-space features 0badc0de, this action space's are ${ActionSpace.featureSchemaHash} (another version of src/agent/actions) — retrain it (npm start -- --ship <dir>)`
      )
      rewrite(({ featureSchema: _, ...m }) => m)
      const unrecorded = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(unrecorded.reason, "mismatch")
      assert.match(unrecorded.message, /^featureSchema: the model records no feature-schema hash/)

      // the weights of another save beside this metadata
      fs.writeFileSync(saved.metadata, json)
      fs.writeFileSync(saved.onnx, PolicyOnnxGraph.toOnnx(randomParams({ input: 16, encoder: learned(4), hidden: [16] }, 8)))
      const other = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(other.reason, "mismatch")
      assert.match(other.message, /^onnxSha256: the metadata says [0-9a-f]{64}, paraagent-policy.onnx hashes to [0-9a-f]{64}/)

      fs.writeFileSync(saved.onnx, saved.bytes.subarray(0, 100))
      const corrupt = yield* Effect.flip(PolicyScorerOnnx.loadModel(dir))
      assert.strictEqual(corrupt.reason, "onnx")
      assert.strictEqual(corrupt.file, saved.onnx)
      assert.match(corrupt.message, /^model: not an ONNX model/)

      const wrong = yield* Effect.flip(PolicyScorerOnnx.saveModel(dir, { shape: { input: 4, encoder: { kind: "identity", from: 0, width: 4 }, hidden: [] }, data: new Float64Array(3) }))
      assert.strictEqual(wrong.reason, "mismatch")
      assert.strictEqual(wrong.message, "params hold 3 numbers, shape input 4, identity encoder [0, 4), hidden [] has 13")
    }))
})
