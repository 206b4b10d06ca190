/**
 * `npm run retrieval-eval -- [--library <dir>] [--queries <file>]... [--retriever bm25|dense|hybrid] [--k 10] [--json]`
 * (`--bm25-plain` / `--bm25-config plain|api|default`, `--dense-config tuned|plain`, `--fusion tuned|seal-tools` for
 * the baselines and round 1; `--model` with `--vocab` or `--tokenizer` for another dense encoder):
 * NDCG@1/5, Recall@5/10 and latency per query file over the whole library (tools + the query files' api_lists).
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Context, Duration, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { dataPathIfPresent } from "../src/io/DataPath.ts"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { ConfigError, DecodeError } from "../src/domain/Errors.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import { summary } from "../src/toolenv/importers/ImportReport.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import { Retriever, type RetrieverError } from "../src/retrieval/Retriever.ts"
import { makeLibrary, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

/** The StableToolBench test files of the shared data folder, used when no query file is given. */
const defaultQueryFiles = Benchmark.testQueryFiles.map((parts) => dataPathIfPresent(...parts))

const library = RunConfig.flags.library.pipe(
  Flag.withDescription("folder of ToolBench-format tools (<Category>/<tool>.json); default: the data folder's ToolEnv2404"),
  Flag.optional
)
const queries = RunConfig.flags.queries.pipe(
  Flag.withDescription("a StableToolBench query file (repeatable; more files may follow as arguments); default: the four test_instruction files"),
  Flag.between(0, 64)
)
const moreQueries = Argument.File("query-files", { mustExist: true }).pipe(
  Argument.withDescription("more query files"),
  Argument.variadic()
)
const retriever = RunConfig.flags.retriever.pipe(
  Flag.withDescription("which Retriever layer to evaluate"),
  Flag.withDefault("bm25")
)
const k = RunConfig.intFlag("k", RunConfig.caps.k, "hits retrieved per query (at least 10, for Recall@10)").pipe(Flag.withDefault(10))
const json = Flag.Boolean("json").pipe(Flag.withDescription("end the output with one JSON line of the results"), Flag.withDefault(false))
const bm25Plain = Flag.Boolean("bm25-plain").pipe(
  Flag.withDescription("bm25 only: the plain baseline (one text of tool name, API name, descriptions, category; lowercase words; k1 1.2, b 0.75); same as --bm25-config plain"),
  Flag.withDefault(false)
)
const bm25Config = Flag.Literals("bm25-config", ["default", "api", "plain"]).pipe(
  Flag.withDescription("bm25 and hybrid: default = Bm25.defaultConfig (round 2: provider evidence, sentence fusion); api = Bm25.apiConfig (round 1); plain = the baseline (bm25 only)"),
  Flag.withDefault("default")
)
const denseConfig = Flag.Literals("dense-config", ["tuned", "plain"]).pipe(
  Flag.withDescription("dense and hybrid: tuned = RetrieverOnnx.tunedDense (provider evidence λ 2, sentence fusion); plain = neither (round 1)"),
  Flag.withDefault("tuned")
)
const fusion = Flag.Literals("fusion", ["tuned", "seal-tools"]).pipe(
  Flag.withDescription("hybrid: tuned = Hybrid.tunedFusion (RRF k 10, dense 0.4; round 3); seal-tools = Hybrid.sealToolsFusion (score fusion, dense 0.2; round 1)"),
  Flag.withDefault("tuned")
)

const model = Flag.File("model", { mustExist: true }).pipe(
  Flag.withDescription("dense/hybrid: an ONNX encoder instead of the shipped one; give --vocab (ParaAgent static encoder) or --tokenizer (sentence-transformers export)"),
  Flag.optional
)
const vocab = Flag.File("vocab", { mustExist: true }).pipe(Flag.withDescription("dense/hybrid: the static encoder's *.vocab.json"), Flag.optional)
const tokenizer = Flag.File("tokenizer", { mustExist: true }).pipe(
  Flag.withDescription("dense/hybrid: the tokenizer.json of a sentence-transformers ONNX export"),
  Flag.optional
)

/** The encoder the model flags name (the shipped one when none is given). */
const modelSource = (
  onnx: string | undefined,
  vocabFile: string | undefined,
  tokenizerFile: string | undefined
): Effect.Effect<RetrieverOnnx.ModelSource, ConfigError> => {
  if (onnx === undefined) {
    if (vocabFile === undefined && tokenizerFile === undefined) return Effect.succeed(RetrieverOnnx.shippedModel)
    return Effect.fail(new ConfigError({ field: "--model", value: "", message: "--vocab / --tokenizer need --model <file.onnx>" }))
  }
  if (vocabFile !== undefined && tokenizerFile === undefined) return Effect.succeed({ kind: "static", onnx, vocab: vocabFile })
  if (tokenizerFile !== undefined && vocabFile === undefined) return Effect.succeed({ kind: "transformer", onnx, tokenizer: tokenizerFile })
  return Effect.fail(new ConfigError({ field: "--model", value: onnx, message: "give exactly one of --vocab (static encoder) or --tokenizer (transformer)" }))
}

/** What the flags choose besides the retriever kind. */
interface Choice {
  readonly bm25: "default" | "api" | "plain"
  readonly dense: "tuned" | "plain"
  readonly fusion: "tuned" | "seal-tools"
}

