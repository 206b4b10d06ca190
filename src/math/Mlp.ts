/**
 * A small multi-layer perceptron that scores rows: each row of the input matrix (one candidate action, or one
 * decision such as "which kind of action", with its context features) gets one logit. Parameters are one flat
 * Float64Array so an optimiser, a checkpoint and a gradient check treat them as a vector; layer `l` holds its weight
 * matrix W_l (out × in, row-major) and then its bias b_l. Hidden layers use tanh; the output layer is linear.
 * Pure: no Effect, no I/O.
 */
import { rng } from "./Random.ts"

/** The network's shape: input width, hidden widths (output width is 1). */
export interface Shape {
  readonly input: number
  readonly hidden: ReadonlyArray<number>
  /**
   * Never present: a `SetScorer.Shape` (which has an encoder) is not an MLP's, so the set scorer's parameters cannot be
   * handed to this module's forward pass by mistake (its flat vector is laid out differently).
   */
  readonly encoder?: never
}

/** Parameters of a network of one shape. */
export interface Params {
  readonly shape: Shape
  readonly data: Float64Array
}

/** One dense layer's slice of the flat parameter vector. */
export interface LayerView {
  readonly inputs: number
  readonly outputs: number
  /** Offset of W (outputs × inputs, row-major) in `data`. */
  readonly weights: number
  /** Offset of b (outputs) in `data`. */
  readonly bias: number
  readonly activation: "tanh" | "linear"
}

/** The layers of a shape, in order, with their offsets in the flat vector. */
export const layers = (shape: Shape): ReadonlyArray<LayerView> => {
  const widths = [shape.input, ...shape.hidden, 1]
  const out: Array<LayerView> = []
  let offset = 0
  for (let l = 0; l + 1 < widths.length; l++) {
    const inputs = widths[l] as number
    const outputs = widths[l + 1] as number
    out.push({ inputs, outputs, weights: offset, bias: offset + inputs * outputs, activation: l + 2 < widths.length ? "tanh" : "linear" })
    offset += inputs * outputs + outputs
  }
  return out
}

/** Number of parameters of a shape. */
export const size = (shape: Shape): number => layers(shape).reduce((n, l) => n + l.inputs * l.outputs + l.outputs, 0)

/**
 * Seeded initialisation: weights uniform in ±sqrt(6 / (in + out)) (Glorot), biases 0; the output layer is scaled by
 * `outputScale` so an untrained network starts near uniform choices.
 */
export const init = (shape: Shape, seed: number, outputScale = 0.1): Params => {
  const data = new Float64Array(size(shape))
  const r = rng(seed)
  for (const l of layers(shape)) {
    const bound = Math.sqrt(6 / (l.inputs + l.outputs)) * (l.activation === "linear" ? outputScale : 1)
    for (let i = 0; i < l.inputs * l.outputs; i++) data[l.weights + i] = (2 * r.next() - 1) * bound
  }
  return { shape, data }
}

/** What the backward pass needs from a forward pass: every layer's input and output activations. */
export interface Trace {
  readonly rows: number
  /** activations[0] = the input; activations[l + 1] = layer l's output (after its activation). */
  readonly activations: ReadonlyArray<Float64Array>
}

/**
 * One dense layer over `rows` rows: `output[r, o] = act(b_o + Σ_i W[o, i] · input[r, i])`. Each sum runs over the row's
 * non-zero inputs in column order (rows of one-hot and count features are mostly zeros; a skipped term w·0 is ±0, and
 * adding ±0 leaves every partial sum as it was, so the outputs are the dense sums bit for bit). Four outputs are summed
 * side by side, each in its own accumulator and in the same order as alone, so blocking changes no bit either.
 */
