/**
 * `npm run stabletoolbench -- --library <dir> --queries <file>... --policy <…> --judge rule|llm [--runs 3] [--json]`:
 * every StableToolBench query as a ToolEnv task over the whole library (plus the query files' api_lists), answered by
 * the three-layer simulator; per file Path, rounds, calls, searches and (LLM judge only) the solvable pass rate.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as App from "../layers/App.ts"
import * as JudgeLlm from "../layers/model/JudgeLlm.ts"
import * as OpenAiClient from "../layers/model/OpenAiClient.ts"
import * as SimulatorLlm from "../layers/model/SimulatorLlm.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import { Paradigm } from "../src/domain/Trajectory.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Metrics from "../src/benchmarks/stabletoolbench/StableToolBenchMetrics.ts"
import * as Job from "../src/benchmarks/stabletoolbench/StableToolBenchJob.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import { dataPathIfPresent } from "../src/io/DataPath.ts"
import * as RunFolder from "../src/io/RunFolder.ts"
import * as Benchmark from "../src/retrieval/Benchmark.ts"
import * as Rollout from "../src/runtime/Rollout.ts"
import { summary } from "../src/toolenv/importers/ImportReport.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Files from "../src/io/Files.ts"
import * as Provenance from "../src/io/Provenance.ts"

const { flags } = RunConfig

/** The StableToolBench test files of the shared data folder, used when no query file is given. */
const defaultQueryFiles = Benchmark.testQueryFiles.map((parts) => dataPathIfPresent(...parts))

