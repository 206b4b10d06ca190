/**
 * The main job, the paper's pipeline: generated ToolEnv → multi-agent teacher demonstrations → judge filter → SFT →
 * RL with `grpo` and with `paraagent` → held-out evaluation of Backbone / +SFT / +SFT & RL over seeds → the Table-2
 * ablation, the trained policy under each paradigm, report.md / report.html, exports and the trained model.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, FileSystem, Option, Result, Schema } from "effect"
import { CliError, Command, Flag } from "effect/cli"
import { createHash } from "node:crypto"
import * as path from "node:path"
import * as App from "../layers/App.ts"
import * as PipelineWorkers from "../layers/PipelineWorkers.ts"
import * as PolicyScorerOnnx from "../layers/onnx/PolicyScorerOnnx.ts"
import * as RunStoreSqlite from "../layers/storage/RunStoreSqlite.ts"
import * as ActionSpace from "../src/agent/ActionSpace.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import { Level } from "../src/domain/Task.ts"
import { Paradigm } from "../src/domain/Trajectory.ts"
import * as Report from "../src/eval/Report.ts"
import * as TrajectoryBrowser from "../src/eval/TrajectoryBrowser.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import * as Progress from "../src/io/Progress.ts"
import * as AtomicWrite from "../src/io/AtomicWrite.ts"
import * as Provenance from "../src/io/Provenance.ts"
import * as RunFolder from "../src/io/RunFolder.ts"
import * as Exports from "../src/training/Exports.ts"
import * as Pipeline from "../src/training/Pipeline.ts"
import { RunStore } from "../src/training/RunStore.ts"
import * as Files from "../src/io/Files.ts"
import * as Signals from "../src/io/Signals.ts"

const { flags, intFlag } = RunConfig
/** `--help` shows each flag's default. */
const { shown, withDefault, optional } = Cli.defaults()
/** The default run folder's pattern, as `--help` shows it. */
const defaultOut = "runs/<UTC date-time>-pipeline"

const seedsFlag = Flag.String("seeds").pipe(
  Flag.withDescription("training seeds, comma-separated (each: its own initialisation, SFT and RL runs)"),
  Flag.mapEffect((text) => {
    // an empty item (`--seeds ""`, `1,,2`, `3,`) is a typo, never seed 0
    const items = RunConfig.commaItems(text) ?? []
    const seeds = items.map((x) => (/^\d+$/.test(x) ? Number(x) : Number.NaN))
    const ok = items.length >= 1 && items.length <= 10 && seeds.every((x) => Number.isInteger(x) && x >= 0 && x < 2 ** 31) && new Set(seeds).size === seeds.length
    return ok
      ? Effect.succeed(seeds as ReadonlyArray<number>)
      : Effect.fail(new CliError.InvalidValue({ option: "seeds", value: text, expected: "1 to 10 distinct non-negative integers, comma-separated", kind: "flag" }))
  })
)

/** The pipeline's settings as the command line gives them. */
const PipelineRecord = Schema.Struct({
  seeds: Schema.Array(Schema.Int),
  taskSeed: Schema.Int,
  trainTasks: Schema.Int,
  testTasksPerLevel: Schema.Int,
  levels: Schema.Array(Level),
  paradigms: Schema.Array(Paradigm),
  teacherMistakeRate: Schema.Finite,
  // absent in a run stored before the option existed, which phrased first searches from the documentation
  teacherFirstQuery: Schema.optionalKey(Schema.Literals(["documentation", "request"])),
  sftEpochs: Schema.Int,
  // absent in a run stored before DAgger existed (SFT on the teacher only)
  daggerRounds: Schema.optionalKey(Schema.Int),
  rlIterations: Schema.Int,
  rlTasksPerIteration: Schema.Int,
  group: Schema.Int,
  estimators: Schema.Array(Schema.String),
  // absent in a run stored before these options existed: the defaults
  dynamicSampling: Schema.optionalKey(Schema.Struct({ filter: Schema.Literals(["off", "outcome", "signal"]), rounds: Schema.Int })),
  credit: Schema.optionalKey(Schema.Literals(["turn", "action"])),
  // absent in a run stored before the option existed: a truncated rollout's answer was scored like any other
  truncation: Schema.optionalKey(Schema.Union([Schema.Literal("score"), Schema.Struct({ cap: Schema.Finite })])),
  // absent in a run stored before the option existed: RL sampled at temperature 1
  rlTemperature: Schema.optionalKey(Schema.Finite),
  evalRollouts: Schema.optionalKey(Schema.Int),
  evalSampled: Schema.optionalKey(Schema.Int),
  concurrency: Schema.Int,
  worldSeed: Schema.Int,
  worldSize: Schema.Int
})
type PipelineRecord = typeof PipelineRecord.Type