/** The Retriever layer the flags name. Dense and hybrid are the dense retriever's layers (layers/onnx/RetrieverOnnx.ts). */
const retrieverLayer = (
  kind: "bm25" | "dense" | "hybrid",
  choice: Choice,
  source: RetrieverOnnx.ModelSource
): Effect.Effect<Layer.Layer<Retriever, RetrieverError, ToolLibrary>, ConfigError> => {
  if (choice.bm25 === "plain" && kind !== "bm25") {
    return Effect.fail(new ConfigError({ field: "--bm25-plain", value: kind, message: "--bm25-plain / --bm25-config plain applies to --retriever bm25 only" }))
  }
  const bm25 = choice.bm25 === "plain"
    ? Retriever.layerBm25With(Bm25.plainConfig, "bm25-plain")
    : choice.bm25 === "api"
    ? Retriever.layerBm25With(Bm25.apiConfig, "bm25-api")
    : Retriever.layerBm25
  const dense = RetrieverOnnx.layer({ model: source, ...(choice.dense === "tuned" ? RetrieverOnnx.tunedDense : {}) })
  switch (kind) {
    case "bm25":
      return Effect.succeed(bm25)
    case "dense":
      return Effect.succeed(dense)
    case "hybrid":
      return Effect.succeed(Hybrid.layer(bm25, dense, choice.fusion === "tuned" ? Hybrid.tunedFusion : Hybrid.sealToolsFusion))
  }
}

const command = Command.make(
  "retrieval-eval",
  { library, queries, moreQueries, retriever, k, json, bm25Plain, bm25Config, denseConfig, fusion, model, vocab, tokenizer },
  Effect.fn(function*(flags) {
    const libraryDir = Option.getOrUndefined(flags.library) ?? dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
    if (libraryDir === undefined) {
      return yield* new ConfigError({ field: "--library", value: "", message: "no --library given and no ToolEnv2404 in the data folder (PARAAGENT_DATA)" })
    }
    const given = [...flags.queries, ...flags.moreQueries]
    const files = given.length > 0 ? given : defaultQueryFiles.filter((f): f is string => f !== undefined)
    if (files.length === 0) {
      return yield* new ConfigError({ field: "--queries", value: "", message: "no --queries given and no StableToolBench test files in the data folder" })
    }
    const source = yield* modelSource(Option.getOrUndefined(flags.model), Option.getOrUndefined(flags.vocab), Option.getOrUndefined(flags.tokenizer))
    if (flags.bm25Plain && flags.bm25Config !== "default" && flags.bm25Config !== "plain") {
      return yield* new ConfigError({ field: "--bm25-plain", value: flags.bm25Config, message: `--bm25-plain contradicts --bm25-config ${flags.bm25Config}` })
    }
    const choice: Choice = { bm25: flags.bm25Plain ? "plain" : flags.bm25Config, dense: flags.denseConfig, fusion: flags.fusion }
    const layer = yield* retrieverLayer(flags.retriever, choice, source)

    const setup = yield* Benchmark.load(libraryDir, files)
    yield* Console.log(summary(setup.libraryReport, 3))
    for (const set of setup.sets) yield* Console.log(summary(set.report, 3))
    const empty = setup.sets.find((set) => set.queries.length === 0)
    if (empty !== undefined) {
      // metrics over no query are 0/0: refuse instead of printing NaN
      return yield* new DecodeError({ source: empty.path, message: `${empty.path}: no usable query (see the import report above)` })
    }
    yield* Console.log(
      `library: ${setup.tools.length} APIs (${setup.tools.length - setup.added} from ${libraryDir}, ${setup.added} added from the query files' api_lists; ${setup.matchedApis} api_list entries were already there); loaded in ${(setup.loadMs / 1000).toFixed(1)} s`
    )

    const toolLibrary = makeLibrary(`toolbench:${libraryDir}+queries`, setup.tools, DepGraph.make([]))
    const results = yield* Effect.scoped(
      Effect.gen(function*() {
        const [buildTime, context] = yield* Effect.timed(Layer.build(layer.pipe(Layer.provide(Layer.succeed(ToolLibrary, toolLibrary)))))
        const service = Context.get(context, Retriever)
        const perFile = yield* Effect.forEach(setup.sets, (set) =>
          Benchmark.evaluate(set, (query) =>
            service.search([query], flags.k).pipe(Effect.map((lists) => (lists[0] ?? []).map((hit) => hit.tool)))).pipe(
              Effect.map((result) => [set.name, result] as const)
            ))
        return { name: service.name, buildMs: Duration.toMillis(buildTime), perFile }
      })
    )

    yield* Console.log(`\nretriever ${results.name}: index built in ${results.buildMs.toFixed(0)} ms; k = ${flags.k}; metrics in percent`)
    yield* Console.log(Benchmark.table(results.perFile))
    for (const [name, result] of results.perFile) {
      if (result.unmatched.length === 0) continue
      yield* Console.log(`\n${name}: ${result.unmatched.length} relevant pair(s) match no library entry (counted as relevant, never retrieved):`)
      for (const u of result.unmatched.slice(0, 20)) yield* Console.log(`  query ${u.query}: [${u.tool}, ${u.api}]`)
    }
    if (flags.json) yield* Console.log(Benchmark.jsonReport(results.perFile, results.buildMs, { retriever: results.name, k: flags.k }))
  })
).pipe(Command.withDescription("Retrieval benchmark on StableToolBench queries over a ToolBench-format library"))

command.pipe(
  Otlp.traced("retrieval-eval"),
  Cli.run("retrieval-eval", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
