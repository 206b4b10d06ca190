/**
 * The learned policy's scoring network: every row (a candidate action or a decision) is scored in the context of the
 * set it is weighed against. A per-row encoder φ (learned: one tanh layer; or the identity over a block of the row's
 * columns), mean- and max-pooled over the set each row reads (DeepSets), then an MLP head over the row, its own
 * encoding and the two summaries gives one logit. With the identity encoder this is exactly the earlier MLP over rows
 * with fixed mean/max summaries. Parameters are one flat Float64Array (the encoder's W and b, then the head's
 * `Mlp` layers). Pure: no Effect, no I/O.
 */
import * as Mlp from "./Mlp.ts"
import { rng } from "./Random.ts"

/** The per-row encoder: learned (`width` tanh units over the whole row) or the identity over columns [from, from + width). */
export type Encoder =
  | { readonly kind: "learned"; readonly width: number }
  | { readonly kind: "identity"; readonly from: number; readonly width: number }

/** The network's shape: the row width, the encoder, the head's hidden widths (its output is one logit). */
export interface Shape {
  readonly input: number
  readonly encoder: Encoder
  readonly hidden: ReadonlyArray<number>
}

/** Parameters of a network of one shape. */
export interface Params {
  readonly shape: Shape
  readonly data: Float64Array
}

/**
 * The sets of a scored matrix: each set's member rows, and per row the set whose summary it reads (−1: none; its
 * summary is zeros). A row may belong to several sets (a fact: every fact, and its clause's facts).
 */
export interface Sets {
  readonly members: ReadonlyArray<ReadonlyArray<number>>
  readonly reads: ReadonlyArray<number>
}

/** No sets: every row reads zeros. */
export const noSets = (rows: number): Sets => ({ members: [], reads: Array.from({ length: rows }, () => -1) })

/** Width of the head's input: the row, its own learned encoding (learned encoder only), the mean and the max summaries. */
export const headInput = (shape: Shape): number => shape.input + (shape.encoder.kind === "learned" ? shape.encoder.width : 0) + 2 * shape.encoder.width

/** The head as an MLP shape. */
export const headShape = (shape: Shape): Mlp.Shape => ({ input: headInput(shape), hidden: shape.hidden })

/** Number of the encoder's parameters (W: width × input, then b). */
export const encoderSize = (shape: Shape): number => (shape.encoder.kind === "learned" ? shape.encoder.width * (shape.input + 1) : 0)

/** Number of parameters of a shape. */
export const size = (shape: Shape): number => encoderSize(shape) + Mlp.size(headShape(shape))

/** Why a shape is malformed, or undefined. */
export const validateShape = (shape: Shape): string | undefined => {
  const positive = (n: number) => Number.isInteger(n) && n > 0
  if (!positive(shape.input)) return `input is ${shape.input}, not a positive integer`
  if (!positive(shape.encoder.width)) return `encoder width is ${shape.encoder.width}, not a positive integer`
  if (shape.encoder.kind === "identity" && (!Number.isInteger(shape.encoder.from) || shape.encoder.from < 0 || shape.encoder.from + shape.encoder.width > shape.input)) {
    return `identity encoder columns [${shape.encoder.from}, ${shape.encoder.from + shape.encoder.width}) are not within the ${shape.input} input columns`
  }
  if (!shape.hidden.every(positive)) return `hidden widths [${shape.hidden.join(", ")}] are not positive integers`
  return undefined
}

/** Why sets do not fit a matrix of `rows` rows, or undefined. */
export const validateSets = (sets: Sets, rows: number): string | undefined => {
  if (sets.reads.length !== rows) return `reads has ${sets.reads.length} entries for ${rows} rows`
  for (const [i, s] of sets.reads.entries()) {
    if (!Number.isInteger(s) || s < -1 || s >= sets.members.length) return `row ${i} reads set ${s}, not one of the ${sets.members.length} sets`
  }
  for (const [k, m] of sets.members.entries()) {
    for (const r of m) if (!Number.isInteger(r) || r < 0 || r >= rows) return `set ${k} has row ${r}, outside [0, ${rows})`
  }
  return undefined
}

