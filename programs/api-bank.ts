/**
 * `npm run api-bank -- [--data <api-bank dir>] [--levels 1,2] --policy oracle|teacher|paraagent|openai [--mode text|native]
 * [--retriever bm25|dense|hybrid] [--limit N] [--verdicts <out.jsonl>] [--json]`: API-Bank level-1 and level-2 API-call
 * accuracy (exact match of name and normalised arguments) and per-dialogue success, with the records left out.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as nodePath from "node:path"
import * as OpenAiClient from "../layers/model/OpenAiClient.ts"
import * as PolicyLearned from "../layers/onnx/PolicyLearned.ts"
import * as PolicyOpenAi from "../layers/model/PolicyOpenAi.ts"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import type { Policy } from "../src/agent/Policy.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import type { ConfigError } from "../src/domain/Errors.ts"
import * as ApiBankScore from "../src/benchmarks/apibank/ApiBankScore.ts"
import * as ApiBankRun from "../src/benchmarks/apibank/ApiBankRun.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { writeFileAtomicEffect } from "../src/io/AtomicWrite.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import { dataPath } from "../src/io/DataPath.ts"
import { Retriever, type RetrieverError } from "../src/retrieval/Retriever.ts"
import { type Library, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Files from "../src/io/Files.ts"
import * as Provenance from "../src/io/Provenance.ts"

const data = Flag.Directory("data", { mustExist: true }).pipe(
  Flag.withDescription("the API-Bank folder (lv1-lv2-samples/, test-data/, data/all_apis.csv); default: api-bank in the data folder (PARAAGENT_DATA)"),
  Flag.optional
)
const levels = RunConfig.listFlag("levels", ["1", "2"], "levels to run (1: APIs given; 2: found through ToolSearcher)").pipe(Flag.withDefault(["1", "2"] as const))
const policy = Flag.Literals("policy", ["oracle", "teacher", "paraagent", "openai"]).pipe(
  Flag.withDescription("oracle: replays the recorded calls and searches with the recorded keywords (an upper bound; its search steps measure the retriever); teacher: the scripted multi-agent teacher reading the step's gold call (privileged); paraagent: the trained embedded policy in models/; openai: an LLM over an OpenAI-compatible endpoint")
)
const mode = RunConfig.flags.mode.pipe(Flag.withDefault("text"))
const retriever = RunConfig.flags.retriever.pipe(Flag.withDescription("the retriever behind ToolSearcher (level 2)"), Flag.withDefault("bm25"))
const limit = RunConfig.intFlag("limit", RunConfig.caps.tasks, "dialogue files per level (first N by name; default all)").pipe(Flag.optional)
const concurrency = RunConfig.flags.concurrency.pipe(Flag.withDefault(4))
const seed = RunConfig.flags.seed.pipe(Flag.withDefault(1))
const verdicts = Flag.String("verdicts").pipe(Flag.withDescription("write one JSON line per step (verdict and raw output) to this file"), Flag.optional)
const json = Flag.Boolean("json").pipe(Flag.withDescription("end the output with one JSON line of the results"), Flag.withDefault(false))

const retrieverLayer = (kind: "bm25" | "dense" | "hybrid"): Layer.Layer<Retriever, RetrieverError, ToolLibrary> =>
  kind === "bm25" ? Retriever.layerBm25 : kind === "dense" ? RetrieverOnnx.layerShipped : RetrieverOnnx.layerHybrid()

const policyLayer = (
  kind: "oracle" | "teacher" | "paraagent" | "openai",
  textOrNative: "text" | "native",
  endpoint: OpenAiClient.OpenAiConfigInput | undefined,
  library: Library,
  steps: ReadonlyArray<ApiBankScore.Step>
): Layer.Layer<Policy, ConfigError> =>
  kind === "oracle"
    ? ApiBankRun.oracle(steps)
    : kind === "teacher"
    ? Teacher.layer({ mistakeRate: 0 }).pipe(Layer.provide(Layer.succeed(ToolLibrary, library)))
    : kind === "paraagent"
    ? PolicyLearned.layer(PolicyLearned.shippedDir, { decoding: "greedy" })
    : PolicyOpenAi.layer({ mode: textOrNative, lenient: true }).pipe(
      Layer.provide(endpoint === undefined ? OpenAiClient.layerConfig() : OpenAiClient.layerFrom(endpoint))
    )

const pct = (x: number): string => x.toFixed(1)

const table = (summaries: ReadonlyArray<ApiBankScore.LevelSummary>): string => {
  const rows = summaries.map((s) =>
    `| L${s.level} | ${s.files} | ${s.dialogues} | ${s.steps} | ${s.correct} | ${pct(s.accuracy)} | ${s.successful} | ${pct(s.success)} | ${s.searchSteps > 0 ? `${s.searchCorrect}/${s.searchSteps}` : "—"} |`
  )
  return [
    "| level | files | dialogues | API steps | correct | accuracy % | dialogues all correct | success % | ToolSearcher correct |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows
  ].join("\n")
}

const breakdown = (s: ApiBankScore.LevelSummary, unresolved: ReadonlyArray<ApiBankScore.Unresolved>): ReadonlyArray<string> => {
  const outcomes = Object.entries(s.outcomes).map(([k, n]) => `${k} ${n}`).join(", ")
  const left = Object.entries(s.unresolved).map(([k, n]) => `${k} ${n}`).join(", ")
  return [
    `L${s.level} outcomes: ${outcomes.length > 0 ? outcomes : "none"}`,
    `L${s.level} records left out: ${left.length > 0 ? left : "none"}${s.partialDialogues > 0 ? ` (${s.partialDialogues} dialogue(s) scored on their other steps, never counted successful)` : ""}`,
    ...unresolved.slice(0, 10).map((u) => `  ${u.file}${u.line === undefined ? "" : `:${u.line}`}: ${u.reason}: ${u.detail}`),
    ...(unresolved.length > 10 ? [`  ... and ${unresolved.length - 10} more`] : [])
  ]
}

const command = Command.make(
  "api-bank",
  { data, levels, policy, mode, retriever, limit, concurrency, seed, verdicts, json, ...RunConfig.endpointFlags },
  Effect.fn(function*(flags) {
    const dir = Option.getOrUndefined(flags.data) ?? dataPath("api-bank")
    const endpoint = flags.policy === "openai" ? yield* OpenAiClient.configFromEnv(RunConfig.endpointOverrides(flags)) : undefined
    if (Option.isSome(flags.verdicts)) yield* Files.checkWritable("--verdicts", flags.verdicts.value, "file")
    const api = yield* ApiBankRun.loadLibrary(dir)
    yield* Console.log(`API-Bank library: ${api.library.tools.length} APIs (${api.searchable.tools.length} searchable by ToolSearcher) from ${dir}`)
    const chosen = [...flags.levels].sort().map((l) => (l === "1" ? 1 : 2) as ApiBankScore.Level)
    const loaded = yield* Effect.forEach(chosen, (level) =>
      ApiBankRun.loadLevel(nodePath.join(dir, "lv1-lv2-samples"), level, api).pipe(Effect.map((data) => {
        const keep = Option.isSome(flags.limit) ? new Set(data.fileNames.slice(0, flags.limit.value)) : undefined
        return keep === undefined ? data : {
          ...data,
          files: keep.size,
          steps: data.steps.filter((s) => keep.has(s.file)),
          unresolved: data.unresolved.filter((u) => keep.has(u.file))
        }
      })))
    const services = Layer.mergeAll(
      policyLayer(flags.policy, flags.mode, endpoint, api.library, loaded.flatMap((l) => l.steps)),
      retrieverLayer(flags.retriever).pipe(Layer.provide(Layer.succeed(ToolLibrary, api.searchable)))
    )
    const results = yield* Effect.forEach(loaded, (data) =>
      Effect.gen(function*() {
        const records = yield* ApiBankRun.run(data.steps, api, { concurrency: flags.concurrency, seed: flags.seed })
        const summary = ApiBankScore.summarise(data.level, data.files, records.map((r) => r.verdict), data.unresolved)
        return { summary, records, unresolved: data.unresolved, unfound: ApiBankScore.unfoundCallSteps(data.steps).length }
      })).pipe(Effect.provide(services))

    const summaries = results.map((r) => r.summary)
    yield* Console.log(`\npolicy ${flags.policy}${flags.policy === "openai" ? ` (${flags.mode})` : ""}; ToolSearcher = ${flags.retriever} top-1; exact match of API name and normalised arguments`)
    yield* Console.log(table(summaries))
    for (const r of results) {
      for (const line of breakdown(r.summary, r.unresolved)) yield* Console.log(line)
      if (r.unfound > 0) yield* Console.log(`L${r.summary.level}: ${r.unfound} call step(s) name an API no earlier recorded ToolSearcher result showed (the policy is not shown it)`)
    }
    if (Option.isSome(flags.verdicts)) {
      const lines = results.flatMap((r) => r.records.map((rec) => JSON.stringify({ ...rec.verdict, output: rec.output })))
      yield* writeFileAtomicEffect(flags.verdicts.value, lines.join("\n") + (lines.length > 0 ? "\n" : ""))
      yield* Console.log(`verdicts: ${lines.length} lines in ${flags.verdicts.value}`)
    }
    if (flags.json) {
      yield* Console.log(JSON.stringify({ policy: flags.policy, retriever: flags.retriever, levels: Object.fromEntries(summaries.map((s) => [`L${s.level}`, s])) }))
    }
  })
).pipe(Command.withDescription("API-Bank level-1/level-2 API-call accuracy and per-dialogue success for a policy"))

command.pipe(
  Otlp.traced("api-bank"),
  Cli.run("api-bank", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
