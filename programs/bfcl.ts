/**
 * `npm run bfcl -- <command>`: the Berkeley Function-Calling Leaderboard's Python AST categories. `score` checks a
 * result file as BFCL v4's checker does (per-category accuracy, BFCL's aggregates, optional verdict lines); `generate`
 * answers the entries with any policy and writes BFCL result lines (FC style).
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as BfclFiles from "../layers/files/BfclFiles.ts"
import * as BfclRun from "../layers/BfclRun.ts"
import * as OpenAiClient from "../layers/model/OpenAiClient.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import * as Generate from "../src/benchmarks/bfcl/BfclGenerate.ts"
import * as Score from "../src/benchmarks/bfcl/BfclScore.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { writeFileAtomicEffect } from "../src/io/AtomicWrite.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import { dataPath } from "../src/io/DataPath.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Files from "../src/io/Files.ts"
import * as Provenance from "../src/io/Provenance.ts"

const data = Flag.String("data").pipe(
  Flag.withDescription("a BFCL data folder: BFCL_v4_<category>.json + possible_answer/BFCL_v4_<category>.json (default: the data folder's bfcl/)"),
  Flag.withDefault(dataPath("bfcl"))
)
const categories = Flag.String("category").pipe(
  Flag.withDescription("a category to run (repeatable, or comma-separated); all = every Python AST category in --data"),
  Flag.atLeast(1)
)
const json = Flag.Boolean("json").pipe(Flag.withDescription("end the output with one JSON line of the summary"), Flag.withDefault(false))
const style = Flag.Literals("style", ["fc", "prompting"]).pipe(
  Flag.withDescription("how to decode `result`: fc = [{\"<fn>\": \"<json args>\"}] (a text reply is no call); prompting = text holding a Python list of calls"),
  Flag.withDefault("fc")
)
const underscoreToDot = Flag.Boolean("underscore-to-dot").pipe(
  Flag.withDescription("BFCL's option for FC models whose API forbids '.' in names: expect 'a.b' as 'a_b'"),
  Flag.withDefault(false)
)

const pct = (x: number | null): string => (x === null ? "n/a" : `${(100 * x).toFixed(2)}%`)

const printSummary = (summary: Score.Summary, extra: Readonly<Record<string, unknown>>, asJson: boolean) =>
  Effect.gen(function*() {
    yield* Console.log(`${"category".padEnd(26)}${"entries".padStart(8)}${"correct".padStart(9)}${"accuracy".padStart(10)}${"missing".padStart(9)}  most frequent errors`)
    for (const [name, c] of Object.entries(summary.categories)) {
      const errors = Object.entries(c.errors).sort((a, b) => b[1] - a[1]).slice(0, 3).map(([t, n]) => `${t} ${n}`).join(", ")
      yield* Console.log(`${name.padEnd(26)}${String(c.total).padStart(8)}${String(c.correct).padStart(9)}${pct(c.accuracy).padStart(10)}${String(c.missing).padStart(9)}  ${errors}`)
    }
    const a = summary.aggregates
    const line = (label: string, agg: typeof a.live.ast) =>
      Console.log(`${label.padEnd(34)}${pct(agg.accuracy).padStart(8)}  over ${agg.present.join(", ") || "none"}${agg.missing.length > 0 ? ` (absent: ${agg.missing.join(", ")})` : ""}`)
    yield* Console.log("")
    yield* line("non-live AST (unweighted mean)", a.nonLive.ast)
    yield* line("non-live overall (unweighted mean)", a.nonLive.overall)
    yield* line("live AST (weighted by count)", a.live.ast)
    yield* line("live overall (weighted by count)", a.live.overall)
    if (summary.unmatchedResults > 0) yield* Console.log(`${summary.unmatchedResults} result lines match no entry of these categories (ignored)`)
    if (asJson) yield* Console.log(JSON.stringify({ ...summary, ...extra }))
  })

const writeLines = (file: string, lines: ReadonlyArray<string>, field: string) =>
  writeFileAtomicEffect(file, lines.join("\n") + (lines.length > 0 ? "\n" : "")).pipe(
    Effect.mapError((e) => new ConfigError({ field, value: file, message: `${field} ${file}: cannot write (${e.message})` }))
  )

const score = Command.make("score", {
  data,
  categories,
  result: Flag.File("result", { mustExist: true }).pipe(Flag.withDescription("the result file: BFCL result lines {\"id\", \"result\"}")),
  verdicts: Flag.String("verdicts").pipe(Flag.withDescription("write one line per entry {\"id\", \"category\", \"valid\", \"error_type\"?, \"error\"?}"), Flag.optional),
  json,
  style,
  underscoreToDot
}, (flags) =>
  Effect.gen(function*() {
    if (Option.isSome(flags.verdicts)) yield* Files.checkWritable("--verdicts", flags.verdicts.value, "file")
    const cats = yield* BfclFiles.loadCategories(flags.data, flags.categories)
    const results = yield* BfclFiles.loadResults(flags.result)
    const started = performance.now()
    const { summary, verdicts } = Score.score(cats, results, flags.style, { underscoreToDot: flags.underscoreToDot })
    const seconds = (performance.now() - started) / 1000
    if (Option.isSome(flags.verdicts)) yield* writeLines(flags.verdicts.value, verdicts.map((v) => JSON.stringify(v)), "--verdicts")
    yield* printSummary(summary, { entriesPerSecond: Math.round(verdicts.length / Math.max(seconds, 1e-9)) }, flags.json)
    yield* Console.log(`scored ${verdicts.length} entries in ${(seconds * 1000).toFixed(0)} ms (${Math.round(verdicts.length / Math.max(seconds, 1e-9))} entries/s, files read and parsed beforehand)`)
  })).pipe(Command.withDescription("Score a BFCL result file with BFCL v4's AST checker (Python categories)"))

const generate = Command.make("generate", {
  data,
  categories,
  policy: RunConfig.flags.policy.pipe(Flag.withDefault("paraagent")),
  mode: RunConfig.flags.mode.pipe(Flag.withDefault("native")),
  out: Flag.String("out").pipe(Flag.withDescription("the result file to write (BFCL result lines, FC style)")),
  seed: RunConfig.flags.seed.pipe(Flag.withDefault(0)),
  limit: RunConfig.intFlag("limit", RunConfig.caps.tasks, "answer only the first N entries of each category").pipe(Flag.optional),
  concurrency: RunConfig.intFlag("concurrency", RunConfig.caps.concurrency, "entries answered at once").pipe(Flag.withDefault(4)),
  score: Flag.Boolean("score").pipe(Flag.withDescription("score the written lines right away (as `score --style fc`)"), Flag.withDefault(false)),
  json,
  ...RunConfig.endpointFlags
}, (flags) =>
  Effect.gen(function*() {
    yield* Files.checkWritable("--out", flags.out, "file")
    const needsEndpoint = flags.policy === "openai" || flags.policy === "teacher-llm"
    const endpoint = needsEndpoint ? yield* OpenAiClient.configFromEnv(RunConfig.endpointOverrides(flags)) : undefined
    const choice: BfclRun.PolicyChoice = flags.policy === "paraagent"
      ? { kind: "paraagent" }
      : flags.policy === "teacher"
      ? { kind: "teacher" }
      : flags.policy === "openai"
      ? { kind: "openai", mode: flags.mode, endpoint: endpoint as OpenAiClient.OpenAiConfigInput }
      : { kind: "teacher-llm", endpoint: endpoint as OpenAiClient.OpenAiConfigInput }
    const cats = yield* BfclFiles.loadCategories(flags.data, flags.categories)
    const options = {
      ...Generate.defaultOptions,
      seed: flags.seed,
      lenient: needsEndpoint,
      concurrency: flags.concurrency,
      ...(Option.isSome(flags.limit) ? { limit: flags.limit.value } : {})
    }
    const started = performance.now()
    const generated = yield* Effect.forEach(cats, (c) => BfclRun.generateCategory(c, choice, options))
    const all = generated.flat()
    yield* writeLines(flags.out, all.map((g) => Score.resultLine(g.id, g.result)), "--out")
    const counts = Generate.outcomes(all)
    yield* Console.log(`${flags.policy}: ${all.length} entries in ${((performance.now() - started) / 1000).toFixed(1)} s → ${flags.out} (${counts.calls} with calls, ${counts.no_call} without, ${counts.malformed} malformed, ${counts.policy_error} policy errors)`)
    if (!flags.score) return
    const answered = new Set(all.map((g) => g.id))
    const scoredCats = cats.map((c) => ({ ...c, entries: c.entries.filter((e) => answered.has(e.id)) }))
    const { summary } = Score.score(scoredCats, new Map(all.map((g) => [g.id, g.result] as const)), "fc", { underscoreToDot: false })
    yield* printSummary(summary, { policy: flags.policy, outcomes: counts }, flags.json)
  })).pipe(Command.withDescription("Answer BFCL entries with a policy (the entry's functions as tools, one round, parallel calls allowed) and write BFCL result lines"))

Command.make("bfcl").pipe(
  Command.withDescription("BFCL v4 (Python AST categories): score result files, or generate them with a policy"),
  Command.withSubcommands([score, generate]),
  Otlp.traced("bfcl"),
  Cli.run("bfcl", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
