/**
 * The learned policy's scoring network (src/math/SetScorer.ts: a per-row encoder, mean/max summaries over each row's
 * set, an MLP head) as an ONNX graph, built in code with onnx-proto (opset 13), and read back: the initializers hold
 * every weight, so a shipped `.onnx` is the whole checkpoint. No onnxruntime here.
 */
import { Schema } from "effect"
import onnxProto from "onnx-proto"
import * as Mlp from "../math/Mlp.ts"
import * as SetScorer from "../math/SetScorer.ts"

const { onnx } = onnxProto

/**
 * ONNX DOUBLE. onnxruntime-node's CPU provider runs every op of the graph in float64 (checked: logits match
 * `SetScorer.forward` to ~1e-15), so the graph computes what the trainer computes and the checkpoint keeps every bit
 * of the weights.
 */
const DOUBLE = 11
const INT64 = 7

/** The opset the graph targets. */
export const opset = 13

/**
 * Input and output names: `features` double [N, input], `members` double [S, N] (1 where row n belongs to set s),
 * `reads` double [N, S] (1 where row n reads set s's summary) → `logits` double [N, 1] (one logit per row).
 */
export const names = { features: "features", members: "members", reads: "reads", logits: "logits" } as const

/** Names of the head's layer `l` initializers: W_l as [out, in] (Mlp's row-major layout) and b_l as [out]. */
export const initializerNames = (l: number) => ({ weight: `layer${l}.weight`, bias: `layer${l}.bias` }) as const

/** The encoder's initializers: a learned encoder's W [width, input] and b [width], an identity encoder's column range. */
export const encoderNames = { weight: "encoder.weight", bias: "encoder.bias", starts: "encoder.starts", ends: "encoder.ends", axes: "encoder.axes" } as const

/** The graph's constants. */
const constantNames = { one: "const.one", big: "const.big", axis0: "const.axis0", axis1: "const.axis1", axis2: "const.axis2" } as const

/**
 * What masks a non-member out of a set's max: far below any encoding (a learned one lies in [−1, 1], the identity's
 * are feature values), and finite, so an empty set's max times 0 is 0.
 */
const maskValue = 1e300

const graphName = "paraagent_policy_set_scorer"

/** A policy ONNX model that is not one {@link toOnnx} writes: `part` names the piece (node, initializer, input) at fault. */
export class PolicyOnnxError extends Schema.TaggedError<PolicyOnnxError>()("PolicyOnnxError", {
  part: Schema.String,
  message: Schema.String
}) {}

const valueInfo = (name: string, dims: ReadonlyArray<number | string>): onnxProto.onnx.IValueInfoProto => ({
  name,
  type: {
    tensorType: {
      elemType: DOUBLE,
      shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) }
    }
  }
})

const tensor = (name: string, dims: ReadonlyArray<number>, data: Float64Array): onnxProto.onnx.ITensorProto => ({
  name,
  dataType: DOUBLE,
  dims: [...dims],
  // a copy, so the bytes are exactly this slice whatever `data` views
  rawData: new Uint8Array(Float64Array.from(data).buffer)
})

const int64Tensor = (name: string, values: ReadonlyArray<number>): onnxProto.onnx.ITensorProto => ({
  name,
  dataType: INT64,
  dims: [values.length],
  rawData: new Uint8Array(BigInt64Array.from(values.map((v) => BigInt(v))).buffer)
})

const node = (opType: string, name: string, input: ReadonlyArray<string>, output: string, attribute: ReadonlyArray<onnxProto.onnx.IAttributeProto> = []): onnxProto.onnx.INodeProto =>
  ({ opType, name, input: [...input], output: [output], attribute: [...attribute] })

const ints = (name: string, i: number): onnxProto.onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.INT, i })
const intList = (name: string, values: ReadonlyArray<number>): onnxProto.onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints: [...values] })

/**
 * The nodes of a shape: the encoder (Gemm + Tanh, or a Slice of the feature columns), each set's mean (members × h over
 * the member count) and max (members masked to −1e300 elsewhere, ReduceMax, 0 for an empty set), each row's summaries
 * (reads × mean, reads × max), the head's input (features, the row's encoding for a learned encoder, the summaries)
 * and the head: per layer Gemm(h, W, b, transB = 1), then Tanh on hidden layers; the last Gemm writes `logits`.
 */
