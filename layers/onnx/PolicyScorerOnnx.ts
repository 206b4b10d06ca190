/**
 * The learned policy's scorer run by onnxruntime-node (the graph of src/agent/PolicyOnnxGraph.ts, float64), and its
 * checkpoint on disk: `paraagent-policy.onnx` (every weight) beside `paraagent-policy.json` (shape, provenance).
 */
import { Effect, Schema, Semaphore } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ort from "onnxruntime-node"
import * as ActionSpace from "../../src/agent/ActionSpace.ts"
import * as PolicyOnnxGraph from "../../src/agent/PolicyOnnxGraph.ts"
import { writeFileAtomicEffect } from "../../src/io/AtomicWrite.ts"
import * as Files from "../../src/io/Files.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"

/** Scoring failed: `reason` says whether the model, the input, the run or its output was at fault, or the scorer was closed. */
export class ScorerError extends Schema.TaggedError<ScorerError>()("ScorerError", {
  reason: Schema.Literals(["model", "input", "run", "output", "closed"]),
  message: Schema.String
}) {}

/** A policy checkpoint folder that cannot be written or read back: which file and what is wrong with it. */
export class PolicyModelError extends Schema.TaggedError<PolicyModelError>()("PolicyModelError", {
  file: Schema.String,
  reason: Schema.Literals(["missing", "unreadable", "metadata", "onnx", "mismatch", "write"]),
  message: Schema.String
}) {}

/** An open ONNX scorer of one policy network. */
export interface Scorer {
  readonly shape: SetScorer.Shape
  /**
   * One logit per row of `x` (`rows × shape.input`, row-major) scored against its set (`sets`: none when absent),
   * equal to `SetScorer.forward` up to float64 rounding.
   */
  readonly score: (x: Float64Array, rows: number, sets?: SetScorer.Sets) => Effect.Effect<Float64Array, ScorerError>
  /** Releases the session now (waiting for a running `score`); later calls to `score` fail. Closing twice is a no-op. */
  readonly close: Effect.Effect<void>
}

const describe = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : JSON.stringify(cause)

const encoderText = (encoder: SetScorer.Encoder | undefined): string =>
  encoder === undefined ? "no encoder" : encoder.kind === "learned" ? `learned encoder ${encoder.width}` : `identity encoder [${encoder.from}, ${encoder.from + encoder.width})`

const shapeText = (shape: { readonly input: number; readonly encoder?: SetScorer.Encoder; readonly hidden: ReadonlyArray<number> }): string =>
  `input ${shape.input}, ${encoderText(shape.encoder)}, hidden [${shape.hidden.join(", ")}]`

/**
 * Opens a scorer on the bytes of a policy model (one intra-op thread: the machine is shared and a batch of candidates
 * is a small job). The session is released when the scope closes, or earlier by `close`.
 */
export const make = Effect.fn("PolicyScorerOnnx.make")(function*(bytes: Uint8Array) {
  const params = PolicyOnnxGraph.fromOnnx(bytes)
  if (params instanceof PolicyOnnxGraph.PolicyOnnxError) {
    return yield* new ScorerError({ reason: "model", message: `${params.part}: ${params.message}` })
  }
  const { shape } = params
  // one run at a time: closing must not release the session under a running score, and one thread gains nothing
  // from overlapping runs
  const lock = yield* Semaphore.make(1)
  let open = true
  const release = (session: ort.InferenceSession): Effect.Effect<void> =>
    lock.withPermit(Effect.suspend(() => {
      if (!open) return Effect.void
      open = false
      return Effect.promise(() => session.release())
    }))
  const session = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () => ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: "all" }),
      catch: (e) => new ScorerError({ reason: "model", message: `cannot open the policy model: ${describe(e)}` })
    }),
    release
  )

  const score = Effect.fn("PolicyScorerOnnx.score")(function*(x: Float64Array, rows: number, sets?: SetScorer.Sets) {
    if (!Number.isInteger(rows) || rows < 0) return yield* new ScorerError({ reason: "input", message: `rows must be a non-negative integer, got ${rows}` })
    if (x.length !== rows * shape.input) {
      return yield* new ScorerError({
        reason: "input",
        message: `features hold ${x.length} numbers for ${rows} rows (width ${rows === 0 ? "?" : x.length / rows}), the model's input width is ${shape.input}`
      })
    }
    if (rows === 0) return new Float64Array(0)
    const invalid = sets === undefined ? undefined : SetScorer.validateSets(sets, rows)
    if (invalid !== undefined) return yield* new ScorerError({ reason: "input", message: `sets: ${invalid}` })
    const { members, reads, count } = PolicyOnnxGraph.setInputs(sets, rows)
    return yield* lock.withPermit(Effect.gen(function*() {
      if (!open) return yield* new ScorerError({ reason: "closed", message: "the scorer was closed" })
      const out = yield* Effect.tryPromise({
        try: () =>
          session.run({
            [PolicyOnnxGraph.names.features]: new ort.Tensor("float64", x, [rows, shape.input]),
            [PolicyOnnxGraph.names.members]: new ort.Tensor("float64", members, [count, rows]),
            [PolicyOnnxGraph.names.reads]: new ort.Tensor("float64", reads, [rows, count])
          }),
        catch: (e) => new ScorerError({ reason: "run", message: `ONNX run failed: ${describe(e)}` })
      })
      const logits = out[PolicyOnnxGraph.names.logits]
      if (logits === undefined || !(logits.data instanceof Float64Array) || logits.data.length !== rows) {
        return yield* new ScorerError({
          reason: "output",
          message: `output ${PolicyOnnxGraph.names.logits} is ${logits === undefined ? "missing" : `${logits.type} [${logits.dims.join(", ")}]`}, expected float64 [${rows}, 1]`
        })
      }
      return logits.data.slice()
    }))
  })
  const scorer: Scorer = { shape, score, close: release(session) }
  return scorer
})

