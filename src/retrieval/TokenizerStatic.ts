/**
 * The tokeniser of ParaAgent's static encoder: shared word tokens (identifier split, stop words, Porter stems)
 * looked up in a stem vocabulary; a stem outside it becomes hashed character n-grams, so unseen words still embed.
 */
import { Effect, Schema } from "effect"
import { hash32 } from "../math/Random.ts"
import { idf } from "./Bm25Index.ts"
import * as Text from "./Tokenize.ts"

/** The vocabulary file shipped beside the ONNX encoder (`models/*.vocab.json`). */
export const StaticVocab = Schema.Struct({
  format: Schema.Literal("paraagent-static-encoder"),
  version: Schema.Literal(1),
  /** Word-token options of {@link Text.makeTokenizer}. */
  text: Schema.Struct({
    splitIdentifiers: Schema.Boolean,
    keepCompounds: Schema.Boolean,
    stopWords: Schema.Boolean,
    stem: Schema.Boolean
  }),
  /** Drop tokens made only of digits (ids, counts, years: noise for tool search). */
  dropNumbers: Schema.Boolean,
  /** Stem of row i = vocab[i]. */
  vocab: Schema.Array(Schema.String),
  /** Number of hashed n-gram rows after the vocabulary rows. */
  buckets: Schema.Int,
  ngramMin: Schema.Int,
  ngramMax: Schema.Int,
  /** Seed of {@link hash32} for the n-gram buckets. */
  hashSeed: Schema.Int,
  /** At most this many distinct ids per text (the first ones in reading order). */
  maxTokens: Schema.Int,
  /** Embedding width. */
  dim: Schema.Int,
  /** Free-form provenance: how the model was trained (seed, data, command). */
  provenance: Schema.optionalKey(Schema.Record(Schema.String, Schema.Json))
})
/** The vocabulary file shipped beside the ONNX encoder. */
export type StaticVocab = typeof StaticVocab.Type

/** The ids of one text with their pooling mass: a vocabulary stem counts its term frequency, an unseen stem spreads 1 over its n-grams. */
export interface StaticEncoding {
  readonly ids: Int32Array
  readonly mass: Float32Array
}

/** A static-encoder tokeniser bound to a vocabulary. */
export interface StaticTokenizer {
  readonly vocab: StaticVocab
  /** Vocabulary rows plus n-gram buckets: the number of embedding rows. */
  readonly rows: number
  readonly encode: (text: string) => StaticEncoding
  /** The ids an unseen stem maps to (its n-gram buckets), for inspection and tests. */
  readonly ngramIds: (stem: string) => ReadonlyArray<number>
}

const digitsOnly = /^\p{N}+$/u

/** The character n-grams of `<stem>` for n in [min, max], the whole marked word included (as fastText does). */
export const ngrams = (stem: string, min: number, max: number): Array<string> => {
  const marked = Array.from(`<${stem}>`)
  const out: Array<string> = []
  for (let n = min; n <= max; n++) {
    for (let i = 0; i + n <= marked.length; i++) out.push(marked.slice(i, i + n).join(""))
  }
  const whole = marked.join("")
  if (marked.length > max || marked.length < min) out.push(whole)
  return out
}

/** Builds the tokeniser of a vocabulary file. */
export const make = (vocab: StaticVocab): StaticTokenizer => {
  const words = Text.makeTokenizer(vocab.text)
  const index = new Map<string, number>()
  vocab.vocab.forEach((stem, i) => {
    if (!index.has(stem)) index.set(stem, i)
  })
  const base = vocab.vocab.length
  const rows = base + vocab.buckets
  const gramCache = new Map<string, ReadonlyArray<number>>()
  const ngramIds = (stem: string): ReadonlyArray<number> => {
    const cached = gramCache.get(stem)
    if (cached !== undefined) return cached
    const ids = vocab.buckets === 0
      ? []
      : ngrams(stem, vocab.ngramMin, vocab.ngramMax).map((g) => base + (hash32(g, vocab.hashSeed) % vocab.buckets))
    if (gramCache.size < 200_000) gramCache.set(stem, ids)
    return ids
  }
  const encode = (text: string): StaticEncoding => {
    const order: Array<number> = []
    const mass = new Map<number, number>()
    const add = (id: number, m: number) => {
      const prev = mass.get(id)
      if (prev === undefined) {
        if (order.length >= vocab.maxTokens) return
        order.push(id)
        mass.set(id, m)
      } else mass.set(id, prev + m)
    }
    for (const token of words.tokens(text)) {
      if (vocab.dropNumbers && digitsOnly.test(token)) continue
      const id = index.get(token)
      if (id !== undefined) {
        add(id, 1)
        continue
      }
      const grams = ngramIds(token)
      for (const g of grams) add(g, 1 / grams.length)
    }
    const ids = Int32Array.from(order)
    const masses = Float32Array.from(order, (id) => mass.get(id) ?? 0)
    return { ids, mass: masses }
  }
  return { vocab, rows, encode, ngramIds }
}

