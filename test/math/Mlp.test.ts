import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Mlp from "../../src/math/Mlp.ts"
import { rng } from "../../src/math/Random.ts"

/** A random network: shape, parameters, an input matrix and a dLoss/dLogit per row, all from one seed. */
const caseArb = fc.record({
  input: fc.integer({ min: 1, max: 4 }),
  hidden: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }),
  rows: fc.integer({ min: 1, max: 4 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 })
}).map(({ input, hidden, rows, seed }) => {
  const r = rng(seed)
  const shape: Mlp.Shape = { input, hidden }
  const data = Float64Array.from({ length: Mlp.size(shape) }, () => r.normal() * 0.8)
  return {
    params: { shape, data },
    rows,
    x: Float64Array.from({ length: rows * input }, () => r.normal()),
    dLogits: Float64Array.from({ length: rows }, () => r.normal())
  }
})

/** The scalar whose gradient backward computes: Σ_r dLogits_r · logit_r. */
const loss = (params: Mlp.Params, x: Float64Array, rows: number, dLogits: Float64Array): number => {
  const logits = Mlp.logits(params, x, rows)
  let s = 0
  for (let r = 0; r < rows; r++) s += (dLogits[r] as number) * (logits[r] as number)
  return s
}

describe("Mlp", () => {
  it("backward matches central finite differences (relative error < 1e-6)", () => {
    fc.assert(
      fc.property(caseArb, ({ params, rows, x, dLogits }) => {
        const { trace } = Mlp.forward(params, x, rows)
        const grad = Mlp.backward(params, trace, dLogits)
        const h = 1e-5
        for (let i = 0; i < params.data.length; i++) {
          const plus = new Float64Array(params.data)
          const minus = new Float64Array(params.data)
          plus[i] = (plus[i] as number) + h
          minus[i] = (minus[i] as number) - h
          const numeric = (loss({ ...params, data: plus }, x, rows, dLogits) - loss({ ...params, data: minus }, x, rows, dLogits)) / (2 * h)
          const analytic = grad[i] as number
          const error = Math.abs(analytic - numeric) / Math.max(1, Math.abs(analytic), Math.abs(numeric))
          if (!(error < 1e-6)) expect.unreachable(`parameter ${i}: analytic ${analytic}, numeric ${numeric}`)
        }
      }),
      { numRuns: 100 }
    )
  })

  it("backward accumulates into a given vector", () => {
    fc.assert(
      fc.property(caseArb, ({ params, rows, x, dLogits }) => {
        const { trace } = Mlp.forward(params, x, rows)
        const once = Mlp.backward(params, trace, dLogits)
        const twice = Mlp.backward(params, trace, dLogits, Mlp.backward(params, trace, dLogits))
        twice.forEach((g, i) => expect(g).toBeCloseTo(2 * (once[i] as number), 12))
      }),
      { numRuns: 30 }
    )
  })

  it("a network without hidden layers is the linear map w·x + b", () => {
    const params: Mlp.Params = { shape: { input: 2, hidden: [] }, data: Float64Array.from([0.5, -2, 0.25]) }
    expect([...Mlp.logits(params, Float64Array.from([1, 2, -4, 0.5]), 2)]).toEqual([0.5 - 4 + 0.25, -2 - 1 + 0.25])
  })

  it("size and layers: Σ (in·out + out), offsets contiguous, tanh hidden and a linear output", () => {
    const shape: Mlp.Shape = { input: 3, hidden: [4, 2] }
    expect(Mlp.size(shape)).toBe(3 * 4 + 4 + (4 * 2 + 2) + (2 * 1 + 1))
    expect(Mlp.size({ input: 5, hidden: [] })).toBe(6)
    expect(Mlp.layers(shape)).toEqual([
      { inputs: 3, outputs: 4, weights: 0, bias: 12, activation: "tanh" },
      { inputs: 4, outputs: 2, weights: 16, bias: 24, activation: "tanh" },
      { inputs: 2, outputs: 1, weights: 26, bias: 28, activation: "linear" }
    ])
  })

  it("init is deterministic by seed, Glorot-bounded, with zero biases and a scaled output layer", () => {
    const shape: Mlp.Shape = { input: 6, hidden: [8] }
    const a = Mlp.init(shape, 7)
    expect(a.data).toEqual(Mlp.init(shape, 7).data)
    expect(a.data).not.toEqual(Mlp.init(shape, 8).data)
    expect(a.data.length).toBe(Mlp.size(shape))
    const [hidden, output] = Mlp.layers(shape) as [Mlp.LayerView, Mlp.LayerView]
    const w1 = a.data.subarray(hidden.weights, hidden.bias)
    const w2 = a.data.subarray(output.weights, output.bias)
    expect(w1.every((w) => Math.abs(w) <= Math.sqrt(6 / 14))).toBe(true)
    expect(w1.some((w) => w !== 0)).toBe(true)
    expect(w2.every((w) => Math.abs(w) <= 0.1 * Math.sqrt(6 / 9))).toBe(true)
    expect([...a.data.subarray(hidden.bias, hidden.bias + 8), ...a.data.subarray(output.bias, output.bias + 1)]).toEqual(Array(9).fill(0))
  })
})
