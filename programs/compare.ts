/**
 * The oracle comparison (`npm run compare`): sample held-out I1/I2/I3 tasks of the generated ToolEnv, run a policy
 * (the scripted oracle teacher by default) under each paradigm, judge and reward every rollout, write the Table-1-style table and all trajectories to a run folder.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as path from "node:path"
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as App from "../layers/App.ts"
import * as OpenAiClient from "../layers/model/OpenAiClient.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import * as Provenance from "../src/io/Provenance.ts"
import * as RunFolder from "../src/io/RunFolder.ts"
import * as Job from "../src/eval/ComparisonJob.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import { Level } from "../src/domain/Task.ts"
import { Paradigm } from "../src/domain/Trajectory.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Files from "../src/io/Files.ts"

const { flags } = RunConfig

const command = Command.make(
  "compare",
  {
    tasks: flags.tasks.pipe(Flag.withDefault(Job.defaults.tasksPerLevel)),
    levels: flags.levels.pipe(Flag.withDefault(Level.literals)),
    seed: flags.seed.pipe(Flag.withDefault(Job.defaults.seed)),
    worldSeed: flags.worldSeed.pipe(Flag.withDefault(7)),
    worldSize: flags.worldSize.pipe(Flag.withDefault(50_011)),
    paradigms: flags.paradigms.pipe(Flag.withDefault(Paradigm.literals)),
    group: flags.group.pipe(Flag.withDefault(Job.defaults.group)),
    policy: flags.policy.pipe(Flag.withDefault("teacher")),
    mistakeRate: flags.mistakeRate.pipe(Flag.withDefault(0.1)),
    mode: flags.mode.pipe(Flag.withDefault("text")),
    judge: flags.judge.pipe(Flag.withDefault("rule")),
    retriever: flags.retriever.pipe(Flag.withDefault("bm25")),
    faults: flags.faults.pipe(Flag.withDefault(true)),
    maxRounds: flags.maxRounds.pipe(Flag.withDefault(12)),
    concurrency: flags.concurrency.pipe(Flag.withDefault(Job.defaults.concurrency)),
    estimator: flags.estimator.pipe(Flag.withDefault("paraagent")),
    out: flags.out.pipe(Flag.optional),
    ...RunConfig.endpointFlags
  },
  Effect.fn(function*(given) {
    // the endpoint: the environment's PARAAGENT_* variables with every given flag laid over them, resolved (and
    // checked) before the world is built
    const endpoint = RunConfig.needsEndpoint(given) ? yield* OpenAiClient.configFromEnv(RunConfig.endpointOverrides(given)) : undefined
    const config: RunConfig.RunConfig = {
      tasks: given.tasks,
      levels: given.levels,
      seed: given.seed,
      worldSeed: given.worldSeed,
      worldSize: given.worldSize,
      paradigms: given.paradigms,
      group: given.group,
      policy: given.policy,
      mistakeRate: given.mistakeRate,
      mode: given.mode,
      judge: given.judge,
      retriever: given.retriever,
      faults: given.faults,
      faultRate: RunConfig.faultRateOf(given.faults),
      maxRounds: given.maxRounds,
      concurrency: given.concurrency,
      estimator: given.estimator,
      out: Option.getOrElse(given.out, () => Job.defaultOut(given.seed)),
      ...(endpoint !== undefined ? { endpoint: RunConfig.endpointRecord(endpoint) } : {})
    }
    // a run folder that holds an earlier run, or cannot be made, fails now, not after building the world
    yield* RunFolder.ensureFresh(config.out).pipe(
      Effect.mapError((e) => new ConfigError({ field: "--out", value: config.out, message: `--out ${config.out}: ${e.message}` }))
    )
    yield* Files.checkWritable("--out", config.out, "folder")
    yield* RunFolder.make(config.out).pipe(
      Effect.mapError((e) => new ConfigError({ field: "--out", value: config.out, message: `--out ${config.out}: cannot create the run folder (${e.message})` }))
    )
    // announced before the world is built, so a person can watch it fill
    yield* Console.error(`compare: run folder ${path.resolve(config.out)} (trajectories.jsonl as rollouts finish; table.md and summary.json when done)`)
    const provenance = yield* Provenance.read
    const result = yield* Job.run({ ...RunConfig.jobOptions(config, true), record: { ...config, ...provenance } }).pipe(
      Effect.provide(App.layer(App.optionsFromRunConfig(config, endpoint)))
    )
    yield* Console.log(result.table)
    yield* Console.log(result.dir)
  })
).pipe(Command.withDescription("Compare agent paradigms on held-out ToolEnv tasks: Pass@1/Pass@2, Path, rounds, calls, searches"))

command.pipe(
  Otlp.traced("compare"),
  Cli.run("compare", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
