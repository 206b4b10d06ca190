/**
 * The Dense retriever: an encoder run by onnxruntime-node (ParaAgent's shipped static encoder, or a user's
 * sentence-transformers export with its tokenizer.json) over the library's documents, exact top-k by cosine.
 */
import { Effect, Layer, type Scope } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ort from "onnxruntime-node"
import { writeFileAtomic } from "../../src/io/AtomicWrite.ts"
import { repoRoot } from "../../src/io/DataPath.ts"
import type { ToolName } from "../../src/domain/Ids.ts"
import type { SearchHit } from "../../src/domain/Trajectory.ts"
import { checkK, Retriever, RetrieverError } from "../../src/retrieval/Retriever.ts"
import * as Bm25 from "../../src/retrieval/Bm25.ts"
import * as DenseModel from "../../src/retrieval/DenseModel.ts"
import * as DenseOnnx from "../../src/retrieval/DenseOnnx.ts"
import * as Document from "../../src/retrieval/Document.ts"
import * as Hybrid from "../../src/retrieval/Hybrid.ts"
import * as TokenizerHf from "../../src/retrieval/TokenizerHf.ts"
import * as TokenizerStatic from "../../src/retrieval/TokenizerStatic.ts"
import { type Library, ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Files from "../../src/io/Files.ts"

/** A text encoder run by onnxruntime-node. */
export interface Encoder {
  readonly kind: "static" | "transformer"
  readonly dim: number
  /** A hash of the model and tokenizer files (and options that change outputs): the key of document caches. */
  readonly fingerprint: string
  /** Unit-norm embeddings of the texts, row-major `texts.length × dim`. */
  readonly encode: (texts: ReadonlyArray<string>) => Effect.Effect<Float32Array, RetrieverError>
}

/** Where the encoder comes from. */
export type ModelSource =
  | { readonly kind: "static"; readonly onnx: string; readonly vocab: string }
  | {
    readonly kind: "transformer"
    readonly onnx: string
    readonly tokenizer: string
    /** Truncation length (default: the tokenizer file's, else 512). */
    readonly maxLength?: number
    /** `mean` pools `last_hidden_state` by the attention mask; `auto` prefers a `sentence_embedding` output. */
    readonly pooling?: "auto" | "mean" | "cls"
  }

/** The encoder that ships with ParaAgent (trained on the generated library and WordNet; see docs/dense.md). */
export const shippedModel = {
  kind: "static",
  onnx: path.join(repoRoot, "models", "paraagent-static.onnx"),
  vocab: path.join(repoRoot, "models", "paraagent-static.vocab.json")
} as const satisfies ModelSource

/** Options of the dense retriever. */
export interface DenseOptions {
  readonly model: ModelSource
  /** Document fields embedded (default: all of {@link Document.fieldNames}). */
  readonly fields?: ReadonlyArray<Document.FieldName>
  /** Folder for the cached document matrix (keyed by model fingerprint and document texts); none by default. */
  readonly cacheDir?: string
  /** Texts per ONNX run when embedding documents (default 256 static, 32 transformer). */
  readonly batchSize?: number
  /** Threads of each ONNX session (default 1: the machine is shared, and one query is a small job). */
  readonly threads?: number
  /** `onnx`: exact top-k as an ONNX Gemm + TopK over the matrix (SIMD); `js`: a plain loop. Default `onnx`. */
  readonly scorer?: "onnx" | "js"
  /** Also rank each sentence of a multi-sentence query and fuse by RRF with the whole query (weight `wholeWeight`). */
  readonly clauses?: { readonly wholeWeight: number; readonly rrfK: number }
  /** Candidates per query before clause fusion (default 100). */
  readonly depth?: number
  /**
   * Provider evidence: each API's score gains `weight` (λ) times the cosine of the query with its provider's document
   * (`Document.groupDocument`). Folded into the index — a row is a + λ·g, since q·a + λ·q·g = q·(a + λ·g) — so a
   * query costs the same. Absent or 0 = none.
   */
  readonly group?: { readonly weight: number }
}

const fail = (message: string) => new RetrieverError({ message })

const describe = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : JSON.stringify(cause)

const readFile = (file: string) =>
  Effect.tryPromise({ try: () => Files.readBytes(file), catch: (e) => fail(`cannot read ${file}: ${describe(e)}`) })

const sha256 = (...parts: ReadonlyArray<Uint8Array | string>): string => {
  const h = createHash("sha256")
  for (const p of parts) h.update(p)
  return h.digest("hex")
}

const openSession = (model: Uint8Array, label: string, threads: number) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        ort.InferenceSession.create(model, {
          intraOpNumThreads: threads,
          interOpNumThreads: 1,
          graphOptimizationLevel: "all"
        }),
      catch: (e) => fail(`cannot load ONNX model ${label}: ${describe(e)}`)
    }),
    (session) => Effect.promise(() => session.release())
  )

