/**
 * Contrastive training of the static encoder in plain TypeScript: symmetric InfoNCE with in-batch negatives (batches
 * gather near-duplicate tools as hard negatives), manual gradients, lazy Adam on the touched rows; deterministic from a seed.
 */
import { Effect, Schema } from "effect"
import type { Rng } from "../math/Random.ts"
import { rng as makeRng } from "../math/Random.ts"
import type { StaticModel } from "./DenseModel.ts"
import { encodeAll, init, normalizeInPlace, normEpsilon, poolInto, topIndices } from "./DenseModel.ts"
import type { StaticEncoding } from "./TokenizerStatic.ts"
import type { ImportReport } from "../toolenv/importers/ImportReport.ts"

/** Hyperparameters of a training run. */
export interface TrainConfig {
  readonly dim: number
  readonly steps: number
  /** Queries per batch (each brings its positive document; the other documents are its negatives). */
  readonly batchSize: number
  readonly learningRate: number
  readonly weightLearningRate: number
  /** InfoNCE temperature τ (logits are cosine / τ). */
  readonly temperature: number
  /** Fraction of steps that train on dictionary pairs (WordNet) instead of library queries. */
  readonly textPairShare: number
  /** Documents drawn from one cluster (same tool group / category) per batch anchor: hard negatives. */
  readonly clusterDraw: number
  /** Scale of the random initial embeddings (N(0, scale²/dim)). */
  readonly initScale: number
  /**
   * Strength λ of an L2 pull of every touched parameter back to its initial value (λ/2 · ‖θ − θ₀‖², added to the
   * gradient of the rows a batch touches). It keeps the random start's exact-match behaviour for words the library
   * uses differently from real ones; 0 turns it off.
   */
  readonly anchor: number
  /**
   * Mined hard negatives added per batch: each query row brings one of its mined negatives
   * ({@link Corpus.hardNegatives}) as an extra document column, with this chance (0 = off, 1 = every row).
   */
  readonly hardNegativeRate: number
  readonly seed: number
}

/** A reasonable configuration for a 50k-tool library. */
export const defaultTrainConfig: TrainConfig = {
  dim: 128,
  steps: 6000,
  batchSize: 256,
  learningRate: 0.01,
  weightLearningRate: 0.01,
  temperature: 0.05,
  textPairShare: 0.3,
  clusterDraw: 4,
  initScale: 1,
  anchor: 0,
  hardNegativeRate: 0,
  seed: 7
}

/** A query with its positive documents (indices into {@link Corpus.docs}). */
export interface Query {
  readonly encoding: StaticEncoding
  readonly positives: ReadonlyArray<number>
}

/** Everything a run trains on, already tokenised. */
export interface Corpus {
  readonly rows: number
  readonly docs: ReadonlyArray<StaticEncoding>
  /** For each document, the index of the first document with the same text (duplicates are not negatives). */
  readonly canonical: Int32Array
  readonly queries: ReadonlyArray<Query>
  /** Groups of documents that are near-duplicates (same tool group, then same category): hard-negative pools. */
  readonly clusters: ReadonlyArray<ReadonlyArray<number>>
  /** Text pairs outside the library (dictionary pairs). */
  readonly textPairs: ReadonlyArray<{ readonly query: StaticEncoding; readonly doc: StaticEncoding }>
  /** For each query, documents a lexical retriever ranks high that do not answer it (`DenseHardNegatives.mine`); optional. */
  readonly hardNegatives?: ReadonlyArray<Int32Array>
}

/** A library that gives nothing to train on (an empty folder, every tool file bad, every tool held out): which, and why. */
export class EmptyLibraryError extends Schema.TaggedError<EmptyLibraryError>()("EmptyLibraryError", {
  /** The library's folder (or label). */
  source: Schema.String,
  message: Schema.String
}) {}

/** Whether a corpus has a batch to offer: a training query with a positive, or two dictionary pairs. */
export const trainable = (corpus: Corpus): boolean =>
  corpus.queries.some((q) => q.positives.length > 0) || corpus.textPairs.length > 1

/**
 * Checks, before any training, that the corpus built from the library at `source` has something to train on; the
 * import `report`, when given, says why a folder gave no tool (counts and the first issue).
 */
