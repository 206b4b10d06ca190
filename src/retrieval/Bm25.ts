/**
 * Field-weighted BM25 (BM25F) over tool documents, as one namespace: the configuration (Bm25Config), the typed-array
 * index (Bm25Index) and querying it (Bm25Query). Callers use `Bm25.build`, `Bm25.search`, `Bm25.defaultConfig`, ...
 */

/** The configuration types and the plain / round-1 / default configurations. */
export {
  apiConfig,
  type Config,
  defaultConfig,
  type FeedbackOptions,
  type FieldSpec,
  type GroupConfig,
  plainConfig,
  plainQuery,
  type QueryOptions
} from "./Bm25Config.ts"
/** Building and reweighting an index, and its parts. */
export {
  build,
  canReweight,
  type Forward,
  type GroupIndex,
  idf,
  type Index,
  type Postings,
  reweight,
  type Scratch
} from "./Bm25Index.ts"
/** Turning a query into terms, scoring, feedback, sentence fusion and the top-k heap. */
export { boundedHeap, clauses, expand, type Hit, queryTerms, search, searchTerms, searchWith, topK } from "./Bm25Query.ts"
