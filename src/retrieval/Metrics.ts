/**
 * Retrieval metrics with binary relevance (NDCG@k, Recall@k) and the matching of a benchmark's relevant
 * `[tool_name, api_name]` pairs to library entries.
 */
import type { ToolSpec } from "../domain/Tool.ts"
import { matchKey } from "../toolenv/importers/ToolBench.ts"

/**
 * The binary gain at each rank: 1 where the item satisfies a relevant pair not satisfied at an earlier rank,
 * else 0. A relevant pair is a set of acceptable names (a library can hold the same API twice); a pair is
 * credited once, so duplicates of a hit add nothing and the ideal ranking stays reachable.
 */
export const gains = (ranked: ReadonlyArray<string>, relevant: ReadonlyArray<ReadonlySet<string>>): Array<number> => {
  const found = new Array<boolean>(relevant.length).fill(false)
  return ranked.map((item) => {
    for (let r = 0; r < relevant.length; r++) {
      if (!found[r] && (relevant[r] as ReadonlySet<string>).has(item)) {
        found[r] = true
        return 1
      }
    }
    return 0
  })
}

/** Discounted cumulative gain of the first k ranks: Σ_{i<k} gain_i / log2(i + 2). */
export const dcgAt = (k: number, gain: ReadonlyArray<number>): number => {
  let dcg = 0
  const n = Math.min(k, gain.length)
  for (let i = 0; i < n; i++) dcg += (gain[i] as number) / Math.log2(i + 2)
  return dcg
}

/** The best DCG@k reachable with `relevantCount` relevant items: Σ_{i < min(k, relevantCount)} 1 / log2(i + 2). */
export const idealDcgAt = (k: number, relevantCount: number): number => {
  let dcg = 0
  const n = Math.min(k, relevantCount)
  for (let i = 0; i < n; i++) dcg += 1 / Math.log2(i + 2)
  return dcg
}

/** NDCG@k = DCG@k / ideal DCG@k; NaN when there is nothing relevant (such a query has no score to average). */
export const ndcgAt = (k: number, gain: ReadonlyArray<number>, relevantCount: number): number =>
  relevantCount <= 0 || k <= 0 ? NaN : dcgAt(k, gain) / idealDcgAt(k, relevantCount)

/** Recall@k = relevant items in the first k ranks / all relevant items; NaN when there is nothing relevant. */
export const recallAt = (k: number, gain: ReadonlyArray<number>, relevantCount: number): number => {
  if (relevantCount <= 0) return NaN
  let hits = 0
  const n = Math.min(k, gain.length)
  for (let i = 0; i < n; i++) hits += gain[i] as number
  return hits / relevantCount
}

/** One relevant pair of a query as a benchmark names it. */
export interface RelevantPair {
  readonly tool: string
  readonly api: string
}

/** The relevant pairs of a query matched against a library. */
export interface MatchedRelevance {
  /** One set of acceptable tool names per matched pair. */
  readonly relevant: ReadonlyArray<ReadonlySet<string>>
  /** The pairs no library entry matched (they still count as relevant: nothing can retrieve them). */
  readonly unmatched: ReadonlyArray<RelevantPair>
}

/** Finds library entries by matching key. Build once per library with {@link relevanceIndex}. */
export interface RelevanceIndex {
  readonly byKey: ReadonlyMap<string, ReadonlyArray<ToolSpec>>
}

/** Groups a library's tools by the importers' `matchKey(group, apiName)`. */
export const relevanceIndex = (tools: ReadonlyArray<ToolSpec>): RelevanceIndex => {
  const byKey = new Map<string, Array<ToolSpec>>()
  for (const tool of tools) {
    const key = matchKey(tool.group, tool.apiName)
    const list = byKey.get(key)
    if (list === undefined) byKey.set(key, [tool])
    else list.push(tool)
  }
  return { byKey }
}

/**
 * Matches relevant pairs to library entries. A pair `[tool_name, api_name]` matches the entries whose
 * `matchKey(group, apiName)` equals `matchKey(tool_name, api_name)` (case, accents, spaces, `_`, `-` and
 * punctuation ignored). When the query's own `api_list` says which category the pair lives in and some
 * matching entry has that category, only entries of that category are accepted (two RapidAPI providers in
 * different categories can share a name); otherwise every matching entry is. Duplicate pairs count once.
 */
export const matchRelevant = (
  index: RelevanceIndex,
  pairs: ReadonlyArray<RelevantPair>,
  categoryOf: (key: string) => string | undefined = () => undefined
): MatchedRelevance => {
  const relevant: Array<ReadonlySet<string>> = []
  const unmatched: Array<RelevantPair> = []
  const seen = new Set<string>()
  for (const pair of pairs) {
    const key = matchKey(pair.tool, pair.api)
    if (seen.has(key)) continue
    seen.add(key)
    const candidates = index.byKey.get(key) ?? []
    if (candidates.length === 0) {
      unmatched.push(pair)
      continue
    }
    const category = categoryOf(key)
    const inCategory = category === undefined ? [] : candidates.filter((t) => t.category === category)
    relevant.push(new Set((inCategory.length > 0 ? inCategory : candidates).map((t) => t.name)))
  }
  return { relevant, unmatched }
}

/** The category of each pair a query's `api_list` names, by matching key (for {@link matchRelevant}). */
export const categoriesOf = (apis: ReadonlyArray<ToolSpec>): ((key: string) => string | undefined) => {
  const byKey = new Map<string, string>()
  for (const api of apis) {
    const key = matchKey(api.group, api.apiName)
    if (!byKey.has(key)) byKey.set(key, api.category)
  }
  return (key) => byKey.get(key)
}

/** The metrics of one query. */
export interface QueryScores {
  readonly ndcg1: number
  readonly ndcg5: number
  readonly recall5: number
  readonly recall10: number
}

/** NDCG@1, NDCG@5, Recall@5 and Recall@10 of a ranking (at least 10 deep for Recall@10 to be exact). */
export const scoreQuery = (ranked: ReadonlyArray<string>, matched: MatchedRelevance): QueryScores => {
  const relevantCount = matched.relevant.length + matched.unmatched.length
  const gain = gains(ranked, matched.relevant)
  return {
    ndcg1: ndcgAt(1, gain, relevantCount),
    ndcg5: ndcgAt(5, gain, relevantCount),
    recall5: recallAt(5, gain, relevantCount),
    recall10: recallAt(10, gain, relevantCount)
  }
}