/** File names of a checkpoint folder. */
export const files = { onnx: "paraagent-policy.onnx", metadata: "paraagent-policy.json" } as const

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** The encoder of a shape, as the metadata file writes it. */
const EncoderJson = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("learned"), width: PositiveInt }),
  Schema.Struct({ kind: Schema.Literal("identity"), from: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), width: PositiveInt })
])

/** The metadata file of a checkpoint (`paraagent-policy.json`). */
export const PolicyMetadata = Schema.Struct({
  format: Schema.Literal("paraagent-policy"),
  /** Version of this file format: 2 since the scorer reads the rows' sets (the shape names its encoder); 1 before. */
  version: Schema.Literals([1, 2]),
  shape: Schema.Struct({ input: PositiveInt, encoder: Schema.optionalKey(EncoderJson), hidden: Schema.Array(PositiveInt) }),
  /** `SetScorer.size(shape)`. */
  parameters: PositiveInt,
  /** sha256 of the ONNX file, so a metadata file from another save is caught. */
  onnxSha256: Schema.String,
  /**
   * `ActionSpace.featureSchemaHash` when the model was trained: what its input columns mean. Absent in checkpoints
   * saved before the hash existed; the loader refuses those and any other hash than the running action space's.
   */
  featureSchema: Schema.optionalKey(Schema.String),
  /** What the caller recorded: command, seed, commit, metrics, ... */
  provenance: Schema.Record(Schema.String, Schema.Json)
})
/** The metadata file of a checkpoint. */
export type PolicyMetadata = typeof PolicyMetadata.Type

/** Fields a caller records with a checkpoint (command, seed, commit, metrics, ...): any JSON. */
export type Provenance = Readonly<Record<string, Schema.Json>>

/** A checkpoint read back. */
export interface LoadedModel {
  readonly params: SetScorer.Params
  readonly metadata: PolicyMetadata
  readonly bytes: Uint8Array
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

/** The ONNX `metadata_props` of a checkpoint: the format, and each provenance field (non-strings as JSON). */
const onnxMetadata = (provenance: Provenance): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(provenance)) out[k] = typeof v === "string" ? v : JSON.stringify(v)
  out["paraagent.format"] = "paraagent-policy"
  out["paraagent.version"] = "2"
  out["paraagent.featureSchema"] = ActionSpace.featureSchemaHash
  return out
}

/**
 * Writes `<dir>/paraagent-policy.onnx` then `<dir>/paraagent-policy.json`, each atomically; the JSON names the ONNX
 * file's sha256, so a reader never pairs a metadata file with the weights of another save.
 */
