/**
 * ONNX graphs of the dense retriever, built in code with onnx-proto (opset 13): the static encoder
 * (Gather → dequantise → weighted sum → L2 normalise) and the exact top-k scorer (Gemm → TopK) over an index matrix.
 */
import onnxProto from "onnx-proto"
import type { QuantizedModel } from "./DenseModel.ts"
import { normEpsilon } from "./DenseModel.ts"

const { onnx } = onnxProto

/** ONNX element types used here. */
const FLOAT = 1
const INT8 = 3
const INT64 = 7

/** The opset every graph here targets. */
export const opset = 13

/** Input and output names of the static encoder graph. */
export const staticNames = {
  ids: "input_ids",
  mass: "token_mass",
  output: "sentence_embedding"
} as const

/** Input and output names of the scorer graph. */
export const scorerNames = { queries: "queries", k: "k", scores: "scores", indices: "indices" } as const

const valueInfo = (name: string, elemType: number, dims: ReadonlyArray<number | string>): onnxProto.onnx.IValueInfoProto => ({
  name,
  type: {
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => (typeof d === "string" ? { dimParam: d } : { dimValue: d })) }
    }
  }
})

const bytesOf = (a: Float32Array | Int8Array | BigInt64Array): Uint8Array =>
  new Uint8Array(a.buffer, a.byteOffset, a.byteLength)

const tensor = (
  name: string,
  dataType: number,
  dims: ReadonlyArray<number>,
  data: Float32Array | Int8Array | BigInt64Array
): onnxProto.onnx.ITensorProto => ({ name, dataType, dims: [...dims], rawData: bytesOf(data) })

const intAttr = (name: string, i: number): onnxProto.onnx.IAttributeProto => ({
  name,
  type: onnx.AttributeProto.AttributeType.INT,
  i
})
const intsAttr = (name: string, ints: ReadonlyArray<number>): onnxProto.onnx.IAttributeProto => ({
  name,
  type: onnx.AttributeProto.AttributeType.INTS,
  ints: [...ints]
})

const node = (
  opType: string,
  input: ReadonlyArray<string>,
  output: ReadonlyArray<string>,
  attribute: ReadonlyArray<onnxProto.onnx.IAttributeProto> = []
): onnxProto.onnx.INodeProto => ({ opType, input: [...input], output: [...output], name: output[0] ?? opType, attribute: [...attribute] })

const encodeModel = (graph: onnxProto.onnx.IGraphProto, docString: string): Uint8Array =>
  onnx.ModelProto.encode(onnx.ModelProto.create({
    irVersion: 8,
    producerName: "paraagent",
    docString,
    opsetImport: [{ domain: "", version: opset }],
    graph
  })).finish()

/**
 * The static encoder as an ONNX model. Inputs: `input_ids` int64 [batch, seq], `token_mass` float [batch, seq]
 * (0 on padding). Output: `sentence_embedding` float [batch, dim], unit norm (zero for an all-padding row).
 */
