/**
 * One run configuration for every program and benchmark: the shared flags (each decoded and range-checked by Schema
 * at parse time, before any work), the `RunConfig` of `npm start` that a run folder's `config.json` holds, and the
 * documented caps.
 */
import { Effect, Option, Redacted, Schema } from "effect"
import { CliError, Flag } from "effect/cli"
import { Level } from "../domain/Task.ts"
import { Paradigm } from "../domain/Trajectory.ts"
import * as Telemetry from "../io/Telemetry.ts"
import * as Advantage from "../math/Advantage.ts"
import * as Faults from "../toolenv/simulator/Faults.ts"
import type { JobOptions } from "./ComparisonJob.ts"

// ---------------------------------------------------------------------------------------------------------------
// Caps (documented in docs/programs.md)
// ---------------------------------------------------------------------------------------------------------------

/** The inclusive range of every numeric setting; a value outside is refused when the flags are parsed. */
export const caps = {
  /** Tool interfaces in a generated world: below 500 the generator has too few providers per category. */
  worldSize: { minimum: 500, maximum: 200_000 },
  /** Held-out tasks per level. */
  tasks: { minimum: 1, maximum: 10_000 },
  /** Rollouts per task (G). */
  group: { minimum: 1, maximum: 64 },
  /** T_max. */
  maxRounds: { minimum: 1, maximum: 100 },
  /** Task groups (or items) in flight at once. */
  concurrency: { minimum: 1, maximum: 256 },
  /** Tasks printed by `toolenv sample`. */
  count: { minimum: 1, maximum: 10_000 },
  /** Task index of `toolenv gold`. */
  index: { minimum: 0, maximum: 9_999 },
  /** Per-request timeout of the OpenAI-compatible client, ms (1 ms … 1 h). */
  timeoutMs: { minimum: 1, maximum: 3_600_000 },
  /** Retries after the first request. */
  maxRetries: { minimum: 0, maximum: 10 },
  /** Hits per query of the retrieval benchmark (≥ 10 for Recall@10). */
  k: { minimum: 10, maximum: 10_000 },
  /** Seeds: 32-bit integers. */
  seed: { minimum: -2_147_483_648, maximum: 4_294_967_295 },
  /** train-encoder: training batches, queries per batch, embedding width, vocabulary and n-gram rows. */
  steps: { minimum: 1, maximum: 10_000_000 },
  batch: { minimum: 1, maximum: 4_096 },
  dim: { minimum: 1, maximum: 1_024 },
  maxVocab: { minimum: 1, maximum: 1_000_000 },
  buckets: { minimum: 0, maximum: 1_000_000 },
  /** train-encoder: Adam learning rate and InfoNCE temperature (> 0). */
  learningRate: { minimum: 0, maximum: 10, exclusiveMinimum: true },
  temperature: { minimum: 0, maximum: 10, exclusiveMinimum: true }
} as const

/** An inclusive range (the lower end exclusive when `exclusiveMinimum`). */
export interface Range {
  readonly minimum: number
  readonly maximum: number
  readonly exclusiveMinimum?: boolean
}

/** An integer within `range`. */
export const IntIn = (range: Range) => Schema.Int.check(Schema.isBetween(range))

/** A finite number within `range`. */
export const FiniteIn = (range: Range) => Schema.Finite.check(Schema.isBetween(range))

const shown = (range: Range): string => `${range.exclusiveMinimum === true ? ">" : ""}${range.minimum}–${range.maximum}`

/** A probability. */
export const Rate = FiniteIn({ minimum: 0, maximum: 1 })

/** A name of the advantage estimator registry. */
export const EstimatorName = Schema.String.check(
  Schema.makeFilter((name: string) => Advantage.estimators.has(name) || `unknown estimator; known: ${[...Advantage.estimators.keys()].join(", ")}`)
)