export const checkCorpus = (corpus: Corpus, source: string, report?: ImportReport): Effect.Effect<void, EmptyLibraryError> => {
  // a library with no tool is refused even when WordNet pairs alone could drive the loss: it would ship an encoder of nothing
  if (corpus.docs.length > 0 && trainable(corpus)) return Effect.void
  const first = report?.issues[0]
  const why = report === undefined
    ? ""
    : ` (${report.loaded} APIs loaded, ${report.skipped} skipped${first === undefined ? "" : `; first issue: ${first.source}: ${first.message}`})`
  const message = corpus.docs.length === 0
    ? `the library has no tool to train on${why}`
    : `the library's ${corpus.docs.length} tools give no training query (all held out for validation, or no text)${why}`
  return Effect.fail(new EmptyLibraryError({ source, message }))
}

/** A training run in progress: call `step` until done; `model` is updated in place. */
export interface Trainer {
  readonly model: StaticModel
  /** Runs one batch and returns its loss. */
  readonly step: () => number
  /** Steps run so far. */
  readonly steps: () => number
}

const adamBeta1 = 0.9
const adamBeta2 = 0.999
const adamEpsilon = 1e-8

/** Lazy Adam over the rows of a matrix: moments and updates only for the rows a batch touched. */
const makeRowAdam = (params: Float32Array, width: number, learningRate: number, anchor: number) => {
  const m = new Float32Array(params.length)
  const v = new Float32Array(params.length)
  const start = anchor > 0 ? Float32Array.from(params) : undefined
  return (grad: Float32Array, touched: ReadonlyArray<number>, t: number, clampMin?: number) => {
    const c1 = 1 - Math.pow(adamBeta1, t)
    const c2 = 1 - Math.pow(adamBeta2, t)
    const step = learningRate * Math.sqrt(c2) / c1
    for (const r of touched) {
      const o = r * width
      for (let j = 0; j < width; j++) {
        const g = (grad[o + j] ?? 0) + (start === undefined ? 0 : anchor * ((params[o + j] ?? 0) - (start[o + j] ?? 0)))
        const mj = adamBeta1 * (m[o + j] ?? 0) + (1 - adamBeta1) * g
        const vj = adamBeta2 * (v[o + j] ?? 0) + (1 - adamBeta2) * g * g
        m[o + j] = mj
        v[o + j] = vj
        let p = (params[o + j] ?? 0) - step * mj / (Math.sqrt(vj) + adamEpsilon)
        if (clampMin !== undefined && p < clampMin) p = clampMin
        params[o + j] = p
        grad[o + j] = 0
      }
    }
  }
}

/** One side of a batch: encodings, the norms of their pooled vectors, and their unit vectors. */
interface Side {
  readonly encodings: ReadonlyArray<StaticEncoding>
  readonly norms: Float64Array
  readonly unit: Float32Array
}

/** The model's forward pass (`DenseModel.poolInto`, then `normalizeInPlace`) over a batch, keeping each pooled norm for `backward`. */
const forward = (model: StaticModel, encodings: ReadonlyArray<StaticEncoding>): Side => {
  const { dim } = model
  const unit = new Float32Array(encodings.length * dim)
  const norms = new Float64Array(encodings.length)
  encodings.forEach((e, b) => {
    const row = unit.subarray(b * dim, (b + 1) * dim)
    poolInto(model, e, row)
    norms[b] = normalizeInPlace(row)
  })
  return { encodings, norms, unit }
}

/**
 * Symmetric InfoNCE over a batch. `target[i]` is the column of row i's positive, `rowMask(i, j)` excludes other
 * positives of row i from its softmax; columns use the first row that targets them and mask the other such rows.
 * Returns the loss and fills the gradients with respect to the unit vectors.
 */
