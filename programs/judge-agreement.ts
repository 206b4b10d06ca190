/**
 * `npm run judge-agreement -- --input <file.jsonl> [--judge rule|llm] [--stability]`: how often a judge agrees with
 * human Q/F/U verdicts (binarised YES vs PARTIAL/NO, as the paper's Table 10), with confusion counts and flip rates.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, FileSystem, Layer, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { ConfigError, DecodeError } from "../src/domain/Errors.ts"
import { Judge } from "../src/judge/Judge.ts"
import * as Agreement from "../src/judge/Agreement.ts"
import * as RuleJudge from "../src/judge/RuleJudge.ts"
import * as RunFolder from "../src/io/RunFolder.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import * as JudgeLlm from "../layers/model/JudgeLlm.ts"
import type { OpenAiConfigInput } from "../layers/model/OpenAiClient.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

const input = Flag.File("input", { mustExist: true }).pipe(
  Flag.withDescription("JSONL of {task, trajectory, human: {quality, faithfulness, utility}} records (see docs/openai-judge.md)")
)
const judgeKind = Flag.Literals("judge", ["rule", "llm"]).pipe(
  Flag.withDescription("rule: the gold-fact rule judge; llm: the LLM judge on PARAAGENT_BASE_URL / PARAAGENT_MODEL"),
  Flag.withDefault("rule")
)
const stabilityFlag = Flag.Boolean("stability").pipe(Flag.withDescription("judge every item twice and report flip rates"), Flag.withDefault(false))
const concurrency = RunConfig.intFlag("concurrency", RunConfig.caps.concurrency, "items judged at once").pipe(Flag.withDefault(4))
const json = Flag.Path("json").pipe(Flag.withDescription("also write the report as JSON to this file"), Flag.optional)
const reference = Flag.Boolean("reference").pipe(Flag.withDescription("llm: show the gold facts to the judge"), Flag.withDefault(false))
const jsonMode = Flag.Boolean("json-mode").pipe(Flag.withDescription("llm: ask the server for response_format json_object"), Flag.withDefault(false))

const judgeLayer = (
  kind: "rule" | "llm",
  options: JudgeLlm.JudgeLlmOptions,
  overrides: Partial<OpenAiConfigInput>
): Layer.Layer<Judge, ConfigError> => (kind === "rule" ? RuleJudge.layer : JudgeLlm.layerConfig(options, overrides))

const command = Command.make(
  "judge-agreement",
  { input, judgeKind, stabilityFlag, concurrency, json, reference, jsonMode, ...RunConfig.endpointFlags },
  Effect.fn(function*(flags) {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(flags.input).pipe(
      Effect.mapError((error) => new DecodeError({ source: flags.input, message: error.message }))
    )
    if (text.trim() === "") return yield* new DecodeError({ source: flags.input, message: `${flags.input} is empty: expected JSONL records` })
    const parsed = Agreement.parseJsonl(text)
    const overrides: Partial<OpenAiConfigInput> = RunConfig.endpointOverrides(flags)
    const report = yield* Judge.use((judge) =>
      Agreement.run(judge, parsed, { stability: flags.stabilityFlag, concurrency: flags.concurrency })
    ).pipe(Effect.provide(judgeLayer(flags.judgeKind, { reference: flags.reference, jsonMode: flags.jsonMode }, overrides)))
    yield* Console.log(Agreement.renderMarkdown(report))
    if (Option.isSome(flags.json)) yield* RunFolder.writeFileAtomic(flags.json.value, `${JSON.stringify(report, null, 2)}\n`)
    if (report.n === 0) {
      return yield* new DecodeError({ source: flags.input, message: "no record could be scored (see the problems above)" })
    }
  })
).pipe(Command.withDescription("Agreement of a judge with human Q/F/U verdicts (Table 10), optionally its stability"))

command.pipe(
  Otlp.traced("judge-agreement"),
  Cli.run("judge-agreement", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
