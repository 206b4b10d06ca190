/**
 * Querying a BM25F index: a query's weighted terms, score accumulation over the postings with provider evidence,
 * pseudo-relevance feedback, sentence fusion by reciprocal rank, and the bounded heap that keeps the top k.
 */
import type { ToolName } from "../domain/Ids.ts"
import { type GroupIndex, idf, type Index, type Scratch } from "./Bm25Index.ts"

/** One scored document. */
export interface Hit {
  readonly doc: number
  readonly tool: ToolName
  readonly score: number
}

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

/** Adds weight · impact of every posting of the terms into a scratch accumulator; returns how many documents it touched. */
const accumulate = (
  offsets: Int32Array,
  postingDocs: Int32Array,
  impacts: Float64Array,
  scratch: Scratch,
  terms: ReadonlyMap<number, number>
): number => {
  const { scores, stamp, touched } = scratch
  scratch.epoch = scratch.epoch === 0xffffffff ? 1 : scratch.epoch + 1
  if (scratch.epoch === 1) stamp.fill(0)
  const epoch = scratch.epoch
  const termCount = offsets.length - 1
  let touchedCount = 0
  for (const [term, weight] of terms) {
    if (term >= termCount) continue
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
  return touchedCount
}

/**
 * The k best documents for weighted terms, best first (ties: lower document index first). Only documents containing
 * a query term (or, with group evidence, belonging to a provider whose document contains one) are visited; the
 * accumulators are reused across queries.
 */
export const searchTerms = (index: Index, terms: ReadonlyMap<number, number>, k: number): Array<Hit> => {
  const { scratch } = index
  let touchedCount = accumulate(index.offsets, index.postingDocs, index.impacts, scratch, terms)
  const group = index.group
  const lambda = index.config.group?.weight ?? 0
  const limit = Math.floor(index.config.group?.members ?? Infinity)
  const toHits = (list: ReadonlyArray<{ readonly doc: number; readonly score: number }>): Array<Hit> =>
    list.map(({ doc, score }) => ({ doc, tool: index.tools[doc] as ToolName, score }))
  if (group === undefined || lambda === 0 || limit <= 0) return toHits(topK(scratch.touched, touchedCount, scratch.scores, k))
  // s(api) = s_api + λ · s_group for every API of a provider the query touched (or its `members` best ones)
  const { scores, stamp, touched, epoch } = scratch
  const groupScratch = group.scratch
  const touchedGroups = accumulate(group.postings.offsets, group.postings.postingDocs, group.impacts, groupScratch, terms)
  const { memberStart, members, groupOf } = group.groups
  if (Number.isFinite(limit)) {
    touchedCount = shareWithBest(index, group, touchedGroups, touchedCount, lambda, limit)
    return toHits(topK(touched, touchedCount, scores, k))
  }
  // Every API shares: the APIs the query touched score s_api + λ · s_group; the others of a touched provider score
  // λ · s_group alone, so only providers whose share can still enter the top k are walked.
  const heap = boundedHeap(k)
  const groupEpoch = groupScratch.epoch
  for (let i = 0; i < touchedCount; i++) {
    const d = touched[i] as number
    const g = groupOf[d] as number
    const share = groupScratch.stamp[g] === groupEpoch ? lambda * (groupScratch.scores[g] as number) : 0
    heap.push(d, (scores[d] as number) + share)
  }
  for (let i = 0; i < touchedGroups; i++) {
    const g = groupScratch.touched[i] as number
    const share = lambda * (groupScratch.scores[g] as number)
    // a share that underflows to 0 lifts nothing (such an API was never a hit)
    if (share <= 0 || !heap.admits(share)) continue
    const end = memberStart[g + 1] as number
    for (let m = memberStart[g] as number; m < end; m++) {
      const d = members[m] as number
      if (stamp[d] !== epoch) heap.push(d, share)
    }
  }
  return toHits(heap.sorted())
}

/** The eager form of the group share for `members` = limit: each touched provider's `limit` best APIs get it. */
const shareWithBest = (index: Index, group: GroupIndex, touchedGroups: number, touchedCount: number, lambda: number, limit: number): number => {
  const { scores, stamp, touched, epoch } = index.scratch
  const { memberStart, members } = group.groups
  const own = (d: number): number => (stamp[d] === epoch ? (scores[d] as number) : 0)
  const best = new Int32Array(limit)
  let count = touchedCount
  for (let i = 0; i < touchedGroups; i++) {
    const g = group.scratch.touched[i] as number
    const share = lambda * (group.scratch.scores[g] as number)
    if (share <= 0) continue
    // the `limit` best members by own score (members ascend, so a strict comparison keeps the lower index on ties)
    let filled = 0
    const end = memberStart[g + 1] as number
    for (let m = memberStart[g] as number; m < end; m++) {
      const d = members[m] as number
      const s = own(d)
      if (filled === limit && s <= own(best[filled - 1] as number)) continue
      let at = filled < limit ? filled++ : filled - 1
      while (at > 0 && own(best[at - 1] as number) < s) {
        best[at] = best[at - 1] as number
        at--
      }
      best[at] = d
    }
    for (let m = 0; m < filled; m++) {
      const d = best[m] as number
      if (stamp[d] !== epoch) {
        stamp[d] = epoch
        scores[d] = 0
        touched[count++] = d
      }
      scores[d] = (scores[d] as number) + share
    }
  }
  return count
}

/**
 * Pseudo-relevance feedback ({@link FeedbackOptions}): the query's weighted terms plus the best-voted terms of its
 * first-pass top documents (ties: lower term id). The terms unchanged when feedback is off or finds nothing.
 */
export const expand = (index: Index, terms: ReadonlyMap<number, number>): ReadonlyMap<number, number> => {
  const options = index.config.query.feedback
  const forward = index.forward
  if (options === undefined || forward === undefined || options.weight <= 0 || options.docs < 1 || options.terms < 1 || terms.size === 0) {
    return terms
  }
  const first = searchTerms(index, terms, options.docs)
  const best = first[0]?.score ?? 0
  if (best <= 0) return terms
  const n = index.tools.length
  const votes = new Map<number, number>()
  for (const hit of first) {
    const from = forward.start[hit.doc] as number
    const to = forward.start[hit.doc + 1] as number
    let length = 0
    for (let e = from; e < to; e++) length += forward.counts[e] as number
    if (length === 0) continue
    for (let e = from; e < to; e++) {
      const term = forward.terms[e] as number
      if (terms.has(term)) continue
      const df = (index.offsets[term + 1] as number) - (index.offsets[term] as number)
      const vote = (hit.score / best) * ((forward.counts[e] as number) / length) * idf(n, df)
      votes.set(term, (votes.get(term) ?? 0) + vote)
    }
  }
  const chosen = [...votes].sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, options.terms)
  const strongest = chosen[0]?.[1] ?? 0
  if (strongest <= 0) return terms
  const out = new Map(terms)
  for (const [term, vote] of chosen) out.set(term, (options.weight * vote) / strongest)
  return out
}