const storeFile = (dir: string) => path.join(dir, "run.sqlite")

const command = Command.make(
  "paraagent",
  {
    // the run's settings are optional flags (defaults below): a resumed run refuses any given that differs from its own
    seeds: seedsFlag.pipe(Flag.optional),
    taskSeed: flags.seed.pipe(optional("seed", Pipeline.defaults.taskSeed)),
    trainTasks: intFlag("train-tasks", { minimum: 8, maximum: 20_000 }, "training tasks the teacher demonstrates").pipe(optional("train-tasks", Pipeline.defaults.trainTasks)),
    tasks: flags.tasks.pipe(optional("tasks", Pipeline.defaults.testTasksPerLevel)),
    levels: flags.levels.pipe(optional("levels", Level.literals)),
    paradigms: flags.paradigms.pipe(optional("paradigms", Paradigm.literals)),
    sftEpochs: intFlag("sft-epochs", { minimum: 1, maximum: 1000 }, "SFT epochs").pipe(optional("sft-epochs", Pipeline.defaults.sftEpochs)),
    daggerRounds: intFlag("dagger-rounds", { minimum: 0, maximum: 100 }, "DAgger rounds after SFT (0: SFT on the teacher's demonstrations only)").pipe(optional("dagger-rounds", Pipeline.defaults.daggerRounds)),
    rlIterations: intFlag("rl-iterations", { minimum: 1, maximum: 10_000 }, "RL iterations per run").pipe(optional("rl-iterations", Pipeline.defaults.rlIterations)),
    rlTasks: intFlag("rl-tasks", { minimum: 1, maximum: 10_000 }, "tasks per RL iteration").pipe(optional("rl-tasks", Pipeline.defaults.rlTasksPerIteration)),
    group: flags.group.pipe(optional("group", Pipeline.defaults.group)),
    evalRollouts: intFlag("eval-rollouts", { minimum: 1, maximum: 16 }, "greedy rollouts per held-out task (the tables and the paired differences)").pipe(optional("eval-rollouts", Pipeline.defaults.evalRollouts)),
    evalSampled: intFlag("eval-sampled", { minimum: 0, maximum: 16 }, "sampled rollouts per held-out task of the ablation rows (reported beside the greedy Pass@1; 0: none)").pipe(optional("eval-sampled", Pipeline.defaults.evalSampled)),
    worldSeed: flags.worldSeed.pipe(optional("world-seed", 7)),
    worldSize: flags.worldSize.pipe(optional("world-size", 50_011)),
    concurrency: flags.concurrency.pipe(optional("concurrency", Pipeline.defaults.concurrency)),
    workers: intFlag("workers", { minimum: 1, maximum: 8 }, "worker threads, one seed each (1: all in this thread, within the 2 GB budget; 2: faster, ~2.4 GB)").pipe(withDefault("workers", 1)),
    out: flags.out.pipe(Flag.withDescription("run folder, refused when it holds files"), Flag.optional),
    resume: Flag.Directory("resume", { mustExist: true }).pipe(Flag.withDescription("continue the run in this folder after a crash (its run.sqlite)"), Flag.optional),
    ship: Flag.String("ship").pipe(Flag.withDescription("also write the trained model (ONNX + metadata) to this folder, e.g. models"), Flag.optional)
  },
  Effect.fn(function*(given) {
    const provenance = yield* Provenance.read
    const resuming = Option.isSome(given.resume)
    const dir = Option.isSome(given.resume) ? given.resume.value : Option.getOrElse(given.out, () => `runs/${new Date().toISOString().replace(/[:.]/g, "-").replace(/-\d{3}Z$/, "Z")}-pipeline`)
    // each setting as given on the command line (undefined: not given), with its flag and the record's field
    const settings: ReadonlyArray<readonly [flag: string, field: keyof PipelineRecord, given: unknown]> = [
      ["--seeds", "seeds", Option.getOrUndefined(given.seeds)],
      ["--seed", "taskSeed", Option.getOrUndefined(given.taskSeed)],
      ["--train-tasks", "trainTasks", Option.getOrUndefined(given.trainTasks)],
      ["--tasks", "testTasksPerLevel", Option.getOrUndefined(given.tasks)],
      ["--levels", "levels", Option.getOrUndefined(given.levels)],
      ["--paradigms", "paradigms", Option.getOrUndefined(given.paradigms)],
      ["--sft-epochs", "sftEpochs", Option.getOrUndefined(given.sftEpochs)],
      ["--dagger-rounds", "daggerRounds", Option.getOrUndefined(given.daggerRounds)],
      ["--rl-iterations", "rlIterations", Option.getOrUndefined(given.rlIterations)],
      ["--rl-tasks", "rlTasksPerIteration", Option.getOrUndefined(given.rlTasks)],
      ["--group", "group", Option.getOrUndefined(given.group)],
      ["--eval-rollouts", "evalRollouts", Option.getOrUndefined(given.evalRollouts)],
      ["--eval-sampled", "evalSampled", Option.getOrUndefined(given.evalSampled)],
      ["--world-seed", "worldSeed", Option.getOrUndefined(given.worldSeed)],
      ["--world-size", "worldSize", Option.getOrUndefined(given.worldSize)],
      ["--concurrency", "concurrency", Option.getOrUndefined(given.concurrency)]
    ]
    const value = <A>(o: Option.Option<A>, fallback: A): A => Option.getOrElse(o, () => fallback)
    const commandLine = Provenance.commandLine()
    const started = Date.now()
    const fresh: PipelineRecord = {
      seeds: value(given.seeds, Pipeline.defaults.seeds),
      taskSeed: value(given.taskSeed, Pipeline.defaults.taskSeed),
      trainTasks: value(given.trainTasks, Pipeline.defaults.trainTasks),
      testTasksPerLevel: value(given.tasks, Pipeline.defaults.testTasksPerLevel),
      levels: value(given.levels, Level.literals),
      paradigms: value(given.paradigms, Paradigm.literals),
      teacherMistakeRate: Pipeline.defaults.teacherMistakeRate,
      teacherFirstQuery: Pipeline.defaults.teacherFirstQuery,
      sftEpochs: value(given.sftEpochs, Pipeline.defaults.sftEpochs),
      daggerRounds: value(given.daggerRounds, Pipeline.defaults.daggerRounds),
      rlIterations: value(given.rlIterations, Pipeline.defaults.rlIterations),
      rlTasksPerIteration: value(given.rlTasks, Pipeline.defaults.rlTasksPerIteration),
      group: value(given.group, Pipeline.defaults.group),
      estimators: Pipeline.defaults.estimators,
      dynamicSampling: Pipeline.defaults.dynamicSampling,
      credit: Pipeline.defaults.credit,
      truncation: Pipeline.defaults.truncation,
      rlTemperature: Pipeline.defaults.rlTemperature,
      evalRollouts: value(given.evalRollouts, Pipeline.defaults.evalRollouts),
      evalSampled: value(given.evalSampled, Pipeline.defaults.evalSampled),
      concurrency: value(given.concurrency, Pipeline.defaults.concurrency),
      worldSeed: value(given.worldSeed, 7),
      worldSize: value(given.worldSize, 50_011)
    }
    if (resuming) {
      if (Option.isSome(given.out) && path.resolve(given.out.value) !== path.resolve(dir)) {
        return yield* new ConfigError({ field: "--out", value: given.out.value, message: `--out ${given.out.value} conflicts with --resume ${dir}: a resumed run writes into its own folder (drop --out)` })
      }
      // opening the store would create an empty run.sqlite, leaving the folder unfit for both --resume and --out
      const fs = yield* FileSystem.FileSystem
      if (!(yield* fs.exists(storeFile(dir)))) {
        return yield* new ConfigError({ field: "--resume", value: dir, message: `--resume ${dir}: no run store (run.sqlite) in this folder, nothing to resume` })
      }
      // a read-only folder or store would fail only after the stages it skips: said now, naming them
      yield* Files.checkWritable("--resume", dir, "folder")
      yield* Files.checkWritable("--resume", storeFile(dir), "file")
    } else {
      yield* RunFolder.ensureFresh(dir).pipe(
        Effect.mapError((e) => new ConfigError({ field: "--out", value: dir, message: `--out ${dir}: ${e.message}` }))
      )
    }
    if (!resuming) yield* Files.checkWritable("--out", dir, "folder")
    if (Option.isSome(given.ship)) yield* Files.checkWritable("--ship", given.ship.value, "folder")
    const folder = yield* RunFolder.make(dir).pipe(
      Effect.mapError((e) => new ConfigError({ field: "--out", value: dir, message: `--out ${dir}: cannot create the run folder (${e.message})` }))
    )
    const program = Effect.gen(function*() {
      const store = yield* RunStore
      const runId = "pipeline"
      const existing = yield* store.getRun(runId)
      let record = fresh
      if (resuming) {
        if (existing === undefined) return yield* new ConfigError({ field: "--resume", value: dir, message: `--resume ${dir}: no pipeline run in its run.sqlite to resume` })
        const decoded = Schema.decodeUnknownResult(PipelineRecord)((existing.config as { pipeline?: unknown }).pipeline)
        if (Result.isFailure(decoded)) return yield* new ConfigError({ field: "--resume", value: dir, message: `--resume ${dir}: the stored configuration does not decode` })
        record = decoded.success
        // a setting given now must be the run's own: a resumed run continues as it was started
        for (const [flag, field, value] of settings) {
          // a run stored before a setting existed resumes with what the options below give it (DAgger: 0 rounds)
          const stored = field === "daggerRounds" ? (record.daggerRounds ?? 0)
            : field === "evalRollouts" ? (record.evalRollouts ?? Pipeline.defaults.evalRollouts)
            : field === "evalSampled" ? (record.evalSampled ?? Pipeline.defaults.evalSampled)
            : record[field]
          if (value === undefined || JSON.stringify(value) === JSON.stringify(stored)) continue
          return yield* new ConfigError({ field: flag, value: JSON.stringify(value), message: `${flag} ${JSON.stringify(value)} conflicts with the resumed run's ${JSON.stringify(stored)}: --resume continues the run as it was started (drop ${flag}, or start a new run with --out)` })
        }
        // its checkpoints read the action space's columns as they meant when the run started
        const schema = (existing.config as { featureSchema?: unknown }).featureSchema
        if (schema !== ActionSpace.featureSchemaHash) {
          return yield* new ConfigError({
            field: "--resume",
            value: dir,
            message: schema === undefined
              ? `--resume ${dir}: the run records no action-space feature schema (it was started before runs recorded one), and its checkpoints may read this action space's columns (${ActionSpace.featureSchemaHash}) with another meaning: start a new run with --out`
              : `--resume ${dir}: the run's checkpoints were trained on action-space features ${String(schema)}, this action space's are ${ActionSpace.featureSchemaHash} (another version of src/agent/actions): start a new run with --out`
          })
        }
      } else {
        yield* store.createRun(runId, JSON.parse(JSON.stringify({ pipeline: fresh, ...provenance, featureSchema: ActionSpace.featureSchemaHash, command: commandLine })))
        yield* folder.writeJson("config.json", { pipeline: fresh, ...provenance, featureSchema: ActionSpace.featureSchemaHash, command: commandLine, store: "run.sqlite" })
      }
      // announced before any work (after a resumed run's settings are checked, so a refusal is the one line), so a
      // person can watch it fill: config.json and run.sqlite now, the tables and report at the end
      yield* Console.error(`paraagent: run folder ${path.resolve(folder.dir)} (${resuming ? "resuming its run.sqlite" : "config.json and run.sqlite now"}; table.md, summary.json, report.html, trajectories.html, rl-metrics.csv when done)`)
      const options: Pipeline.PipelineOptions = {
        ...Pipeline.defaults,
        ...record,
        teacherFirstQuery: record.teacherFirstQuery ?? "documentation",
        daggerRounds: record.daggerRounds ?? 0,
        dynamicSampling: record.dynamicSampling ?? Pipeline.defaults.dynamicSampling,
        credit: record.credit ?? Pipeline.defaults.credit,
        truncation: record.truncation ?? "score",
        rlTemperature: record.rlTemperature ?? 1,
        evalRollouts: record.evalRollouts ?? Pipeline.defaults.evalRollouts,
        evalSampled: record.evalSampled ?? Pipeline.defaults.evalSampled,
        progress: true
      }
      const workers = Math.min(given.workers, options.seeds.length)
      const seeds = workers > 1
        ? { runner: PipelineWorkers.runner({ runId, options, storeFile: storeFile(dir), world: { seed: record.worldSeed, size: record.worldSize } }), concurrency: workers }
        : undefined
      const result = yield* Pipeline.run(runId, options, seeds).pipe(
        Effect.provide(App.layer({ world: { seed: record.worldSeed, size: record.worldSize }, tasks: { holdoutTools: true } }))
      )
      yield* store.setStatus(runId, "done")
      // the trajectory browser, one stored stage at a time: each trajectory's details spooled beside the page, then the
      // page written atomically around them (a run's thousands of trajectories never sit in memory at once)
      const sha256 = (text: string) => createHash("sha256").update(text).digest("base64")
      const page = TrajectoryBrowser.builder("ParaAgent: every held-out trajectory of the run", sha256)
      yield* Effect.scoped(Effect.gen(function*() {
        const details = yield* AtomicWrite.spool(folder.file("trajectories.html"))
        let first = true
        yield* Pipeline.eachHeldOut(runId, options, result.testTasks, (entry) => {
          const text = page.add(entry)
          const separated = first ? text : `,${text}`
          first = false
          return details.append(separated)
        })
        yield* AtomicWrite.writeFileAtomicPartsEffect(folder.file("trajectories.html"), [page.head(), { file: details.file }, page.tail()])
      }))
      return { result, options }
    })
    const { result, options } = yield* program.pipe(Effect.provide(RunStoreSqlite.layer(storeFile(dir))))

    // outputs: tables, summary, report, exports, the trained model
    const table = Pipeline.renderAblation(result.summary)
    const reportInput: Report.ReportInput = { title: "ParaAgent: the embedded pipeline", command: commandLine, ...result.report, browser: "trajectories.html" }
    yield* folder.writeText("table.md", `${table}\n`)
    yield* folder.writeJson("summary.json", result.summary)
    yield* folder.writeText("rl-metrics.csv", Pipeline.metricsCsv(result.summary.training.rl))
    yield* folder.writeText("report.md", Report.renderMarkdown(reportInput))
    yield* folder.writeText("report.html", Report.renderHtml(reportInput))
    const demos = Exports.demonstrations(result.demonstrations.map((d) => d.trajectory), {
      mode: "text",
      tasks: result.demonstrations.map((d) => d.task),
      lookup: (name) => result.lookup(name),
      maxRounds: 12
    })
    if (Result.isSuccess(demos)) yield* folder.writeText("demonstrations.jsonl", demos.success.lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
    const experience = Exports.experience(result.experience, { estimator: Pipeline.oursEstimator(options) ?? "paraagent" })
    if (Result.isSuccess(experience)) yield* folder.writeText("experience.jsonl", experience.success.lines.map((l) => JSON.stringify(l)).join("\n") + "\n")
    const avg = result.summary.ablation.Ours["Avg"]
    const modelProvenance = {
      command: commandLine,
      seed: options.seeds[0] ?? 1,
      commit: provenance.commit,
      version: result.shipped.version,
      metrics: { pass1: avg?.pass1.mean ?? 0, rounds: avg?.rounds.mean ?? 0, calls: avg?.calls.mean ?? 0 }
    }
    yield* PolicyScorerOnnx.saveModel(path.join(dir, "model"), result.shipped.params, modelProvenance)
    if (Option.isSome(given.ship)) yield* PolicyScorerOnnx.saveModel(given.ship.value, result.shipped.params, modelProvenance)
    yield* Console.error(`paraagent: done in ${Progress.humanDuration(Date.now() - started)}; outputs in ${path.resolve(folder.dir)}`)
    yield* Console.log(table)
    yield* Console.log(folder.dir)
  })
).pipe(Command.withDescription("The ParaAgent pipeline on the embedded ToolEnv: teacher demonstrations, SFT, RL (GRPO vs decoupled advantages), held-out evaluation over seeds"))

command.pipe(
  Otlp.traced("paraagent"),
  Cli.run("paraagent", Provenance.packageVersion(), new Map([...shown, ["seeds", Pipeline.defaults.seeds.join(",")], ["out", defaultOut]])),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
