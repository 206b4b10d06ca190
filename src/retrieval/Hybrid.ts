/**
 * Hybrid retrieval: several retrievers' rankings fused into one, by reciprocal rank fusion (RRF, k = 60) or by a
 * weighted sum of min–max-normalised scores. Pure fusion functions, and a Retriever layer over any two retrievers.
 */
import { Context, Effect, Layer } from "effect"
import type { SearchHit } from "../domain/Trajectory.ts"
import { checkK, Retriever } from "./Retriever.ts"

/** One retriever's ranked hits (best first) and its weight in the fusion. */
export interface Ranking {
  readonly hits: ReadonlyArray<SearchHit>
  readonly weight: number
}

/** How rankings are fused. */
export interface FusionConfig {
  /** `rrf`: Σ weight / (rrfK + rank), rank from 1; `score`: Σ weight · min–max-normalised score (0 when absent). */
  readonly method: "rrf" | "score"
  /** The rank offset of RRF (Cormack et al. use 60). */
  readonly rrfK: number
  /** Weight of each retriever, in the order they are given. */
  readonly weights: ReadonlyArray<number>
  /** Candidates taken from each retriever before fusing (at least k). */
  readonly depth: number
}

/** Plain reciprocal rank fusion of two retrievers with equal weights, k = 60, 100 candidates each. */
export const defaultFusion: FusionConfig = { method: "rrf", rrfK: 60, weights: [1, 1], depth: 100 }

/**
 * Round 1's fusion of BM25 and the shipped dense encoder, tuned by `programs/tune-fusion.ts` on Seal-Tools dev (700
 * queries over its own 4,076 tools; never the StableToolBench queries reported): weighted min–max score fusion, dense
 * weight 0.2.
 */
export const sealToolsFusion: FusionConfig = { method: "score", rrfK: 60, weights: [1, 0.2], depth: 100 }

/**
 * The fusion of the hybrid layer (round 3): reciprocal rank, k = 10, dense weight 0.4, 100 candidates each — tuned by
 * `programs/tune-fusion.ts --on split` on the BM25 tuning data (the tuning part of G1_category and the multi-intent
 * requests made from it), with the round-2 BM25 and the round-3 encoder (trained on real tool documentation) with
 * provider evidence and sentence fusion. Round 2 (the generated-world encoder) had k 30, dense weight 0.2.
 */
export const tunedFusion: FusionConfig = { method: "rrf", rrfK: 10, weights: [1, 0.4], depth: 100 }

const ordered = (scores: ReadonlyMap<string, number>, firstSeen: ReadonlyMap<string, number>, k: number): Array<SearchHit> =>
  [...scores.entries()]
    // ties keep the order in which the tools first appeared (earlier retriever, better rank first)
    .sort((a, b) => b[1] - a[1] || (firstSeen.get(a[0]) ?? 0) - (firstSeen.get(b[0]) ?? 0))
    .slice(0, Math.max(0, k))
    .map(([tool, score]) => ({ tool: tool as SearchHit["tool"], score }))

const firstSeenOrder = (rankings: ReadonlyArray<Ranking>): Map<string, number> => {
  const seen = new Map<string, number>()
  for (const r of rankings) for (const h of r.hits) if (!seen.has(h.tool)) seen.set(h.tool, seen.size)
  return seen
}

/** Reciprocal rank fusion: a tool scores Σ over rankings of weight / (rrfK + rank), rank counted from 1. */
export const reciprocalRank = (rankings: ReadonlyArray<Ranking>, k: number, rrfK = 60): Array<SearchHit> => {
  const scores = new Map<string, number>()
  for (const { hits, weight } of rankings) {
    hits.forEach((hit, i) => scores.set(hit.tool, (scores.get(hit.tool) ?? 0) + weight / (rrfK + i + 1)))
  }
  return ordered(scores, firstSeenOrder(rankings), k)
}

/** Min–max normalisation of a ranking's scores to [0, 1] (all 1 when every score is equal). */
export const minMax = (hits: ReadonlyArray<SearchHit>): Array<number> => {
  if (hits.length === 0) return []
  let min = Infinity
  let max = -Infinity
  for (const h of hits) {
    min = Math.min(min, h.score)
    max = Math.max(max, h.score)
  }
  return hits.map((h) => (max > min ? (h.score - min) / (max - min) : 1))
}

/** Weighted score fusion: Σ weight · minMax(score), a tool absent from a ranking contributing 0 there. */
export const weightedScore = (rankings: ReadonlyArray<Ranking>, k: number): Array<SearchHit> => {
  const scores = new Map<string, number>()
  for (const { hits, weight } of rankings) {
    const normalised = minMax(hits)
    hits.forEach((hit, i) => scores.set(hit.tool, (scores.get(hit.tool) ?? 0) + weight * (normalised[i] ?? 0)))
  }
  return ordered(scores, firstSeenOrder(rankings), k)
}

/** Fuses rankings with a configuration (weights are taken from the rankings). */
export const fuse = (config: FusionConfig, rankings: ReadonlyArray<Ranking>, k: number): Array<SearchHit> =>
  config.method === "rrf" ? reciprocalRank(rankings, k, config.rrfK) : weightedScore(rankings, k)

/** A retriever that fuses the rankings of several others (each asked for `depth` candidates per query). */
export const make = (
  retrievers: ReadonlyArray<Retriever["Service"]>,
  config: FusionConfig = defaultFusion,
  name = "hybrid"
): Retriever["Service"] =>
  Retriever.of({
    name,
    search: Effect.fn("Hybrid.search")(function*(queries: ReadonlyArray<string>, k: number) {
      yield* checkK(k)
      const depth = Math.max(k, config.depth)
      const results = yield* Effect.forEach(retrievers, (r) => r.search(queries, depth), { concurrency: "unbounded" })
      return queries.map((_, qi) =>
        fuse(
          config,
          results.map((lists, ri) => ({ hits: lists[qi] ?? [], weight: config.weights[ri] ?? 1 })),
          k
        )
      )
    })
  })

/**
 * A Hybrid retriever layer from two Retriever layers (e.g. `Retriever.layerBm25` and the dense layer of
 * `layers/onnx/RetrieverOnnx.ts`): both are built privately, so each keeps its own `Retriever` service.
 */
export const layer = <E1, R1, E2, R2>(
  first: Layer.Layer<Retriever, E1, R1>,
  second: Layer.Layer<Retriever, E2, R2>,
  config: FusionConfig = defaultFusion
): Layer.Layer<Retriever, E1 | E2, R1 | R2> =>
  Layer.effect(
    Retriever,
    Effect.gen(function*() {
      const a = Context.get(yield* Layer.build(first), Retriever)
      const b = Context.get(yield* Layer.build(second), Retriever)
      return make([a, b], config, `hybrid(${a.name}+${b.name})`)
    })
  )