const command = Command.make(
  "stabletoolbench",
  {
    library: flags.library.pipe(
      Flag.withDescription("folder of ToolBench-format tools (<Category>/<tool>.json); default: the data folder's ToolEnv2404"),
      Flag.optional
    ),
    queries: flags.queries.pipe(
      Flag.withDescription("a StableToolBench query file (repeatable; more files may follow as arguments); default: the four test_instruction files"),
      Flag.between(0, 64)
    ),
    moreQueries: Argument.File("query-files", { mustExist: true }).pipe(Argument.withDescription("more query files"), Argument.variadic()),
    policy: flags.policy.pipe(Flag.withDefault("paraagent")),
    judge: flags.judge.pipe(
      Flag.withDescription("rule: no answer is graded and the pass rate is reported as not available; llm: StableToolEval's Solved / Unsure / Unsolved over the endpoint"),
      Flag.withDefault("rule")
    ),
    runs: RunConfig.intFlag("runs", { minimum: 1, maximum: 10 }, "evaluations of each answer (StableToolEval's --evaluate_times); the pass rate is their mean").pipe(Flag.withDefault(3)),
    json: Flag.Boolean("json").pipe(Flag.withDescription("end the output with one JSON line of the per-file results"), Flag.withDefault(false)),
    paradigm: Flag.Literals("paradigm", Paradigm.literals).pipe(Flag.withDescription("the agent paradigm the policy acts under"), Flag.withDefault("ParaAct")),
    retriever: flags.retriever.pipe(Flag.withDefault("bm25")),
    render: Flag.Literals("render", ["deterministic", "llm"]).pipe(
      Flag.withDescription("L3 of the simulator: deterministic, or the LLM renderer over the endpoint with its SQLite cache"),
      Flag.withDefault("deterministic")
    ),
    renderCache: Flag.String("render-cache").pipe(
      Flag.withDescription("--render llm: the SQLite file of rendered responses (kept across runs)"),
      Flag.withDefault("runs/stabletoolbench-render-cache.sqlite")
    ),
    faults: flags.faults.pipe(Flag.withDescription("inject the simulator's 5% transient faults (off by default: StableToolBench's virtual APIs answer from a cache)"), Flag.withDefault(false)),
    mistakeRate: flags.mistakeRate.pipe(Flag.withDefault(0)),
    mode: flags.mode.pipe(Flag.withDefault("text")),
    maxRounds: flags.maxRounds.pipe(Flag.withDefault(12)),
    concurrency: flags.concurrency.pipe(Flag.withDescription("queries rolled out at once"), Flag.withDefault(8)),
    seed: flags.seed.pipe(Flag.withDefault(1)),
    limit: RunConfig.intFlag("limit", { minimum: 1, maximum: 100_000 }, "only the first N queries of each file").pipe(Flag.optional),
    out: flags.out.pipe(Flag.withDescription("a folder for trajectories.jsonl and summary.json (optional)"), Flag.optional),
    ...RunConfig.endpointFlags
  },
  Effect.fn(function*(given) {
    const libraryDir = Option.getOrUndefined(given.library) ?? dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
    if (libraryDir === undefined) {
      return yield* new ConfigError({ field: "--library", value: "", message: "no --library given and no ToolEnv2404 in the data folder (PARAAGENT_DATA)" })
    }
    const listed = [...given.queries, ...given.moreQueries]
    const files = listed.length > 0 ? listed : defaultQueryFiles.filter((f): f is string => f !== undefined)
    if (files.length === 0) {
      return yield* new ConfigError({ field: "--queries", value: "", message: "no --queries given and no StableToolBench test files in the data folder" })
    }
    const usesEndpoint = RunConfig.needsEndpoint(given) || given.render === "llm"
    const endpoint = usesEndpoint ? yield* OpenAiClient.configFromEnv(RunConfig.endpointOverrides(given)) : undefined
    const out = Option.getOrUndefined(given.out)
    if (out !== undefined) {
      yield* RunFolder.ensureFresh(out).pipe(
        Effect.mapError((e) => new ConfigError({ field: "--out", value: out, message: `--out ${out}: ${e.message}` }))
      )
      yield* Files.checkWritable("--out", out, "folder")
    }

    const setup = yield* Job.load(libraryDir, files)
    yield* Console.log(summary(setup.libraryReport, 3))
    for (const file of setup.files) yield* Console.log(summary(file.report, 3))
    yield* Console.log(
      `library: ${setup.library.tools.length} APIs (${setup.added} added from the query files' api_lists; ${setup.matchedApis} api_list entries were already there); G_dep ${setup.library.graph.edges.length} edges; loaded in ${(setup.loadMs / 1000).toFixed(1)} s`
    )
    const limit = Option.getOrUndefined(given.limit)
    const chosen = limit === undefined ? setup.files : setup.files.map((f) => ({ ...f, queries: f.queries.slice(0, limit) }))

    const clientLayer = App.endpointLayer(endpoint)
    const libraryLayer = Layer.succeed(ToolLibrary, setup.library)
    const faultRate = RunConfig.faultRateOf(given.faults)
    const simulator = given.render === "llm"
      ? SimulatorLlm.layer({ cachePath: given.renderCache, simulator: { faultRate } }).pipe(Layer.provide(clientLayer))
      : Simulator.layer({ faultRate })
    const policyChoice: App.PolicyChoice = given.policy === "teacher"
      ? { kind: "teacher", options: { mistakeRate: given.mistakeRate } }
      : given.policy === "openai"
      ? { kind: "openai", options: { mode: given.mode } }
      : given.policy === "paraagent"
      ? { kind: "paraagent" }
      : { kind: "teacher-llm" }
    const agents = Layer.mergeAll(simulator, App.retrieverLayer(given.retriever), App.policyLayer(policyChoice, clientLayer, endpoint)).pipe(
      Layer.provideMerge(libraryLayer)
    )
    const app = Rollout.layer({ maxRounds: given.maxRounds, faults: given.faults, lenient: given.policy === "openai" }).pipe(Layer.provideMerge(agents))
    const labeler = given.judge === "llm" ? yield* JudgeLlm.makePassRate().pipe(Effect.provide(clientLayer)) : undefined
    const folder = out === undefined ? undefined : yield* RunFolder.make(out)

    const started = Date.now()
    const rows = yield* Job.run(chosen, {
      paradigm: given.paradigm,
      seed: given.seed,
      runs: given.runs,
      concurrency: given.concurrency,
      progress: true,
      ...(labeler === undefined ? {} : { labeler }),
      ...(folder === undefined ? {} : {
        onTrajectory: (file, query, trajectory, labels) =>
          folder.appendJsonl("trajectories.jsonl", [{ file, query: query.id, relevant: query.relevant, labels, trajectory }])
      })
    }).pipe(Effect.provide(app))
    const seconds = (Date.now() - started) / 1000

    const oracle = given.policy === "teacher"
      ? "Oracle (the scripted teacher is privileged: it reads each query's relevant APIs): Path and counts are the structural cost, not a learned agent's.\n"
      : ""
    yield* Console.log(`\n${oracle}policy ${given.policy}, ${given.paradigm}, judge ${labeler?.name ?? "rule (pass rate not available)"}, ${given.runs} evaluation run(s); ${seconds.toFixed(1)} s; rates in percent`)
    yield* Console.log(Metrics.table(rows))
    const record = { policy: given.policy, oracle: given.policy === "teacher", paradigm: given.paradigm, judge: labeler?.name ?? "rule", runs: given.runs, seconds: Number(seconds.toFixed(1)) }
    if (folder !== undefined) yield* folder.writeText("summary.json", `${Metrics.jsonReport(rows, record)}\n`)
    if (given.json) yield* Console.log(Metrics.jsonReport(rows, record))
  })
).pipe(Command.withDescription("StableToolBench queries as ToolEnv tasks: Path, rounds, calls, searches and the solvable pass rate per query file"))

command.pipe(
  Otlp.traced("stabletoolbench"),
  Cli.run("stabletoolbench", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
