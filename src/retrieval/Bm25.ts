/**
 * Field-weighted BM25 (BM25F) over tool documents: an inverted index in typed arrays, impacts
 * precomputed per posting, a reused score accumulator and a bounded heap for top-k.
 */
import type { ToolName } from "../domain/Ids.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import * as Document from "./Document.ts"
import * as Text from "./Text.ts"

/**
 * One field of the index: one or more document fields read as a single stream, with its own weight and
 * length normalisation `b`. A field of several parts with weight 1 and the plain `b` is classic BM25 over
 * the concatenated text.
 */
export interface FieldSpec {
  readonly name: string
  readonly parts: ReadonlyArray<Document.FieldName>
  readonly weight: number
  readonly b: number
}

/**
 * How a query is turned into weighted terms.
 * - `clauses`: a query of several sentences also gets one ranking per sentence; the rankings are fused
 *   (weighted reciprocal rank, the whole query's ranking weighted by `wholeWeight`), so each request of a
 *   multi-request query reaches the top of the list.
 */
export interface QueryOptions {
  readonly clauses: boolean
  /** Weight of the whole query's ranking in the fusion (each clause's ranking weighs 1). */
  readonly wholeWeight: number
  /** The rank offset of reciprocal-rank fusion: a hit at rank r (0-based) scores 1 / (rrfK + r + 1). */
  readonly rrfK: number
  /**
   * Extra query-side weight of rare terms: each query term counts idf(t)^idfExponent times (0 = classic BM25),
   * so the few specific words of a long, chatty request outweigh its frequent ones.
   */
  readonly idfExponent: number
}

/** The full configuration of a BM25 index. */
export interface Config {
  /** Term-frequency saturation. */
  readonly k1: number
  readonly fields: ReadonlyArray<FieldSpec>
  readonly text: Text.TextOptions
  readonly query: QueryOptions
}

/** Query handling of the plain baseline: the query as one bag of words. */
export const plainQuery: QueryOptions = { clauses: false, wholeWeight: 1, rrfK: 60, idfExponent: 0 }

/**
 * The plain baseline of issue 4: one stream of tool name, API name, both descriptions and category;
 * lowercase word tokens; k1 = 1.2, b = 0.75.
 */
export const plainConfig: Config = {
  k1: 1.2,
  fields: [{ name: "all", parts: Document.plainFields, weight: 1, b: 0.75 }],
  text: Text.plainOptions,
  query: plainQuery
}

/**
 * The tuned configuration: chosen by `bench/retrieval-tune.ts` (coordinate ascent on (NDCG@5 + Recall@10) / 2)
 * over the tuning part of G1_category only (2/3 of its queries by a seeded hash, see `Benchmark.tuningSplit`);
 * the reported test files were not used. API name and category count 4×, the provider name 2×, the provider's
 * description (shared by all its APIs) only 0.25×.
 */
export const defaultConfig: Config = {
  k1: 1.2,
  fields: [
    { name: "group", parts: ["group"], weight: 2, b: 0.75 },
    { name: "api", parts: ["api"], weight: 4, b: 0.75 },
    { name: "description", parts: ["description"], weight: 1, b: 1 },
    { name: "groupDescription", parts: ["groupDescription"], weight: 0.25, b: 0.5 },
    { name: "category", parts: ["category"], weight: 4, b: 0.75 },
    { name: "parameters", parts: ["parameters"], weight: 1, b: 0.75 }
  ],
  text: { splitIdentifiers: true, keepCompounds: true, stopWords: true, stem: true },
  query: plainQuery
}

/**
 * A built index. Treat as opaque: its postings are shared with {@link reweight}ed copies. Searching writes
 * the index's scratch arrays, which is safe because a search runs synchronously from start to end.
 */