const dense = (d: Float64Array, l: LayerView, input: Float64Array, rows: number, output: Float64Array): void => {
  const tanh = l.activation === "tanh"
  const n = l.inputs
  const nonZero = new Int32Array(n)
  const values = new Float64Array(n)
  for (let r = 0; r < rows; r++) {
    const inBase = r * n
    const outBase = r * l.outputs
    let count = 0
    for (let i = 0; i < n; i++) {
      const v = input[inBase + i] as number
      if (v !== 0) {
        nonZero[count] = i
        values[count++] = v
      }
    }
    let o = 0
    for (; o + 4 <= l.outputs; o += 4) {
      const w0 = l.weights + o * n
      const w1 = w0 + n
      const w2 = w1 + n
      const w3 = w2 + n
      let z0 = d[l.bias + o] as number
      let z1 = d[l.bias + o + 1] as number
      let z2 = d[l.bias + o + 2] as number
      let z3 = d[l.bias + o + 3] as number
      for (let k = 0; k < count; k++) {
        const i = nonZero[k] as number
        const v = values[k] as number
        z0 += (d[w0 + i] as number) * v
        z1 += (d[w1 + i] as number) * v
        z2 += (d[w2 + i] as number) * v
        z3 += (d[w3 + i] as number) * v
      }
      output[outBase + o] = tanh ? Math.tanh(z0) : z0
      output[outBase + o + 1] = tanh ? Math.tanh(z1) : z1
      output[outBase + o + 2] = tanh ? Math.tanh(z2) : z2
      output[outBase + o + 3] = tanh ? Math.tanh(z3) : z3
    }
    for (; o < l.outputs; o++) {
      const wBase = l.weights + o * n
      let z = d[l.bias + o] as number
      for (let k = 0; k < count; k++) z += (d[wBase + (nonZero[k] as number)] as number) * (values[k] as number)
      output[outBase + o] = tanh ? Math.tanh(z) : z
    }
  }
}

/** Logits of `rows` input rows (`x` is rows × input, row-major), with the trace for {@link backward}. */
export const forward = (params: Params, x: Float64Array, rows: number): { readonly logits: Float64Array; readonly trace: Trace } => {
  const activations: Array<Float64Array> = [x]
  let input = x
  for (const l of layers(params.shape)) {
    const output = new Float64Array(rows * l.outputs)
    dense(params.data, l, input, rows, output)
    activations.push(output)
    input = output
  }
  return { logits: input, trace: { rows, activations } }
}

/** Logits only. */
export const logits = (params: Params, x: Float64Array, rows: number): Float64Array => forward(params, x, rows).logits

/**
 * The gradient of a scalar loss with respect to the parameters, given dLoss/dLogit per row; accumulated into `into`
 * when given (so a batch of steps sums its gradients in one vector). With `inputGrad` (rows × input), dLoss/dInput is
 * added into it too (a network below the MLP backpropagates through it); without it, none is computed.
 */
export const backward = (params: Params, trace: Trace, dLogits: Float64Array, into?: Float64Array, inputGrad?: Float64Array): Float64Array => {
  const views = layers(params.shape)
  const d = params.data
  const grad = into ?? new Float64Array(d.length)
  const rows = trace.rows
  const nonZero = new Int32Array(views[0]?.inputs ?? 0)
  let delta = dLogits
  for (let li = views.length - 1; li >= 0; li--) {
    const l = views[li] as LayerView
    const input = trace.activations[li] as Float64Array
    const output = trace.activations[li + 1] as Float64Array
    // delta: dLoss/d(output) → dLoss/dz through the activation
    const dz = new Float64Array(rows * l.outputs)
    for (let k = 0; k < dz.length; k++) {
      const g = delta[k] as number
      dz[k] = l.activation === "tanh" ? g * (1 - (output[k] as number) ** 2) : g
    }
    const dInput = li > 0 ? new Float64Array(rows * l.inputs) : inputGrad
    if (dInput === undefined) {
      // the first layer with no input gradient wanted: each weight's gradient from the row's non-zero inputs only
      // (a skipped g·0 is ±0, and the sums it would join are the same bit for bit)
      for (let r = 0; r < rows; r++) {
        const inBase = r * l.inputs
        let count = 0
        for (let i = 0; i < l.inputs; i++) if ((input[inBase + i] as number) !== 0) nonZero[count++] = i
        for (let o = 0; o < l.outputs; o++) {
          const g = dz[r * l.outputs + o] as number
          if (g === 0) continue
          grad[l.bias + o] = (grad[l.bias + o] as number) + g
          const wBase = l.weights + o * l.inputs
          for (let k = 0; k < count; k++) {
            const i = nonZero[k] as number
            grad[wBase + i] = (grad[wBase + i] as number) + g * (input[inBase + i] as number)
          }
        }
      }
      break
    }
    denseBackward(d, l, input, dz, rows, grad, dInput)
    if (li === 0) break
    delta = dInput
  }
  return grad
}