const run = (session: ort.InferenceSession, feeds: ort.InferenceSession.FeedsType, label: string) =>
  Effect.tryPromise({ try: () => session.run(feeds), catch: (e) => fail(`ONNX run of ${label} failed: ${describe(e)}`) })

const floatOutput = (out: ort.InferenceSession.ReturnType, name: string, label: string) => {
  const t = out[name]
  return t !== undefined && t.data instanceof Float32Array
    ? Effect.succeed({ data: t.data, dims: t.dims })
    : Effect.fail(fail(`${label}: output ${name} missing or not float32`))
}

/** Divides each row of a row-major matrix by its L2 norm (rows of zeros stay zero), in place. */
export const normalizeRows = (matrix: Float32Array, dim: number): Float32Array => {
  for (let o = 0; o < matrix.length; o += dim) DenseModel.normalizeInPlace(matrix.subarray(o, o + dim))
  return matrix
}

/**
 * The `encode` of an encoder: `encodeBatch` over batches of texts taken in order of length (less padding), results in
 * input order; an empty list encodes to an empty matrix without running the model.
 */
const batched = <E>(
  dim: number,
  batchSize: number,
  encodeBatch: (batch: ReadonlyArray<string>) => Effect.Effect<Float32Array, E>
) =>
(texts: ReadonlyArray<string>): Effect.Effect<Float32Array, E> => {
  if (texts.length === 0) return Effect.succeed(new Float32Array(0))
  if (texts.length <= batchSize) return encodeBatch(texts)
  return Effect.gen(function*() {
    const out = new Float32Array(texts.length * dim)
    const order = texts.map((t, i) => ({ i, n: t.length })).sort((a, b) => a.n - b.n || a.i - b.i)
    for (let s = 0; s < order.length; s += batchSize) {
      const slice = order.slice(s, s + batchSize)
      const vectors = yield* encodeBatch(slice.map(({ i }) => texts[i] ?? ""))
      slice.forEach(({ i }, b) => out.set(vectors.subarray(b * dim, (b + 1) * dim), i * dim))
    }
    return out
  })
}

/** The shipped kind of encoder: a ParaAgent static encoder (`*.onnx` + `*.vocab.json`). */
export const staticEncoder = Effect.fn("RetrieverOnnx.staticEncoder")(function*(
  source: { readonly onnx: string; readonly vocab: string },
  options: Pick<DenseOptions, "threads" | "batchSize"> = {}
) {
  const vocabText = (yield* readFile(source.vocab)).toString("utf8")
  const tokenizer = yield* TokenizerStatic.parse(vocabText, source.vocab).pipe(
    Effect.mapError((e) => fail(`vocabulary ${e.source}: ${e.message}`))
  )
  const bytes = yield* readFile(source.onnx)
  const session = yield* openSession(bytes, source.onnx, options.threads ?? 1)
  const dim = tokenizer.vocab.dim
  const names = DenseOnnx.staticNames
  const encodeBatch = (batch: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const padded = TokenizerStatic.pad(batch.map(tokenizer.encode))
      const shape = [padded.size, padded.length]
      const out = yield* run(session, {
        [names.ids]: new ort.Tensor("int64", padded.ids, shape),
        [names.mass]: new ort.Tensor("float32", padded.mass, shape)
      }, source.onnx)
      const { data, dims } = yield* floatOutput(out, names.output, source.onnx)
      if (dims[1] !== dim) return yield* fail(`${source.onnx}: output width ${dims[1]} but the vocabulary says dim ${dim}`)
      return data
    })
  const batchSize = options.batchSize ?? 256
  const encoder: Encoder = {
    kind: "static",
    dim,
    fingerprint: sha256(bytes, vocabText),
    encode: batched(dim, batchSize, encodeBatch)
  }
  return encoder
})

