/**
 * The Retriever service: top-k tool interfaces per capability-slot query, over the whole library.
 * Layers: BM25, Dense (ONNX encoder), Hybrid (rank fusion).
 */
import { Context, Schema } from "effect"
import type { Effect } from "effect"
import type { SearchHit } from "./domain/Trajectory.ts"

/** A retriever could not answer (index missing, encoder failed). */
export class RetrieverError extends Schema.TaggedError<RetrieverError>()("RetrieverError", {
  message: Schema.String
}) {}

/** Default top-k per capability slot (spec Table 6). */
export const defaultTopK = 3

/** A tool retriever. */
export class Retriever extends Context.Service<Retriever, {
  /** A label for reports (`bm25`, `dense`, `hybrid`). */
  readonly name: string
  /** One ranked list of at most `k` hits per query, best first. */
  readonly search: (
    queries: ReadonlyArray<string>,
    k: number
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<SearchHit>>, RetrieverError>
}>()("paraagent/Retriever") {}