/** The policies `npm start` can run. */
export const PolicyKind = Schema.Literals(["teacher", "openai", "teacher-llm", "paraagent"])
/** The judges. */
export const JudgeKind = Schema.Literals(["rule", "llm"])
/** The retrievers. */
export const RetrieverKind = Schema.Literals(["bm25", "dense", "hybrid"])

/** The endpoint as recorded in `config.json`: the API key (and any credential in the URL) never appears. */
export const EndpointRecord = Schema.Struct({
  baseUrl: Schema.String,
  model: Schema.String,
  apiKey: Schema.optionalKey(Schema.Literal("<redacted>")),
  timeoutMs: Schema.Finite,
  maxRetries: Schema.Finite,
  temperature: Schema.Finite,
  maxTokens: Schema.Finite
})
/** The endpoint as recorded in `config.json`. */
export type EndpointRecord = typeof EndpointRecord.Type

/** The decoded configuration of `npm start`, exactly as `config.json` holds it (plus the provenance fields). */
export const RunConfig = Schema.Struct({
  tasks: IntIn(caps.tasks),
  levels: Schema.Array(Level),
  seed: IntIn(caps.seed),
  worldSeed: IntIn(caps.seed),
  worldSize: IntIn(caps.worldSize),
  paradigms: Schema.Array(Paradigm),
  group: IntIn(caps.group),
  policy: PolicyKind,
  mistakeRate: Rate,
  mode: Schema.Literals(["text", "native"]),
  judge: JudgeKind,
  retriever: RetrieverKind,
  faults: Schema.Boolean,
  /** The simulator's transient-fault rate that `faults` stands for. */
  faultRate: Rate,
  maxRounds: IntIn(caps.maxRounds),
  concurrency: IntIn(caps.concurrency),
  estimator: EstimatorName,
  out: Schema.String,
  endpoint: Schema.optionalKey(EndpointRecord)
})
/** The decoded configuration of `npm start`. */
export type RunConfig = typeof RunConfig.Type

/** The fault rate `--faults` turns on. */
export const faultRateOf = (faults: boolean): number => (faults ? Faults.defaultFaultRate : 0)

/** Whether a configuration talks to an OpenAI-compatible endpoint. */
export const needsEndpoint = (config: { readonly policy: string; readonly judge: string }): boolean =>
  config.policy === "openai" || config.policy === "teacher-llm" || config.judge === "llm"

/** The comparison job's options for a configuration. */
export const jobOptions = (config: RunConfig, progress: boolean): JobOptions => ({
  tasksPerLevel: config.tasks,
  levels: config.levels,
  seed: config.seed,
  paradigms: config.paradigms,
  group: config.group,
  concurrency: config.concurrency,
  estimator: config.estimator,
  out: config.out,
  progress
})

/** Reads a run folder's `config.json` back into the configuration that produced it. */
export const decodeConfigJson = (text: string) => Schema.decodeUnknownEffect(Schema.fromJsonString(RunConfig))(text)

/** A base URL with its `user:password@` and query values replaced, so no credential in the URL is ever recorded. */
export const redactUrl = Telemetry.redactUrl

/** The recorded form of a resolved endpoint. */
export const endpointRecord = (endpoint: {
  readonly baseUrl: string
  readonly model: string
  readonly apiKey: Redacted.Redacted | undefined
  readonly timeoutMs: number
  readonly maxRetries: number
  readonly temperature: number
  readonly maxTokens: number
}): EndpointRecord => ({
  baseUrl: redactUrl(endpoint.baseUrl),
  model: endpoint.model,
  ...(endpoint.apiKey === undefined ? {} : { apiKey: "<redacted>" as const }),
  timeoutMs: endpoint.timeoutMs,
  maxRetries: endpoint.maxRetries,
  temperature: endpoint.temperature,
  maxTokens: endpoint.maxTokens
})

// ---------------------------------------------------------------------------------------------------------------
// Shared flags: defined once, each program picks what it needs
// ---------------------------------------------------------------------------------------------------------------