/** Mean of the token vectors where the attention mask is 1. */
const meanPool = (hidden: Float32Array, mask: BigInt64Array, batch: number, length: number, width: number): Float32Array => {
  const out = new Float32Array(batch * width)
  for (let b = 0; b < batch; b++) {
    let count = 0
    for (let t = 0; t < length; t++) {
      if (mask[b * length + t] === 0n) continue
      count++
      const o = (b * length + t) * width
      for (let j = 0; j < width; j++) out[b * width + j] = (out[b * width + j] ?? 0) + (hidden[o + j] ?? 0)
    }
    for (let j = 0; j < width; j++) out[b * width + j] = (out[b * width + j] ?? 0) / Math.max(count, 1)
  }
  return out
}

/**
 * A user's sentence-transformers ONNX export with its HuggingFace tokenizer.json: feeds `input_ids`,
 * `attention_mask` and `token_type_ids` (those the model declares) as int64; takes `sentence_embedding` when the
 * model outputs it, else mean-pools the first rank-3 output (`last_hidden_state`) by the mask; L2-normalises.
 */
export const transformerEncoder = Effect.fn("RetrieverOnnx.transformerEncoder")(function*(
  source: {
    readonly onnx: string
    readonly tokenizer: string
    readonly maxLength?: number
    readonly pooling?: "auto" | "mean" | "cls"
  },
  options: Pick<DenseOptions, "threads" | "batchSize"> = {}
) {
  const tokenizerText = (yield* readFile(source.tokenizer)).toString("utf8")
  const tokenizer = yield* TokenizerHf.parse(
    tokenizerText,
    source.tokenizer,
    source.maxLength === undefined ? {} : { maxLength: source.maxLength }
  ).pipe(Effect.mapError((e) => fail(`tokenizer ${e.source}: ${e.message}`)))
  const bytes = yield* readFile(source.onnx)
  const session = yield* openSession(bytes, source.onnx, options.threads ?? 1)
  const inputs = new Set(session.inputNames)
  if (!inputs.has("input_ids")) {
    return yield* fail(`${source.onnx}: no input_ids input (inputs: ${session.inputNames.join(", ")})`)
  }
  const pooling = source.pooling ?? "auto"
  const sentenceOutput = pooling === "auto" && session.outputNames.includes("sentence_embedding")
  const tokenOutput = session.outputNames.includes("last_hidden_state")
    ? "last_hidden_state"
    : session.outputNames.includes("token_embeddings")
    ? "token_embeddings"
    : session.outputNames[0]
  if (tokenOutput === undefined) return yield* fail(`${source.onnx}: the model has no outputs`)

  const encodeBatch = (batch: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const encodings = batch.map(tokenizer.encode)
      const length = Math.max(1, ...encodings.map((e) => e.ids.length))
      const ids = new BigInt64Array(batch.length * length).fill(BigInt(tokenizer.padId))
      const mask = new BigInt64Array(batch.length * length)
      const types = new BigInt64Array(batch.length * length)
      encodings.forEach((e, b) => {
        e.ids.forEach((id, t) => {
          ids[b * length + t] = BigInt(id)
          mask[b * length + t] = 1n
          types[b * length + t] = BigInt(e.typeIds[t] ?? 0)
        })
      })
      const shape = [batch.length, length]
      const feeds: Record<string, ort.Tensor> = { input_ids: new ort.Tensor("int64", ids, shape) }
      if (inputs.has("attention_mask")) feeds["attention_mask"] = new ort.Tensor("int64", mask, shape)
      if (inputs.has("token_type_ids")) feeds["token_type_ids"] = new ort.Tensor("int64", types, shape)
      const out = yield* run(session, feeds, source.onnx)
      if (sentenceOutput) {
        const { data } = yield* floatOutput(out, "sentence_embedding", source.onnx)
        return normalizeRows(Float32Array.from(data), data.length / batch.length)
      }
      const { data, dims } = yield* floatOutput(out, tokenOutput, source.onnx)
      if (dims.length === 2) return normalizeRows(Float32Array.from(data), Number(dims[1]))
      if (dims.length !== 3) return yield* fail(`${source.onnx}: output ${tokenOutput} has rank ${dims.length}, expected 2 or 3`)
      const width = Number(dims[2])
      if (pooling === "cls") {
        const cls = new Float32Array(batch.length * width)
        for (let b = 0; b < batch.length; b++) cls.set(data.subarray(b * length * width, b * length * width + width), b * width)
        return normalizeRows(cls, width)
      }
      return normalizeRows(meanPool(data, mask, batch.length, length, width), width)
    })

  // the width is only known from an output: embed one text to learn it
  const probe = yield* encodeBatch(["probe"])
  const dim = probe.length
  const batchSize = options.batchSize ?? 32
  const encoder: Encoder = {
    kind: "transformer",
    dim,
    fingerprint: sha256(bytes, tokenizerText, String(tokenizer.maxLength), pooling),
    encode: batched(dim, batchSize, encodeBatch)
  }
  return encoder
})