/**
 * Seeded initialisation: the encoder's weights uniform in ±sqrt(6 / (in + out)) (Glorot), the head as `Mlp.init`
 * (its output layer scaled by `outputScale`, so every untrained logit starts near the output bias); biases 0 but the
 * output layer's, which is `outputBias` (a prior: near it, a row scored as a Bernoulli has p ≈ σ(outputBias)).
 */
export const init = (shape: Shape, seed: number, outputScale = 0.1, outputBias = 0): Params => {
  const data = new Float64Array(size(shape))
  const enc = encoderSize(shape)
  if (shape.encoder.kind === "learned") {
    const r = rng(seed ^ 0x5e75)
    const bound = Math.sqrt(6 / (shape.input + shape.encoder.width))
    for (let i = 0; i < shape.encoder.width * shape.input; i++) data[i] = (2 * r.next() - 1) * bound
  }
  data.set(Mlp.init(headShape(shape), seed, outputScale).data, enc)
  const output = Mlp.layers(headShape(shape)).at(-1) as Mlp.LayerView
  data[enc + output.bias] = outputBias
  return { shape, data }
}

/**
 * The head's first layer, and the layers above it as an MLP of their own (absent when the head has no hidden layer),
 * starting at `restAt` in the head's parameters.
 */
const headParts = (params: Params): { readonly first: Mlp.LayerView; readonly data: Float64Array; readonly rest: Mlp.Params | undefined; readonly restAt: number } => {
  const views = Mlp.layers(headShape(params.shape))
  const data = params.data.subarray(encoderSize(params.shape))
  const first = views[0] as Mlp.LayerView
  const restAt = views[1]?.weights ?? data.length
  return {
    first,
    data,
    rest: views[1] === undefined ? undefined : { shape: { input: first.outputs, hidden: params.shape.hidden.slice(1) }, data: data.subarray(restAt) },
    restAt
  }
}

/** What {@link backward} needs from a forward pass. */
export interface Trace {
  readonly rows: number
  readonly x: Float64Array
  readonly sets: Sets
  /** The rows' encodings (rows × width). */
  readonly h: Float64Array
  /** Per set, the mean and the max of its members' encodings (sets × width). */
  readonly mean: Float64Array
  readonly max: Float64Array
  /** Per set, the row that holds each column's maximum (−1 for an empty set). */
  readonly argmax: Int32Array
  /** The head's first layer's output per row (rows × its width, after its activation). */
  readonly first: Float64Array
  /** The layers above the first (absent when the head has no hidden layer). */
  readonly rest: Mlp.Trace | undefined
}


/** The non-zero columns of row `r` of `x` (`input` wide) into `into`; their count. */
const nonZeroColumns = (x: Float64Array, base: number, input: number, into: Int32Array): number => {
  let count = 0
  for (let i = 0; i < input; i++) if ((x[base + i] as number) !== 0) into[count++] = i
  return count
}

/**
 * Logits of `rows` rows (`x` is rows × input, row-major) scored against their sets, with the trace for {@link backward}.
 *
 * The head's first layer reads the row, its encoding and its set's summaries. The summaries' share of it — the same for
 * every row that reads the set — is computed once per set, and only a row's non-zero columns are read (its one-hot and
 * count features are mostly zeros): the same function as the dense layer over the concatenated input, summed in
 * another order.
 */
