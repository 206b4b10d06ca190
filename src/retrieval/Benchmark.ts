/**
 * The retrieval benchmark: a ToolBench-format library merged with the `api_list`s of StableToolBench query
 * files (so every relevant API is retrievable), each query's relevant pairs matched, and per-file metrics.
 */
import { Duration, Effect } from "effect"
import * as nodePath from "node:path"
import type { ToolSpec } from "../domain/Tool.ts"
import type { ImportReport } from "../toolenv/importers/ImportReport.ts"
import * as StableToolBench from "../toolenv/importers/StableToolBench.ts"
import * as ToolBench from "../toolenv/importers/ToolBench.ts"
import { unitHash } from "../math/Random.ts"
import * as Stats from "../math/Stats.ts"
import * as Document from "./Document.ts"
import * as Metrics from "./Metrics.ts"

/** One benchmark query with its relevant pairs matched against the merged library. */
export interface JudgedQuery {
  readonly id: string
  readonly query: string
  readonly matched: Metrics.MatchedRelevance
}

/** The queries of one query file. */
export interface QuerySet {
  /** The file's basename (`#2`, `#3` appended to repeats), the key of the JSON report. */
  readonly name: string
  readonly path: string
  readonly queries: ReadonlyArray<JudgedQuery>
  readonly report: ImportReport
}

/** A loaded benchmark. */
export interface Setup {
  /** The library's tools followed by the query APIs it lacked. */
  readonly tools: ReadonlyArray<ToolSpec>
  readonly sets: ReadonlyArray<QuerySet>
  readonly libraryReport: ImportReport
  /** Query APIs added to the library / found in it. */
  readonly added: number
  readonly matchedApis: number
  readonly loadMs: number
}

/** Loads the library folder and the query files, merges them and matches every relevant pair. */
export const load = Effect.fn("Benchmark.load")(function*(libraryDir: string, queryFiles: ReadonlyArray<string>) {
  const [elapsed, loaded] = yield* Effect.timed(
    Effect.all([
      ToolBench.loadDirectory(libraryDir),
      Effect.forEach(queryFiles, (file) => StableToolBench.loadQueryFile(file))
    ])
  )
  const [library, files] = loaded
  const merged = StableToolBench.mergeQueryApis(library.tools, files.flatMap((f) => f.queries))
  const index = Metrics.relevanceIndex(merged.tools)
  let offset = 0
  const names = new Map<string, number>()
  const sets = files.map((file, i): QuerySet => {
    const queries = merged.queries.slice(offset, offset + file.queries.length).map((q): JudgedQuery => ({
      id: q.id,
      query: q.query,
      matched: Metrics.matchRelevant(index, q.relevant, Metrics.categoriesOf(q.apis))
    }))
    offset += file.queries.length
    const path = queryFiles[i] as string
    // two files with one basename (from different folders) keep distinct report keys: `name.json#2`
    const base = nodePath.basename(path)
    const seen = (names.get(base) ?? 0) + 1
    names.set(base, seen)
    return { name: seen === 1 ? base : `${base}#${seen}`, path, queries, report: file.report }
  })
  return {
    tools: merged.tools,
    sets,
    libraryReport: library.report,
    added: merged.added,
    matchedApis: merged.matched,
    loadMs: Duration.toMillis(elapsed)
  } satisfies Setup
})

/** The StableToolBench test query files the retrieval results are reported on, as path parts under the data folder. */
export const testQueryFiles: ReadonlyArray<ReadonlyArray<string>> = ["G1_instruction", "G1_category", "G2_instruction", "G3_instruction"]
  .map((name) => ["stabletoolbench", "solvable_queries", "test_instruction", `${name}.json`])

/**
 * The held-out split the BM25 defaults were tuned on: the G1_category queries whose seeded hash of the query
 * id falls under `fraction` (2/3 of them). Reports give G1_category whole and its other third separately.
 */
export const tuningSplit = { file: "G1_category.json", seed: 4, fraction: 0.667 } as const

/** Whether a query id is in the tuning part of {@link tuningSplit} (for `fraction` and `seed` given, another split). */
export const isTuningQuery = (queryId: string, fraction: number = tuningSplit.fraction, seed: number = tuningSplit.seed): boolean =>
  unitHash(seed, "bm25-tune", queryId) < fraction

