/**
 * The data the retrieval explorations score on: the BM25 tuning data only — the tuning part of G1_category
 * (`Benchmark.isTuningQuery`) and the multi-intent requests made from it (`Benchmark.tuningSets`), over ToolEnv2404 —
 * never the test files. One loader and one scorer for `studies/fusion-explore.ts`, `studies/dense-feedback.ts` and
 * `studies/use-explore.ts`, so their numbers are comparable with `programs/tune-fusion.ts --on split`.
 */
import { Context, Effect, Layer } from "effect"
import { dataPath } from "../src/io/DataPath.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Text from "../src/retrieval/Tokenize.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { type Library, makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"

/** A ranking's tuning objective: ½ the single-provider set + ½ the mean of the multi-intent sets, and each set's. */
export interface Scored {
  readonly objective: number
  readonly perSet: ReadonlyArray<number>
}

/** `65.27 (73.0 · 62.0 · 58.0 · 57.1 · 53.0)`: the objective, then each set's. */
export const show = (scored: Scored): string => `${scored.objective.toFixed(2)} (${scored.perSet.map((x) => x.toFixed(1)).join(" · ")})`

/** The loaded tuning data. */
export interface TuningData {
  /** ToolEnv2404 with the APIs G1_category names merged in (the library every retriever searches). */
  readonly tools: ReadonlyArray<ToolSpec>
  readonly library: Library
  readonly sets: ReadonlyArray<Benchmark.QuerySet>
  /** Every request of the sets, once, in order of first appearance. */
  readonly requests: ReadonlyArray<string>
  /** The 100 best hits of each text by a Retriever layer over the library. */
  readonly listsOf: (
    layer: Layer.Layer<Retriever, unknown, ToolLibrary>,
    texts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<SearchHit>>, unknown>
  /** The objective of a ranking: each request's top 10. */
  readonly score: (ranked: (request: string) => ReadonlyArray<SearchHit>) => Scored
}

/** Loads ToolEnv2404 and G1_category from the data folder and makes the tuning sets. */
export const load = Effect.gen(function*() {
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), [
    dataPath("stabletoolbench", "solvable_queries", "test_instruction", "G1_category.json")
  ])
  const all = setup.sets[0] as Benchmark.QuerySet
  const tuning = Benchmark.subset(all, "G1_category[tune]", (q) => Benchmark.isTuningQuery(q.id))
  const sets = Benchmark.tuningSets(tuning, setup.tools, Text.makeTokenizer(Bm25.defaultConfig.text).tokens, Bm25.clauses)
  const library = makeLibrary("toolenv2404+G1_category", setup.tools, DepGraph.make([]))
  const libraryLayer = Layer.succeed(ToolLibrary, library)
  const listsOf: TuningData["listsOf"] = (layer, texts) =>
    Effect.scoped(Effect.gen(function*() {
      const retriever = Context.get(yield* Layer.build(layer.pipe(Layer.provide(libraryLayer))), Retriever)
      const lists = yield* retriever.search(texts, 100)
      return new Map(texts.map((text, i) => [text, lists[i] ?? []] as const))
    }))
  const score: TuningData["score"] = (ranked) => {
    const perSet = sets.map((set) => Benchmark.objectiveOf(Benchmark.evaluateSync(set, (q) => ranked(q).slice(0, 10).map((h) => h.tool))))
    return { objective: Benchmark.combinedObjective(perSet), perSet }
  }
  const requests = [...new Set(sets.flatMap((set) => set.queries.map((q) => q.query)))]
  return { tools: setup.tools, library, sets, requests, listsOf, score } satisfies TuningData
})