const nodesOf = (shape: SetScorer.Shape): Array<onnxProto.onnx.INodeProto> => {
  const c = constantNames
  const out: Array<onnxProto.onnx.INodeProto> = []
  if (shape.encoder.kind === "learned") {
    out.push(node("Gemm", "encoder.gemm", [names.features, encoderNames.weight, encoderNames.bias], "encoder.z", [ints("transB", 1)]))
    out.push(node("Tanh", "encoder.tanh", ["encoder.z"], "h"))
  } else {
    out.push(node("Slice", "encoder.slice", [names.features, encoderNames.starts, encoderNames.ends, encoderNames.axes], "h"))
  }
  out.push(
    node("ReduceSum", "sets.count", [names.members, c.axis1], "sets.count", [ints("keepdims", 1)]),
    node("Max", "sets.denominator", ["sets.count", c.one], "sets.denominator"),
    node("MatMul", "sets.sum", [names.members, "h"], "sets.sum"),
    node("Div", "sets.mean", ["sets.sum", "sets.denominator"], "sets.mean"),
    node("Min", "sets.nonEmpty", ["sets.count", c.one], "sets.nonEmpty"),
    node("Unsqueeze", "sets.mask", [names.members, c.axis2], "sets.mask"),
    node("Unsqueeze", "sets.rows", ["h", c.axis0], "sets.rows"),
    node("Mul", "sets.kept", ["sets.mask", "sets.rows"], "sets.kept"),
    node("Sub", "sets.outside", ["sets.mask", c.one], "sets.outside"),
    node("Mul", "sets.penalty", ["sets.outside", c.big], "sets.penalty"),
    node("Add", "sets.masked", ["sets.kept", "sets.penalty"], "sets.masked"),
    node("ReduceMax", "sets.maxRaw", ["sets.masked"], "sets.maxRaw", [intList("axes", [1]), ints("keepdims", 0)]),
    node("Mul", "sets.max", ["sets.maxRaw", "sets.nonEmpty"], "sets.max"),
    node("MatMul", "rows.mean", [names.reads, "sets.mean"], "rows.mean"),
    node("MatMul", "rows.max", [names.reads, "sets.max"], "rows.max"),
    node("Concat", "head.input", [names.features, ...(shape.encoder.kind === "learned" ? ["h"] : []), "rows.mean", "rows.max"], "head.input", [ints("axis", 1)])
  )
  const views = Mlp.layers(SetScorer.headShape(shape))
  let input = "head.input"
  views.forEach((view, l) => {
    const { weight, bias } = initializerNames(l)
    const last = l === views.length - 1
    const z = last ? names.logits : `layer${l}.z`
    out.push(node("Gemm", `layer${l}.gemm`, [input, weight, bias], z, [ints("transB", 1)]))
    if (view.activation === "tanh") {
      out.push(node("Tanh", `layer${l}.tanh`, [z], `layer${l}.h`))
      input = `layer${l}.h`
    }
  })
  return out
}

/**
 * The ONNX model of a scoring network: inputs `features` double [N, input], `members` [S, N], `reads` [N, S]; output
 * `logits` double [N, 1]; `metadata` goes into the model's `metadata_props` (sorted by key, so equal inputs give equal
 * bytes). `params.data` must hold `SetScorer.size(params.shape)` numbers (as `SetScorer.init` and {@link fromOnnx} give).
 */
