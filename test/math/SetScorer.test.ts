import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Mlp from "../../src/math/Mlp.ts"
import { rng } from "../../src/math/Random.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import { sameBits } from "../support/Bits.ts"
import * as Plain from "./SetScorerPlain.ts"
import { maxKinks } from "./TurnLayouts.ts"

/** Random sets over `rows` rows: 0–3 sets of random members (a row may be in several), each row reading one or none. */
const setsOf = (rows: number, seed: number): SetScorer.Sets => {
  const r = rng(seed)
  const count = Math.floor(r.next() * 4)
  const members = Array.from({ length: count }, () => Array.from({ length: rows }, (_, i) => i).filter(() => r.next() < 0.6))
  const reads = Array.from({ length: rows }, () => (count === 0 || r.next() < 0.2 ? -1 : Math.floor(r.next() * count)))
  return { members, reads }
}

/** A random network and input: shape (learned or identity encoder), parameters, rows, sets and dLoss/dLogit, from one seed. */
const caseArb = fc.record({
  input: fc.integer({ min: 1, max: 5 }),
  width: fc.integer({ min: 1, max: 3 }),
  learned: fc.boolean(),
  hidden: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }),
  rows: fc.integer({ min: 1, max: 6 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 })
}).map(({ input, width, learned, hidden, rows, seed }) => {
  const r = rng(seed)
  const w = learned ? width : Math.min(width, input)
  const encoder: SetScorer.Encoder = learned ? { kind: "learned", width: w } : { kind: "identity", from: input - w, width: w }
  const shape: SetScorer.Shape = { input, encoder, hidden }
  const data = Float64Array.from({ length: SetScorer.size(shape) }, () => r.normal() * 0.8)
  return {
    params: { shape, data },
    rows,
    // a third of the inputs zero: the rows' one-hot and count columns are mostly zeros, and the forward pass skips them
    x: Float64Array.from({ length: rows * input }, () => (r.next() < 0.35 ? 0 : r.normal())),
    sets: setsOf(rows, seed + 1),
    dLogits: Float64Array.from({ length: rows }, () => r.normal())
  }
})

const loss = (params: SetScorer.Params, x: Float64Array, rows: number, sets: SetScorer.Sets, dLogits: Float64Array): number => {
  const logits = SetScorer.logits(params, x, rows, sets)
  let s = 0
  for (let r = 0; r < rows; r++) s += (dLogits[r] as number) * (logits[r] as number)
  return s
}