/** An integer flag refused outside `range` at parse time. */
export const intFlag = (name: string, range: Range, description: string) =>
  Flag.Int(name).pipe(Flag.withSchema(IntIn(range)), Flag.withDescription(`${description} (${shown(range)})`))

/** A finite-number flag refused outside `range` at parse time. */
export const numberFlag = (name: string, range: Range, description: string) =>
  Flag.Finite(name).pipe(Flag.withSchema(FiniteIn(range)), Flag.withDescription(`${description} (${shown(range)})`))

/**
 * The items of a comma-separated flag value, each trimmed; undefined when an item is empty (`a,,b`, `a,`, `,`, ``):
 * an empty element is a typo, never a default.
 */
export const commaItems = (text: string): ReadonlyArray<string> | undefined => {
  const items = text.split(",").map((s) => s.trim())
  return items.some((s) => s === "") ? undefined : items
}

/** A comma-separated list flag whose every item `parse` accepts (undefined: refused); empty items are refused. */
export const parsedListFlag = <A>(name: string, expected: string, description: string, parse: (item: string) => A | undefined) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description}, comma-separated`),
    Flag.mapEffect((text) => {
      const items = commaItems(text)
      if (items === undefined) return Effect.fail(new CliError.InvalidValue({ option: name, value: text, expected: `${expected}, comma-separated, with no empty item`, kind: "flag" }))
      const parsed: Array<A> = []
      for (const item of items) {
        const value = parse(item)
        if (value === undefined) return Effect.fail(new CliError.InvalidValue({ option: name, value: item, expected, kind: "flag" }))
        parsed.push(value)
      }
      return Effect.succeed(parsed as ReadonlyArray<A>)
    })
  )

/** A comma-separated list of literals; an unknown or missing item is an invalid value of the flag. */
export const listFlag = <const L extends string>(name: string, known: ReadonlyArray<L>, description: string) =>
  Flag.String(name).pipe(
    Flag.withDescription(`${description}, comma-separated: ${known.join(",")}`),
    Flag.mapEffect((text) => {
      const isKnown = (s: string): s is L => (known as ReadonlyArray<string>).includes(s)
      const items = commaItems(text)
      if (items === undefined) {
        return Effect.fail(new CliError.InvalidValue({ option: name, value: text, expected: `a comma-separated list of ${known.join(", ")} with no empty item`, kind: "flag" }))
      }
      const bad = items.find((i) => !isKnown(i))
      return bad === undefined
        ? Effect.succeed([...new Set(items.filter(isKnown))] as ReadonlyArray<L>)
        : Effect.fail(new CliError.InvalidValue({ option: name, value: bad, expected: `a comma-separated list of ${known.join(", ")}`, kind: "flag" }))
    })
  )

/** The flags shared by programs and benchmarks. */
export const flags = {
  seed: intFlag("seed", caps.seed, "seed of the task draw and the rollouts"),
  worldSeed: intFlag("world-seed", caps.seed, "seed of the generated world"),
  worldSize: intFlag("world-size", caps.worldSize, "tool interfaces in the generated world"),
  tasks: intFlag("tasks", caps.tasks, "held-out tasks per level"),
  levels: listFlag("levels", Level.literals, "levels to run"),
  paradigms: listFlag("paradigms", Paradigm.literals, "paradigms to compare"),
  group: intFlag("group", caps.group, "rollouts per task (≥ 2 gives Pass@2)"),
  policy: Flag.Literals("policy", PolicyKind.literals).pipe(
    Flag.withDescription("teacher: the scripted multi-agent teacher (no network); openai: one LLM agent over an OpenAI-compatible endpoint; teacher-llm: the multi-agent teacher with each role an LLM call; paraagent: the trained embedded policy shipped in models/ (onnxruntime)")
  ),
  mistakeRate: numberFlag("mistake-rate", { minimum: 0, maximum: 1 }, "teacher mistake rate per decision"),
  mode: Flag.Literals("mode", ["text", "native"]).pipe(Flag.withDescription("openai policy: ParaAct tags or native tool_calls")),
  judge: Flag.Literals("judge", JudgeKind.literals).pipe(Flag.withDescription("rule judge (gold facts) or the LLM judge over the endpoint")),
  retriever: Flag.Literals("retriever", RetrieverKind.literals).pipe(Flag.withDescription("tool retriever")),
  faults: Flag.Boolean("faults").pipe(Flag.withDescription(`inject the simulator's ${100 * Faults.defaultFaultRate}% transient faults (--no-faults to disable)`)),
  maxRounds: intFlag("max-rounds", caps.maxRounds, "T_max, rounds per rollout"),
  concurrency: intFlag("concurrency", caps.concurrency, "task groups rolled out at once"),
  estimator: Flag.String("estimator").pipe(
    Flag.withSchema(EstimatorName),
    Flag.withDescription(`advantage estimator stored on trajectories (${[...Advantage.estimators.keys()].join(", ")})`)
  ),
  out: Flag.String("out").pipe(Flag.withDescription("run folder (default runs/<date>-seed<seed>)")),
  library: Flag.Directory("library", { mustExist: true }).pipe(
    Flag.withDescription("a ToolBench-format folder (<Category>/<tool>.json) instead of the generated library")
  ),
  queries: Flag.File("queries", { mustExist: true }).pipe(Flag.withDescription("a StableToolBench query file")),
  /** The endpoint flags: each wins over its PARAAGENT_* variable, the rest come from the environment. */
  baseUrl: Flag.String("base-url").pipe(Flag.withDescription("OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1 (else PARAAGENT_BASE_URL)"), Flag.optional),
  model: Flag.String("model").pipe(Flag.withDescription("model name (else PARAAGENT_MODEL)"), Flag.optional),
  apiKey: Flag.Redacted("api-key").pipe(Flag.withDescription("API key (else PARAAGENT_API_KEY / OPENAI_API_KEY); never printed"), Flag.optional),
  timeoutMs: intFlag("timeout-ms", caps.timeoutMs, "per-request timeout in ms (else PARAAGENT_TIMEOUT_MS)").pipe(Flag.optional),
  maxRetries: intFlag("max-retries", caps.maxRetries, "retries per request (else PARAAGENT_MAX_RETRIES)").pipe(Flag.optional)
} as const

