/**
 * The configuration of a BM25F index: its fields, query handling, provider evidence and feedback, and the tuned
 * configurations (the plain baseline, round 1 per API, round 2 the default), each with how it was chosen.
 */
import * as Document from "./Document.ts"
import * as Text from "./Tokenize.ts"

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
 * Pseudo-relevance feedback (Rocchio / RM3 style): the `docs` best APIs of a first pass vote for the terms they
 * contain that the query lacks, each vote (s_d / s_best) · tf(t, d) / |d| · idf(t); the `terms` best-voted terms join
 * the query, the strongest with weight `weight` and the others in proportion (a query word weighs its count).
 */
export interface FeedbackOptions {
  readonly docs: number
  readonly terms: number
  readonly weight: number
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
  /** Query expansion by pseudo-relevance feedback over the whole query; absent = none. */
  readonly feedback?: FeedbackOptions
}

/**
 * Tool-level evidence: a second BM25F index over one document per provider (`Document.groupDocument`: its name,
 * description and category once, every API's name, description and parameters joined), and each API's score gains
 * `weight` (λ) times its provider's score: score(api) = s_api + λ · s_group. ToolBench requests are written against
 * several APIs of one provider, so the provider's document matches them as a whole where each API matches a part.
 */
export interface GroupConfig {
  /** λ ≥ 0: the share of the provider's score each of its APIs gets (0 = no group evidence). */
  readonly weight: number
  /** Term-frequency saturation of the group index. */
  readonly k1: number
  /** Fields of the group index (the same document fields as the API index; own weights and `b`). */
  readonly fields: ReadonlyArray<FieldSpec>
  /**
   * How many of a provider's APIs get its share: the `members` best by their own score (ties: lower index; 0 = none);
   * absent = all. A request that names one API of a provider then lifts that API, not every sibling with it.
   */
  readonly members?: number
}

/** The full configuration of a BM25 index. */
export interface Config {
  /** Term-frequency saturation. */
  readonly k1: number
  readonly fields: ReadonlyArray<FieldSpec>
  readonly text: Text.TextOptions
  readonly query: QueryOptions
  /** Tool-level evidence from a per-provider index; absent = none (classic BM25F per API). */
  readonly group?: GroupConfig
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
 * The per-API part of the tuned configuration (round 1): chosen by `bench/retrieval-tune.ts` (coordinate ascent on
 * (NDCG@5 + Recall@10) / 2) over the tuning part of G1_category only (2/3 of its queries by a seeded hash, see
 * `Benchmark.tuningSplit`); the reported test files were not used. API name and category count 4×, the provider
 * name 2×, the provider's description (shared by all its APIs) only 0.25×.
 */
export const apiConfig: Config = {
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
 * The tuned configuration (round 2): provider evidence ({@link GroupConfig}, λ = 2) and sentence fusion (each
 * sentence's ranking fused with the whole request's, RRF k = 1), the per-API fields re-tuned with them. Chosen by
 * `bench/retrieval-tune.ts` (coordinate ascent, two starting points) on the same tuning part of G1_category plus
 * multi-intent requests made from it only (`Benchmark.tuningSets`); the reported test files were not used.
 */
export const defaultConfig: Config = {
  k1: 2,
  fields: [
    { name: "group", parts: ["group"], weight: 4, b: 0.75 },
    { name: "api", parts: ["api"], weight: 4, b: 0.75 },
    { name: "description", parts: ["description"], weight: 1, b: 1 },
    { name: "groupDescription", parts: ["groupDescription"], weight: 0.25, b: 0.5 },
    { name: "category", parts: ["category"], weight: 4, b: 0.75 },
    { name: "parameters", parts: ["parameters"], weight: 0.25, b: 0.75 }
  ],
  text: apiConfig.text,
  query: { clauses: true, wholeWeight: 1, rrfK: 1, idfExponent: 0 },
  group: {
    weight: 2,
    k1: 2,
    fields: [
      { name: "group", parts: ["group"], weight: 1, b: 0.75 },
      { name: "api", parts: ["api"], weight: 4, b: 0.75 },
      { name: "description", parts: ["description"], weight: 0.5, b: 1 },
      { name: "groupDescription", parts: ["groupDescription"], weight: 0.5, b: 0.75 },
      { name: "category", parts: ["category"], weight: 1, b: 0.75 },
      { name: "parameters", parts: ["parameters"], weight: 1, b: 0.75 }
    ]
  }
}
