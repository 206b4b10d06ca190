/**
 * The static encoder's parameters and its plain-JS forward pass: embedding lookup, pooling weighted by a learned
 * per-row weight and the token's mass, L2 normalisation. The int8 form is what ships in ONNX; both forwards are here.
 */
import type { Rng } from "../math/Random.ts"
import type { StaticEncoding } from "./TokenizerStatic.ts"

/** A trainable static encoder: `rows × dim` embeddings and one pooling weight per row. */
export interface StaticModel {
  readonly rows: number
  readonly dim: number
  /** Row-major `rows × dim`. */
  readonly embeddings: Float32Array
  readonly weights: Float32Array
}

/** The shipped form: int8 codes with one float scale per row (dequantised value = code · scale). */
export interface QuantizedModel {
  readonly rows: number
  readonly dim: number
  /** Row-major `rows × dim`. */
  readonly codes: Int8Array
  readonly scales: Float32Array
  readonly weights: Float32Array
}

/** The smallest norm a pooled vector is divided by (an empty text embeds to the zero vector, not NaN). */
export const normEpsilon = 1e-12

/** A model with N(0, initScale²/dim) embeddings and unit weights. */
export const init = (rows: number, dim: number, rng: Rng, initScale = 1): StaticModel => {
  const embeddings = new Float32Array(rows * dim)
  const sd = initScale / Math.sqrt(dim)
  for (let i = 0; i < embeddings.length; i++) embeddings[i] = rng.normal() * sd
  return { rows, dim, embeddings, weights: new Float32Array(rows).fill(1) }
}

/** Divides `v` in place by max(‖v‖, ε) and returns ‖v‖. */
export const normalizeInPlace = (v: Float32Array): number => {
  let sq = 0
  for (let i = 0; i < v.length; i++) sq += (v[i] ?? 0) * (v[i] ?? 0)
  const norm = Math.sqrt(sq)
  const d = Math.max(norm, normEpsilon)
  for (let i = 0; i < v.length; i++) v[i] = (v[i] ?? 0) / d
  return norm
}

/** The pooled, un-normalised vector Σ mass·weight·embedding of one text (into `out`, which is overwritten). */
export const poolInto = (model: StaticModel, encoding: StaticEncoding, out: Float32Array): Float32Array => {
  const { dim, embeddings, weights } = model
  out.fill(0)
  for (let t = 0; t < encoding.ids.length; t++) {
    const id = encoding.ids[t] ?? 0
    const c = (encoding.mass[t] ?? 0) * (weights[id] ?? 0)
    if (c === 0) continue
    const o = id * dim
    for (let j = 0; j < dim; j++) out[j] = (out[j] ?? 0) + c * (embeddings[o + j] ?? 0)
  }
  return out
}

/** The unit-norm embedding of one text (the zero vector for a text with no tokens). */
export const encode = (model: StaticModel, encoding: StaticEncoding): Float32Array => {
  const v = poolInto(model, encoding, new Float32Array(model.dim))
  normalizeInPlace(v)
  return v
}

/** Embeds many texts into one row-major `n × dim` matrix. */
export const encodeAll = (model: StaticModel, encodings: ReadonlyArray<StaticEncoding>): Float32Array => {
  const out = new Float32Array(encodings.length * model.dim)
  const tmp = new Float32Array(model.dim)
  encodings.forEach((e, i) => {
    poolInto(model, e, tmp)
    normalizeInPlace(tmp)
    out.set(tmp, i * model.dim)
  })
  return out
}

/** Symmetric per-row int8 quantisation: scale = max |value| / 127, code = round(value / scale). */
export const quantize = (model: StaticModel): QuantizedModel => {
  const { rows, dim, embeddings } = model
  const codes = new Int8Array(rows * dim)
  const scales = new Float32Array(rows)
  for (let r = 0; r < rows; r++) {
    let max = 0
    for (let j = 0; j < dim; j++) max = Math.max(max, Math.abs(embeddings[r * dim + j] ?? 0))
    const scale = max > 0 ? Math.fround(max / 127) : 1
    scales[r] = scale
    for (let j = 0; j < dim; j++) {
      codes[r * dim + j] = Math.max(-127, Math.min(127, Math.round((embeddings[r * dim + j] ?? 0) / scale)))
    }
  }
  return { rows, dim, codes, scales, weights: Float32Array.from(model.weights) }
}

/**
 * The forward pass of the quantised model in the order the ONNX graph computes it:
 * coefficient = fp32(fp32(scale·weight)·mass), term = fp32(code·coefficient), summed over tokens, then L2-normalised.
 */
export const encodeQuantized = (model: QuantizedModel, encoding: StaticEncoding): Float32Array => {
  const { dim, codes, scales, weights } = model
  const out = new Float32Array(dim)
  for (let t = 0; t < encoding.ids.length; t++) {
    const id = encoding.ids[t] ?? 0
    const c = Math.fround(Math.fround((scales[id] ?? 0) * (weights[id] ?? 0)) * (encoding.mass[t] ?? 0))
    const o = id * dim
    for (let j = 0; j < dim; j++) out[j] = (out[j] ?? 0) + Math.fround((codes[o + j] ?? 0) * c)
  }
  normalizeInPlace(out)
  return out
}

/** The float model a quantised one stands for (embedding = code · scale), e.g. to fine-tune a shipped model. */
export const dequantize = (model: QuantizedModel): StaticModel => {
  const { rows, dim, codes, scales } = model
  const embeddings = new Float32Array(rows * dim)
  for (let r = 0; r < rows; r++) {
    const s = scales[r] ?? 0
    for (let j = 0; j < dim; j++) embeddings[r * dim + j] = (codes[r * dim + j] ?? 0) * s
  }
  return { rows, dim, embeddings, weights: Float32Array.from(model.weights) }
}

/**
 * The indices of the k highest scores, best first (ties: the lower index first): one pass with a sorted insertion
 * buffer of at most k entries, skipping any score that cannot enter it.
 */
export const topIndices = (scores: Float32Array, k: number): Array<number> => {
  const top: Array<number> = []
  let threshold = -Infinity
  for (let r = 0; r < scores.length; r++) {
    const s = scores[r] as number
    if (top.length === k && s <= threshold) continue
    let pos = top.length
    while (pos > 0 && (scores[top[pos - 1] as number] as number) < s) pos--
    top.splice(pos, 0, r)
    if (top.length > k) top.pop()
    if (top.length === k) threshold = scores[top[k - 1] as number] as number
  }
  return top
}