export interface Index {
  readonly config: Config
  readonly tools: ReadonlyArray<ToolName>
  readonly tokenizer: Text.Tokenizer
  /** term → term id */
  readonly vocabulary: ReadonlyMap<string, number>
  /** Postings of term t are positions offsets[t] .. offsets[t+1] - 1. */
  readonly offsets: Int32Array
  /** Document index of each posting (ascending within a term). */
  readonly postingDocs: Int32Array
  /** Term frequency of each posting, one array per index field. */
  readonly fieldTf: ReadonlyArray<Uint16Array>
  /** Token count of each document, one array per index field. */
  readonly fieldLength: ReadonlyArray<Float64Array>
  /** idf(t) · tf̃/(k1 + tf̃) of each posting for the current parameters. */
  readonly impacts: Float64Array
  /** Reused per-query state: accumulated scores, the query stamp of each document, the touched documents. */
  readonly scratch: { readonly scores: Float64Array; readonly stamp: Uint32Array; readonly touched: Int32Array; epoch: number }
}

/** One scored document. */
export interface Hit {
  readonly doc: number
  readonly tool: ToolName
  readonly score: number
}

/** The BM25 idf (Lucene's, never negative): ln(1 + (N − df + 0.5)/(df + 0.5)). */
export const idf = (documentCount: number, documentFrequency: number): number =>
  Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5))

const maxTf = 65535

/** Tokenises every document and builds the index (impacts for `config`'s parameters). */
export const build = (tools: ReadonlyArray<ToolSpec>, config: Config = defaultConfig): Index => {
  const tokenizer = Text.makeTokenizer(config.text)
  const fieldCount = config.fields.length
  const n = tools.length
  const vocabulary = new Map<string, number>()
  const fieldLength = config.fields.map(() => new Float64Array(n))
  // Pass 1: per document, its distinct terms with per-field counts, appended to flat growable buffers.
  let entryTerms = new Int32Array(1 << 16)
  let entryTf = new Uint16Array((1 << 16) * fieldCount)
  let entries = 0
  const docEntryStart = new Int32Array(n + 1)
  const localSlot = new Map<number, number>()
  let df = new Int32Array(1 << 12)
  for (let d = 0; d < n; d++) {
    const fields = Document.fromTool(tools[d] as ToolSpec).fields
    docEntryStart[d] = entries
    localSlot.clear()
    for (let f = 0; f < fieldCount; f++) {
      const spec = config.fields[f] as FieldSpec
      let length = 0
      for (const part of spec.parts) {
        for (const token of tokenizer.tokens(fields[part])) {
          length++
          let term = vocabulary.get(token)
          if (term === undefined) {
            term = vocabulary.size
            vocabulary.set(token, term)
            if (term >= df.length) df = grow(df, df.length * 2)
          }
          let slot = localSlot.get(term)
          if (slot === undefined) {
            slot = entries++
            if (entries > entryTerms.length) {
              entryTerms = grow(entryTerms, entryTerms.length * 2)
              entryTf = grow(entryTf, entryTerms.length * fieldCount)
            }
            entryTerms[slot] = term
            localSlot.set(term, slot)
            df[term] = (df[term] as number) + 1
          }
          const at = slot * fieldCount + f
          if ((entryTf[at] as number) < maxTf) entryTf[at] = (entryTf[at] as number) + 1
        }
      }
      ;(fieldLength[f] as Float64Array)[d] = length
    }
  }
  docEntryStart[n] = entries
  // Pass 2: CSR layout by term; documents are visited in order, so each term's postings come out ascending.
  const termCount = vocabulary.size
  const offsets = new Int32Array(termCount + 1)
  for (let t = 0; t < termCount; t++) offsets[t + 1] = (offsets[t] as number) + (df[t] as number)
  const cursor = offsets.slice(0, termCount)
  const postingDocs = new Int32Array(entries)
  const fieldTf = config.fields.map(() => new Uint16Array(entries))
  for (let d = 0; d < n; d++) {
    for (let e = docEntryStart[d] as number; e < (docEntryStart[d + 1] as number); e++) {
      const term = entryTerms[e] as number
      const p = cursor[term] as number
      cursor[term] = p + 1
      postingDocs[p] = d
      for (let f = 0; f < fieldCount; f++) (fieldTf[f] as Uint16Array)[p] = entryTf[e * fieldCount + f] as number
    }
  }
  const base = {
    tools: tools.map((t) => t.name),
    tokenizer,
    vocabulary,
    offsets,
    postingDocs,
    fieldTf,
    fieldLength
  }
  return withImpacts(base, config)
}

