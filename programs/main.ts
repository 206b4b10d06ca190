/**
 * The main job: build the generated ToolEnv, sample held-out I1/I2/I3 tasks, run a policy under each paradigm,
 * judge and reward every rollout, and write the Table-1-style comparison plus all trajectories to a run folder.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Option, Redacted } from "effect"
import { Command, Flag } from "effect/cli"
import * as App from "../layers/App.ts"
import { Paradigm } from "../src/domain/Trajectory.ts"
import { Level } from "../src/domain/Task.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import * as Job from "../src/eval/ComparisonJob.ts"

/** A comma-separated flag value decoded as a list of literals; a bad item is a ConfigError naming the flag and item. */
const decodeList = <const L extends string>(flag: string, known: ReadonlyArray<L>, text: string) => {
  const isKnown = (s: string): s is L => (known as ReadonlyArray<string>).includes(s)
  const items = text.split(",").map((s) => s.trim()).filter((s) => s !== "")
  const bad = items.find((i) => !isKnown(i))
  return bad === undefined && items.length > 0
    ? Effect.succeed(items.filter(isKnown))
    : Effect.fail(new ConfigError({ field: `--${flag}`, value: bad ?? text, message: `expected a comma-separated list of ${known.join(", ")}` }))
}

/** Prints a typed error on stderr, one line naming what was wrong, and sets a failing exit code. */
const report = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`paraagent: ${message}\n`)
    process.exitCode = 1
  })

const command = Command.make(
  "paraagent",
  {
    tasks: Flag.Int("tasks").pipe(Flag.withDescription("held-out tasks per level"), Flag.withDefault(Job.defaults.tasksPerLevel)),
    levels: Flag.String("levels").pipe(Flag.withDescription("levels to run, comma-separated (I1,I2,I3)"), Flag.withDefault("I1,I2,I3")),
    seed: Flag.Int("seed").pipe(Flag.withDescription("seed of the task draw and the rollouts"), Flag.withDefault(Job.defaults.seed)),
    worldSeed: Flag.Int("world-seed").pipe(Flag.withDescription("seed of the generated world"), Flag.withDefault(7)),
    worldSize: Flag.Int("world-size").pipe(Flag.withDescription("tool interfaces in the generated world"), Flag.withDefault(50_011)),
    paradigms: Flag.String("paradigms").pipe(
      Flag.withDescription("paradigms to compare, comma-separated: ParaAct,ReAct,ExploreThenExecute,DFSDT"),
      Flag.withDefault("ParaAct,ReAct,ExploreThenExecute,DFSDT")
    ),
    group: Flag.Int("group").pipe(Flag.withDescription("rollouts per task (≥ 2 gives Pass@2)"), Flag.withDefault(Job.defaults.group)),
    policy: Flag.Literals("policy", ["teacher", "openai", "teacher-llm"]).pipe(
      Flag.withDescription("teacher: the scripted multi-agent teacher (no network); openai: one LLM agent over an OpenAI-compatible endpoint; teacher-llm: the multi-agent teacher with each role an LLM call"),
      Flag.withDefault("teacher")
    ),
    mistakeRate: Flag.Finite("mistake-rate").pipe(Flag.withDescription("teacher mistake rate per decision"), Flag.withDefault(0.1)),
    mode: Flag.Literals("mode", ["text", "native"]).pipe(Flag.withDescription("openai policy: ParaAct tags or native tool_calls"), Flag.withDefault("text")),
    baseUrl: Flag.String("base-url").pipe(Flag.withDescription("OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (or PARAAGENT_BASE_URL)"), Flag.optional),
    model: Flag.String("model").pipe(Flag.withDescription("model name (or PARAAGENT_MODEL)"), Flag.optional),
    apiKey: Flag.Redacted("api-key").pipe(Flag.withDescription("API key (or PARAAGENT_API_KEY); never printed"), Flag.optional),
    judge: Flag.Literals("judge", ["rule", "llm"]).pipe(Flag.withDescription("rule judge (gold facts) or the LLM judge over the endpoint"), Flag.withDefault("rule")),
    retriever: Flag.Literals("retriever", ["bm25", "dense", "hybrid"]).pipe(Flag.withDescription("tool retriever"), Flag.withDefault("bm25")),
    faults: Flag.Boolean("faults").pipe(Flag.withDescription("inject the simulator's 5% transient faults (--no-faults to disable)"), Flag.withDefault(true)),
    maxRounds: Flag.Int("max-rounds").pipe(Flag.withDescription("T_max"), Flag.withDefault(12)),
    concurrency: Flag.Int("concurrency").pipe(Flag.withDescription("task groups rolled out at once"), Flag.withDefault(Job.defaults.concurrency)),
    estimator: Flag.String("estimator").pipe(Flag.withDescription("advantage estimator stored on trajectories (paraagent, grpo, paraagent_single_pool, grpo_per_index)"), Flag.withDefault("paraagent")),
    out: Flag.String("out").pipe(Flag.withDescription("run folder (default runs/<date>-seed<seed>)"), Flag.optional)
  },
  Effect.fn(function*(flags) {
    const levels = yield* decodeList("levels", Level.literals, flags.levels)
    const paradigms = yield* decodeList("paradigms", Paradigm.literals, flags.paradigms)
    const endpoint = Option.isSome(flags.baseUrl) || Option.isSome(flags.model)
      ? {
        baseUrl: Option.getOrElse(flags.baseUrl, () => process.env["PARAAGENT_BASE_URL"] ?? ""),
        model: Option.getOrElse(flags.model, () => process.env["PARAAGENT_MODEL"] ?? ""),
        ...(Option.isSome(flags.apiKey) ? { apiKey: flags.apiKey.value } : process.env["PARAAGENT_API_KEY"] ? { apiKey: Redacted.make(process.env["PARAAGENT_API_KEY"]) } : {})
      }
      : undefined
    const options: Job.JobOptions = {
      tasksPerLevel: flags.tasks,
      levels,
      seed: flags.seed,
      paradigms,
      group: flags.group,
      concurrency: flags.concurrency,
      estimator: flags.estimator,
      out: Option.getOrElse(flags.out, () => Job.defaultOut(flags.seed)),
      progress: true
    }
    const app: App.AppOptions = {
      world: { seed: flags.worldSeed, size: flags.worldSize },
      tasks: { holdoutTools: true },
      retriever: flags.retriever,
      policy: flags.policy === "teacher"
        ? { kind: "teacher", options: { mistakeRate: flags.mistakeRate } }
        : flags.policy === "openai"
        ? { kind: "openai", options: { mode: flags.mode } }
        : { kind: "teacher-llm" },
      judge: flags.judge,
      ...(endpoint !== undefined ? { endpoint } : {}),
      simulator: { faultRate: flags.faults ? 0.05 : 0 },
      rollout: { maxRounds: flags.maxRounds, faults: flags.faults, lenient: flags.policy === "openai" }
    }
    const result = yield* Job.run(options).pipe(Effect.provide(App.layer(app)))
    yield* Console.log(result.table)
    yield* Console.log(result.dir)
  }, (effect) =>
    effect.pipe(
      Effect.catchTags({
        ConfigError: (e) => report(`${e.field} = ${JSON.stringify(e.value)}: ${e.message}`),
        JobError: (e) => report(`--${e.field}: ${e.message}`),
        RetrieverError: (e) => report(`retriever: ${e.message}`)
      })
    ))
).pipe(Command.withDescription("Compare agent paradigms on held-out ToolEnv tasks: Pass@1/Pass@2, Path, rounds, calls, searches"))

command.pipe(
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
