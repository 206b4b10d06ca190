/**
 * `npx tsx studies/dense-feedback.ts [--onnx … --vocab …]`: dense pseudo-relevance feedback on the BM25 tuning data
 * only (the tuning part of G1_category and the multi-intent requests made from it), never the test files. Each
 * request (and each of its sentences) is encoded, moved towards the mean of the plain API rows of BM25F's m best hits,
 * q' = (q + β · mean) / ‖…‖, and searched over the tuned dense index (provider rows λ 2, sentence fusion whole 1 /
 * RRF 5, as `RetrieverOnnx.tunedDense`); the list is scored alone and fused with BM25F by RRF. β = 0 is the shipped
 * dense retriever, so its row reproduces the shipped hybrid (docs/dense.md, round 5).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "../bench/BenchFlags.ts"
import * as TuningData from "./TuningData.ts"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import * as Cli from "../src/io/Cli.ts"
import type { ToolName } from "../src/domain/Ids.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"

const { onnx, vocab } = await BenchFlags.parse("studies/dense-feedback", "Dense pseudo-relevance feedback from BM25F on the BM25 tuning data only", {
  onnx: Flag.File("onnx", { mustExist: true }).pipe(Flag.withDescription("the static encoder's ONNX file"), Flag.withDefault(RetrieverOnnx.shippedModel.onnx)),
  vocab: Flag.File("vocab", { mustExist: true }).pipe(Flag.withDescription("the static encoder's *.vocab.json"), Flag.withDefault(RetrieverOnnx.shippedModel.vocab))
})

const program = Effect.scoped(Effect.gen(function*() {
  const { library, requests, listsOf, score } = yield* TuningData.load
  const partsOf = new Map(requests.map((q) => {
    const split = Bm25.clauses(q)
    return [q, split.length < 2 ? [q] : [q, ...split]] as const
  }))
  const texts = [...new Set([...partsOf.values()].flat())]
  const bm25Of = yield* listsOf(Retriever.layerBm25, texts)

  // the rows RetrieverOnnx.make searches with tunedDense (API rows + λ 2 · provider rows)
  const encoder = yield* RetrieverOnnx.openEncoder({ kind: "static", onnx, vocab })
  const dim = encoder.dim
  const names = library.tools.map((t) => t.name)
  const rowOf = new Map(names.map((n, i) => [n as string, i]))
  const { apiRows, matrix } = yield* RetrieverOnnx.documentRows(library, encoder, { cacheDir: ".cache/dense", ...RetrieverOnnx.tunedDense })
  const index = yield* RetrieverOnnx.vectorIndex(matrix, dim)
  const sentence = RetrieverOnnx.tunedDense.clauses ?? { wholeWeight: 1, rrfK: 5 }
  const queryRows = yield* encoder.encode(texts)

  const feedbackLists = (m: number, beta: number) => Effect.gen(function*() {
    const moved = new Float32Array(texts.length * dim)
    texts.forEach((t, i) => {
      const top = (bm25Of.get(t) ?? []).slice(0, m)
      const at = i * dim
      for (const hit of top) {
        const r = (rowOf.get(hit.tool) ?? 0) * dim
        for (let d = 0; d < dim; d++) moved[at + d] = (moved[at + d] as number) + (apiRows[r + d] as number) / top.length
      }
      let norm = 0
      for (let d = 0; d < dim; d++) {
        const v = (queryRows[at + d] as number) + beta * (moved[at + d] as number)
        moved[at + d] = v
        norm += v * v
      }
      const n = Math.sqrt(norm) || 1
      for (let d = 0; d < dim; d++) moved[at + d] = (moved[at + d] as number) / n
    })
    const ranked = yield* index.search(moved, texts.length, 100)
    const listOf = new Map(texts.map((t, i) => [t, (ranked[i] ?? []).map(({ doc, score }): SearchHit => ({ tool: names[doc] as ToolName, score }))] as const))
    return new Map(requests.map((q) => {
      const lists = (partsOf.get(q) ?? [q]).map((p) => listOf.get(p) ?? [])
      const fused = lists.length === 1
        ? lists[0] ?? []
        : Hybrid.reciprocalRank(lists.map((hits, i) => ({ hits, weight: i === 0 ? sentence.wholeWeight : 1 })), 100, sentence.rrfK)
      return [q, fused] as const
    }))
  })
  const bm25List = (q: string) => bm25Of.get(q) ?? []
  yield* Console.log(`BM25F ${TuningData.show(score(bm25List))}`)
  for (const m of [3, 5, 10, 20]) {
    for (const beta of m === 3 ? [0, 0.5, 1, 2, 4] : [0.5, 1, 2, 4]) {
      const dense = yield* feedbackLists(m, beta)
      const denseList = (q: string) => dense.get(q) ?? []
      const fused = (k: number, w: number) => (q: string) => Hybrid.reciprocalRank([{ hits: bm25List(q), weight: 1 }, { hits: denseList(q), weight: w }], 10, k)
      const candidates = [10, 30, 60].flatMap((k) =>
        [0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1].map((w) => ({ scored: score(fused(k, w)), at: `RRF k ${k}, dense ${w}` }))
      )
      const best = candidates.reduce((a, b) => (b.scored.objective > a.scored.objective ? b : a))
      yield* Console.log(
        `m ${m}, β ${beta}: dense alone ${TuningData.show(score(denseList))}; hybrid at k 10 / 0.4 ${TuningData.show(score(fused(10, 0.4)))}; best ${TuningData.show(best.scored)} (${best.at})`
      )
    }
  }
}))

program.pipe(Cli.report("studies/dense-feedback"), NodeRuntime.runMain)
