/**
 * `npm run export -- verl|trl --out <dir> [--count 64] [--split train] [--levels I1,I2,I3] [--seed 1] [--world-seed 7]
 * [--world-size 50011] [--paradigm ParaAct] [--max-rounds 12] [--mode text|native] [--only rl|sft]`: training tasks as
 * verl's RL parquet and the teacher's judge-filtered demonstrations as verl's multi-turn SFT parquet (verl), or as
 * JSON Lines for TRL's SFTTrainer (trl). Writes `export.json` beside them (settings, counts, what was left out).
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Option, Result } from "effect"
import { Command, Flag } from "effect/cli"
import * as path from "node:path"
import * as App from "../layers/App.ts"
import * as ParquetVerl from "../layers/storage/ParquetVerl.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import { Level, Split } from "../src/domain/Task.ts"
import { Paradigm } from "../src/domain/Trajectory.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import * as RunFolder from "../src/io/RunFolder.ts"
import { hashParts } from "../src/math/Random.ts"
import * as Faults from "../src/toolenv/simulator/Faults.ts"
import { TaskSource } from "../src/toolenv/TaskSource.ts"
import * as TeacherDemonstrations from "../src/training/TeacherDemonstrations.ts"
import * as VerlExports from "../src/training/VerlExports.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Files from "../src/io/Files.ts"
import * as Provenance from "../src/io/Provenance.ts"

const { flags, intFlag, numberFlag } = RunConfig

const shared = {
  out: Flag.String("out").pipe(Flag.withDescription("folder to write into (created; must be new or empty)")),
  count: intFlag("count", RunConfig.caps.count, "tasks to draw (RL rows; one teacher demonstration each)").pipe(Flag.withDefault(64)),
  split: Flag.Literals("split", Split.literals).pipe(Flag.withDescription("split of the tasks (train to train on; validation for verl's val_files)"), Flag.withDefault("train")),
  levels: flags.levels.pipe(Flag.withDefault(Level.literals)),
  seed: flags.seed.pipe(Flag.withDescription("seed of the task draw and of the rollout seeds"), Flag.withDefault(1)),
  worldSeed: flags.worldSeed.pipe(Flag.withDefault(7)),
  worldSize: flags.worldSize.pipe(Flag.withDefault(50_011)),
  paradigm: Flag.Literals("paradigm", Paradigm.literals).pipe(Flag.withDescription("paradigm of the RL sessions"), Flag.withDefault("ParaAct")),
  maxRounds: flags.maxRounds.pipe(Flag.withDefault(12)),
  faultRate: numberFlag("fault-rate", { minimum: 0, maximum: 1 }, "transient-fault rate of the RL sessions").pipe(Flag.withDefault(Faults.defaultFaultRate)),
  mistakeRate: flags.mistakeRate.pipe(Flag.withDefault(0.1)),
  mode: Flag.Literals("mode", ["text", "native"]).pipe(
    Flag.withDescription("SFT rendering: text = ParaAct tags, the protocol the RL agent loop speaks; native = tool_calls with JSON-string arguments"),
    Flag.withDefault("text")
  ),
  omitTask: Flag.Boolean("omit-task").pipe(Flag.withDescription("leave the task JSON out of extra_info (the server then regenerates it from the world, split and id)"), Flag.withDefault(false)),
  only: Flag.Literals("only", ["rl", "sft"]).pipe(Flag.withDescription("write only the RL rows or only the SFT demonstrations"), Flag.optional),
  concurrency: flags.concurrency.pipe(Flag.withDefault(8))
}

type Target = "verl" | "trl"
type Given = {
  readonly [K in keyof typeof shared]: (typeof shared)[K] extends Flag.Flag<infer A> ? A : never
}

/** The command line that reproduces an export (every setting spelled out). */
const commandLine = (target: Target, g: Given): string =>
  [
    `npm run export -- ${target} --out ${g.out} --count ${g.count} --split ${g.split} --levels ${g.levels.join(",")} --seed ${g.seed}`,
    `--world-seed ${g.worldSeed} --world-size ${g.worldSize} --paradigm ${g.paradigm} --max-rounds ${g.maxRounds}`,
    `--fault-rate ${g.faultRate} --mistake-rate ${g.mistakeRate} --mode ${g.mode} --concurrency ${g.concurrency}`,
    ...(g.omitTask ? ["--omit-task"] : []),
    ...(Option.isSome(g.only) ? [`--only ${g.only.value}`] : [])
  ].join(" ")