const grow = <A extends Int32Array | Uint16Array>(array: A, size: number): A => {
  const bigger = new (array.constructor as new(n: number) => A)(size)
  bigger.set(array)
  return bigger
}

type Structure = Pick<Index, "tools" | "tokenizer" | "vocabulary" | "offsets" | "postingDocs" | "fieldTf" | "fieldLength">

const withImpacts = (structure: Structure, config: Config): Index => {
  const n = structure.tools.length
  const fieldCount = config.fields.length
  const norms = config.fields.map((spec, f) => {
    const lengths = structure.fieldLength[f] as Float64Array
    let total = 0
    for (let d = 0; d < n; d++) total += lengths[d] as number
    const average = n === 0 ? 0 : total / n
    // weight / ((1 − b) + b·len/avglen) per document, so a posting's tf̃ is a dot product.
    const norm = new Float64Array(n)
    for (let d = 0; d < n; d++) {
      const relative = average === 0 ? 1 : (lengths[d] as number) / average
      norm[d] = spec.weight / (1 - spec.b + spec.b * relative)
    }
    return norm
  })
  const { offsets, postingDocs, fieldTf } = structure
  const impacts = new Float64Array(postingDocs.length)
  const termCount = offsets.length - 1
  for (let t = 0; t < termCount; t++) {
    const start = offsets[t] as number
    const end = offsets[t + 1] as number
    const termIdf = idf(n, end - start)
    for (let p = start; p < end; p++) {
      const d = postingDocs[p] as number
      let tf = 0
      for (let f = 0; f < fieldCount; f++) {
        const count = (fieldTf[f] as Uint16Array)[p] as number
        // skip absent fields: with b = 1 an empty field's norm is weight / 0
        if (count !== 0) tf += count * ((norms[f] as Float64Array)[d] as number)
      }
      impacts[p] = tf === 0 ? 0 : (termIdf * tf) / (config.k1 + tf)
    }
  }
  return {
    ...structure,
    config,
    impacts,
    scratch: { scores: new Float64Array(n), stamp: new Uint32Array(n), touched: new Int32Array(n), epoch: 0 }
  }
}

/**
 * The same index with other k1 / field weights / b / query options (tokenisation and field parts must stay
 * the same: they shaped the postings). Costs one pass over the postings, no re-tokenising; used for tuning.
 */
export const reweight = (index: Index, config: Config): Index => withImpacts(index, config)

/** True when `config` differs from the index's only in numbers and query options (so {@link reweight} applies). */
export const canReweight = (index: Index, config: Config): boolean =>
  JSON.stringify(index.config.text) === JSON.stringify(config.text) &&
  index.config.fields.length === config.fields.length &&
  index.config.fields.every((f, i) => JSON.stringify(f.parts) === JSON.stringify(config.fields[i]?.parts))

/** The weighted term ids of a text (unknown words dropped, repeated words counted). */
export const queryTerms = (index: Index, text: string): Map<number, number> => {
  const terms = new Map<number, number>()
  for (const token of index.tokenizer.tokens(text)) {
    const term = index.vocabulary.get(token)
    if (term !== undefined) terms.set(term, (terms.get(term) ?? 0) + 1)
  }
  const exponent = index.config.query.idfExponent
  if (exponent !== 0) {
    const n = index.tools.length
    for (const [term, count] of terms) {
      terms.set(term, count * Math.pow(idf(n, (index.offsets[term + 1] as number) - (index.offsets[term] as number)), exponent))
    }
  }
  return terms
}

/**
 * The k best documents for weighted terms, best first (ties: lower document index first).
 * Only documents containing a query term are visited; the accumulator is reused across queries.
 */
