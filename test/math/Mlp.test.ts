import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Mlp from "../../src/math/Mlp.ts"
import { rng } from "../../src/math/Random.ts"
import { sameBits } from "../support/Bits.ts"

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

/** The dense loops the kernels started as (every input term summed, every input gradient formed): the reference. */
const denseForward = (params: Mlp.Params, x: Float64Array, rows: number): ReadonlyArray<Float64Array> => {
  const activations: Array<Float64Array> = [x]
  let input = x
  for (const l of Mlp.layers(params.shape)) {
    const output = new Float64Array(rows * l.outputs)
    for (let r = 0; r < rows; r++) {
      for (let o = 0; o < l.outputs; o++) {
        let z = params.data[l.bias + o] as number
        for (let i = 0; i < l.inputs; i++) z += (params.data[l.weights + o * l.inputs + i] as number) * (input[r * l.inputs + i] as number)
        output[r * l.outputs + o] = l.activation === "tanh" ? Math.tanh(z) : z
      }
    }
    activations.push(output)
    input = output
  }
  return activations
}

const denseBackward = (params: Mlp.Params, activations: ReadonlyArray<Float64Array>, rows: number, dLogits: Float64Array): { readonly grad: Float64Array; readonly dInput: Float64Array } => {
  const views = Mlp.layers(params.shape)
  const grad = new Float64Array(params.data.length)
  let delta = dLogits
  let dInput = new Float64Array(0)
  for (let li = views.length - 1; li >= 0; li--) {
    const l = views[li] as Mlp.LayerView
    const input = activations[li] as Float64Array
    const output = activations[li + 1] as Float64Array
    const dz = Float64Array.from(delta, (g, k) => (l.activation === "tanh" ? g * (1 - (output[k] as number) ** 2) : g))
    dInput = new Float64Array(rows * l.inputs)
    for (let r = 0; r < rows; r++) {
      for (let o = 0; o < l.outputs; o++) {
        const g = dz[r * l.outputs + o] as number
        if (g === 0) continue
        grad[l.bias + o] = (grad[l.bias + o] as number) + g
        for (let i = 0; i < l.inputs; i++) {
          const w = l.weights + o * l.inputs + i
          grad[w] = (grad[w] as number) + g * (input[r * l.inputs + i] as number)
          dInput[r * l.inputs + i] = (dInput[r * l.inputs + i] as number) + g * (params.data[w] as number)
        }
      }
    }
    delta = dInput
  }
  return { grad, dInput }
}

/**
 * A wider network on sparse rows (about half the inputs 0, some −0): what the first layer's zero-skipping sees. Widths
 * up to 11 cover the kernels' blocks of four outputs and their remainders; a tenth of the weights are 0, so some
 * hidden units get a gradient of exactly 0 beside others that do not (a block with a skipped output).
 */
const sparseArb = fc.record({
  input: fc.integer({ min: 1, max: 24 }),
  hidden: fc.array(fc.integer({ min: 1, max: 11 }), { maxLength: 2 }),
  rows: fc.integer({ min: 1, max: 6 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 })
}).map(({ input, hidden, rows, seed }) => {
  const r = rng(seed)
  const shape: Mlp.Shape = { input, hidden }
  const data = Float64Array.from({ length: Mlp.size(shape) }, () => (r.next() < 0.1 ? 0 : r.normal() * 0.8))
  const x = Float64Array.from({ length: rows * input }, () => {
    const u = r.next()
    return u < 0.4 ? 0 : u < 0.5 ? -0 : u < 0.6 ? 1 : r.normal()
  })
  return { params: { shape, data }, rows, x, dLogits: Float64Array.from({ length: rows }, () => (r.next() < 0.2 ? 0 : r.normal())) }
})

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

  it("forward and backward equal the dense loops bit for bit on sparse rows (the zero-skipping kernels)", () => {
    fc.assert(
      fc.property(sparseArb, ({ params, rows, x, dLogits }) => {
        const reference = denseForward(params, x, rows)
        const { logits, trace } = Mlp.forward(params, x, rows)
        expect(sameBits(logits, reference.at(-1) as Float64Array)).toBe(true)
        trace.activations.forEach((a, l) => expect(sameBits(a, reference[l] as Float64Array)).toBe(true))
        const dense = denseBackward(params, reference, rows, dLogits)
        expect(sameBits(Mlp.backward(params, trace, dLogits), dense.grad)).toBe(true)
        const inputGrad = new Float64Array(rows * params.shape.input)
        expect(sameBits(Mlp.backward(params, trace, dLogits, undefined, inputGrad), dense.grad)).toBe(true)
        expect(sameBits(inputGrad, dense.dInput)).toBe(true)
      }),
      { numRuns: 200 }
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