const infoNce = (
  q: Side,
  d: Side,
  dim: number,
  target: Int32Array,
  rowMask: (i: number, j: number) => boolean,
  temperature: number,
  gradQ: Float32Array,
  gradD: Float32Array
): number => {
  const B = q.encodings.length
  const C = d.encodings.length
  const logits = new Float64Array(B * C)
  for (let i = 0; i < B; i++) {
    for (let j = 0; j < C; j++) {
      let s = 0
      const oi = i * dim
      const oj = j * dim
      for (let k = 0; k < dim; k++) s += (q.unit[oi + k] ?? 0) * (d.unit[oj + k] ?? 0)
      logits[i * C + j] = s / temperature
    }
  }
  const masked = new Uint8Array(B * C)
  for (let i = 0; i < B; i++) for (let j = 0; j < C; j++) if (j !== target[i] && rowMask(i, j)) masked[i * C + j] = 1
  const g = new Float64Array(B * C)
  let loss = 0
  // rows: each query against every document column
  for (let i = 0; i < B; i++) {
    let max = -Infinity
    for (let j = 0; j < C; j++) if (masked[i * C + j] === 0) max = Math.max(max, logits[i * C + j] ?? 0)
    let sum = 0
    for (let j = 0; j < C; j++) if (masked[i * C + j] === 0) sum += Math.exp((logits[i * C + j] ?? 0) - max)
    const t = target[i] ?? 0
    loss += (Math.log(sum) + max - (logits[i * C + t] ?? 0)) / (2 * B)
    for (let j = 0; j < C; j++) {
      if (masked[i * C + j] === 1) continue
      const p = Math.exp((logits[i * C + j] ?? 0) - max) / sum
      g[i * C + j] = (g[i * C + j] ?? 0) + (p - (j === t ? 1 : 0)) / (2 * B)
    }
  }
  // columns: each document against every query row; its target is the first row that points at it
  const columnTarget = new Int32Array(C).fill(-1)
  for (let i = 0; i < B; i++) {
    const t = target[i] ?? 0
    if (columnTarget[t] === -1) columnTarget[t] = i
  }
  for (let j = 0; j < C; j++) {
    const t = columnTarget[j] ?? -1
    if (t < 0) continue
    const skip = (i: number) => i !== t && (target[i] === j || masked[i * C + j] === 1)
    let max = -Infinity
    for (let i = 0; i < B; i++) if (!skip(i)) max = Math.max(max, logits[i * C + j] ?? 0)
    let sum = 0
    for (let i = 0; i < B; i++) if (!skip(i)) sum += Math.exp((logits[i * C + j] ?? 0) - max)
    loss += (Math.log(sum) + max - (logits[t * C + j] ?? 0)) / (2 * C)
    for (let i = 0; i < B; i++) {
      if (skip(i)) continue
      const p = Math.exp((logits[i * C + j] ?? 0) - max) / sum
      g[i * C + j] = (g[i * C + j] ?? 0) + (p - (i === t ? 1 : 0)) / (2 * C)
    }
  }
  // d loss / d unit vectors (logits = q·d / τ)
  gradQ.fill(0)
  gradD.fill(0)
  for (let i = 0; i < B; i++) {
    for (let j = 0; j < C; j++) {
      const gij = (g[i * C + j] ?? 0) / temperature
      if (gij === 0) continue
      const oi = i * dim
      const oj = j * dim
      for (let k = 0; k < dim; k++) {
        gradQ[oi + k] = (gradQ[oi + k] ?? 0) + gij * (d.unit[oj + k] ?? 0)
        gradD[oj + k] = (gradD[oj + k] ?? 0) + gij * (q.unit[oi + k] ?? 0)
      }
    }
  }
  return loss
}

/** Back-propagates unit-vector gradients through normalisation and weighted pooling into the row gradients. */
const backward = (
  model: StaticModel,
  side: Side,
  gradUnit: Float32Array,
  gradE: Float32Array,
  gradW: Float32Array,
  touch: (row: number) => void
): void => {
  const { dim, embeddings, weights } = model
  const du = new Float64Array(dim)
  side.encodings.forEach((e, b) => {
    const o = b * dim
    const norm = Math.max(side.norms[b] ?? 0, normEpsilon)
    let dot = 0
    for (let j = 0; j < dim; j++) dot += (side.unit[o + j] ?? 0) * (gradUnit[o + j] ?? 0)
    for (let j = 0; j < dim; j++) du[j] = ((gradUnit[o + j] ?? 0) - (side.unit[o + j] ?? 0) * dot) / norm
    for (let t = 0; t < e.ids.length; t++) {
      const id = e.ids[t] ?? 0
      const mass = e.mass[t] ?? 0
      const w = weights[id] ?? 0
      const r = id * dim
      let gw = 0
      for (let j = 0; j < dim; j++) {
        const duj = du[j] ?? 0
        gw += (embeddings[r + j] ?? 0) * duj
        gradE[r + j] = (gradE[r + j] ?? 0) + mass * w * duj
      }
      gradW[id] = (gradW[id] ?? 0) + mass * gw
      touch(id)
    }
  })
}