export const forward = (params: Params, x: Float64Array, rows: number, sets: Sets = noSets(rows)): { readonly logits: Float64Array; readonly trace: Trace } => {
  const { shape, data } = params
  const { input, encoder } = shape
  const w = encoder.width
  const learned = encoder.kind === "learned"
  const nonZero = new Int32Array(input)
  // φ: the rows' encodings
  const h = new Float64Array(rows * w)
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    if (learned) {
      const count = nonZeroColumns(x, xBase, input, nonZero)
      for (let j = 0; j < w; j++) {
        let z = (data[w * input + j] as number)
        const wBase = j * input
        for (let k = 0; k < count; k++) {
          const i = (nonZero[k] as number)
          z += (data[wBase + i] as number) * (x[xBase + i] as number)
        }
        h[r * w + j] = Math.tanh(z)
      }
    } else {
      for (let j = 0; j < w; j++) h[r * w + j] = (x[xBase + encoder.from + j] as number)
    }
  }
  // the summaries: mean and max of the encodings over each set
  const count = sets.members.length
  const mean = new Float64Array(count * w)
  const max = new Float64Array(count * w)
  const argmax = new Int32Array(count * w).fill(-1)
  sets.members.forEach((members, s) => {
    if (members.length === 0) return
    for (let j = 0; j < w; j++) {
      let sum = 0
      let best = -Infinity
      let arg = -1
      for (const r of members) {
        const v = (h[r * w + j] as number)
        sum += v
        if (v > best) {
          best = v
          arg = r
        }
      }
      mean[s * w + j] = sum / members.length
      max[s * w + j] = best
      argmax[s * w + j] = arg
    }
  })
  // the head's first layer over [row | its encoding (learned) | mean | max]
  const { first: l, data: d, rest } = headParts(params)
  const out = l.outputs
  const own = input
  const meanAt = input + (learned ? w : 0)
  const maxAt = meanAt + w
  // the summaries' share per set
  const shared = new Float64Array(count * out)
  for (let s = 0; s < count; s++) {
    if ((sets.members[s] as ReadonlyArray<number>).length === 0) continue
    for (let o = 0; o < out; o++) {
      const wBase = l.weights + o * l.inputs
      let z = 0
      for (let j = 0; j < w; j++) z += (d[wBase + meanAt + j] as number) * (mean[s * w + j] as number) + (d[wBase + maxAt + j] as number) * (max[s * w + j] as number)
      shared[s * out + o] = z
    }
  }
  const tanh = l.activation === "tanh"
  const first = new Float64Array(rows * out)
  const values = new Float64Array(input)
  // per row: its non-zero columns and their values once, then four outputs summed side by side (each in its own
  // accumulator, in the order it would be summed alone)
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    const cols = nonZeroColumns(x, xBase, input, nonZero)
    for (let k = 0; k < cols; k++) values[k] = x[xBase + (nonZero[k] as number)] as number
    const s = (sets.reads[r] as number)
    const hBase = r * w
    const outBase = r * out
    let o = 0
    for (; o + 4 <= out; o += 4) {
      const w0 = l.weights + o * l.inputs
      const w1 = w0 + l.inputs
      const w2 = w1 + l.inputs
      const w3 = w2 + l.inputs
      let z0 = (d[l.bias + o] as number)
      let z1 = (d[l.bias + o + 1] as number)
      let z2 = (d[l.bias + o + 2] as number)
      let z3 = (d[l.bias + o + 3] as number)
      for (let k = 0; k < cols; k++) {
        const i = (nonZero[k] as number)
        const v = (values[k] as number)
        z0 += (d[w0 + i] as number) * v
        z1 += (d[w1 + i] as number) * v
        z2 += (d[w2 + i] as number) * v
        z3 += (d[w3 + i] as number) * v
      }
      if (learned) {
        for (let j = 0; j < w; j++) {
          const hv = (h[hBase + j] as number)
          z0 += (d[w0 + own + j] as number) * hv
          z1 += (d[w1 + own + j] as number) * hv
          z2 += (d[w2 + own + j] as number) * hv
          z3 += (d[w3 + own + j] as number) * hv
        }
      }
      if (s >= 0) {
        z0 += (shared[s * out + o] as number)
        z1 += (shared[s * out + o + 1] as number)
        z2 += (shared[s * out + o + 2] as number)
        z3 += (shared[s * out + o + 3] as number)
      }
      first[outBase + o] = tanh ? Math.tanh(z0) : z0
      first[outBase + o + 1] = tanh ? Math.tanh(z1) : z1
      first[outBase + o + 2] = tanh ? Math.tanh(z2) : z2
      first[outBase + o + 3] = tanh ? Math.tanh(z3) : z3
    }
    for (; o < out; o++) {
      const wBase = l.weights + o * l.inputs
      let z = (d[l.bias + o] as number)
      for (let k = 0; k < cols; k++) z += (d[wBase + (nonZero[k] as number)] as number) * (values[k] as number)
      if (learned) for (let j = 0; j < w; j++) z += (d[wBase + own + j] as number) * (h[hBase + j] as number)
      if (s >= 0) z += (shared[s * out + o] as number)
      first[outBase + o] = tanh ? Math.tanh(z) : z
    }
  }
  if (rest === undefined) return { logits: first, trace: { rows, x, sets, h, mean, max, argmax, first, rest: undefined } }
  const above = Mlp.forward(rest, first, rows)
  return { logits: above.logits, trace: { rows, x, sets, h, mean, max, argmax, first, rest: above.trace } }
}

