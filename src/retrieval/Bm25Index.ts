/**
 * The BM25F inverted index: tokenised tool documents laid out in typed arrays (CSR postings by term), impacts
 * precomputed per posting for one configuration, an optional per-provider index and forward index; reweighting for tuning.
 */
import type { ToolName } from "../domain/Ids.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import { type Config, defaultConfig, type FieldSpec } from "./Bm25Config.ts"
import * as Document from "./Document.ts"
import * as Text from "./Tokenize.ts"

/** Inverted lists of one set of documents in CSR form. */
export interface Postings {
  /** Postings of term t are positions offsets[t] .. offsets[t+1] - 1. */
  readonly offsets: Int32Array
  /** Document index of each posting (ascending within a term). */
  readonly postingDocs: Int32Array
  /** Term frequency of each posting, one array per index field. */
  readonly fieldTf: ReadonlyArray<Uint16Array>
  /** Token count of each document, one array per index field. */
  readonly fieldLength: ReadonlyArray<Float64Array>
}

/** Reused per-query state: accumulated scores, the query stamp of each document, the touched documents. */
export interface Scratch {
  readonly scores: Float64Array
  readonly stamp: Uint32Array
  readonly touched: Int32Array
  epoch: number
}

/** The provider index of {@link GroupConfig}. */
export interface GroupIndex {
  readonly groups: Document.Groups
  readonly postings: Postings
  /** idf(t) · tf̃/(k1 + tf̃) of each group posting for the current group parameters. */
  readonly impacts: Float64Array
  readonly scratch: Scratch
}

/**
 * A built index. Treat as opaque: its postings are shared with {@link reweight}ed copies. Searching writes
 * the index's scratch arrays, which is safe because a search runs synchronously from start to end.
 */
export interface Index extends Postings {
  readonly config: Config
  readonly tools: ReadonlyArray<ToolName>
  readonly tokenizer: Text.Tokenizer
  /** term → term id (shared by the API and the group postings) */
  readonly vocabulary: ReadonlyMap<string, number>
  /** idf(t) · tf̃/(k1 + tf̃) of each posting for the current parameters. */
  readonly impacts: Float64Array
  readonly scratch: Scratch
  /** The provider index, when the configuration asks for group evidence. */
  readonly group: GroupIndex | undefined
  /** Each API's distinct terms and their counts over all fields, when the configuration asks for feedback. */
  readonly forward: Forward | undefined
}

/** A forward index: document d's terms are `terms[start[d] .. start[d + 1] - 1]`, with their counts. */
export interface Forward {
  readonly start: Int32Array
  readonly terms: Int32Array
  readonly counts: Uint16Array
}

/** The BM25 idf (Lucene's, never negative): ln(1 + (N − df + 0.5)/(df + 0.5)). */
export const idf = (documentCount: number, documentFrequency: number): number =>
  Math.log(1 + (documentCount - documentFrequency + 0.5) / (documentFrequency + 0.5))

const maxTf = 65535

/** Pass 1 over a set of documents: each document's distinct terms with per-field counts, in flat buffers. */
interface Collected {
  readonly entryTerms: Int32Array
  readonly entryTf: Uint16Array
  readonly docEntryStart: Int32Array
  readonly df: Int32Array
  readonly fieldLength: ReadonlyArray<Float64Array>
}