describe("SetScorer", () => {
  it("backward matches central finite differences (relative error < 1e-6), learned and identity encoders", () => {
    fc.assert(
      fc.property(caseArb, ({ params, rows, x, sets, dLogits }) => {
        expect(SetScorer.validateShape(params.shape)).toBeUndefined()
        expect(SetScorer.validateSets(sets, rows)).toBeUndefined()
        const { trace } = SetScorer.forward(params, x, rows, sets)
        const grad = SetScorer.backward(params, trace, dLogits)
        const h = 1e-6
        // a max that changes hands within ±h has a kink there: skip the (measure-zero) coordinates where it does
        const kinks = maxKinks(params, x, rows, sets, h)
        for (let i = 0; i < params.data.length; i++) {
          const plus = new Float64Array(params.data)
          const minus = new Float64Array(params.data)
          plus[i] = (plus[i] as number) + h
          minus[i] = (minus[i] as number) - h
          const numeric = (loss({ ...params, data: plus }, x, rows, sets, dLogits) - loss({ ...params, data: minus }, x, rows, sets, dLogits)) / (2 * h)
          const analytic = grad[i] as number
          const error = Math.abs(analytic - numeric) / Math.max(1, Math.abs(analytic), Math.abs(numeric))
          if (!kinks.has(i) && !(error < 1e-6)) expect.unreachable(`parameter ${i}: analytic ${analytic}, numeric ${numeric}`)
        }
      }),
      { numRuns: 150 }
    )
  })

  it("is the MLP over each row with its encoding (learned) and its set's mean and max appended, learned and identity encoders", () => {
    fc.assert(
      fc.property(caseArb, ({ params, rows, x, sets }) => {
        const { input, encoder } = params.shape
        const w = encoder.width
        const learned = encoder.kind === "learned"
        // the encodings, computed directly: tanh(W·x + b) (learned), or the identity's columns
        const h = Array.from({ length: rows }, (_, r) =>
          Array.from({ length: w }, (_, j) => {
            if (encoder.kind === "identity") return x[r * input + encoder.from + j] as number
            let z = params.data[w * input + j] as number
            for (let i = 0; i < input; i++) z += (params.data[j * input + i] as number) * (x[r * input + i] as number)
            return Math.tanh(z)
          }))
        const cols = input + (learned ? w : 0) + 2 * w
        const wide = new Float64Array(rows * cols)
        for (let r = 0; r < rows; r++) {
          wide.set(x.subarray(r * input, (r + 1) * input), r * cols)
          if (learned) wide.set(h[r] as Array<number>, r * cols + input)
          const at = r * cols + input + (learned ? w : 0)
          const s = sets.reads[r] as number
          const members = s >= 0 ? (sets.members[s] as ReadonlyArray<number>) : []
          for (let j = 0; j < w && members.length > 0; j++) {
            const vs = members.map((m) => (h[m] as Array<number>)[j] as number)
            wide[at + j] = vs.reduce((a, b) => a + b, 0) / vs.length
            wide[at + w + j] = Math.max(...vs)
          }
        }
        const mlp = Mlp.logits({ shape: SetScorer.headShape(params.shape), data: params.data.subarray(SetScorer.encoderSize(params.shape)) }, wide, rows)
        SetScorer.logits(params, x, rows, sets).forEach((z, r) => expect(Math.abs(z - (mlp[r] as number))).toBeLessThan(1e-12 * Math.max(1, Math.abs(z))))
      }),
      { numRuns: 200 }
    )
  })

  it("forward and backward equal the plain one-output-at-a-time loops bit for bit (the blocked kernels)", () => {
    // wider heads than caseArb's (blocks of four outputs and their remainders), a tenth of the weights 0 (a unit whose
    // gradient is exactly 0 beside others: a block with a skipped output), a fifth of the rows' dLogits 0
    const wideArb = fc.record({
      input: fc.integer({ min: 1, max: 12 }),
      width: fc.integer({ min: 1, max: 5 }),
      learned: fc.boolean(),
      hidden: fc.array(fc.integer({ min: 1, max: 11 }), { minLength: 1, maxLength: 2 }),
      rows: fc.integer({ min: 1, max: 8 }),
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 })
    }).map(({ input, width, learned, hidden, rows, seed }) => {
      const r = rng(seed)
      const w = learned ? width : Math.min(width, input)
      const encoder: SetScorer.Encoder = learned ? { kind: "learned", width: w } : { kind: "identity", from: input - w, width: w }
      const shape: SetScorer.Shape = { input, encoder, hidden }
      return {
        params: { shape, data: Float64Array.from({ length: SetScorer.size(shape) }, () => (r.next() < 0.1 ? 0 : r.normal() * 0.8)) },
        rows,
        x: Float64Array.from({ length: rows * input }, () => (r.next() < 0.35 ? 0 : r.normal())),
        sets: setsOf(rows, seed + 1),
        dLogits: Float64Array.from({ length: rows }, () => (r.next() < 0.2 ? 0 : r.normal()))
      }
    })
    fc.assert(
      fc.property(wideArb, ({ params, rows, x, sets, dLogits }) => {
        const blocked = SetScorer.forward(params, x, rows, sets)
        const plain = Plain.forward(params, x, rows, sets)
        expect(sameBits(blocked.logits, plain.logits)).toBe(true)
        expect(sameBits(blocked.trace.first, plain.trace.first)).toBe(true)
        expect(sameBits(SetScorer.backward(params, blocked.trace, dLogits), Plain.backward(params, plain.trace, dLogits))).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("stacked matrices score as they do alone (stackSets shifts members and reads)", () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ params, rows, x, sets }, rows2, seed) => {
        const r = rng(seed)
        const x2 = Float64Array.from({ length: rows2 * params.shape.input }, () => r.normal())
        const sets2 = setsOf(rows2, seed)
        const stacked = SetScorer.stackSets([{ sets, rows, offset: 0 }, { sets: sets2, rows: rows2, offset: rows }])
        const both = new Float64Array(x.length + x2.length)
        both.set(x)
        both.set(x2, x.length)
        const together = SetScorer.logits(params, both, rows + rows2, stacked)
        const alone = [...SetScorer.logits(params, x, rows, sets), ...SetScorer.logits(params, x2, rows2, sets2)]
        alone.forEach((z, i) => expect(together[i]).toBe(z))
      }),
      { numRuns: 100 }
    )
  })

  it("init sets the output layer's bias to outputBias and every other bias to 0; small output weights keep each logit near it", () => {
    for (const encoder of [{ kind: "learned", width: 4 }, { kind: "identity", from: 2, width: 3 }] as const) {
      const shape: SetScorer.Shape = { input: 5, encoder, hidden: [6, 3] }
      const params = SetScorer.init(shape, 11, 0.01, -2.5)
      const views = Mlp.layers(SetScorer.headShape(shape))
      const enc = SetScorer.encoderSize(shape)
      views.forEach((l, i) => {
        for (let o = 0; o < l.outputs; o++) expect(params.data[enc + l.bias + o]).toBe(i === views.length - 1 ? -2.5 : 0)
      })
      const r = rng(3)
      const x = Float64Array.from({ length: 4 * 5 }, () => r.normal())
      for (const z of SetScorer.logits(params, x, 4)) expect(Math.abs(z + 2.5)).toBeLessThan(0.1)
      // without a bias the initialisation is what it was: the same weights, the output bias 0
      const plain = SetScorer.init(shape, 11, 0.01)
      params.data.forEach((v, i) => expect(plain.data[i]).toBe(i === enc + (views.at(-1) as Mlp.LayerView).bias ? 0 : v))
    }
  })

  it("refuses sets that do not fit the matrix, and shapes whose identity columns fall outside the row", () => {
    expect(SetScorer.validateSets({ members: [[0, 3]], reads: [0, 0] }, 2)).toMatch(/set 0 has row 3/)
    expect(SetScorer.validateSets({ members: [[0]], reads: [1, 0] }, 2)).toMatch(/row 0 reads set 1/)
    expect(SetScorer.validateShape({ input: 4, encoder: { kind: "identity", from: 2, width: 3 }, hidden: [2] })).toMatch(/not within the 4 input columns/)
  })
})
