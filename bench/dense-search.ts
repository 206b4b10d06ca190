/**
 * Exact top-k over 46,800 unit vectors, side by side: a plain JavaScript loop against the ONNX Gemm + TopK graph
 * (onnxruntime-node, one thread), per query, for several widths; then the dense layer's start-up over the generated
 * 50,011-tool library without and with the document cache. Run: `npx tsx bench/dense-search.ts [--rows 46800]`.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import { rng } from "../src/math/Random.ts"
import * as Stats from "../src/math/Stats.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { Flag } from "effect/cli"

const { rows, queries } = await BenchFlags.parse("dense-search", "Exact top-k: plain JS against ONNX Gemm + TopK; dense start-up with and without the cache", {
  rows: RunConfig.intFlag("rows", { minimum: 10, maximum: 1_000_000 }, "unit vectors searched").pipe(Flag.withDefault(46_800)),
  queries: RunConfig.intFlag("queries", { minimum: 1, maximum: 100_000 }, "queries timed").pipe(Flag.withDefault(200))
})
const k = 10

const program = Effect.scoped(Effect.gen(function*() {
  yield* Console.log(`exact top-${k} over ${rows} rows, ${queries} queries (the machine is shared: absolute times vary)`)
  yield* Console.log("dim   JS p50 ms   JS p95 ms   ONNX p50 ms   ONNX p95 ms   JS/ONNX (p50)   same results")
  for (const dim of [64, 128, 256]) {
    const random = rng(dim)
    const matrix = RetrieverOnnx.normalizeRows(Float32Array.from({ length: rows * dim }, () => random.normal()), dim)
    const qs = RetrieverOnnx.normalizeRows(Float32Array.from({ length: queries * dim }, () => random.normal()), dim)
    const js = yield* RetrieverOnnx.vectorIndex(matrix, dim, "js")
    const onnx = yield* RetrieverOnnx.vectorIndex(matrix, dim, "onnx", 1)
    const time = (index: RetrieverOnnx.VectorIndex) =>
      Effect.gen(function*() {
        const ms: Array<number> = []
        const tops: Array<ReadonlyArray<number>> = []
        for (let q = 0; q < queries; q++) {
          const start = performance.now()
          const [hits] = yield* index.search(qs.subarray(q * dim, (q + 1) * dim), 1, k)
          ms.push(performance.now() - start)
          tops.push((hits ?? []).map((h) => h.doc))
        }
        return { ms, tops }
      })
    yield* time(onnx) // warm-up
    const a = yield* time(js)
    const b = yield* time(onnx)
    const same = a.tops.every((t, i) => t.join() === (b.tops[i] ?? []).join())
    yield* Console.log(
      `${String(dim).padEnd(5)} ${Stats.p50(a.ms).toFixed(3).padStart(9)}   ${Stats.p95(a.ms).toFixed(3).padStart(9)}   ` +
        `${Stats.p50(b.ms).toFixed(3).padStart(11)}   ${Stats.p95(b.ms).toFixed(3).padStart(11)}   ` +
        `${(Stats.p50(a.ms) / Stats.p50(b.ms)).toFixed(1).padStart(13)}×   ${same}`
    )
  }

  const library = World.make({}).library
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-dense-cache-"))
  const startUp = (options: Omit<RetrieverOnnx.DenseOptions, "model">) =>
    Effect.scoped(Effect.gen(function*() {
      const start = performance.now()
      yield* Layer.build(RetrieverOnnx.layer({ model: RetrieverOnnx.shippedModel, ...options }).pipe(
        Layer.provide(Layer.succeed(ToolLibrary, library))
      ))
      return performance.now() - start
    }))
  const cold = yield* startUp({})
  const miss = yield* startUp({ cacheDir })
  const hit = yield* startUp({ cacheDir })
  fs.rmSync(cacheDir, { recursive: true, force: true })
  yield* Console.log(
    `\ndense layer start-up over ${library.tools.length} generated tools (shipped encoder): no cache ${(cold / 1000).toFixed(2)} s, ` +
      `cache miss (embeds and writes) ${(miss / 1000).toFixed(2)} s, cache hit ${(hit / 1000).toFixed(2)} s (${(cold / hit).toFixed(1)}× faster)`
  )
}))

NodeRuntime.runMain(program)
