/**
 * `npx tsx programs/tune-fusion.ts [--on seal-tools|split] [--onnx models/paraagent-static.onnx --vocab models/paraagent-static.vocab.json]`:
 * tunes the Hybrid fusion (method, dense weight, RRF k). `seal-tools` (default): Seal-Tools' dev queries over
 * Seal-Tools' own 4,076-tool library — data disjoint from the StableToolBench queries the retrieval benchmark reports.
 * `split`: the tuning part of G1_category and the multi-intent sets made from it (`Benchmark.tuningSets`, the BM25
 * tuning data), over ToolEnv2404; also tunes the dense retriever's provider evidence and sentence fusion.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Context, Effect, Layer, Result, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import * as fs from "node:fs/promises"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import { dataPath } from "../src/io/DataPath.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { toolId, toolName } from "../src/domain/Ids.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import * as Metrics from "../src/retrieval/Metrics.ts"
import * as Text from "../src/retrieval/Tokenize.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import { makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Files from "../src/io/Files.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

/** A Seal-Tools tool record (`tool.jsonl`). */
const SealTool = Schema.Struct({
  api_name: Schema.String,
  api_description: Schema.String,
  field: Schema.String,
  parameters: Schema.optionalKey(Schema.Record(Schema.String, Schema.Struct({ description: Schema.optionalKey(Schema.String) })))
})
/** A Seal-Tools query record (`dev.jsonl`). */
const SealQuery = Schema.Struct({
  id: Schema.String,
  query: Schema.String,
  calling: Schema.Array(Schema.Struct({ api: Schema.String }))
})

class TuneError extends Schema.TaggedError<TuneError>()("TuneError", { file: Schema.String, message: Schema.String }) {}

/** What the flags choose: the dense model files and the dense cache folder. */
interface Choice {
  readonly onnx: string
  readonly vocab: string
  readonly cache: string
}