/** Opens the encoder of a model source. */
export const openEncoder = (
  source: ModelSource,
  options: Pick<DenseOptions, "threads" | "batchSize"> = {}
): Effect.Effect<Encoder, RetrieverError, Scope.Scope> =>
  source.kind === "static" ? staticEncoder(source, options) : transformerEncoder(source, options)

/** Exact top-k over a matrix of unit rows: `search(vectors, count, k)` gives per query vector (doc, score) best first. */
export interface VectorIndex {
  readonly rows: number
  readonly dim: number
  readonly matrix: Float32Array
  readonly search: (
    vectors: Float32Array,
    count: number,
    k: number
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<{ readonly doc: number; readonly score: number }>>, RetrieverError>
}

/** Exact top-k in plain JavaScript: a 4-way unrolled dot-product loop, then `DenseModel.topIndices` (ties to the lower index). */
export const jsTopK = (matrix: Float32Array, rows: number, dim: number, query: Float32Array, offset: number, k: number) => {
  const q = query.subarray(offset, offset + dim)
  const scores = new Float32Array(rows)
  for (let r = 0, o = 0; r < rows; r++, o += dim) {
    let s0 = 0
    let s1 = 0
    let s2 = 0
    let s3 = 0
    let j = 0
    for (; j + 3 < dim; j += 4) {
      s0 += matrix[o + j]! * q[j]!
      s1 += matrix[o + j + 1]! * q[j + 1]!
      s2 += matrix[o + j + 2]! * q[j + 2]!
      s3 += matrix[o + j + 3]! * q[j + 3]!
    }
    for (; j < dim; j++) s0 += matrix[o + j]! * q[j]!
    scores[r] = s0 + s1 + s2 + s3
  }
  return DenseModel.topIndices(scores, k).map((doc) => ({ doc, score: scores[doc]! }))
}

/** A vector index over a matrix: ONNX Gemm + TopK (default) or a plain loop. */
export const vectorIndex = (
  matrix: Float32Array,
  dim: number,
  scorer: "onnx" | "js" = "onnx",
  threads = 1
): Effect.Effect<VectorIndex, RetrieverError, Scope.Scope> =>
  Effect.gen(function*() {
    const rows = matrix.length / dim
    if (scorer === "js" || rows === 0) {
      return {
        rows,
        dim,
        matrix,
        search: (vectors, count, k) =>
          Effect.sync(() => Array.from({ length: count }, (_, q) => jsTopK(matrix, rows, dim, vectors, q * dim, Math.min(k, rows))))
      }
    }
    const session = yield* openSession(DenseOnnx.scorer(matrix, rows, dim), "exact top-k scorer", threads)
    const names = DenseOnnx.scorerNames
    return {
      rows,
      dim,
      matrix,
      search: (vectors, count, k) =>
        Effect.gen(function*() {
          const kk = Math.min(k, rows)
          const out = yield* run(session, {
            [names.queries]: new ort.Tensor("float32", vectors.subarray(0, count * dim), [count, dim]),
            [names.k]: new ort.Tensor("int64", BigInt64Array.from([BigInt(kk)]), [1])
          }, "exact top-k scorer")
          const scores = out[names.scores]?.data
          const indices = out[names.indices]?.data
          if (!(scores instanceof Float32Array) || !(indices instanceof BigInt64Array)) {
            return yield* fail("exact top-k scorer returned unexpected outputs")
          }
          return Array.from({ length: count }, (_, q) =>
            Array.from({ length: kk }, (_, i) => ({ doc: Number(indices[q * kk + i]), score: scores[q * kk + i] ?? 0 })))
        })
    }
  })

/** Reads a cached matrix (undefined when absent or of the wrong size). */
const readCache = (file: string, expectedFloats: number) =>
  Effect.promise(() =>
    Files.readBytes(file).then(
      (buf) => buf.byteLength === expectedFloats * 4 ? new Float32Array(Uint8Array.from(buf).buffer) : undefined,
      () => undefined
    )
  )

/** Writes a matrix atomically (temp file + rename); a failure to cache is logged, not fatal. */
const writeCache = (file: string, matrix: Float32Array) =>
  Effect.tryPromise({
    try: () => writeFileAtomic(file, new Uint8Array(matrix.buffer, matrix.byteOffset, matrix.byteLength)),
    catch: (e) => fail(`cannot write cache ${file}: ${describe(e)}`)
  }).pipe(Effect.catchTag("RetrieverError", (e) => Effect.logWarning(e.message)))

/** Embeds every document of a library (or loads the cached matrix for the same model and texts). */
export const embedDocuments = Effect.fn("RetrieverOnnx.embedDocuments")(function*(
  encoder: Encoder,
  texts: ReadonlyArray<string>,
  cacheDir?: string
) {
  if (cacheDir === undefined) return yield* encoder.encode(texts)
  const h = createHash("sha256").update(encoder.fingerprint)
  for (const t of texts) h.update(t).update("\u0000")
  const file = path.join(cacheDir, `dense-${h.digest("hex").slice(0, 24)}.f32`)
  const cached = yield* readCache(file, texts.length * encoder.dim)
  if (cached !== undefined) return cached
  const matrix = yield* encoder.encode(texts)
  yield* writeCache(file, matrix)
  return matrix
})

/**
 * Adds λ times each provider document's embedding to the rows of its APIs (in place): the rows of
 * {@link DenseOptions.group}. `groupMatrix` has one row per group of `groups`.
 */
export const addGroupRows = (matrix: Float32Array, groupMatrix: Float32Array, groups: Document.Groups, dim: number, weight: number): Float32Array => {
  for (let t = 0; t < groups.groupOf.length; t++) {
    const g = groups.groupOf[t] as number
    for (let j = 0; j < dim; j++) matrix[t * dim + j] = (matrix[t * dim + j] as number) + weight * (groupMatrix[g * dim + j] as number)
  }
  return matrix
}

/**
 * The rows a Dense retriever searches: `apiRows`, each API's document embedded (cached under `options.cacheDir`), and
 * `matrix`, those rows plus λ times their provider document's row when `options.group` is set (else `apiRows` itself).
 */
export const documentRows = Effect.fn("RetrieverOnnx.documentRows")(function*(
  library: Library,
  encoder: Encoder,
  options: Pick<DenseOptions, "fields" | "cacheDir" | "group"> = {}
) {
  const fieldNames = options.fields ?? Document.fieldNames
  const documents = library.tools.map((t) => Document.fromTool(t))
  const texts = documents.map((d) => Document.text(d, fieldNames))
  const apiRows = yield* embedDocuments(encoder, texts, options.cacheDir)
  const groupWeight = options.group?.weight ?? 0
  if (groupWeight === 0) return { apiRows, matrix: apiRows }
  const groups = Document.groups(library.tools)
  const groupTexts = Document.groupDocuments(documents, groups).map((fields, g) =>
    Document.text({ tool: library.tools[groups.members[groups.memberStart[g] as number] as number]?.name as ToolName, fields }, fieldNames)
  )
  const groupMatrix = yield* embedDocuments(encoder, groupTexts, options.cacheDir)
  // a copy: the cached matrix stays the plain API rows
  return { apiRows, matrix: addGroupRows(Float32Array.from(apiRows), groupMatrix, groups, encoder.dim, groupWeight) }
})

/** A Dense retriever over a library with an open encoder. */
export const make = Effect.fn("RetrieverOnnx.make")(function*(
  library: Library,
  encoder: Encoder,
  options: Omit<DenseOptions, "model"> = {}
) {
  const tools: ReadonlyArray<ToolName> = library.tools.map((t) => t.name)
  const { matrix } = yield* documentRows(library, encoder, options)
  const index = yield* vectorIndex(matrix, encoder.dim, options.scorer ?? "onnx", options.threads ?? 1)
  const depth = options.depth ?? 100
  const clauseOptions = options.clauses
  const search = Effect.fn("RetrieverOnnx.search")(function*(queries: ReadonlyArray<string>, k: number) {
    yield* checkK(k)
    // one encoder run and one scorer run for every query (and clause) of the call
    const parts = queries.map((q) => {
      const split = clauseOptions === undefined ? [] : Bm25.clauses(q)
      return split.length < 2 ? [q] : [q, ...split]
    })
    const flat = parts.flat()
    if (flat.length === 0) return []
    const vectors = yield* encoder.encode(flat)
    const ranked = yield* index.search(vectors, flat.length, Math.max(k, clauseOptions === undefined ? k : depth))
    let at = 0
    return parts.map((group): ReadonlyArray<SearchHit> => {
      const lists = ranked.slice(at, at + group.length)
      at += group.length
      const toHits = (list: ReadonlyArray<{ readonly doc: number; readonly score: number }>): Array<SearchHit> =>
        list.map(({ doc, score }) => ({ tool: tools[doc] as ToolName, score }))
      if (lists.length === 1 || clauseOptions === undefined) return toHits(lists[0] ?? []).slice(0, k)
      return Hybrid.reciprocalRank(
        lists.map((list, i) => ({ hits: toHits(list), weight: i === 0 ? clauseOptions.wholeWeight : 1 })),
        k,
        clauseOptions.rrfK
      )
    })
  })
  return Retriever.of({ name: encoder.kind === "static" ? "dense" : "dense(transformer)", search })
})

/** The Dense retriever layer over the ToolLibrary. */
export const layer = (options: DenseOptions): Layer.Layer<Retriever, RetrieverError, ToolLibrary> =>
  Layer.effect(
    Retriever,
    Effect.gen(function*() {
      const library = yield* ToolLibrary
      const encoder = yield* openEncoder(options.model, options)
      return yield* make(library, encoder, options)
    })
  )

/**
 * The dense options tuned with `programs/tune-fusion.ts --on split` (on the BM25 tuning data) for the round-3 encoder
 * (trained on real tool documentation): provider evidence λ = 2, and each sentence's ranking fused with the whole
 * request's (RRF, k = 5). Best in the hybrid.
 */
export const tunedDense: Omit<DenseOptions, "model"> = { group: { weight: 2 }, clauses: { wholeWeight: 1, rrfK: 5 } }

/** The Dense retriever with the shipped encoder and the tuned options ({@link tunedDense}). */
export const layerShipped: Layer.Layer<Retriever, RetrieverError, ToolLibrary> = layer({ model: shippedModel, ...tunedDense })

/**
 * Hybrid of the tuned BM25 (`Retriever.layerBm25`) and a dense retriever (by default the shipped encoder with
 * {@link tunedDense}), fused by {@link Hybrid.tunedFusion} (RRF k 10, dense weight 0.4).
 */
export const layerHybrid = (
  options: DenseOptions = { model: shippedModel, ...tunedDense },
  fusion: Hybrid.FusionConfig = Hybrid.tunedFusion
): Layer.Layer<Retriever, RetrieverError, ToolLibrary> => Hybrid.layer(Retriever.layerBm25, layer(options), fusion)
