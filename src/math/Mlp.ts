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

/** Logits of `rows` input rows (`x` is rows × input, row-major), with the trace for {@link backward}. */
export const forward = (params: Params, x: Float64Array, rows: number): { readonly logits: Float64Array; readonly trace: Trace } => {
  const views = layers(params.shape)
  const d = params.data
  const activations: Array<Float64Array> = [x]
  let input = x
  // the first layer reads each row's non-zero inputs only (rows of one-hot and count features are mostly zeros): a
  // skipped term w·0 is ±0, and adding ±0 leaves every partial sum as it was, so the logits are the dense sums bit for bit
  const nonZero = new Int32Array(views[0]?.inputs ?? 0)
  for (const [li, l] of views.entries()) {
    const output = new Float64Array(rows * l.outputs)
    const tanh = l.activation === "tanh"
    for (let r = 0; r < rows; r++) {
      const inBase = r * l.inputs
      const outBase = r * l.outputs
      if (li === 0) {
        let count = 0
        for (let i = 0; i < l.inputs; i++) if ((input[inBase + i] as number) !== 0) nonZero[count++] = i
        for (let o = 0; o < l.outputs; o++) {
          let z = d[l.bias + o] as number
          const wBase = l.weights + o * l.inputs
          for (let k = 0; k < count; k++) {
            const i = nonZero[k] as number
            z += (d[wBase + i] as number) * (input[inBase + i] as number)
          }
          output[outBase + o] = tanh ? Math.tanh(z) : z
        }
        continue
      }
      for (let o = 0; o < l.outputs; o++) {
        let z = d[l.bias + o] as number
        const wBase = l.weights + o * l.inputs
        for (let i = 0; i < l.inputs; i++) z += (d[wBase + i] as number) * (input[inBase + i] as number)
        output[outBase + o] = tanh ? Math.tanh(z) : z
      }
    }
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
    for (let r = 0; r < rows; r++) {
      const inBase = r * l.inputs
      for (let o = 0; o < l.outputs; o++) {
        const g = dz[r * l.outputs + o] as number
        if (g === 0) continue
        grad[l.bias + o] = (grad[l.bias + o] as number) + g
        const wBase = l.weights + o * l.inputs
        for (let i = 0; i < l.inputs; i++) {
          grad[wBase + i] = (grad[wBase + i] as number) + g * (input[inBase + i] as number)
          dInput[inBase + i] = (dInput[inBase + i] as number) + g * (d[wBase + i] as number)
        }
      }
    }
    if (li === 0) break
    delta = dInput
  }
  return grad
}