export const searchTerms = (index: Index, terms: ReadonlyMap<number, number>, k: number): Array<Hit> => {
  const { offsets, postingDocs, impacts, scratch } = index
  const { scores, stamp, touched } = scratch
  scratch.epoch = scratch.epoch === 0xffffffff ? 1 : scratch.epoch + 1
  if (scratch.epoch === 1) stamp.fill(0)
  const epoch = scratch.epoch
  let touchedCount = 0
  for (const [term, weight] of terms) {
    const end = offsets[term + 1] as number
    for (let p = offsets[term] as number; p < end; p++) {
      const impact = impacts[p] as number
      // zero only when the term occurs solely in zero-weight fields: such a field is invisible
      if (impact === 0) continue
      const d = postingDocs[p] as number
      if (stamp[d] !== epoch) {
        stamp[d] = epoch
        scores[d] = 0
        touched[touchedCount++] = d
      }
      scores[d] = (scores[d] as number) + weight * impact
    }
  }
  return topK(touched, touchedCount, scores, k).map(({ doc, score }) => ({ doc, tool: index.tools[doc] as ToolName, score }))
}

/** Splits a request into its sentences / requests (at `.`, `?`, `!`, `;` and newlines). */
export const clauses = (text: string): Array<string> =>
  text.split(/(?<=[.?!;])\s+|\n+/u).map((s) => s.trim()).filter((s) => s !== "")

/** The k best tools for a query under the index's configuration. */
export const search = (index: Index, query: string, k: number): Array<Hit> => {
  const options = index.config.query
  const whole = queryTerms(index, query)
  const parts = options.clauses ? clauses(query) : []
  if (parts.length < 2) return searchTerms(index, whole, k)
  // Reciprocal-rank fusion of the whole query's ranking and each clause's ranking.
  const depth = Math.max(k, 50)
  const fused = new Map<number, number>()
  const add = (hits: ReadonlyArray<Hit>, weight: number): void => {
    hits.forEach((hit, rank) => fused.set(hit.doc, (fused.get(hit.doc) ?? 0) + weight / (options.rrfK + rank + 1)))
  }
  add(searchTerms(index, whole, depth), options.wholeWeight)
  for (const part of parts) add(searchTerms(index, queryTerms(index, part), depth), 1)
  return [...fused]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, Math.max(0, k))
    .map(([doc, score]) => ({ doc, tool: index.tools[doc] as ToolName, score }))
}

/**
 * The k highest-scoring of `candidates[0..count)` by `scores[candidate]`, best first; ties go to the lower
 * index. A bounded min-heap: O(count · log k) time, O(k) space.
 */
export const topK = (
  candidates: Int32Array,
  count: number,
  scores: Float64Array,
  k: number
): Array<{ readonly doc: number; readonly score: number }> => {
  const size = Math.max(0, Math.min(k, count))
  if (size === 0) return []
  const heapDoc = new Int32Array(size)
  const heapScore = new Float64Array(size)
  let filled = 0
  // `a` ranks below `b`: lower score, or equal score and higher document index.
  const below = (sa: number, da: number, sb: number, db: number): boolean => sa < sb || (sa === sb && da > db)
  const siftDown = (from: number): void => {
    let i = from
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let worst = i
      if (l < filled && below(heapScore[l] as number, heapDoc[l] as number, heapScore[worst] as number, heapDoc[worst] as number)) worst = l
      if (r < filled && below(heapScore[r] as number, heapDoc[r] as number, heapScore[worst] as number, heapDoc[worst] as number)) worst = r
      if (worst === i) return
      const sd = heapDoc[i] as number
      const ss = heapScore[i] as number
      heapDoc[i] = heapDoc[worst] as number
      heapScore[i] = heapScore[worst] as number
      heapDoc[worst] = sd
      heapScore[worst] = ss
      i = worst
    }
  }
  for (let c = 0; c < count; c++) {
    const doc = candidates[c] as number
    const score = scores[doc] as number
    if (filled < size) {
      // sift up
      let i = filled++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (!below(score, doc, heapScore[parent] as number, heapDoc[parent] as number)) break
        heapDoc[i] = heapDoc[parent] as number
        heapScore[i] = heapScore[parent] as number
        i = parent
      }
      heapDoc[i] = doc
      heapScore[i] = score
    } else if (below(heapScore[0] as number, heapDoc[0] as number, score, doc)) {
      heapDoc[0] = doc
      heapScore[0] = score
      siftDown(0)
    }
  }
  const out: Array<{ doc: number; score: number }> = []
  for (let i = 0; i < filled; i++) out.push({ doc: heapDoc[i] as number, score: heapScore[i] as number })
  return out.sort((a, b) => b.score - a.score || a.doc - b.doc)
}