/** The endpoint flags as given (each absent unless on the command line). */
export interface EndpointFlags {
  readonly baseUrl: Option.Option<string>
  readonly model: Option.Option<string>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly timeoutMs: Option.Option<number>
  readonly maxRetries: Option.Option<number>
}

/** The endpoint flags of a command, in one record. */
export const endpointFlags = {
  baseUrl: flags.baseUrl,
  model: flags.model,
  apiKey: flags.apiKey,
  timeoutMs: flags.timeoutMs,
  maxRetries: flags.maxRetries
} as const

/** The fields the endpoint flags set, to lay over the environment's (flags win; an absent flag leaves the variable). */
export const endpointOverrides = (given: EndpointFlags): {
  readonly baseUrl?: string
  readonly model?: string
  readonly apiKey?: Redacted.Redacted<string>
  readonly timeoutMs?: number
  readonly maxRetries?: number
} => ({
  ...(Option.isSome(given.baseUrl) ? { baseUrl: given.baseUrl.value } : {}),
  ...(Option.isSome(given.model) ? { model: given.model.value } : {}),
  ...(Option.isSome(given.apiKey) ? { apiKey: given.apiKey.value } : {}),
  ...(Option.isSome(given.timeoutMs) ? { timeoutMs: given.timeoutMs.value } : {}),
  ...(Option.isSome(given.maxRetries) ? { maxRetries: given.maxRetries.value } : {})
})
