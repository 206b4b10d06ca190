/**
 * The set scorer's kernels as plain loops, one output at a time (the code before its first layer summed four outputs
 * side by side): the reference `SetScorer.test.ts` holds the blocked kernels to, bit for bit. The layers above the
 * first are `Mlp`'s own (held to the dense loops in `Mlp.test.ts`).
 */
import * as Mlp from "../../src/math/Mlp.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"

/**
 * The head's first layer, and the layers above it as an MLP of their own (absent when the head has no hidden layer),
 * starting at `restAt` in the head's parameters.
 */
const headParts = (params: SetScorer.Params): { readonly first: Mlp.LayerView; readonly data: Float64Array; readonly rest: Mlp.Params | undefined; readonly restAt: number } => {
  const views = Mlp.layers(SetScorer.headShape(params.shape))
  const data = params.data.subarray(SetScorer.encoderSize(params.shape))
  const first = views[0] as Mlp.LayerView
  const restAt = views[1]?.weights ?? data.length
  return {
    first,
    data,
    rest: views[1] === undefined ? undefined : { shape: { input: first.outputs, hidden: params.shape.hidden.slice(1) }, data: data.subarray(restAt) },
    restAt
  }
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
export const forward = (params: SetScorer.Params, x: Float64Array, rows: number, sets: SetScorer.Sets = SetScorer.noSets(rows)): { readonly logits: Float64Array; readonly trace: SetScorer.Trace } => {
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
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    const cols = nonZeroColumns(x, xBase, input, nonZero)
    const s = (sets.reads[r] as number)
    for (let o = 0; o < out; o++) {
      const wBase = l.weights + o * l.inputs
      let z = (d[l.bias + o] as number)
      for (let k = 0; k < cols; k++) {
        const i = (nonZero[k] as number)
        z += (d[wBase + i] as number) * (x[xBase + i] as number)
      }
      if (learned) for (let j = 0; j < w; j++) z += (d[wBase + own + j] as number) * (h[r * w + j] as number)
      if (s >= 0) z += (shared[s * out + o] as number)
      first[r * out + o] = tanh ? Math.tanh(z) : z
    }
  }
  if (rest === undefined) return { logits: first, trace: { rows, x, sets, h, mean, max, argmax, first, rest: undefined } }
  const above = Mlp.forward(rest, first, rows)
  return { logits: above.logits, trace: { rows, x, sets, h, mean, max, argmax, first, rest: above.trace } }
}

/**
 * The gradient of a scalar loss with respect to the parameters, given dLoss/dLogit per row; accumulated into `into`
 * when given. The max summary passes its gradient to the row that holds the maximum (the first, on ties).
 */
export const backward = (params: SetScorer.Params, trace: SetScorer.Trace, dLogits: Float64Array, into?: Float64Array): Float64Array => {
  const { shape, data } = params
  const { input, encoder } = shape
  const w = encoder.width
  const learned = encoder.kind === "learned"
  const grad = into ?? new Float64Array(data.length)
  const enc = SetScorer.encoderSize(shape)
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
  for (let r = 0; r < rows; r++) {
    const xBase = r * input
    const cols = nonZeroColumns(trace.x, xBase, input, nonZero)
    const s = (trace.sets.reads[r] as number)
    for (let o = 0; o < out; o++) {
      const a = (trace.first[r * out + o] as number)
      const g = tanh ? (dFirst[r * out + o] as number) * (1 - a * a) : (dFirst[r * out + o] as number)
      if (g === 0) continue
      headGrad[l.bias + o] = (headGrad[l.bias + o] as number) + g
      const wBase = l.weights + o * l.inputs
      for (let k = 0; k < cols; k++) {
        const i = (nonZero[k] as number)
        headGrad[wBase + i] = (headGrad[wBase + i] as number) + g * (trace.x[xBase + i] as number)
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
