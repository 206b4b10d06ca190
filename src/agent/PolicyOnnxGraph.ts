/**
 * The learned policy's MLP (src/math/Mlp.ts) as an ONNX graph, built in code with onnx-proto (opset 13), and read
 * back: the initializers hold every weight, so a shipped `.onnx` is the whole checkpoint. No onnxruntime here.
 */
import { Schema } from "effect"
import onnxProto from "onnx-proto"
import * as Mlp from "../math/Mlp.ts"

const { onnx } = onnxProto

/**
 * ONNX DOUBLE. onnxruntime-node's CPU provider runs Gemm and Tanh in float64 (checked: logits match `Mlp.forward`
 * to ~1e-16), so the graph computes what the trainer computes and the checkpoint keeps every bit of the weights.
 */
const DOUBLE = 11

/** The opset the graph targets. */
export const opset = 13

/** Input and output names: `features` double [N, input] → `logits` double [N, 1] (one logit per row). */
export const names = { features: "features", logits: "logits" } as const

/** Names of layer `l`'s initializers: W_l as [out, in] (Mlp's row-major layout) and b_l as [out]. */
export const initializerNames = (l: number) => ({ weight: `layer${l}.weight`, bias: `layer${l}.bias` }) as const

const graphName = "paraagent_policy_mlp"

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

/** The nodes of a shape: per layer Gemm(h, W, b, transB = 1), then Tanh on hidden layers; the last Gemm writes `logits`. */
const nodesOf = (shape: Mlp.Shape): Array<onnxProto.onnx.INodeProto> => {
  const views = Mlp.layers(shape)
  const out: Array<onnxProto.onnx.INodeProto> = []
  let input: string = names.features
  views.forEach((view, l) => {
    const { weight, bias } = initializerNames(l)
    const last = l === views.length - 1
    const z = last ? names.logits : `layer${l}.z`
    out.push({
      opType: "Gemm",
      name: `layer${l}.gemm`,
      input: [input, weight, bias],
      output: [z],
      attribute: [{ name: "transB", type: onnx.AttributeProto.AttributeType.INT, i: 1 }]
    })
    if (view.activation === "tanh") {
      const h = `layer${l}.h`
      out.push({ opType: "Tanh", name: `layer${l}.tanh`, input: [z], output: [h] })
      input = h
    }
  })
  return out
}

/**
 * The ONNX model of an MLP: input `features` double [N, input], output `logits` double [N, 1]; `metadata` goes into
 * the model's `metadata_props` (sorted by key, so equal inputs give equal bytes). `params.data` must hold
 * `Mlp.size(params.shape)` numbers (as `Mlp.init` and {@link fromOnnx} give).
 */
export const toOnnx = (params: Mlp.Params, metadata: Readonly<Record<string, string>> = {}): Uint8Array => {
  const { shape, data } = params
  const initializer = Mlp.layers(shape).flatMap((view, l) => {
    const n = initializerNames(l)
    return [
      tensor(n.weight, [view.outputs, view.inputs], data.subarray(view.weights, view.weights + view.outputs * view.inputs)),
      tensor(n.bias, [view.outputs], data.subarray(view.bias, view.bias + view.outputs))
    ]
  })
  const graph: onnxProto.onnx.IGraphProto = {
    name: graphName,
    input: [valueInfo(names.features, ["N", shape.input])],
    output: [valueInfo(names.logits, ["N", 1])],
    initializer,
    node: nodesOf(shape)
  }
  return onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    producerName: "paraagent",
    docString: `ParaAgent policy MLP: input ${shape.input}, hidden [${shape.hidden.join(", ")}], tanh, 1 linear logit`,
    opsetImport: [{ domain: "", version: opset }],
    metadataProps: Object.keys(metadata).sort().map((key) => ({ key, value: metadata[key] ?? "" })),
    graph
  })).finish()
}

/** What a policy ONNX model holds: the parameters and its `metadata_props`. */
export interface Decoded {
  readonly params: Mlp.Params
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

const tensorDims = (v: onnxProto.onnx.IValueInfoProto | undefined): Array<number | string> | undefined =>
  v?.type?.tensorType?.shape?.dim?.map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue ?? 0)))

/** A node's structure as text, to compare a model's nodes with the ones {@link toOnnx} writes. */
const nodeText = (n: onnxProto.onnx.INodeProto): string => {
  const attributes = (n.attribute ?? []).map((a) => `${a.name}=${Number(a.i ?? 0)}`).sort().join(",")
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
  if (inputs.length !== 1 || inputs[0] !== names.features) {
    return fault("input", `inputs are [${inputs.join(", ")}], expected [${names.features}]`)
  }
  if (outputs.length !== 1 || outputs[0] !== names.logits) {
    return fault("output", `outputs are [${outputs.join(", ")}], expected [${names.logits}]`)
  }
  const initializers = new Map((graph.initializer ?? []).map((t) => [t.name ?? "", t]))
  const first = initializers.get(initializerNames(0).weight)
  if (first === undefined) return fault(initializerNames(0).weight, "missing")
  const input = dimsOf(first)[1]
  if (input === undefined || input < 1) return fault(initializerNames(0).weight, `dims [${dimsOf(first).join(", ")}], expected [out, in]`)

  // walk the layers: each weight is [out, in] with in = the previous layer's out; the layer with out = 1 and no
  // successor is the output layer
  const hidden: Array<number> = []
  const chunks: Array<Float64Array> = []
  let width = input
  for (let l = 0;; l++) {
    const n = initializerNames(l)
    const w = initializers.get(n.weight)
    const b = initializers.get(n.bias)
    if (w === undefined) return fault(n.weight, `missing (layer ${l - 1} has ${width} outputs, so the output layer is still to come)`)
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
  const shape: Mlp.Shape = { input, hidden }
  const expectedInitializers = 2 * (hidden.length + 1)
  if (initializers.size !== expectedInitializers) {
    const known = new Set<string>(Array.from({ length: hidden.length + 1 }, (_, l) => Object.values(initializerNames(l))).flat())
    const extra = [...initializers.keys()].filter((k) => !known.has(k))
    return fault("initializers", `unexpected initializers [${extra.join(", ")}]`)
  }
  const declared = tensorDims(graph.input?.[0])
  if (declared === undefined || declared.length !== 2 || declared[1] !== input) {
    return fault("input", `${names.features} is declared [${declared?.join(", ") ?? ""}], expected [N, ${input}]`)
  }
  const expected = nodesOf(shape).map(nodeText)
  const actual = (graph.node ?? []).map(nodeText)
  const at = expected.findIndex((e, i) => actual[i] !== e)
  if (at >= 0 || actual.length !== expected.length) {
    const i = at >= 0 ? at : expected.length
    return fault(`node ${i}`, `is ${actual[i] ?? "absent"}, expected ${expected[i] ?? "no further node"}`)
  }

  const data = new Float64Array(Mlp.size(shape))
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
export const fromOnnx = (bytes: Uint8Array): Mlp.Params | PolicyOnnxError => {
  const decoded = read(bytes)
  return decoded instanceof PolicyOnnxError ? decoded : decoded.params
}
