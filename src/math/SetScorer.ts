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
 * (its output layer scaled by `outputScale`, so an untrained network starts near uniform choices); biases 0.
 */
export const init = (shape: Shape, seed: number, outputScale = 0.1): Params => {
  const data = new Float64Array(size(shape))
  const enc = encoderSize(shape)
  if (shape.encoder.kind === "learned") {
    const r = rng(seed ^ 0x5e75)
    const bound = Math.sqrt(6 / (shape.input + shape.encoder.width))
    for (let i = 0; i < shape.encoder.width * shape.input; i++) data[i] = (2 * r.next() - 1) * bound
  }
  data.set(Mlp.init(headShape(shape), seed, outputScale).data, enc)
  return { shape, data }
}

/** The head's parameters: a view into the flat vector. */
const head = (params: Params): Mlp.Params => ({ shape: headShape(params.shape), data: params.data.subarray(encoderSize(params.shape)) })

/** What {@link backward} needs from a forward pass. */
export interface Trace {
  readonly rows: number
  readonly x: Float64Array
  readonly sets: Sets
  /** The rows' encodings (rows × width). */
  readonly h: Float64Array
  /** Per set, the row that holds each column's maximum (−1 for an empty set). */
  readonly argmax: Int32Array
  readonly head: Mlp.Trace
}

const at = (xs: ArrayLike<number>, i: number): number => xs[i] as number

/** Logits of `rows` rows (`x` is rows × input, row-major) scored against their sets, with the trace for {@link backward}. */
export const forward = (params: Params, x: Float64Array, rows: number, sets: Sets = noSets(rows)): { readonly logits: Float64Array; readonly trace: Trace } => {
  const { shape, data } = params
  const { input, encoder } = shape
  const w = encoder.width
  const learned = encoder.kind === "learned"
  // φ: the rows' encodings
  const h = new Float64Array(rows * w)
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    for (let j = 0; j < w; j++) {
      if (learned) {
        let z = at(data, w * input + j)
        const wBase = j * input
        for (let i = 0; i < input; i++) z += at(data, wBase + i) * at(x, xBase + i)
        h[r * w + j] = Math.tanh(z)
      } else {
        h[r * w + j] = at(x, xBase + encoder.from + j)
      }
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
        const v = at(h, r * w + j)
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
  // the head's input: the row, its encoding (learned), the mean and the max of the set it reads
  const width = headInput(shape)
  const z = new Float64Array(rows * width)
  for (let r = 0; r < rows; r++) {
    const base = r * width
    z.set(x.subarray(r * input, (r + 1) * input), base)
    let off = base + input
    if (learned) {
      z.set(h.subarray(r * w, (r + 1) * w), off)
      off += w
    }
    const s = at(sets.reads, r)
    if (s >= 0) {
      z.set(mean.subarray(s * w, (s + 1) * w), off)
      z.set(max.subarray(s * w, (s + 1) * w), off + w)
    }
  }
  const out = Mlp.forward(head(params), z, rows)
  return { logits: out.logits, trace: { rows, x, sets, h, argmax, head: out.trace } }
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
  const width = headInput(shape)
  const rows = trace.rows
  // the identity encoder has no parameters below the head: no gradient wrt the head's input is needed
  if (!learned) {
    Mlp.backward(head(params), trace.head, dLogits, grad.subarray(enc))
    return grad
  }
  const dz = new Float64Array(rows * width)
  Mlp.backward(head(params), trace.head, dLogits, grad.subarray(enc), dz)
  // back through the summaries and the row's own encoding to dLoss/dh
  const count = trace.sets.members.length
  const dMean = new Float64Array(count * w)
  const dMax = new Float64Array(count * w)
  const dh = new Float64Array(rows * w)
  for (let r = 0; r < rows; r++) {
    const base = r * width + input
    for (let j = 0; j < w; j++) dh[r * w + j] = at(dz, base + j)
    const s = at(trace.sets.reads, r)
    if (s < 0) continue
    for (let j = 0; j < w; j++) {
      dMean[s * w + j] = at(dMean, s * w + j) + at(dz, base + w + j)
      dMax[s * w + j] = at(dMax, s * w + j) + at(dz, base + 2 * w + j)
    }
  }
  trace.sets.members.forEach((members, s) => {
    if (members.length === 0) return
    for (let j = 0; j < w; j++) {
      const g = at(dMean, s * w + j) / members.length
      if (g !== 0) for (const r of members) dh[r * w + j] = at(dh, r * w + j) + g
      const arg = at(trace.argmax, s * w + j)
      if (arg >= 0) dh[arg * w + j] = at(dh, arg * w + j) + at(dMax, s * w + j)
    }
  })
  // through tanh to the encoder's W and b
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    for (let j = 0; j < w; j++) {
      const hv = at(trace.h, r * w + j)
      const g = at(dh, r * w + j) * (1 - hv * hv)
      if (g === 0) continue
      grad[w * input + j] = at(grad, w * input + j) + g
      const wBase = j * input
      for (let i = 0; i < input; i++) grad[wBase + i] = at(grad, wBase + i) + g * at(trace.x, xBase + i)
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
