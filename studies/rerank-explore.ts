/**
 * `npx tsx studies/rerank-explore.ts`: a linear reranker over the union of the BM25F and dense top-30 (rank, score,
 * provider and per-sentence features), its weights fitted by coordinate ascent on the BM25 tuning data only.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Context, Effect, Layer } from "effect"
import { Flag } from "effect/cli"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import { dataPath } from "../src/io/DataPath.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import * as Text from "../src/retrieval/Tokenize.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import { makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import { unitHash } from "../src/math/Random.ts"
import * as BenchFlags from "../bench/BenchFlags.ts"

const { onnx, vocab } = await BenchFlags.parse("studies/rerank-explore", "A linear reranker over BM25F + dense candidates, fitted on the BM25 tuning data only", {
  onnx: Flag.File("onnx", { mustExist: true }).pipe(Flag.withDescription("the static encoder's ONNX file"), Flag.withDefault(RetrieverOnnx.shippedModel.onnx)),
  vocab: Flag.File("vocab", { mustExist: true }).pipe(Flag.withDescription("the static encoder's *.vocab.json"), Flag.withDefault(RetrieverOnnx.shippedModel.vocab))
})

const featureNames = ["bm25 rrf", "dense rrf", "bm25 score/max", "dense minmax", "provider share", "best sentence rrf"] as const

const program = Effect.gen(function*() {
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), [
    dataPath("stabletoolbench", "solvable_queries", "test_instruction", "G1_category.json")
  ])
  const all = setup.sets[0] as Benchmark.QuerySet
  const tuning = Benchmark.subset(all, "G1_category[tune]", (q) => Benchmark.isTuningQuery(q.id))
  const tokens = Text.makeTokenizer(Bm25.defaultConfig.text).tokens
  const sets = Benchmark.tuningSets(tuning, setup.tools, tokens, Bm25.clauses)
  // a 2-fold check inside the tuning queries: fit on one half's sets, score on the other's
  const half = (h: number) => Benchmark.tuningSets(
    Benchmark.subset(tuning, `tune half ${h}`, (q) => (unitHash(11, "rerank-fold", q.id) < 0.5) === (h === 0)), setup.tools, tokens, Bm25.clauses)
  const folds = [half(0), half(1)]
  const wholes = [...new Set([...sets, ...folds.flat()].flatMap((set) => set.queries.map((q) => q.query)))]
  const parts = [...new Set(wholes.flatMap((q) => Bm25.clauses(q)))]
  const texts = [...new Set([...wholes, ...parts])]
  const providerOf = new Map(setup.tools.map((t) => [t.name as string, Document.groupKey(t)] as const))
  const library = makeLibrary("toolenv2404+G1_category", setup.tools, DepGraph.make([]))
  const libraryLayer = Layer.succeed(ToolLibrary, library)
  const listsOf = (layer: Layer.Layer<Retriever, unknown, ToolLibrary>) =>
    Effect.scoped(Effect.gen(function*() {
      const retriever = Context.get(yield* Layer.build(layer.pipe(Layer.provide(libraryLayer))), Retriever)
      const lists = yield* retriever.search(texts, 100)
      return new Map(texts.map((text, i) => [text, lists[i] ?? []] as const))
    }))
  const bm25 = yield* listsOf(Retriever.layerBm25)
  const dense = yield* listsOf(RetrieverOnnx.layer({ model: { kind: "static", onnx, vocab }, cacheDir: ".cache/dense", ...RetrieverOnnx.tunedDense }))
  const rrf = (q: string) => Hybrid.reciprocalRank([{ hits: bm25.get(q) ?? [], weight: 1 }, { hits: dense.get(q) ?? [], weight: 0.4 }], 100, 10)
  // features of each query's candidates, computed once
  const features = new Map<string, { readonly tools: ReadonlyArray<string>; readonly x: ReadonlyArray<Float64Array> }>()
  for (const q of wholes) {
    const a = (bm25.get(q) ?? []).slice(0, 30)
    const b = (dense.get(q) ?? []).slice(0, 30)
    const rankA = new Map(a.map((h, i) => [h.tool as string, i] as const))
    const rankB = new Map(b.map((h, i) => [h.tool as string, i] as const))
    const maxA = a[0]?.score ?? 1
    const nb = Hybrid.minMax(b)
    const fused = rrf(q).slice(0, 10)
    const providerCount = new Map<string, number>()
    for (const h of fused) { const p = providerOf.get(h.tool) ?? ""; providerCount.set(p, (providerCount.get(p) ?? 0) + 1) }
    const ps = Bm25.clauses(q)
    const sentenceRanks = ps.length < 2 ? [] : ps.map((p) => new Map(rrf(p).slice(0, 30).map((h, i) => [h.tool as string, i] as const)))
    const tools = [...new Set([...a.map((h) => h.tool as string), ...b.map((h) => h.tool as string)])]
    const x = tools.map((t) => {
      const ra = rankA.get(t)
      const rb = rankB.get(t)
      let best = 0
      for (const m of sentenceRanks) { const r = m.get(t); if (r !== undefined) best = Math.max(best, 1 / (10 + r + 1)) }
      return Float64Array.from([
        ra === undefined ? 0 : 1 / (10 + ra + 1),
        rb === undefined ? 0 : 1 / (10 + rb + 1),
        ra === undefined ? 0 : (a[ra]?.score ?? 0) / maxA,
        rb === undefined ? 0 : (nb[rb] ?? 0),
        ((providerCount.get(providerOf.get(t) ?? "") ?? 0) - (fused.some((h) => h.tool === t) ? 1 : 0)) / 10,
        best
      ])
    })
    features.set(q, { tools, x })
  }
  const rankWith = (w: ReadonlyArray<number>) => (q: string): ReadonlyArray<SearchHit> => {
    const f = features.get(q)
    if (f === undefined) return []
    return f.tools.map((t, i) => {
      const xi = f.x[i] as Float64Array
      let s = 0
      for (let j = 0; j < w.length; j++) s += (w[j] ?? 0) * (xi[j] ?? 0)
      return { tool: t as SearchHit["tool"], score: s }
    }).sort((p, r) => r.score - p.score)
  }
  const objective = (on: ReadonlyArray<Benchmark.QuerySet>, w: ReadonlyArray<number>) => {
    const perSet = on.map((set) => Benchmark.objectiveOf(Benchmark.evaluateSync(set, (q) => rankWith(w)(q).slice(0, 10).map((h) => h.tool))))
    return { objective: Benchmark.combinedObjective(perSet), perSet }
  }
  const grid = [0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.4, 0.7, 1, 1.5]
  const fit = (on: ReadonlyArray<Benchmark.QuerySet>) => {
    // RRF k 10, dense 0.4 (the shipped fusion) is the start: w = [1, 0.4, 0, 0, 0, 0]
    const w = [1, 0.4, 0, 0, 0, 0]
    let best = objective(on, w).objective
    for (let pass = 0; pass < 3; pass++) {
      let changed = false
      for (let j = 1; j < w.length; j++) {
        for (const v of grid) {
          const trial = w.map((x, i) => (i === j ? v : x))
          const o = objective(on, trial).objective
          if (o > best + 0.1) { best = o; w[j] = v; changed = true }
        }
      }
      if (!changed) break
    }
    return { w, best }
  }
  const show = (r: { readonly objective: number; readonly perSet: ReadonlyArray<number> }) =>
    `${r.objective.toFixed(2)} (${r.perSet.map((x) => x.toFixed(1)).join(" · ")})`
  yield* Console.log(`features: ${featureNames.join(", ")}`)
  yield* Console.log(`shipped fusion on the tuning data: ${show(objective(sets, [1, 0.4, 0, 0, 0, 0]))}`)
  for (const [h, other] of [[0, 1], [1, 0]] as const) {
    const f = fit(folds[h] as ReadonlyArray<Benchmark.QuerySet>)
    yield* Console.log(
      `fold: fit on half ${h} → w ${f.w.join(", ")} (${f.best.toFixed(2)}); on half ${other}: shipped ${show(objective(folds[other] as ReadonlyArray<Benchmark.QuerySet>, [1, 0.4, 0, 0, 0, 0]))}, ` +
        `fitted ${show(objective(folds[other] as ReadonlyArray<Benchmark.QuerySet>, f.w))}`
    )
  }
  const f = fit(sets)
  yield* Console.log(`fit on all the tuning data → w ${f.w.join(", ")}: ${show(objective(sets, f.w))}`)
})

NodeRuntime.runMain(program)