const exportTo = (target: Target) =>
  Effect.fn(`export.${target}`)(function*(given: Given) {
    if (target === "trl" && Option.isSome(given.only) && given.only.value === "rl") {
      return yield* new ConfigError({ field: "--only", value: "rl", message: "--only rl: the trl export writes SFT demonstrations only (RL rows are verl's)" })
    }
    yield* RunFolder.ensureFresh(given.out).pipe(
      Effect.mapError((e) => new ConfigError({ field: "--out", value: given.out, message: `--out ${given.out}: ${e.message}` }))
    )
    yield* Files.checkWritable("--out", given.out, "folder")
    const folder = yield* RunFolder.make(given.out).pipe(
      Effect.mapError((e) => new ConfigError({ field: "--out", value: given.out, message: `--out ${given.out}: cannot create the folder (${e.message})` }))
    )
    const wantRl = target === "verl" && !(Option.isSome(given.only) && given.only.value === "sft")
    const wantSft = !(Option.isSome(given.only) && given.only.value === "rl")
    const program = Effect.gen(function*() {
      const source = yield* TaskSource
      const tasks = yield* source.sample({ split: given.split, count: given.count, levels: given.levels, seed: given.seed })
      const files: Array<{ readonly file: string; readonly rows: number; readonly format: string }> = []
      let skipped: ReadonlyArray<{ readonly id: string; readonly reason: string }> = []
      if (wantRl) {
        const rows = VerlExports.rlRows(tasks, {
          paradigm: given.paradigm,
          maxRounds: given.maxRounds,
          faultRate: given.faultRate,
          world: { _tag: "generated", seed: given.worldSeed, size: given.worldSize },
          seedOf: (task) => hashParts(given.seed, "rl", task.id) & 0x3fffffff,
          postTask: !given.omitTask
        })
        if (Result.isFailure(rows)) return yield* rows.failure
        const file = `rl_${given.split}.parquet`
        yield* ParquetVerl.writeRl(path.join(folder.dir, file), rows.success)
        files.push({ file, rows: rows.success.length, format: "verl RLHFDataset parquet" })
      }
      if (wantSft) {
        const demos = yield* TeacherDemonstrations.make(tasks, { mode: given.mode, seed: given.seed, maxRounds: given.maxRounds, concurrency: given.concurrency })
        skipped = demos.skipped
        if (target === "verl") {
          const file = `sft_${given.split}.parquet`
          yield* ParquetVerl.writeSft(path.join(folder.dir, file), demos.lines.map(VerlExports.sftRow))
          files.push({ file, rows: demos.lines.length, format: "verl MultiTurnSFTDataset parquet (tools: JSON text)" })
        } else {
          const file = `sft_${given.split}.jsonl`
          yield* folder.writeText(file, demos.lines.map((l) => `${JSON.stringify(l)}\n`).join(""))
          files.push({ file, rows: demos.lines.length, format: "TRL SFTTrainer conversational JSONL (messages + tools)" })
        }
      }
      return { tasks: tasks.length, files, skipped }
    }).pipe(Effect.provide(App.layer({
      world: { seed: given.worldSeed, size: given.worldSize },
      tasks: { holdoutTools: true },
      policy: { kind: "teacher", options: { mistakeRate: given.mistakeRate } },
      rollout: { maxRounds: given.maxRounds }
    })))
    const result = yield* program
    const reasons: Record<string, number> = {}
    for (const s of result.skipped) reasons[s.reason] = (reasons[s.reason] ?? 0) + 1
    yield* folder.writeJson("export.json", {
      target,
      command: commandLine(target, given),
      settings: { ...given, only: Option.getOrNull(given.only) },
      agent_name: VerlExports.agentName,
      tasks: result.tasks,
      files: result.files,
      demonstrations_left_out: reasons,
      judge: "rule (Quality, Faithfulness and Utility YES)"
    })
    for (const f of result.files) yield* Console.log(`${path.join(folder.dir, f.file)}: ${f.rows} rows (${f.format})`)
    if (wantSft) yield* Console.log(`demonstrations: kept ${result.files.at(-1)?.rows ?? 0} of ${result.tasks} teacher rollouts (left out: ${JSON.stringify(reasons)})`)
  })

const verl = Command.make("verl", shared, exportTo("verl")).pipe(
  Command.withDescription("verl: rl_<split>.parquet (data_source, prompt, ability, reward_model, extra_info, agent_name) and sft_<split>.parquet (messages, tools, provenance)")
)
const trl = Command.make("trl", shared, exportTo("trl")).pipe(
  Command.withDescription("TRL: sft_<split>.jsonl, one judge-filtered demonstration per line (messages, tools, provenance)")
)

Command.make("export").pipe(
  Command.withDescription("Export training data for an external trainer: verl (RL + SFT parquet) or TRL (SFT JSONL)"),
  Command.withSubcommands([verl, trl]),
  Otlp.traced("export"),
  Cli.run("export", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
