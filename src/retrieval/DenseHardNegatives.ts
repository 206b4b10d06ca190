/**
 * BM25-mined hard negatives for the static encoder: for each training pseudo-query, the documents a per-API BM25F
 * ranks highest that are not its answers — what the lexical retriever gets wrong, which the dense side must learn.
 */
import type { ToolSpec } from "../domain/Tool.ts"
import * as Bm25 from "./Bm25.ts"

/** A query to mine for: its text and its positive documents (indices into the tool list). */
export interface MineQuery {
  readonly query: string
  readonly positives: ReadonlyArray<number>
}

/**
 * For each query, up to `perQuery` document indices, best BM25 first, that are neither a positive nor a document
 * with a positive's text (`canonical[i]` is the first document with document i's text) and for which `eligible`
 * holds (e.g. not a held-out document). BM25 is `Bm25.apiConfig` (per API, no provider evidence: siblings of the
 * positive's provider are already in-batch negatives). Deterministic: BM25 ties go to the lower index.
 */
export const mine = (
  tools: ReadonlyArray<ToolSpec>,
  queries: ReadonlyArray<MineQuery>,
  canonical: Int32Array,
  eligible: (doc: number) => boolean,
  perQuery: number,
  config: Bm25.Config = Bm25.apiConfig
): Array<Int32Array> => {
  if (perQuery <= 0) return queries.map(() => new Int32Array(0))
  const index = Bm25.build(tools, config)
  // a few extra candidates: the positives (and their duplicates) usually rank near the top
  const depth = perQuery + 8
  return queries.map((q) => {
    const answers = new Set(q.positives.map((p) => canonical[p] ?? p))
    const out: Array<number> = []
    for (const hit of Bm25.search(index, q.query, depth)) {
      if (out.length >= perQuery) break
      if (answers.has(canonical[hit.doc] ?? hit.doc) || !eligible(hit.doc)) continue
      out.push(hit.doc)
    }
    return Int32Array.from(out)
  })
}