const readLines = <A>(file: string, schema: Schema.Codec<A>) =>
  Effect.gen(function*() {
    const text = yield* Effect.tryPromise({ try: () => Files.readUtf8(file), catch: (e) => new TuneError({ file, message: String(e) }) })
    const decode = Schema.decodeUnknownResult(Schema.fromJsonString(schema))
    const out: Array<A> = []
    for (const [i, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue
      const r = decode(line)
      if (Result.isFailure(r)) return yield* new TuneError({ file: `${file}:${i + 1}`, message: r.failure.message })
      out.push(r.success)
    }
    return out
  })

const toSpec = (t: typeof SealTool.Type): ToolSpec => ({
  id: toolId(`seal-tools:${t.api_name}`),
  name: toolName(t.api_name),
  group: t.api_name,
  apiName: t.api_name,
  category: t.field,
  description: t.api_description,
  parameters: {
    type: "object",
    properties: Object.fromEntries(Object.entries(t.parameters ?? {}).map(([k, v]) => [k, v.description === undefined ? {} : { description: v.description }])),
    required: []
  },
  source: { kind: "user", ref: `seal-tools/tool.jsonl#${t.api_name}` }
})

const staticModel = (choice: Choice): RetrieverOnnx.ModelSource => ({ kind: "static", onnx: choice.onnx, vocab: choice.vocab })

/** The fusion grid: RRF with k ∈ {10, 30, 60} or score fusion, dense weight 0.1 … 3. */
const fusionGrid: ReadonlyArray<Hybrid.FusionConfig> = (["rrf", "score"] as const).flatMap((method) =>
  (method === "rrf" ? [10, 30, 60] : [60]).flatMap((rrfK) =>
    [0.1, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 1.5, 2, 3].map((w): Hybrid.FusionConfig => ({ method, rrfK, weights: [1, w], depth: 100 }))
  )
)

const onSealTools = (choice: Choice) => Effect.gen(function*() {
  const dir = dataPath("seal-tools", "Seal-Tools_Dataset")
  const tools = (yield* readLines(`${dir}/tool.jsonl`, SealTool)).map(toSpec)
  const queries = yield* readLines(`${dir}/dev.jsonl`, SealQuery)
  const library = makeLibrary("seal-tools", tools, DepGraph.make([]))
  const model = staticModel(choice)
  yield* Console.log(`Seal-Tools: ${tools.length} tools, ${queries.length} dev queries; dense model ${model.onnx}`)
  const depth = 100
  const rankings = yield* Effect.scoped(Effect.gen(function*() {
    const libraryLayer = Layer.succeed(ToolLibrary, library)
    const bm25 = Context.get(yield* Layer.build(Retriever.layerBm25.pipe(Layer.provide(libraryLayer))), Retriever)
    const dense = Context.get(yield* Layer.build(RetrieverOnnx.layer({ model }).pipe(Layer.provide(libraryLayer))), Retriever)
    const texts = queries.map((q) => q.query)
    return { bm25: yield* bm25.search(texts, depth), dense: yield* dense.search(texts, depth) }
  }))
  const relevance = queries.map((q): Metrics.MatchedRelevance => ({
    relevant: [...new Set(q.calling.map((c) => c.api))].map((api) => new Set([api])),
    unmatched: []
  }))
  const ndcg5 = (rank: (qi: number) => ReadonlyArray<SearchHit>) =>
    100 * queries.reduce((sum, _, qi) => sum + Metrics.scoreQuery(rank(qi).map((h) => h.tool), relevance[qi] as Metrics.MatchedRelevance).ndcg5, 0) /
    queries.length
  const lists = (qi: number) => [rankings.bm25[qi] ?? [], rankings.dense[qi] ?? []] as const
  yield* Console.log(`BM25 alone: NDCG@5 ${ndcg5((qi) => lists(qi)[0]).toFixed(2)}; dense alone: ${ndcg5((qi) => lists(qi)[1]).toFixed(2)}`)

  const results: Array<{ readonly config: Hybrid.FusionConfig; readonly score: number }> = []
  for (const config of fusionGrid) {
    const w = config.weights[1] ?? 1
    const score = ndcg5((qi) => {
      const [a, b] = lists(qi)
      return Hybrid.fuse(config, [{ hits: a, weight: 1 }, { hits: b, weight: w }], 10)
    })
    results.push({ config, score })
    yield* Console.log(`${config.method.padEnd(5)} k=${String(config.rrfK).padStart(2)} dense weight ${w.toFixed(2)}: NDCG@5 ${score.toFixed(2)}`)
  }
  const best = results.reduce((a, b) => (b.score > a.score ? b : a))
  yield* Console.log(`best: ${JSON.stringify(best.config)} NDCG@5 ${best.score.toFixed(2)}`)
})

const onTuningSplit = (choice: Choice) => Effect.gen(function*() {
  const setup = yield* Benchmark.load(dataPath("toolenv2404", "toolenv2404_filtered"), [
    dataPath("stabletoolbench", "solvable_queries", "test_instruction", "G1_category.json")
  ])
  const all = setup.sets[0] as Benchmark.QuerySet
  const tuning = Benchmark.subset(all, "G1_category[tune]", (q) => Benchmark.isTuningQuery(q.id))
  const sets = Benchmark.tuningSets(tuning, setup.tools, Text.makeTokenizer(Bm25.defaultConfig.text).tokens, Bm25.clauses)
  const texts = [...new Set(sets.flatMap((set) => set.queries.map((q) => q.query)))]
  const model = staticModel(choice)
  yield* Console.log(`tuning sets: ${sets.map((set) => `${set.name} (${set.queries.length})`).join(", ")}; ${setup.tools.length} APIs; dense model ${model.onnx}`)
  const library = makeLibrary("toolenv2404+G1_category", setup.tools, DepGraph.make([]))
  const libraryLayer = Layer.succeed(ToolLibrary, library)
  const depth = 100
  const listsOf = (layer: Layer.Layer<Retriever, unknown, ToolLibrary>) =>
    Effect.scoped(Effect.gen(function*() {
      const retriever = Context.get(yield* Layer.build(layer.pipe(Layer.provide(libraryLayer))), Retriever)
      const lists = yield* retriever.search(texts, depth)
      return new Map(texts.map((text, i) => [text, lists[i] ?? []] as const))
    }))
  const bm25 = yield* listsOf(Retriever.layerBm25)
  const score = (rank: (query: string) => ReadonlyArray<SearchHit>): { readonly objective: number; readonly perSet: ReadonlyArray<number> } => {
    const perSet = sets.map((set) => Benchmark.objectiveOf(Benchmark.evaluateSync(set, (q) => rank(q).slice(0, 10).map((h) => h.tool))))
    return { objective: Benchmark.combinedObjective(perSet), perSet }
  }
  const show = (r: { readonly objective: number; readonly perSet: ReadonlyArray<number> }) =>
    `objective ${r.objective.toFixed(2)} (${r.perSet.map((x) => x.toFixed(1)).join(" · ")})`
  yield* Console.log(`BM25 alone (Retriever.layerBm25): ${show(score((q) => bm25.get(q) ?? []))}`)
  let best: { readonly label: string; readonly objective: number } | undefined
  const cacheDir = choice.cache
  for (const group of [0, 0.5, 1, 2]) {
    for (const clauses of [false, true]) {
      const options: RetrieverOnnx.DenseOptions = {
        model,
        cacheDir,
        ...(group === 0 ? {} : { group: { weight: group } }),
        ...(clauses ? { clauses: { wholeWeight: 1, rrfK: 5 } } : {})
      }
      const dense = yield* listsOf(RetrieverOnnx.layer(options))
      const label = `dense group λ ${group}, sentence fusion ${clauses ? "on (whole 1, rrf 5)" : "off"}`
      yield* Console.log(`${label}: alone ${show(score((q) => dense.get(q) ?? []))}`)
      for (const config of fusionGrid) {
        const r = score((q) => Hybrid.fuse(config, [{ hits: bm25.get(q) ?? [], weight: 1 }, { hits: dense.get(q) ?? [], weight: config.weights[1] ?? 1 }], 10))
        const name = `${label}; ${config.method}${config.method === "rrf" ? ` k=${config.rrfK}` : ""} dense weight ${config.weights[1]}`
        yield* Console.log(`  ${config.method.padEnd(5)} k=${String(config.rrfK).padStart(2)} dense weight ${(config.weights[1] ?? 0).toFixed(2)}: ${show(r)}`)
        if (best === undefined || r.objective > best.objective) best = { label: name, objective: r.objective }
      }
    }
  }
  if (best !== undefined) yield* Console.log(`best: ${best.label}, objective ${best.objective.toFixed(2)}`)
})

const command = Command.make("tune-fusion", {
  on: Flag.Literals("on", ["seal-tools", "split"]).pipe(
    Flag.withDescription("seal-tools: Seal-Tools dev queries over its own library; split: the tuning part of G1_category over ToolEnv2404"),
    Flag.withDefault("seal-tools")
  ),
  onnx: Flag.File("onnx", { mustExist: true }).pipe(Flag.withDescription("the static encoder's ONNX file"), Flag.withDefault(RetrieverOnnx.shippedModel.onnx)),
  vocab: Flag.File("vocab", { mustExist: true }).pipe(Flag.withDescription("the static encoder's *.vocab.json"), Flag.withDefault(RetrieverOnnx.shippedModel.vocab)),
  cache: Flag.String("cache").pipe(Flag.withDescription("split: the dense document cache folder"), Flag.withDefault(".cache/dense"))
}, (flags) => (flags.on === "split" ? onTuningSplit(flags) : onSealTools(flags)))
  .pipe(Command.withDescription("Tune the hybrid fusion (method, dense weight, RRF k) and the dense retriever's evidence settings"))

command.pipe(
  Otlp.traced("tune-fusion"),
  Cli.run("tune-fusion", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