/**
 * Inverse document frequency of every row over a collection of encodings: BM25's ({@link idf}: ln(1 + (N − df + ½)/(df + ½)),
 * never negative); rows absent from the collection get the largest value, ln(1 + 2N + 1).
 */
export const inverseDocumentFrequency = (encodings: ReadonlyArray<StaticEncoding>, rows: number): Float32Array => {
  const df = new Uint32Array(rows)
  for (const e of encodings) for (const id of e.ids) df[id] = (df[id] ?? 0) + 1
  const n = encodings.length
  return Float32Array.from(df, (d) => idf(n, d))
}

/** Scales each token's mass by idf^exponent (exponent 0 leaves the encoding as it is). */
export const weightByIdf = (encoding: StaticEncoding, idf: Float32Array, exponent: number): StaticEncoding =>
  exponent === 0
    ? encoding
    : { ids: encoding.ids, mass: Float32Array.from(encoding.mass, (m, t) => m * Math.pow(idf[encoding.ids[t] ?? 0] ?? 0, exponent)) }

/** How a vocabulary is chosen from training text. */
export interface VocabOptions {
  readonly text: Text.TextOptions
  readonly dropNumbers: boolean
  /** A stem enters the vocabulary when it occurs at least this often. */
  readonly minCount: number
  /** At most this many stems (the most frequent; ties in code-point order). */
  readonly maxSize: number
}

/**
 * The stems of the given texts that occur at least `minCount` times, most frequent first, at most `maxSize`.
 * Counts from several sources can be added with `extraCounts` (e.g. WordNet lemmas, each counted once).
 */
export const chooseVocab = (
  texts: Iterable<string>,
  options: VocabOptions,
  extraCounts?: ReadonlyMap<string, number>
): Array<string> => {
  const words = Text.makeTokenizer(options.text)
  const counts = new Map<string, number>(extraCounts ?? [])
  for (const text of texts) {
    for (const token of words.tokens(text)) {
      if (options.dropNumbers && digitsOnly.test(token)) continue
      counts.set(token, (counts.get(token) ?? 0) + 1)
    }
  }
  return [...counts.entries()]
    .filter(([, c]) => c >= options.minCount)
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, options.maxSize)
    .map(([stem]) => stem)
}

/** A batch padded to its longest text: row-major ids (int64 for ONNX) and masses (0 on padding). */
export interface StaticBatch {
  readonly size: number
  readonly length: number
  readonly ids: BigInt64Array
  readonly mass: Float32Array
}

/** Pads encodings into one batch; an empty text gets one padding slot of mass 0 (it embeds to the zero vector). */
export const pad = (encodings: ReadonlyArray<StaticEncoding>): StaticBatch => {
  const length = Math.max(1, ...encodings.map((e) => e.ids.length))
  const ids = new BigInt64Array(encodings.length * length)
  const mass = new Float32Array(encodings.length * length)
  encodings.forEach((e, b) => {
    for (let t = 0; t < e.ids.length; t++) {
      ids[b * length + t] = BigInt(e.ids[t] ?? 0)
      mass[b * length + t] = e.mass[t] ?? 0
    }
  })
  return { size: encodings.length, length, ids, mass }
}

/** A vocabulary file that does not decode. */
export class VocabError extends Schema.TaggedError<VocabError>()("VocabError", {
  source: Schema.String,
  message: Schema.String
}) {}

const decodeVocab = Schema.decodeUnknownEffect(Schema.fromJsonString(StaticVocab))

/** Parses the text of a vocabulary file; `source` names the file in errors. */
export const parse = Effect.fn("TokenizerStatic.parse")(function*(text: string, source: string) {
  const vocab = yield* decodeVocab(text).pipe(Effect.mapError((e) => new VocabError({ source, message: e.message })))
  if (vocab.buckets < 0 || vocab.ngramMin < 1 || vocab.ngramMax < vocab.ngramMin || vocab.dim < 1 || vocab.maxTokens < 1) {
    return yield* new VocabError({
      source,
      message: `inconsistent sizes: buckets=${vocab.buckets} ngram=[${vocab.ngramMin},${vocab.ngramMax}] dim=${vocab.dim} maxTokens=${vocab.maxTokens}`
    })
  }
  return make(vocab)
})
