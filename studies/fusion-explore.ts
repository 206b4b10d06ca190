/**
 * `npx tsx studies/fusion-explore.ts [--onnx … --vocab …]`: fusion variants of BM25F + the static encoder on the BM25
 * tuning data only (the tuning part of G1_category and the multi-intent requests made from it), never the test files.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect } from "effect"
import { Flag } from "effect/cli"
import * as BenchFlags from "../bench/BenchFlags.ts"
import * as TuningData from "./TuningData.ts"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import { groupKey } from "../src/domain/Tool.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"

const { onnx, vocab } = await BenchFlags.parse("studies/fusion-explore", "Fusion variants of BM25F + the static encoder on the BM25 tuning data only", {
  onnx: Flag.File("onnx", { mustExist: true }).pipe(Flag.withDescription("the static encoder's ONNX file"), Flag.withDefault(RetrieverOnnx.shippedModel.onnx)),
  vocab: Flag.File("vocab", { mustExist: true }).pipe(Flag.withDescription("the static encoder's *.vocab.json"), Flag.withDefault(RetrieverOnnx.shippedModel.vocab))
})

const program = Effect.gen(function*() {
  const { tools, requests, listsOf, score } = yield* TuningData.load
  const parts = [...new Set(requests.flatMap((q) => Bm25.clauses(q)))]
  const texts = [...new Set([...requests, ...parts])]
  const bm25 = yield* listsOf(Retriever.layerBm25, texts)
  const dense = yield* listsOf(RetrieverOnnx.layer({ model: { kind: "static", onnx, vocab }, cacheDir: ".cache/dense", ...RetrieverOnnx.tunedDense }), texts)
  const show = (label: string, r: TuningData.Scored) => Console.log(`${label}: ${TuningData.show(r)}`)
  yield* show("bm25", score((q) => bm25.get(q) ?? []))
  yield* show("dense", score((q) => dense.get(q) ?? []))
  const rrf = (k: number, w: number) => (q: string) =>
    Hybrid.reciprocalRank([{ hits: bm25.get(q) ?? [], weight: 1 }, { hits: dense.get(q) ?? [], weight: w }], 100, k)
  yield* show("rrf k10 w0.4 (shipped)", score(rrf(10, 0.4)))
  // convex combinations of normalised scores
  type Norm = (hits: ReadonlyArray<SearchHit>) => Array<number>
  const norms: Record<string, Norm> = {
    minmax: Hybrid.minMax,
    max: (hits) => { const m = hits[0]?.score ?? 1; return hits.map((h) => (m > 0 ? h.score / m : 0)) },
    z: (hits) => {
      const n = hits.length
      if (n === 0) return []
      const mean = hits.reduce((s, h) => s + h.score, 0) / n
      const sd = Math.sqrt(hits.reduce((s, h) => s + (h.score - mean) ** 2, 0) / n) || 1
      return hits.map((h) => (h.score - mean) / sd)
    }
  }
  const convex = (norm: Norm, alpha: number, floor: "zero" | "min") => (q: string) => {
    const a = bm25.get(q) ?? []
    const b = dense.get(q) ?? []
    const na = norm(a)
    const nb = norm(b)
    const fa = floor === "zero" ? 0 : Math.min(...na, 0)
    const fb = floor === "zero" ? 0 : Math.min(...nb, 0)
    const s = new Map<string, [number, number]>()
    a.forEach((h, i) => s.set(h.tool, [na[i] ?? 0, fb]))
    b.forEach((h, i) => { const cur = s.get(h.tool); s.set(h.tool, [cur?.[0] ?? fa, nb[i] ?? 0]) })
    return [...s.entries()].map(([tool, [x, y]]) => ({ tool: tool as SearchHit["tool"], score: (1 - alpha) * x + alpha * y }))
      .sort((p, r) => r.score - p.score)
  }
  const best: Array<[string, number]> = []
  for (const [name, norm] of Object.entries(norms)) {
    for (const floor of ["zero", "min"] as const) {
      for (const alpha of [0.1, 0.2, 0.3, 0.4, 0.5]) {
        const r = score(convex(norm, alpha, floor))
        best.push([`convex ${name} floor ${floor} α ${alpha}`, r.objective])
        yield* show(`convex ${name} floor ${floor} α ${alpha}`, r)
      }
    }
  }
  // hybrid per sentence: fuse BM25 and dense per part, then RRF over the whole request and its sentences
  const perClause = (inner: (q: string) => ReadonlyArray<SearchHit>, wholeWeight: number, k: number) => (q: string) => {
    const ps = Bm25.clauses(q)
    if (ps.length < 2) return inner(q)
    return Hybrid.reciprocalRank([{ hits: inner(q).slice(0, 50), weight: wholeWeight }, ...ps.map((p) => ({ hits: inner(p).slice(0, 50), weight: 1 }))], 100, k)
  }
  for (const w of [1, 2, 4]) {
    for (const k of [1, 5, 10]) {
      for (const [iname, inner] of [["rrf10/0.4", rrf(10, 0.4)], ["rrf10/0.2", rrf(10, 0.2)], ["rrf10/0.7", rrf(10, 0.7)]] as const) {
        const r = score(perClause(inner, w, k))
        best.push([`per-sentence ${iname} whole ${w} k ${k}`, r.objective])
        yield* show(`per-sentence ${iname} whole ${w} k ${k}`, r)
      }
    }
  }
  // provider diversity (round 5): in the shipped fusion's top `window`, at most `cap` APIs of one provider ahead of
  // every other candidate (the rest keep their order behind), for requests of at least `sentences` sentences
  const providerOf = new Map(tools.map((t) => [t.name as string, groupKey(t)]))
  const diversified = (cap: number, window: number, sentences: number) => (q: string) => {
    const hits = rrf(10, 0.4)(q)
    if (Bm25.clauses(q).length < sentences) return hits
    const ahead: Array<SearchHit> = []
    const behind: Array<SearchHit> = []
    const taken = new Map<string, number>()
    for (const hit of hits.slice(0, window)) {
      const provider = providerOf.get(hit.tool) ?? hit.tool
      const n = taken.get(provider) ?? 0
      if (n < cap) {
        ahead.push(hit)
        taken.set(provider, n + 1)
      } else behind.push(hit)
    }
    return [...ahead, ...behind, ...hits.slice(window)]
  }
  for (const sentences of [1, 3]) {
    for (const cap of [1, 2, 3]) {
      for (const window of [10, 20, 50]) {
        const label = `provider cap ${cap} in top ${window}, requests of ≥ ${sentences} sentences`
        const r = score(diversified(cap, window, sentences))
        best.push([label, r.objective])
        yield* show(label, r)
      }
    }
  }
  best.sort((p, r) => r[1] - p[1])
  yield* Console.log(`top: ${best.slice(0, 5).map(([n, o]) => `${n} ${o.toFixed(2)}`).join("; ")}`)
})

NodeRuntime.runMain(program)