export const toOnnx = (params: SetScorer.Params, metadata: Readonly<Record<string, string>> = {}): Uint8Array => {
  const { shape, data } = params
  const enc = SetScorer.encoderSize(shape)
  const encoder = shape.encoder
  const encoderTensors = encoder.kind === "learned"
    ? [
      tensor(encoderNames.weight, [encoder.width, shape.input], data.subarray(0, encoder.width * shape.input)),
      tensor(encoderNames.bias, [encoder.width], data.subarray(encoder.width * shape.input, enc))
    ]
    : [int64Tensor(encoderNames.starts, [encoder.from]), int64Tensor(encoderNames.ends, [encoder.from + encoder.width]), int64Tensor(encoderNames.axes, [1])]
  const headData = data.subarray(enc)
  const initializer = [
    ...encoderTensors,
    tensor(constantNames.one, [1], Float64Array.of(1)),
    tensor(constantNames.big, [1], Float64Array.of(maskValue)),
    int64Tensor(constantNames.axis0, [0]),
    int64Tensor(constantNames.axis1, [1]),
    int64Tensor(constantNames.axis2, [2]),
    ...Mlp.layers(SetScorer.headShape(shape)).flatMap((view, l) => {
      const n = initializerNames(l)
      return [
        tensor(n.weight, [view.outputs, view.inputs], headData.subarray(view.weights, view.weights + view.outputs * view.inputs)),
        tensor(n.bias, [view.outputs], headData.subarray(view.bias, view.bias + view.outputs))
      ]
    })
  ]
  const graph: onnxProto.onnx.IGraphProto = {
    name: graphName,
    input: [valueInfo(names.features, ["N", shape.input]), valueInfo(names.members, ["S", "N"]), valueInfo(names.reads, ["N", "S"])],
    output: [valueInfo(names.logits, ["N", 1])],
    initializer,
    node: nodesOf(shape)
  }
  const encoderText = encoder.kind === "learned" ? `learned encoder of ${encoder.width} tanh units` : `identity encoder over columns [${encoder.from}, ${encoder.from + encoder.width})`
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    producerName: "paraagent",
    docString: `ParaAgent policy scorer: input ${shape.input}, ${encoderText}, mean/max set summaries, head hidden [${shape.hidden.join(", ")}], tanh, 1 linear logit`,
    opsetImport: [{ domain: "", version: opset }],
    metadataProps: Object.keys(metadata).sort().map((key) => ({ key, value: metadata[key] ?? "" })),
    graph
  })).finish()
}

/** What a policy ONNX model holds: the parameters and its `metadata_props`. */
export interface Decoded {
  readonly params: SetScorer.Params
  readonly metadata: Readonly<Record<string, string>>
}

const fault = (part: string, message: string) => new PolicyOnnxError({ part, message })

const decodeModel = (bytes: Uint8Array): onnxProto.onnx.ModelProto | PolicyOnnxError => {
  try {
    return onnx.ModelProto.decode(bytes)
  } catch (e) {
    return fault("model", `not an ONNX model (${bytes.byteLength} bytes): ${e instanceof Error ? e.message : String(e)}`)
  }
}

const dimsOf = (t: onnxProto.onnx.ITensorProto): Array<number> => (t.dims ?? []).map(Number)

/** The float64 values of a DOUBLE initializer (raw_data or double_data), checked against its dims. */
const valuesOf = (t: onnxProto.onnx.ITensorProto, part: string): Float64Array | PolicyOnnxError => {
  if (t.dataType !== DOUBLE) return fault(part, `element type ${t.dataType}, expected DOUBLE (${DOUBLE})`)
  const count = dimsOf(t).reduce((a, b) => a * b, 1)
  const raw = t.rawData
  if (raw !== null && raw !== undefined && raw.length > 0) {
    if (raw.length !== count * 8) return fault(part, `raw data is ${raw.length} bytes, dims [${dimsOf(t).join(", ")}] need ${count * 8}`)
    return new Float64Array(Uint8Array.from(raw).buffer) // a copy: protobuf slices may be unaligned for a Float64Array
  }
  const values = Float64Array.from(t.doubleData ?? [])
  if (values.length !== count) return fault(part, `holds ${values.length} doubles, dims [${dimsOf(t).join(", ")}] need ${count}`)
  return values
}

/** The int64 values of an INT64 initializer (raw_data or int64_data). */
const intsOf = (t: onnxProto.onnx.ITensorProto, part: string): ReadonlyArray<number> | PolicyOnnxError => {
  if (t.dataType !== INT64) return fault(part, `element type ${t.dataType}, expected INT64 (${INT64})`)
  const raw = t.rawData
  if (raw !== null && raw !== undefined && raw.length > 0) {
    if (raw.length % 8 !== 0) return fault(part, `raw data is ${raw.length} bytes, not whole int64s`)
    return [...new BigInt64Array(Uint8Array.from(raw).buffer)].map(Number)
  }
  return (t.int64Data ?? []).map(Number)
}