/** The queries of a set for which `keep` holds, under a new name. */
export const subset = (set: QuerySet, name: string, keep: (query: JudgedQuery) => boolean): QuerySet => ({
  ...set,
  name,
  queries: set.queries.filter(keep)
})

const connectors = ["Additionally,", "Also,", "Furthermore,", "Besides that,"] as const

// A connective a clause starts with, dropped when the clause is joined with another connective.
const leadingConnective = /^(?:additionally|also|furthermore|moreover|besides that|finally|lastly|then|and)\b[,:]?\s*/iu

/**
 * Single-API requests cut out of multi-API ones, for tuning: for each relevant API of a query (one with at least two
 * relevant APIs), the query's sentence (`clauses`) that contains a word of that API's name or description that no
 * other relevant API of the query has, and no such word of another — when exactly one sentence qualifies. The request
 * is that sentence, after the query's first sentence when that one names no API (the asker's context); its relevant
 * pair is that API alone. `tokens` is the tokeniser the words are compared with, `clauses` the sentence splitter.
 */
export const singleIntents = (
  set: QuerySet,
  tools: ReadonlyArray<ToolSpec>,
  tokens: (text: string) => ReadonlyArray<string>,
  clauses: (text: string) => ReadonlyArray<string>
): QuerySet => {
  const byName = new Map(tools.map((t) => [t.name as string, t]))
  const wordsOf = (names: ReadonlySet<string>): Set<string> => {
    const out = new Set<string>()
    for (const name of names) {
      const t = byName.get(name)
      if (t !== undefined) for (const w of tokens(`${t.apiName} ${t.description}`)) out.add(w)
    }
    return out
  }
  const queries: Array<JudgedQuery> = []
  for (const q of set.queries) {
    const relevant = q.matched.relevant
    if (relevant.length < 2) continue
    const words = relevant.map(wordsOf)
    const sentences = clauses(q.query)
    const sentenceWords = sentences.map((c) => new Set(tokens(c)))
    const distinctive = words.map((own, i) => new Set([...own].filter((w) => words.every((other, j) => j === i || !other.has(w)))))
    const names = (c: number): Set<string> => sentenceWords[c] as Set<string>
    relevant.forEach((pair, r) => {
      const matches = sentences.flatMap((_, c) =>
        [...(distinctive[r] as Set<string>)].some((w) => names(c).has(w)) &&
          distinctive.every((other, j) => j === r || ![...other].some((w) => names(c).has(w)))
          ? [c]
          : []
      )
      if (matches.length !== 1) return
      const at = matches[0] as number
      const context = at > 0 && distinctive.every((d) => ![...d].some((w) => names(0).has(w))) ? `${sentences[0]} ` : ""
      queries.push({
        id: `${q.id}#${r}`,
        query: `${context}${sentences[at]}`,
        matched: { relevant: [pair], unmatched: [] }
      })
    })
  }
  return { ...set, name: `${set.name}[single]`, queries }
}

const upperFirst = (s: string): string => `${s.charAt(0).toUpperCase()}${s.slice(1)}`

const lowerFirst = (s: string): string => (/^[A-Z][a-z]/u.test(s) ? `${s.charAt(0).toLowerCase()}${s.slice(1)}` : s)

/**
 * Multi-intent requests made from single-provider ones, for tuning without the multi-tool test files: each query of
 * `set` (in a seeded order) is joined with `arity - 1` later ones whose relevant APIs belong to other providers
 * ("… Additionally, can you …"), and its relevant pairs are the union. ToolBench's I2/I3 requests have this shape:
 * one request per tool, joined by connectives. `tools` maps relevant tool names to their providers.
 */