/**
 * One dense layer's backward pass over `rows` rows, given dLoss/dz (`dz`, rows × outputs): W's and b's gradients added
 * into `grad`, dLoss/dInput into `dInput`. Every sum takes its terms in the order of the plain loops (rows, then
 * outputs, then inputs), with an output whose dz is 0 skipped; four outputs are handled side by side when none of
 * their dz is 0, each sum still in that order, so the result is the plain loops' bit for bit.
 */
const denseBackward = (d: Float64Array, l: LayerView, input: Float64Array, dz: Float64Array, rows: number, grad: Float64Array, dInput: Float64Array): void => {
  const n = l.inputs
  const one = (r: number, o: number): void => {
    const g = dz[r * l.outputs + o] as number
    if (g === 0) return
    grad[l.bias + o] = (grad[l.bias + o] as number) + g
    const wBase = l.weights + o * n
    const inBase = r * n
    for (let i = 0; i < n; i++) {
      grad[wBase + i] = (grad[wBase + i] as number) + g * (input[inBase + i] as number)
      dInput[inBase + i] = (dInput[inBase + i] as number) + g * (d[wBase + i] as number)
    }
  }
  for (let r = 0; r < rows; r++) {
    const inBase = r * n
    const gBase = r * l.outputs
    let o = 0
    for (; o + 4 <= l.outputs; o += 4) {
      const g0 = dz[gBase + o] as number
      const g1 = dz[gBase + o + 1] as number
      const g2 = dz[gBase + o + 2] as number
      const g3 = dz[gBase + o + 3] as number
      if (g0 === 0 || g1 === 0 || g2 === 0 || g3 === 0) {
        for (let k = o; k < o + 4; k++) one(r, k)
        continue
      }
      grad[l.bias + o] = (grad[l.bias + o] as number) + g0
      grad[l.bias + o + 1] = (grad[l.bias + o + 1] as number) + g1
      grad[l.bias + o + 2] = (grad[l.bias + o + 2] as number) + g2
      grad[l.bias + o + 3] = (grad[l.bias + o + 3] as number) + g3
      const w0 = l.weights + o * n
      const w1 = w0 + n
      const w2 = w1 + n
      const w3 = w2 + n
      for (let i = 0; i < n; i++) {
        const v = input[inBase + i] as number
        grad[w0 + i] = (grad[w0 + i] as number) + g0 * v
        grad[w1 + i] = (grad[w1 + i] as number) + g1 * v
        grad[w2 + i] = (grad[w2 + i] as number) + g2 * v
        grad[w3 + i] = (grad[w3 + i] as number) + g3 * v
        let a = dInput[inBase + i] as number
        a += g0 * (d[w0 + i] as number)
        a += g1 * (d[w1 + i] as number)
        a += g2 * (d[w2 + i] as number)
        a += g3 * (d[w3 + i] as number)
        dInput[inBase + i] = a
      }
    }
    for (; o < l.outputs; o++) one(r, o)
  }
}