const tensorDims = (v: onnxProto.onnx.IValueInfoProto | undefined): Array<number | string> | undefined =>
  v?.type?.tensorType?.shape?.dim?.map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue ?? 0)))

/** A node's structure as text, to compare a model's nodes with the ones {@link toOnnx} writes. */
const nodeText = (n: onnxProto.onnx.INodeProto): string => {
  const attributes = (n.attribute ?? []).map((a) => `${a.name}=${a.ints !== undefined && a.ints !== null && a.ints.length > 0 ? `[${a.ints.map(Number).join(",")}]` : Number(a.i ?? 0)}`).sort().join(",")
  return `${n.opType}(${(n.input ?? []).join(", ")}) -> ${(n.output ?? []).join(", ")}${attributes === "" ? "" : ` [${attributes}]`}`
}

/** Reads the parameters and metadata of a model {@link toOnnx} wrote; anything else is a {@link PolicyOnnxError}. */
export const read = (bytes: Uint8Array): Decoded | PolicyOnnxError => {
  const model = decodeModel(bytes)
  if (model instanceof PolicyOnnxError) return model
  const graph = model.graph
  if (graph === null || graph === undefined) return fault("graph", "the model has no graph")
  const inputs = (graph.input ?? []).map((i) => i.name)
  const outputs = (graph.output ?? []).map((o) => o.name)
  const expectedInputs = [names.features, names.members, names.reads]
  if (inputs.length !== expectedInputs.length || inputs.some((n, i) => n !== expectedInputs[i])) {
    return fault("input", `inputs are [${inputs.join(", ")}], expected [${expectedInputs.join(", ")}]`)
  }
  if (outputs.length !== 1 || outputs[0] !== names.logits) {
    return fault("output", `outputs are [${outputs.join(", ")}], expected [${names.logits}]`)
  }
  const initializers = new Map((graph.initializer ?? []).map((t) => [t.name ?? "", t]))
  const declared = tensorDims(graph.input?.[0])
  const input = declared?.[1]
  if (declared === undefined || declared.length !== 2 || typeof input !== "number" || input < 1) {
    return fault("input", `${names.features} is declared [${declared?.join(", ") ?? ""}], expected [N, <input width>]`)
  }

  // the encoder: a learned one's W [width, input] and b, or an identity's column range
  let encoder: SetScorer.Encoder
  const chunks: Array<Float64Array> = []
  const learnedW = initializers.get(encoderNames.weight)
  if (learnedW !== undefined) {
    const [width, into, ...rest] = dimsOf(learnedW)
    if (width === undefined || into !== input || rest.length > 0 || width < 1) return fault(encoderNames.weight, `dims [${dimsOf(learnedW).join(", ")}], expected [width, ${input}]`)
    const b = initializers.get(encoderNames.bias)
    if (b === undefined) return fault(encoderNames.bias, "missing")
    if (dimsOf(b).length !== 1 || dimsOf(b)[0] !== width) return fault(encoderNames.bias, `dims [${dimsOf(b).join(", ")}], expected [${width}]`)
    const wv = valuesOf(learnedW, encoderNames.weight)
    if (wv instanceof PolicyOnnxError) return wv
    const bv = valuesOf(b, encoderNames.bias)
    if (bv instanceof PolicyOnnxError) return bv
    chunks.push(wv, bv)
    encoder = { kind: "learned", width }
  } else {
    const starts = initializers.get(encoderNames.starts)
    const ends = initializers.get(encoderNames.ends)
    if (starts === undefined || ends === undefined) return fault(encoderNames.weight, `missing (and no identity encoder's ${encoderNames.starts} / ${encoderNames.ends} either)`)
    const from = intsOf(starts, encoderNames.starts)
    if (from instanceof PolicyOnnxError) return from
    const to = intsOf(ends, encoderNames.ends)
    if (to instanceof PolicyOnnxError) return to
    const f = from[0]
    const e = to[0]
    if (from.length !== 1 || to.length !== 1 || f === undefined || e === undefined || !(f >= 0 && e > f && e <= input)) {
      return fault(encoderNames.starts, `the identity encoder's columns [${from.join(",")}, ${to.join(",")}) are not a range within the ${input} input columns`)
    }
    encoder = { kind: "identity", from: f, width: e - f }
  }

  // the head: each weight is [out, in] with in = the previous layer's out; the layer with out = 1 and no successor is
  // the output layer
  const partial: SetScorer.Shape = { input, encoder, hidden: [] }
  const hidden: Array<number> = []
  let width = SetScorer.headInput(partial)
  for (let l = 0;; l++) {
    const n = initializerNames(l)
    const w = initializers.get(n.weight)
    const b = initializers.get(n.bias)
    if (w === undefined) return fault(n.weight, l === 0 ? "missing" : `missing (layer ${l - 1} has ${width} outputs, so the output layer is still to come)`)
    if (b === undefined) return fault(n.bias, "missing")
    const [out, into, ...rest] = dimsOf(w)
    if (out === undefined || into === undefined || rest.length > 0 || out < 1) {
      return fault(n.weight, `dims [${dimsOf(w).join(", ")}], expected [out, ${width}]`)
    }
    if (into !== width) return fault(n.weight, `dims [${out}, ${into}] but the layer's input is ${width} wide`)
    const bDims = dimsOf(b)
    if (bDims.length !== 1 || bDims[0] !== out) return fault(n.bias, `dims [${bDims.join(", ")}], expected [${out}]`)
    const wv = valuesOf(w, n.weight)
    if (wv instanceof PolicyOnnxError) return wv
    const bv = valuesOf(b, n.bias)
    if (bv instanceof PolicyOnnxError) return bv
    chunks.push(wv, bv)
    if (!initializers.has(initializerNames(l + 1).weight)) {
      if (out !== 1) return fault(n.weight, `the last layer has ${out} outputs, expected 1 logit`)
      break
    }
    hidden.push(out)
    width = out
  }
  const shape: SetScorer.Shape = { input, encoder, hidden }
  const known = new Set<string>([
    ...(encoder.kind === "learned" ? [encoderNames.weight, encoderNames.bias] : [encoderNames.starts, encoderNames.ends, encoderNames.axes]),
    ...Object.values(constantNames),
    ...Array.from({ length: hidden.length + 1 }, (_, l) => Object.values(initializerNames(l))).flat()
  ])
  const extra = [...initializers.keys()].filter((k) => !known.has(k))
  const absent = [...known].filter((k) => !initializers.has(k))
  if (extra.length > 0) return fault("initializers", `unexpected initializers [${extra.join(", ")}]`)
  if (absent.length > 0) return fault(absent[0] as string, "missing")
  const expected = nodesOf(shape).map(nodeText)
  const actual = (graph.node ?? []).map(nodeText)
  const at = expected.findIndex((e, i) => actual[i] !== e)
  if (at >= 0 || actual.length !== expected.length) {
    const i = at >= 0 ? at : expected.length
    return fault(`node ${i}`, `is ${actual[i] ?? "absent"}, expected ${expected[i] ?? "no further node"}`)
  }

  const data = new Float64Array(SetScorer.size(shape))
  let offset = 0
  for (const c of chunks) {
    data.set(c, offset)
    offset += c.length
  }
  const metadata: Record<string, string> = {}
  for (const p of model.metadataProps ?? []) metadata[p.key ?? ""] = p.value ?? ""
  return { params: { shape, data }, metadata }
}

/** The parameters of a model {@link toOnnx} wrote (exactly: the weights are stored as float64). */
export const fromOnnx = (bytes: Uint8Array): SetScorer.Params | PolicyOnnxError => {
  const decoded = read(bytes)
  return decoded instanceof PolicyOnnxError ? decoded : decoded.params
}

/**
 * The `members` and `reads` inputs of a scored matrix's sets (row-major doubles): at least one set, so no tensor has a
 * zero-sized dimension (an extra empty set changes no logit).
 */
export const setInputs = (sets: SetScorer.Sets | undefined, rows: number): { readonly members: Float64Array; readonly reads: Float64Array; readonly count: number } => {
  const given = sets ?? SetScorer.noSets(rows)
  const count = Math.max(1, given.members.length)
  const members = new Float64Array(count * rows)
  given.members.forEach((m, s) => {
    for (const r of m) members[s * rows + r] = 1
  })
  const reads = new Float64Array(rows * count)
  given.reads.forEach((s, r) => {
    if (s >= 0) reads[r * count + s] = 1
  })
  return { members, reads, count }
}