/** Logits only. */
export const logits = (params: Params, x: Float64Array, rows: number, sets?: Sets): Float64Array => forward(params, x, rows, sets).logits

/**
 * The gradient of a scalar loss with respect to the parameters, given dLoss/dLogit per row; accumulated into `into`
 * when given. The max summary passes its gradient to the row that holds the maximum (the first, on ties).
 */
export const backward = (params: Params, trace: Trace, dLogits: Float64Array, into?: Float64Array): Float64Array => {
  const { shape, data } = params
  const { input, encoder } = shape
  const w = encoder.width
  const learned = encoder.kind === "learned"
  const grad = into ?? new Float64Array(data.length)
  const enc = encoderSize(shape)
  const rows = trace.rows
  const { first: l, data: d, rest, restAt } = headParts(params)
  const out = l.outputs
  const headGrad = grad.subarray(enc)
  // the layers above the first, back to dLoss/d(first layer's output)
  let dFirst = dLogits
  if (rest !== undefined && trace.rest !== undefined) {
    dFirst = new Float64Array(rows * out)
    Mlp.backward(rest, trace.rest, dLogits, headGrad.subarray(restAt), dFirst)
  }
  // the first layer: its weights and bias, dLoss/dh of the row's own encoding, and per set the summed gradient of the
  // rows that read it (their shared term)
  const own = input
  const meanAt = input + (learned ? w : 0)
  const maxAt = meanAt + w
  const count = trace.sets.members.length
  const perSet = new Float64Array(count * out)
  const dh = new Float64Array(rows * w)
  const nonZero = new Int32Array(input)
  const tanh = l.activation === "tanh"
  const values = new Float64Array(input)
  const gs = new Float64Array(out)
  // per row, the outputs whose weight gradients the blocked loop already added
  const weightsDone = new Uint8Array(out)
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    const cols = nonZeroColumns(trace.x, xBase, input, nonZero)
    for (let k = 0; k < cols; k++) values[k] = trace.x[xBase + (nonZero[k] as number)] as number
    weightsDone.fill(0)
    const s = (trace.sets.reads[r] as number)
    for (let o = 0; o < out; o++) {
      const a = (trace.first[r * out + o] as number)
      gs[o] = tanh ? (dFirst[r * out + o] as number) * (1 - a * a) : (dFirst[r * out + o] as number)
    }
    // each gradient entry takes its terms in row order, whatever the order of a row's outputs: four outputs side by
    // side when none of their gradients is 0 (a 0 is skipped, as alone)
    let o = 0
    for (; o + 4 <= out; o += 4) {
      const g0 = (gs[o] as number)
      const g1 = (gs[o + 1] as number)
      const g2 = (gs[o + 2] as number)
      const g3 = (gs[o + 3] as number)
      if (g0 === 0 || g1 === 0 || g2 === 0 || g3 === 0) continue
      weightsDone.fill(1, o, o + 4)
      const w0 = l.weights + o * l.inputs
      const w1 = w0 + l.inputs
      const w2 = w1 + l.inputs
      const w3 = w2 + l.inputs
      for (let k = 0; k < cols; k++) {
        const i = (nonZero[k] as number)
        const v = (values[k] as number)
        headGrad[w0 + i] = (headGrad[w0 + i] as number) + g0 * v
        headGrad[w1 + i] = (headGrad[w1 + i] as number) + g1 * v
        headGrad[w2 + i] = (headGrad[w2 + i] as number) + g2 * v
        headGrad[w3 + i] = (headGrad[w3 + i] as number) + g3 * v
      }
    }
    for (let o = 0; o < out; o++) {
      const g = (gs[o] as number)
      if (g === 0) continue
      headGrad[l.bias + o] = (headGrad[l.bias + o] as number) + g
      const wBase = l.weights + o * l.inputs
      if (weightsDone[o] === 0) {
        for (let k = 0; k < cols; k++) {
          const i = (nonZero[k] as number)
          headGrad[wBase + i] = (headGrad[wBase + i] as number) + g * (values[k] as number)
        }
      }
      if (learned) {
        for (let j = 0; j < w; j++) {
          headGrad[wBase + own + j] = (headGrad[wBase + own + j] as number) + g * (trace.h[r * w + j] as number)
          dh[r * w + j] = (dh[r * w + j] as number) + g * (d[wBase + own + j] as number)
        }
      }
      if (s >= 0) perSet[s * out + o] = (perSet[s * out + o] as number) + g
    }
  }
  const dMean = new Float64Array(count * w)
  const dMax = new Float64Array(count * w)
  for (let s = 0; s < count; s++) {
    if ((trace.sets.members[s] as ReadonlyArray<number>).length === 0) continue
    for (let o = 0; o < out; o++) {
      const g = (perSet[s * out + o] as number)
      if (g === 0) continue
      const wBase = l.weights + o * l.inputs
      for (let j = 0; j < w; j++) {
        headGrad[wBase + meanAt + j] = (headGrad[wBase + meanAt + j] as number) + g * (trace.mean[s * w + j] as number)
        headGrad[wBase + maxAt + j] = (headGrad[wBase + maxAt + j] as number) + g * (trace.max[s * w + j] as number)
        dMean[s * w + j] = (dMean[s * w + j] as number) + g * (d[wBase + meanAt + j] as number)
        dMax[s * w + j] = (dMax[s * w + j] as number) + g * (d[wBase + maxAt + j] as number)
      }
    }
  }
  // the identity encoder has no parameters below the head
  if (!learned) return grad
  // back through the summaries to the members' encodings
  trace.sets.members.forEach((members, s) => {
    if (members.length === 0) return
    for (let j = 0; j < w; j++) {
      const g = (dMean[s * w + j] as number) / members.length
      if (g !== 0) for (const r of members) dh[r * w + j] = (dh[r * w + j] as number) + g
      const arg = (trace.argmax[s * w + j] as number)
      if (arg >= 0) dh[arg * w + j] = (dh[arg * w + j] as number) + (dMax[s * w + j] as number)
    }
  })
  // through tanh to the encoder's W and b (the row's non-zero columns only)
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    const cols = nonZeroColumns(trace.x, xBase, input, nonZero)
    for (let j = 0; j < w; j++) {
      const hv = (trace.h[r * w + j] as number)
      const g = (dh[r * w + j] as number) * (1 - hv * hv)
      if (g === 0) continue
      grad[w * input + j] = (grad[w * input + j] as number) + g
      const wBase = j * input
      for (let k = 0; k < cols; k++) {
        const i = (nonZero[k] as number)
        grad[wBase + i] = (grad[wBase + i] as number) + g * (trace.x[xBase + i] as number)
      }
    }
  }
  return grad
}

/** Several matrices' sets stacked as one (the row offsets of each matrix in the stack given): members and reads shifted. */
export const stackSets = (parts: ReadonlyArray<{ readonly sets: Sets | undefined; readonly rows: number; readonly offset: number }>): Sets => {
  const members: Array<ReadonlyArray<number>> = []
  const reads: Array<number> = []
  for (const part of parts) {
    const sets = part.sets ?? noSets(part.rows)
    const base = members.length
    for (const m of sets.members) members.push(m.map((r) => r + part.offset))
    for (const s of sets.reads) reads.push(s < 0 ? -1 : s + base)
  }
  return { members, reads }
}