export const saveModel = Effect.fn("PolicyScorerOnnx.saveModel")(function*(dir: string, params: SetScorer.Params, provenance: Provenance = {}) {
  const onnxFile = path.join(dir, files.onnx)
  const expected = SetScorer.size(params.shape)
  if (params.data.length !== expected) {
    return yield* new PolicyModelError({
      file: onnxFile,
      reason: "mismatch",
      message: `params hold ${params.data.length} numbers, shape ${shapeText(params.shape)} has ${expected}`
    })
  }
  const bytes = PolicyOnnxGraph.toOnnx(params, onnxMetadata(provenance))
  const metadata: PolicyMetadata = {
    format: "paraagent-policy",
    version: 2,
    shape: { input: params.shape.input, encoder: { ...params.shape.encoder }, hidden: [...params.shape.hidden] },
    parameters: expected,
    onnxSha256: sha256(bytes),
    featureSchema: ActionSpace.featureSchemaHash,
    provenance
  }
  const write = (file: string, data: Uint8Array | string) =>
    writeFileAtomicEffect(file, data).pipe(
      Effect.mapError((e) => new PolicyModelError({ file, reason: "write", message: e.message }))
    )
  yield* write(onnxFile, bytes)
  const metadataFile = path.join(dir, files.metadata)
  yield* write(metadataFile, `${JSON.stringify(metadata, null, 2)}\n`)
  return { onnx: onnxFile, metadata: metadataFile, bytes }
})

const readFile = (file: string) =>
  Effect.tryPromise({
    try: () => Files.readBytes(file),
    catch: (e) => {
      const code = typeof e === "object" && e !== null && "code" in e ? e.code : undefined
      return new PolicyModelError({ file, reason: code === "ENOENT" ? "missing" : "unreadable", message: describe(e) })
    }
  })

const decodeMetadata = Schema.decodeUnknownEffect(Schema.fromJsonString(PolicyMetadata))

const sameShape = (a: PolicyMetadata["shape"], b: SetScorer.Shape): boolean =>
  a.input === b.input && JSON.stringify(a.encoder) === JSON.stringify(b.encoder) && a.hidden.length === b.hidden.length && a.hidden.every((h, i) => h === b.hidden[i])

/** Reads a checkpoint folder: the metadata decoded, the weights from the ONNX, and the two cross-checked. */
export const loadModel = Effect.fn("PolicyScorerOnnx.loadModel")(function*(dir: string) {
  const onnxFile = path.join(dir, files.onnx)
  const metadataFile = path.join(dir, files.metadata)
  const text = (yield* readFile(metadataFile)).toString("utf8")
  const metadata = yield* decodeMetadata(text).pipe(
    Effect.mapError((e) => new PolicyModelError({ file: metadataFile, reason: "metadata", message: e.message }))
  )
  const mismatch = (message: string) => new PolicyModelError({ file: metadataFile, reason: "mismatch", message })
  // the same width is not the same features: a model trained on another action space scores rows it never saw
  if (metadata.featureSchema !== ActionSpace.featureSchemaHash) {
    return yield* mismatch(
      metadata.featureSchema === undefined
        ? `featureSchema: the model records no feature-schema hash (saved before the action space's schema was recorded); this action space's is ${ActionSpace.featureSchemaHash} — retrain it (npm start -- --ship <dir>)`
        : `featureSchema: the model was trained on action-space features ${metadata.featureSchema}, this action space's are ${ActionSpace.featureSchemaHash} (another version of src/agent/actions) — retrain it (npm start -- --ship <dir>)`
    )
  }
  const bytes = new Uint8Array(yield* readFile(onnxFile))
  const params = PolicyOnnxGraph.fromOnnx(bytes)
  if (params instanceof PolicyOnnxGraph.PolicyOnnxError) {
    return yield* new PolicyModelError({ file: onnxFile, reason: "onnx", message: `${params.part}: ${params.message}` })
  }
  if (!sameShape(metadata.shape, params.shape)) {
    return yield* mismatch(`shape: the metadata says ${shapeText(metadata.shape)}, ${files.onnx} has ${shapeText(params.shape)}`)
  }
  if (metadata.parameters !== params.data.length) {
    return yield* mismatch(`parameters: the metadata says ${metadata.parameters}, ${files.onnx} holds ${params.data.length}`)
  }
  const digest = sha256(bytes)
  if (metadata.onnxSha256 !== digest) {
    return yield* mismatch(`onnxSha256: the metadata says ${metadata.onnxSha256}, ${files.onnx} hashes to ${digest}`)
  }
  const loaded: LoadedModel = { params, metadata, bytes }
  return loaded
})