export const staticEncoder = (model: QuantizedModel, docString = "ParaAgent static encoder"): Uint8Array => {
  const { rows, dim } = model
  const n = staticNames
  const graph: onnxProto.onnx.IGraphProto = {
    name: "paraagent_static_encoder",
    input: [valueInfo(n.ids, INT64, ["batch", "sequence"]), valueInfo(n.mass, FLOAT, ["batch", "sequence"])],
    output: [valueInfo(n.output, FLOAT, ["batch", dim])],
    initializer: [
      tensor("codes", INT8, [rows, dim], model.codes),
      tensor("scales", FLOAT, [rows], model.scales),
      tensor("weights", FLOAT, [rows], model.weights),
      tensor("axis_last", INT64, [1], BigInt64Array.from([2n])),
      tensor("axis_sequence", INT64, [1], BigInt64Array.from([1n])),
      tensor("epsilon", FLOAT, [], Float32Array.from([normEpsilon]))
    ],
    node: [
      node("Gather", ["codes", n.ids], ["code_rows"], [intAttr("axis", 0)]),
      node("Cast", ["code_rows"], ["code_rows_f"], [intAttr("to", FLOAT)]),
      node("Gather", ["scales", n.ids], ["row_scales"], [intAttr("axis", 0)]),
      node("Gather", ["weights", n.ids], ["row_weights"], [intAttr("axis", 0)]),
      node("Mul", ["row_scales", "row_weights"], ["scale_weight"]),
      node("Mul", ["scale_weight", n.mass], ["coefficient"]),
      node("Unsqueeze", ["coefficient", "axis_last"], ["coefficient_3d"]),
      node("Mul", ["code_rows_f", "coefficient_3d"], ["terms"]),
      node("ReduceSum", ["terms", "axis_sequence"], ["pooled"], [intAttr("keepdims", 0)]),
      node("ReduceL2", ["pooled"], ["norm"], [intsAttr("axes", [1]), intAttr("keepdims", 1)]),
      node("Max", ["norm", "epsilon"], ["norm_safe"]),
      node("Div", ["pooled", "norm_safe"], [n.output])
    ]
  }
  return encodeModel(graph, docString)
}

/**
 * Exact top-k by dot product over a row-major `rows × dim` matrix (cosine for unit rows and queries).
 * Inputs: `queries` float [q, dim], `k` int64 [1]. Outputs: `scores` float [q, k], `indices` int64 [q, k], best first.
 */
export const scorer = (matrix: Float32Array, rows: number, dim: number): Uint8Array => {
  const n = scorerNames
  const graph: onnxProto.onnx.IGraphProto = {
    name: "paraagent_exact_topk",
    input: [valueInfo(n.queries, FLOAT, ["q", dim]), valueInfo(n.k, INT64, [1])],
    output: [valueInfo(n.scores, FLOAT, ["q", "k"]), valueInfo(n.indices, INT64, ["q", "k"])],
    initializer: [tensor("index", FLOAT, [rows, dim], matrix)],
    node: [
      node("Gemm", [n.queries, "index"], ["all_scores"], [intAttr("transB", 1)]),
      node("TopK", ["all_scores", n.k], [n.scores, n.indices], [intAttr("axis", 1), intAttr("largest", 1), intAttr("sorted", 1)])
    ]
  }
  return encodeModel(graph, "ParaAgent exact top-k scorer")
}

/** A static encoder ONNX file that lacks the expected initializers. */
export interface ReadFailure {
  readonly message: string
}

const initializerData = (t: onnxProto.onnx.ITensorProto): Uint8Array | undefined => {
  const raw = t.rawData
  if (raw === null || raw === undefined || raw.length === 0) return undefined
  // copy: protobuf slices may not be aligned for typed-array views
  return Uint8Array.from(raw)
}

/** Reads the quantised parameters back from a static encoder's ONNX bytes (to check the graph against the JS forward). */
export const readStaticEncoder = (bytes: Uint8Array): QuantizedModel | ReadFailure => {
  const model = onnx.ModelProto.decode(bytes)
  const find = (name: string) => (model.graph?.initializer ?? []).find((t) => t.name === name)
  const codes = find("codes")
  const scales = find("scales")
  const weights = find("weights")
  if (codes === undefined || scales === undefined || weights === undefined) {
    return { message: "not a ParaAgent static encoder: initializers codes/scales/weights missing" }
  }
  const [rows, dim] = (codes.dims ?? []).map(Number)
  const c = initializerData(codes)
  const s = initializerData(scales)
  const w = initializerData(weights)
  if (rows === undefined || dim === undefined || c === undefined || s === undefined || w === undefined) {
    return { message: "static encoder initializers are not stored as raw data" }
  }
  return {
    rows,
    dim,
    codes: new Int8Array(c.buffer, 0, rows * dim),
    scales: new Float32Array(s.buffer, 0, rows),
    weights: new Float32Array(w.buffer, 0, rows)
  }
}