/** One batch: query rows, document columns, the column of each row's positive, and other positives to mask. */
export interface Batch {
  readonly q: ReadonlyArray<StaticEncoding>
  readonly d: ReadonlyArray<StaticEncoding>
  readonly target: Int32Array
  /** True when column j is another positive of row i (left out of row i's softmax). */
  readonly rowMask: (i: number, j: number) => boolean
}

/**
 * The symmetric InfoNCE loss of a batch; adds its gradients with respect to the embeddings and the pooling weights
 * into `gradE` / `gradW` (dense buffers shaped like the model's) and reports every row it touched.
 */
export const lossAndGradients = (
  model: StaticModel,
  batch: Batch,
  temperature: number,
  gradE: Float32Array,
  gradW: Float32Array,
  touch: (row: number) => void = () => {}
): number => {
  const q = forward(model, batch.q)
  const d = forward(model, batch.d)
  const gradQ = new Float32Array(batch.q.length * model.dim)
  const gradD = new Float32Array(batch.d.length * model.dim)
  const loss = infoNce(q, d, model.dim, batch.target, batch.rowMask, temperature, gradQ, gradD)
  backward(model, q, gradQ, gradE, gradW, touch)
  backward(model, d, gradD, gradE, gradW, touch)
  return loss
}

/** Starts a training run (or continues from `start`, e.g. a previous model). */
export const makeTrainer = (corpus: Corpus, config: TrainConfig, start?: StaticModel): Trainer => {
  const random: Rng = makeRng(config.seed)
  const model = start ?? init(corpus.rows, config.dim, random.fork("init"), config.initScale)
  const batchRng = random.fork("batches")
  const { dim } = model
  const gradE = new Float32Array(model.embeddings.length)
  const gradW = new Float32Array(model.weights.length)
  const adamE = makeRowAdam(model.embeddings, dim, config.learningRate, config.anchor)
  const adamW = makeRowAdam(model.weights, 1, config.weightLearningRate, config.anchor)
  const touchedFlag = new Uint8Array(model.rows)
  let touched: Array<number> = []
  const touch = (row: number) => {
    if (touchedFlag[row] === 1) return
    touchedFlag[row] = 1
    touched.push(row)
  }

  const queriesByDoc: Array<Array<number>> = corpus.docs.map(() => [])
  corpus.queries.forEach((q, qi) => {
    for (const p of q.positives) queriesByDoc[p]?.push(qi)
  })
  const clusters = corpus.clusters
    .map((c) => c.filter((d) => (queriesByDoc[d]?.length ?? 0) > 0))
    .filter((c) => c.length > 0)
  let count = 0

  const libraryBatch = (): Batch => {
    const rowsQ: Array<number> = []
    const primary: Array<number> = []
    const seenQuery = new Set<number>()
    for (let guard = 0; rowsQ.length < config.batchSize && guard < config.batchSize * 4; guard++) {
      const cluster = batchRng.pick(clusters)
      const draw = Math.min(config.clusterDraw, config.batchSize - rowsQ.length)
      for (let k = 0; k < draw; k++) {
        const doc = batchRng.pick(cluster)
        const qs = queriesByDoc[doc] ?? []
        if (qs.length === 0) continue
        const qi = batchRng.pick(qs)
        if (seenQuery.has(qi)) continue
        seenQuery.add(qi)
        rowsQ.push(qi)
        primary.push(doc)
      }
    }
    // columns: distinct canonical documents of the rows' positives
    const column = new Map<number, number>()
    const columns: Array<number> = []
    const target = new Int32Array(rowsQ.length)
    primary.forEach((doc, i) => {
      const c = corpus.canonical[doc] ?? doc
      let j = column.get(c)
      if (j === undefined) {
        j = columns.length
        column.set(c, j)
        columns.push(c)
      }
      target[i] = j
    })
    const positiveSets = rowsQ.map((qi) => new Set((corpus.queries[qi]?.positives ?? []).map((p) => corpus.canonical[p] ?? p)))
    // mined hard negatives: extra columns no row targets (they enter the row softmaxes only); the random draws are
    // made only when the option is on, so a run without it keeps its batches
    const mined = corpus.hardNegatives
    if (mined !== undefined && config.hardNegativeRate > 0) {
      rowsQ.forEach((qi) => {
        const list = mined[qi]
        if (list === undefined || list.length === 0 || batchRng.next() >= config.hardNegativeRate) return
        const c = corpus.canonical[list[batchRng.int(list.length)] ?? 0] ?? 0
        if (!column.has(c)) {
          column.set(c, columns.length)
          columns.push(c)
        }
      })
    }
    const rowMask = (i: number, j: number) => positiveSets[i]?.has(columns[j] ?? -1) ?? false
    return {
      q: rowsQ.map((qi) => corpus.queries[qi]?.encoding ?? emptyEncoding),
      d: columns.map((c) => corpus.docs[c] ?? emptyEncoding),
      target,
      rowMask
    }
  }

  const textBatch = (): Batch => {
    const n = Math.min(config.batchSize, corpus.textPairs.length)
    const picks = new Set<number>()
    while (picks.size < n) picks.add(batchRng.int(corpus.textPairs.length))
    const pairs = [...picks].map((i) => corpus.textPairs[i]).filter((p) => p !== undefined)
    return {
      q: pairs.map((p) => p.query),
      d: pairs.map((p) => p.doc),
      target: Int32Array.from(pairs, (_, i) => i),
      rowMask: () => false
    }
  }

  const step = (): number => {
    const useText = corpus.textPairs.length > 1 &&
      (clusters.length === 0 || batchRng.next() < config.textPairShare)
    // An untrainable corpus (see checkCorpus) gives empty batches, never a crash.
    const batch = useText ? textBatch() : clusters.length === 0 ? emptyBatch : libraryBatch()
    if (batch.q.length === 0) return 0
    const loss = lossAndGradients(model, batch, config.temperature, gradE, gradW, touch)
    count++
    touched.sort((a, b) => a - b)
    adamE(gradE, touched, count)
    adamW(gradW, touched, count, 0)
    for (const r of touched) touchedFlag[r] = 0
    touched = []
    return loss
  }
  return { model, step, steps: () => count }
}