export const multiIntent = (
  set: QuerySet,
  tools: ReadonlyArray<ToolSpec>,
  arity: number,
  seed = 11
): QuerySet => {
  const providerOf = new Map(tools.map((t) => [t.name as string, Document.groupKey(t)]))
  const providers = (q: JudgedQuery): Set<string> =>
    new Set(q.matched.relevant.flatMap((names) => [...names].map((name) => providerOf.get(name) ?? name)))
  const order = [...set.queries].sort((a, b) => unitHash(seed, "multi-intent", a.id) - unitHash(seed, "multi-intent", b.id) || (a.id < b.id ? -1 : 1))
  const queries = order.map((head, i): JudgedQuery => {
    const parts = [head]
    const taken = providers(head)
    // partners are the next queries in the seeded order, skipping those that share a provider
    for (let step = 1; parts.length < arity && step < order.length; step++) {
      const candidate = order[(i + step) % order.length] as JudgedQuery
      const own = providers(candidate)
      if (parts.includes(candidate) || [...own].some((p) => taken.has(p))) continue
      parts.push(candidate)
      for (const p of own) taken.add(p)
    }
    return {
      id: parts.map((p) => p.id).join("+"),
      query: parts.map((p, j) => {
        const text = p.query.replace(leadingConnective, "")
        return j === 0 ? upperFirst(text) : `${connectors[(i + j) % connectors.length]} ${lowerFirst(text)}`
      }).join(" "),
      matched: {
        relevant: parts.flatMap((p) => p.matched.relevant),
        unmatched: parts.flatMap((p) => p.matched.unmatched)
      }
    }
  })
  return { ...set, name: `${set.name}×${arity}`, queries }
}

/**
 * The tuning sets of round 2 made from one set of single-provider requests: the set itself, its requests joined two
 * and three at a time across providers ({@link multiIntent}), and its single-API sentences ({@link singleIntents})
 * joined two and three at a time — the shapes of ToolBench's I1, and of I2/I3 with several or one API per provider.
 */
export const tuningSets = (
  set: QuerySet,
  tools: ReadonlyArray<ToolSpec>,
  tokens: (text: string) => ReadonlyArray<string>,
  clauses: (text: string) => ReadonlyArray<string>
): ReadonlyArray<QuerySet> => {
  const single = singleIntents(set, tools, tokens, clauses)
  return [set, multiIntent(set, tools, 2), multiIntent(set, tools, 3), multiIntent(single, tools, 2), multiIntent(single, tools, 3)]
}

/** The tuning objective of one set's results: (NDCG@5 + Recall@10) / 2, in percent. */
export const objectiveOf = (result: FileResult): number => (result.ndcg5 + result.recall10) / 2

/**
 * The tuning objective over {@link tuningSets}: half the first set's objective (single-provider requests) plus half
 * the mean of the others' (multi-intent requests); with one set, its objective.
 */
export const combinedObjective = (objectives: ReadonlyArray<number>): number => {
  const [first, ...rest] = objectives
  if (first === undefined) return 0
  if (rest.length === 0) return first
  return first / 2 + rest.reduce((sum, x) => sum + x, 0) / rest.length / 2
}

/** A relevant pair of a query that no library entry matched. */
export interface Unmatched {
  readonly query: string
  readonly tool: string
  readonly api: string
}

/** Metrics of one query file: means over the queries that have at least one relevant pair, in percent. */
export interface FileResult {
  readonly ndcg1: number
  readonly ndcg5: number
  readonly recall5: number
  readonly recall10: number
  /** Latency per query in milliseconds. */
  readonly p50_ms: number
  readonly p95_ms: number
  readonly mean_ms: number
  /** Queries in the file / queries scored (those with at least one relevant pair). */
  readonly queries: number
  readonly scored: number
  readonly unmatched: ReadonlyArray<Unmatched>
}

/** One ranking and how long it took. */
export interface Timed {
  readonly ranked: ReadonlyArray<string>
  readonly ms: number
}

/** Aggregates per-query rankings of one file into its metrics. */
export const summarize = (set: QuerySet, rankings: ReadonlyArray<Timed>): FileResult => {
  const scores: Array<Metrics.QueryScores> = []
  const unmatched: Array<Unmatched> = []
  set.queries.forEach((q, i) => {
    for (const pair of q.matched.unmatched) unmatched.push({ query: q.id, tool: pair.tool, api: pair.api })
    const relevantCount = q.matched.relevant.length + q.matched.unmatched.length
    const ranking = rankings[i]
    if (relevantCount > 0 && ranking !== undefined) scores.push(Metrics.scoreQuery(ranking.ranked, q.matched))
  })
  const percent = (pick: (s: Metrics.QueryScores) => number): number => 100 * Stats.mean(scores.map(pick))
  const ms = rankings.map((r) => r.ms)
  return {
    ndcg1: percent((s) => s.ndcg1),
    ndcg5: percent((s) => s.ndcg5),
    recall5: percent((s) => s.recall5),
    recall10: percent((s) => s.recall10),
    p50_ms: Stats.p50(ms),
    p95_ms: Stats.p95(ms),
    mean_ms: Stats.mean(ms),
    queries: set.queries.length,
    scored: scores.length,
    unmatched
  }
}