const collect = (
  documents: ReadonlyArray<Document.Fields>,
  specs: ReadonlyArray<FieldSpec>,
  tokenizer: Text.Tokenizer,
  vocabulary: Map<string, number>
): Collected => {
  const fieldCount = specs.length
  const n = documents.length
  const fieldLength = specs.map(() => new Float64Array(n))
  let entryTerms = new Int32Array(1 << 16)
  let entryTf = new Uint16Array((1 << 16) * fieldCount)
  let entries = 0
  const docEntryStart = new Int32Array(n + 1)
  const localSlot = new Map<number, number>()
  let df = new Int32Array(Math.max(1 << 12, vocabulary.size))
  for (let d = 0; d < n; d++) {
    const fields = documents[d] as Document.Fields
    docEntryStart[d] = entries
    localSlot.clear()
    for (let f = 0; f < fieldCount; f++) {
      const spec = specs[f] as FieldSpec
      let length = 0
      for (const part of spec.parts) {
        for (const token of tokenizer.tokens(fields[part])) {
          length++
          let term = vocabulary.get(token)
          if (term === undefined) {
            term = vocabulary.size
            vocabulary.set(token, term)
          }
          if (term >= df.length) df = grow(df, Math.max(df.length * 2, term + 1))
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
  return { entryTerms, entryTf, docEntryStart, df, fieldLength }
}

/** Pass 2: CSR layout by term; documents are visited in order, so each term's postings come out ascending. */
const layout = (collected: Collected, termCount: number, fieldCount: number): Postings => {
  const { entryTerms, entryTf, docEntryStart, df } = collected
  const n = docEntryStart.length - 1
  const entries = docEntryStart[n] as number
  const offsets = new Int32Array(termCount + 1)
  for (let t = 0; t < termCount; t++) offsets[t + 1] = (offsets[t] as number) + (t < df.length ? (df[t] as number) : 0)
  const cursor = offsets.slice(0, termCount)
  const postingDocs = new Int32Array(entries)
  const fieldTf = Array.from({ length: fieldCount }, () => new Uint16Array(entries))
  for (let d = 0; d < n; d++) {
    for (let e = docEntryStart[d] as number; e < (docEntryStart[d + 1] as number); e++) {
      const term = entryTerms[e] as number
      const p = cursor[term] as number
      cursor[term] = p + 1
      postingDocs[p] = d
      for (let f = 0; f < fieldCount; f++) (fieldTf[f] as Uint16Array)[p] = entryTf[e * fieldCount + f] as number
    }
  }
  return { offsets, postingDocs, fieldTf, fieldLength: collected.fieldLength }
}

const scratchFor = (n: number): Scratch => ({
  scores: new Float64Array(n),
  stamp: new Uint32Array(n),
  touched: new Int32Array(n),
  epoch: 0
})

/** Tokenises every document (and, with group evidence, every provider document) and builds the index. */
export const build = (tools: ReadonlyArray<ToolSpec>, config: Config = defaultConfig): Index => {
  const tokenizer = Text.makeTokenizer(config.text)
  const vocabulary = new Map<string, number>()
  const documents = tools.map((t) => Document.fromTool(t))
  const apiCollected = collect(documents.map((d) => d.fields), config.fields, tokenizer, vocabulary)
  let groupPart: { readonly groups: Document.Groups; readonly collected: Collected; readonly fields: ReadonlyArray<FieldSpec> } | undefined
  if (config.group !== undefined) {
    const groups = Document.groups(tools)
    const groupDocuments = Document.groupDocuments(documents, groups)
    groupPart = { groups, collected: collect(groupDocuments, config.group.fields, tokenizer, vocabulary), fields: config.group.fields }
  }
  const termCount = vocabulary.size
  const structure: Structure = {
    forward: config.query.feedback === undefined ? undefined : forwardOf(apiCollected, config.fields.length),
    tools: documents.map((d) => d.tool),
    tokenizer,
    vocabulary,
    ...layout(apiCollected, termCount, config.fields.length),
    groupPostings: groupPart === undefined
      ? undefined
      : { groups: groupPart.groups, postings: layout(groupPart.collected, termCount, groupPart.fields.length) }
  }
  return withImpacts(structure, config)
}

/** The forward index of collected documents: each entry's counts summed over fields. */
const forwardOf = (collected: Collected, fieldCount: number): Forward => {
  const entries = collected.docEntryStart[collected.docEntryStart.length - 1] as number
  const counts = new Uint16Array(entries)
  for (let e = 0; e < entries; e++) {
    let c = 0
    for (let f = 0; f < fieldCount; f++) c += collected.entryTf[e * fieldCount + f] as number
    counts[e] = Math.min(c, maxTf)
  }
  return { start: collected.docEntryStart, terms: collected.entryTerms.slice(0, entries), counts }
}

const grow = <A extends Int32Array | Uint16Array>(array: A, size: number): A => {
  const bigger = new (array.constructor as new(n: number) => A)(size)
  bigger.set(array)
  return bigger
}

/** What tokenising produced: everything of an index but the numbers that depend on k1, weights and b. */
interface Structure extends Postings {
  readonly tools: ReadonlyArray<ToolName>
  readonly tokenizer: Text.Tokenizer
  readonly vocabulary: ReadonlyMap<string, number>
  readonly groupPostings: { readonly groups: Document.Groups; readonly postings: Postings } | undefined
  readonly forward: Forward | undefined
}

/** idf · tf̃ / (k1 + tf̃) of every posting of a set of documents. */
const impactsOf = (postings: Postings, k1: number, fields: ReadonlyArray<FieldSpec>): Float64Array => {
  const n = postings.fieldLength[0]?.length ?? 0
  const fieldCount = fields.length
  const norms = fields.map((spec, f) => {
    const lengths = postings.fieldLength[f] as Float64Array
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
  const { offsets, postingDocs, fieldTf } = postings
  const impacts = new Float64Array(postingDocs.length)
  const termCount = offsets.length - 1
  for (let t = 0; t < termCount; t++) {
    const start = offsets[t] as number
    const end = offsets[t + 1] as number
    if (start === end) continue
    const termIdf = idf(n, end - start)
    for (let p = start; p < end; p++) {
      const d = postingDocs[p] as number
      let tf = 0
      for (let f = 0; f < fieldCount; f++) {
        const count = (fieldTf[f] as Uint16Array)[p] as number
        // skip absent fields: with b = 1 an empty field's norm is weight / 0
        if (count !== 0) tf += count * ((norms[f] as Float64Array)[d] as number)
      }
      impacts[p] = tf === 0 ? 0 : (termIdf * tf) / (k1 + tf)
    }
  }
  return impacts
}

const sameNumbers = (a: ReadonlyArray<FieldSpec>, b: ReadonlyArray<FieldSpec>): boolean =>
  a.length === b.length && a.every((f, i) => f.weight === b[i]?.weight && f.b === b[i]?.b)

/** The index of a structure under a configuration; impacts of `previous` are reused where their numbers are unchanged. */
const withImpacts = (structure: Structure, config: Config, previous?: Index): Index => {
  const { groupPostings, ...rest } = structure
  const reuseApi = previous !== undefined && previous.config.k1 === config.k1 && sameNumbers(previous.config.fields, config.fields)
  const previousGroup = previous?.config.group
  const reuseGroup = previous?.group !== undefined && previousGroup !== undefined && config.group !== undefined &&
    previousGroup.k1 === config.group.k1 && sameNumbers(previousGroup.fields, config.group.fields)
  const group = config.group === undefined || groupPostings === undefined
    ? undefined
    : {
      groups: groupPostings.groups,
      postings: groupPostings.postings,
      impacts: reuseGroup && previous?.group !== undefined
        ? previous.group.impacts
        : impactsOf(groupPostings.postings, config.group.k1, config.group.fields),
      scratch: scratchFor(groupPostings.groups.count)
    }
  return {
    ...rest,
    config,
    impacts: reuseApi ? previous.impacts : impactsOf(structure, config.k1, config.fields),
    scratch: scratchFor(structure.tools.length),
    group
  }
}

const structureOf = (index: Index): Structure => ({
  tools: index.tools,
  tokenizer: index.tokenizer,
  vocabulary: index.vocabulary,
  offsets: index.offsets,
  postingDocs: index.postingDocs,
  fieldTf: index.fieldTf,
  fieldLength: index.fieldLength,
  groupPostings: index.group === undefined ? undefined : { groups: index.group.groups, postings: index.group.postings },
  forward: index.forward
})

/**
 * The same index with other k1 / field weights / b / λ / query options (tokenisation and field parts must stay the
 * same: they shaped the postings; see {@link canReweight}). Costs one pass over the postings whose numbers changed,
 * no re-tokenising; used for tuning.
 */
export const reweight = (index: Index, config: Config): Index => withImpacts(structureOf(index), config, index)

const sameParts = (a: ReadonlyArray<FieldSpec>, b: ReadonlyArray<FieldSpec>): boolean =>
  a.length === b.length && a.every((f, i) => JSON.stringify(f.parts) === JSON.stringify(b[i]?.parts))

/**
 * True when `config` differs from the index's only in numbers and query options (so {@link reweight} applies): same
 * tokenisation and field parts, group evidence only if the index was built with group postings of the same parts,
 * and feedback only if it was built with a forward index.
 */
export const canReweight = (index: Index, config: Config): boolean =>
  JSON.stringify(index.config.text) === JSON.stringify(config.text) &&
  sameParts(index.config.fields, config.fields) &&
  (config.group === undefined ||
    (index.config.group !== undefined && index.group !== undefined && sameParts(index.config.group.fields, config.group.fields))) &&
  (config.query.feedback === undefined || index.forward !== undefined)