const emptyEncoding: StaticEncoding = { ids: new Int32Array(0), mass: new Float32Array(0) }
const emptyBatch: Batch = { q: [], d: [], target: new Int32Array(0), rowMask: () => false }

/** Retrieval quality of held-out queries against a document matrix. */
export interface Validation {
  readonly queries: number
  readonly recall5: number
  readonly ndcg5: number
  readonly mrr10: number
}

/**
 * Recall@5, NDCG@5 (binary relevance) and MRR@10 of queries over the documents, scored with the model
 * (or with precomputed document vectors).
 */
export const validate = (
  model: StaticModel,
  docs: ReadonlyArray<StaticEncoding>,
  queries: ReadonlyArray<Query>,
  docMatrix: Float32Array = encodeAll(model, docs)
): Validation => {
  const { dim } = model
  const qm = encodeAll(model, queries.map((q) => q.encoding))
  const scores = new Float32Array(docs.length)
  let recall = 0
  let ndcg = 0
  let mrr = 0
  queries.forEach((q, qi) => {
    for (let i = 0; i < docs.length; i++) {
      let s = 0
      for (let j = 0; j < dim; j++) s += (docMatrix[i * dim + j] ?? 0) * (qm[qi * dim + j] ?? 0)
      scores[i] = s
    }
    const top = topIndices(scores, 10)
    const relevant = new Set(q.positives)
    let hits = 0
    let dcg = 0
    top.slice(0, 5).forEach((d, r) => {
      if (relevant.has(d)) {
        hits++
        dcg += 1 / Math.log2(r + 2)
      }
    })
    let ideal = 0
    for (let r = 0; r < Math.min(5, relevant.size); r++) ideal += 1 / Math.log2(r + 2)
    recall += relevant.size > 0 ? hits / relevant.size : 0
    ndcg += ideal > 0 ? dcg / ideal : 0
    const first = top.findIndex((d) => relevant.has(d))
    mrr += first >= 0 ? 1 / (first + 1) : 0
  })
  const n = Math.max(1, queries.length)
  return { queries: queries.length, recall5: recall / n, ndcg5: ndcg / n, mrr10: mrr / n }
}