/** Runs every query of a file through `rank` one at a time (timing each) and summarises. */
export const evaluate = <E, R>(
  set: QuerySet,
  rank: (query: string) => Effect.Effect<ReadonlyArray<string>, E, R>
): Effect.Effect<FileResult, E, R> =>
  Effect.forEach(set.queries, (q) =>
    Effect.timed(rank(q.query)).pipe(
      Effect.map(([elapsed, ranked]): Timed => ({ ranked, ms: Duration.toMillis(elapsed) }))
    )).pipe(Effect.map((rankings) => summarize(set, rankings)))

/** Each query of a set through a synchronous ranking function, timed one by one with `performance.now()`. */
export const rankSync = (set: QuerySet, rank: (query: string) => ReadonlyArray<string>): Array<Timed> =>
  set.queries.map((q): Timed => {
    const start = performance.now()
    const ranked = rank(q.query)
    return { ranked, ms: performance.now() - start }
  })

/** The same as {@link evaluate} for a synchronous ranking function, timed with `performance.now()`. */
export const evaluateSync = (set: QuerySet, rank: (query: string) => ReadonlyArray<string>): FileResult =>
  summarize(set, rankSync(set, rank))

/** The metrics of the queries of `set` for which `keep` holds, from rankings already made for the whole set. */
export const summarizeSubset = (
  set: QuerySet,
  rankings: ReadonlyArray<Timed>,
  name: string,
  keep: (query: JudgedQuery) => boolean
): FileResult => {
  const kept = set.queries.map(keep)
  return summarize(subset(set, name, keep), rankings.filter((_, i) => kept[i]))
}

const round = (x: number, digits: number): number => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** The machine-readable report: `{"files": {"<name>": {ndcg1, ndcg5, recall5, recall10, p50_ms, p95_ms, mean_ms}}, "build_ms": …}`. */
export const jsonReport = (
  results: ReadonlyArray<readonly [string, FileResult]>,
  buildMs: number,
  extra: Readonly<Record<string, string | number>> = {}
): string =>
  JSON.stringify({
    files: Object.fromEntries(results.map(([name, r]) => [name, {
      ndcg1: round(r.ndcg1, 2),
      ndcg5: round(r.ndcg5, 2),
      recall5: round(r.recall5, 2),
      recall10: round(r.recall10, 2),
      p50_ms: round(r.p50_ms, 3),
      p95_ms: round(r.p95_ms, 3),
      mean_ms: round(r.mean_ms, 3),
      queries: r.queries,
      scored: r.scored,
      unmatched: r.unmatched.length
    }])),
    build_ms: round(buildMs, 1),
    ...extra
  })

/** A fixed-width text table: the first `leftColumns` columns left-aligned, the others right-aligned, two spaces apart. */
export const formatTable = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  leftColumns = 1
): string => {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => (row[c] as string).length)))
  const line = (cells: ReadonlyArray<string>): string =>
    cells.map((cell, c) => (c < leftColumns ? cell.padEnd(widths[c] as number) : cell.padStart(widths[c] as number))).join("  ")
  return [line(header), ...rows.map(line)].join("\n")
}

/** A fixed-width table of per-file results for the terminal. */
export const table = (results: ReadonlyArray<readonly [string, FileResult]>): string => {
  const header = ["file", "NDCG@1", "NDCG@5", "R@5", "R@10", "p50 ms", "mean ms", "p95 ms", "queries"]
  const rows = results.map(([name, r]) => [
    name,
    r.ndcg1.toFixed(1),
    r.ndcg5.toFixed(1),
    r.recall5.toFixed(1),
    r.recall10.toFixed(1),
    r.p50_ms.toFixed(3),
    r.mean_ms.toFixed(3),
    r.p95_ms.toFixed(3),
    r.scored === r.queries ? String(r.queries) : `${r.scored}/${r.queries}`
  ])
  return formatTable(header, rows)
}