// Abbreviations whose period does not end a sentence ("e.g. the weather", "Dr. Smith", "approx. 5").
const abbreviation = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|approx|incl|Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|No|U\.S)\.$/iu

/**
 * Splits a request into its sentences / requests: after `.`, `?`, `!` or `;` followed by white space, and at line
 * breaks; a period after a common abbreviation (`e.g.`, `Dr.`, `U.S.`) or inside a token (`3.5`, `example.com`) does
 * not split. Empty pieces are dropped.
 */
export const clauses = (text: string): Array<string> => {
  const out: Array<string> = []
  let current = ""
  for (const piece of text.split(/(?<=[.?!;])(?=\s)|\n+/u)) {
    current += piece
    if (!/\n/u.test(piece) && abbreviation.test(current.trimEnd())) continue
    const trimmed = current.trim()
    if (trimmed !== "") out.push(trimmed)
    current = ""
  }
  const rest = current.trim()
  if (rest !== "") out.push(rest)
  return out
}

/**
 * The k best tools for a query under the index's configuration: the whole query (expanded by feedback when
 * configured); with `clauses`, fused by reciprocal rank with one ranking per sentence.
 */
export const search = (index: Index, query: string, k: number): Array<Hit> =>
  searchWith(index, query, expand(index, queryTerms(index, query)), k)

/**
 * {@link search} with the whole query's weighted terms given (e.g. a query expanded by other means): those terms
 * ranked; with `clauses`, fused by reciprocal rank with one ranking per sentence of `query`.
 */
export const searchWith = (index: Index, query: string, whole: ReadonlyMap<number, number>, k: number): Array<Hit> => {
  const options = index.config.query
  const parts = options.clauses ? clauses(query) : []
  if (parts.length < 2) return searchTerms(index, whole, k)
  // Reciprocal-rank fusion of the whole query's ranking and each clause's ranking.
  const depth = Math.max(k, 50)
  const rankings = { whole: searchTerms(index, whole, depth), clauses: parts.map((part) => searchTerms(index, queryTerms(index, part), depth)) }
  const fused = new Map<number, number>()
  const add = (hits: ReadonlyArray<Hit>, weight: number): void => {
    hits.forEach((hit, rank) => fused.set(hit.doc, (fused.get(hit.doc) ?? 0) + weight / (options.rrfK + rank + 1)))
  }
  add(rankings.whole, options.wholeWeight)
  for (const ranking of rankings.clauses) add(ranking, 1)
  return [...fused]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, Math.max(0, k))
    .map(([doc, score]) => ({ doc, tool: index.tools[doc] as ToolName, score }))
}

/**
 * A bounded min-heap of the `size` best (score, doc) pairs seen, a lower score or, on equal scores, a higher document
 * index ranking below. O(log size) per push; `admits(score)` says whether a document with that score could still enter.
 */
export const boundedHeap = (size: number) => {
  const capacity = Math.max(0, size)
  const heapDoc = new Int32Array(capacity)
  const heapScore = new Float64Array(capacity)
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
  const push = (doc: number, score: number): void => {
    if (filled < capacity) {
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
    } else if (capacity > 0 && below(heapScore[0] as number, heapDoc[0] as number, score, doc)) {
      heapDoc[0] = doc
      heapScore[0] = score
      siftDown(0)
    }
  }
  /** Whether some document with this score could still enter (the heap is not full, or the score reaches its minimum). */
  const admits = (score: number): boolean => capacity > 0 && (filled < capacity || score >= (heapScore[0] as number))
  const sorted = (): Array<{ readonly doc: number; readonly score: number }> => {
    const out: Array<{ doc: number; score: number }> = []
    for (let i = 0; i < filled; i++) out.push({ doc: heapDoc[i] as number, score: heapScore[i] as number })
    return out.sort((a, b) => b.score - a.score || a.doc - b.doc)
  }
  return { push, admits, sorted }
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
  const heap = boundedHeap(Math.min(k, count))
  for (let c = 0; c < count; c++) {
    const doc = candidates[c] as number
    heap.push(doc, scores[doc] as number)
  }
  return heap.sorted()
}
