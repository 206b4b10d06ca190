/**
 * The Retriever service: top-k tool interfaces per capability-slot query, over the whole library.
 * Layers: BM25 (here), Dense (ONNX encoder) and Hybrid (rank fusion) in layers/onnx/RetrieverOnnx.ts.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { SearchHit } from "../domain/Trajectory.ts"
import * as Bm25 from "./Bm25.ts"
import { ToolLibrary } from "../toolenv/ToolLibrary.ts"

/** A retriever could not answer (index missing, encoder failed). */
export class RetrieverError extends Schema.TaggedError<RetrieverError>()("RetrieverError", {
  message: Schema.String
}) {}

/** Fails unless k is a positive integer: the check every Retriever's `search` makes before searching. */
export const checkK = (k: number): Effect.Effect<void, RetrieverError> =>
  Number.isInteger(k) && k >= 1 ? Effect.void : Effect.fail(new RetrieverError({ message: `k must be a positive integer, got ${k}` }))

/** Default top-k per capability slot (spec Table 6). */
export const defaultTopK = 3

/** The deepest rank a search reaches by paging (a repeated query past it returns no hits); the server's k bound. */
export const maxPagedRank = 50

/**
 * The page a search of `query` returns **[ours]**: how many earlier searches of the same query (exact text) the agent
 * sees in `history` (its steps, in order) and before it in its own turn (`before`). Page 0 is the query's top-k; page p
 * holds ranks p·k+1 … (p+1)·k, a follow-up top-k ("more results"), so a repeated query is not a wasted round.
 */
export const pageOf = (history: ReadonlyArray<{ readonly searches: ReadonlyArray<{ readonly query: string }> }>, query: string, before = 0): number => {
  let page = before
  for (const step of history) for (const s of step.searches) if (s.query === query) page += 1
  return page
}

/** The ranks [start, end) of `pages` pages of a ranking from page `page` at k per page, cut at {@link maxPagedRank}. */
export const pageSpan = (k: number, page: number, pages = 1): { readonly start: number; readonly end: number } =>
  ({ start: Math.min(page * k, maxPagedRank), end: Math.min((page + pages) * k, maxPagedRank) })

/**
 * Page `page` of a query's ranking at k per page: ranks page·k+1 … (page+1)·k of the retriever's top-(page+1)·k (a
 * retriever's top-k is a prefix of its top-k' for k ≤ k'), empty past {@link maxPagedRank}.
 */
export const searchPage = (
  search: (queries: ReadonlyArray<string>, k: number) => Effect.Effect<ReadonlyArray<ReadonlyArray<SearchHit>>, RetrieverError>,
  query: string,
  k: number,
  page: number
): Effect.Effect<ReadonlyArray<SearchHit>, RetrieverError> =>
  Effect.gen(function*() {
    yield* checkK(k)
    if (!Number.isInteger(page) || page < 0) return yield* new RetrieverError({ message: `page must be a non-negative integer, got ${page}` })
    const { start, end } = pageSpan(k, page)
    if (start >= end) return []
    const lists = yield* search([query], end)
    return (lists[0] ?? []).slice(start, end)
  })

/** A tool retriever. */
export class Retriever extends Context.Service<Retriever, {
  /** A label for reports (`bm25`, `dense`, `hybrid`). */
  readonly name: string
  /** One ranked list of at most `k` hits per query, best first. */
  readonly search: (
    queries: ReadonlyArray<string>,
    k: number
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<SearchHit>>, RetrieverError>
}>()("paraagent/Retriever") {
  /** BM25 over the library's tools with a given configuration (e.g. `Bm25.plainConfig`, the baseline). */
  static readonly layerBm25With = (config: Bm25.Config, name = "bm25"): Layer.Layer<Retriever, never, ToolLibrary> =>
    Layer.effect(
      Retriever,
      Effect.gen(function*() {
        const library = yield* ToolLibrary
        const index = Bm25.build(library.tools, config)
        return Retriever.of({ name, search: searchWith(index) })
      })
    )

  /**
   * BM25F with the tuned configuration ({@link Bm25.defaultConfig}: provider evidence and sentence fusion) over the
   * library's tools; `layerBm25With(Bm25.apiConfig)` is round 1's per-API BM25F, `Bm25.plainConfig` the baseline.
   */
  static readonly layerBm25: Layer.Layer<Retriever, never, ToolLibrary> = Retriever.layerBm25With(Bm25.defaultConfig)

  /** The default layer: {@link Retriever.layerBm25}. */
  static readonly layer: Layer.Layer<Retriever, never, ToolLibrary> = Retriever.layerBm25
}

/** How many (query, k) answers one index keeps (a few MB); past it the oldest answer is dropped first. */
export const memoCapacity = 20_000

/**
 * `search` over one BM25 index: k must be a positive integer. Ranking over a built index is pure, and rollouts ask the
 * same queries again and again (a GRPO group's G rollouts of one task, every model and rollout seed of an evaluation),
 * so answers are memoised per (k, query), first in first out beyond {@link memoCapacity}; a memoised list is frozen,
 * being handed to every rollout that asks.
 */
const searchWith = (index: Bm25.Index) => {
  const memo = new Map<string, ReadonlyArray<SearchHit>>()
  const answer = (query: string, k: number): ReadonlyArray<SearchHit> => {
    const key = `${k}\u0000${query}`
    const known = memo.get(key)
    if (known !== undefined) return known
    const hits = Object.freeze(Bm25.search(index, query, k).map((hit): SearchHit => Object.freeze({ tool: hit.tool, score: hit.score })))
    if (memo.size >= memoCapacity) memo.delete(memo.keys().next().value as string)
    memo.set(key, hits)
    return hits
  }
  return Effect.fn("Retriever.search")(function*(queries: ReadonlyArray<string>, k: number) {
    yield* checkK(k)
    return queries.map((query) => answer(query, k))
  })
}
