/**
 * The Simulator service: ToolEnv's three-layer simulator (interface validation, consistent world state,
 * response rendering) with deterministic transient faults. One Episode holds the state of one rollout.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { CallOutcome, ToolCall } from "../domain/Call.ts"
import { ConfigError } from "../domain/Errors.ts"
import type { Json, JsonObject } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import { Engine, type EpisodeSpec, type EpisodeState } from "./simulator/Engine.ts"

export type { EpisodeSpec } from "./simulator/Engine.ts"
import * as Faults from "./simulator/Faults.ts"
import { ToolLibrary } from "./ToolLibrary.ts"
import { GeneratedWorld } from "./world/World.ts"

/** The result of executing one call inside an episode. */
export interface Execution {
  readonly outcome: CallOutcome
  /** 1 for the first time this exact call (tool + arguments) is made in the episode, 2 for the next, ... */
  readonly attempt: number
}

/** The world state of one rollout. */
export interface Episode {
  /**
   * Executes one call whose `$ref`s are already resolved. Never fails: every error is an outcome.
   * May sleep when a latency model is configured; safe to run many calls concurrently.
   */
  readonly execute: (call: ToolCall) => Effect.Effect<Execution>
  /**
   * Present when a call completes synchronously (no latency model, no renderer): the same execution as `execute`,
   * as a plain function, so a runtime can run a round's calls inline, in order, without a fiber and a timer per
   * call (a synchronous call cannot outlast a timeout anyway). May throw where `execute` would die.
   */
  readonly executeSync?: (call: ToolCall) => Execution
}

/** The three-layer simulator. */
export class Simulator extends Context.Service<Simulator, {
  readonly open: (spec: EpisodeSpec) => Effect.Effect<Episode>
}>()("paraagent/Simulator") {
  /** The default layer: deterministic L3 over the ToolLibrary (see {@link layer}). */
  static readonly layer = (config: Partial<SimulatorConfig> = {}): Layer.Layer<Simulator, ConfigError, ToolLibrary> => layer(config)
}

/** A latency model (see src/toolenv/simulator/Faults.ts): per-tool base latency in [minMs, maxMs], per-call jitter, timeout duration. */
export const LatencyConfig = Schema.Struct({
  minMs: Schema.Number.pipe(Schema.check(Schema.isGreaterThan(0))),
  maxMs: Schema.Number.pipe(Schema.check(Schema.isGreaterThan(0))),
  jitter: Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  timeoutMs: Schema.Number.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
})

/** The simulator's configuration record. */
export const SimulatorConfig = Schema.Struct({
  /** Seed of imported tools' rendered values; mixed into fault draws. Generated tools follow their world's seed. */
  seed: Schema.Int,
  /** Transient-fault probability per call attempt (paper: 5%). */
  faultRate: Schema.Number.pipe(Schema.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  /** Latency model; absent = calls complete at once. */
  latency: Schema.optionalKey(LatencyConfig),
  /** L3 rendering: deterministic here; layers/model/SimulatorLlm.ts renders with an LLM. */
  render: Schema.Literals(["deterministic", "llm"])
})
/** The simulator's configuration record. */
export type SimulatorConfig = typeof SimulatorConfig.Type

/** The default configuration: seed 0, 5% faults, no latency, deterministic rendering. */
export const defaultConfig: SimulatorConfig = { seed: 0, faultRate: Faults.defaultFaultRate, render: "deterministic" }

/** Decodes a (partial) configuration over the defaults; a bad field is a ConfigError naming it. */
export const decodeConfig = (config: Partial<SimulatorConfig> = {}): Effect.Effect<SimulatorConfig, ConfigError> =>
  Schema.decodeUnknownEffect(SimulatorConfig)({ ...defaultConfig, ...config }).pipe(
    Effect.mapError((e) => new ConfigError({ field: "Simulator.config", value: JSON.stringify(config), message: e.message }))
  )

/** Re-renders a successful payload (the LLM renderer); must return a payload for the same call. */
export type Render = (spec: ToolSpec, args: JsonObject, payload: Json) => Effect.Effect<Json>

/** Builds the service over a core; `render`, when given, replaces the payload of successful calls. */
export const fromEngine = (engine: Engine, render?: Render): Simulator["Service"] => {
  // Without latency or a renderer a call is one synchronous step: the hot path stays a single Effect.sync.
  const plain = render === undefined && engine.config.latency === undefined
  const execute = (state: EpisodeState) => (call: ToolCall): Effect.Effect<Execution> =>
    plain ? Effect.sync(() => engine.run(state, call)) : Effect.suspend(() => {
      const step = engine.step(state, call)
      const finish = (outcome: CallOutcome): Execution => {
        step.commit()
        return { outcome, attempt: step.attempt }
      }
      const outcome: Effect.Effect<CallOutcome> =
        render !== undefined && step.outcome._tag === "ok" && step.spec !== undefined && step.args !== undefined
          ? Effect.map(render(step.spec, step.args, step.outcome.payload), (payload): CallOutcome => ({ _tag: "ok", payload }))
          : Effect.succeed(step.outcome)
      const timed = step.latencyMs > 0 ? Effect.andThen(Effect.sleep(step.latencyMs), outcome) : outcome
      return Effect.map(timed, finish)
    })
  return Simulator.of({
    // Not a traced Effect.fn: a span per episode cost 3.2 µs against 0.1 µs for opening the episode itself, about a
    // microsecond per call on the bench's 3-call tasks (docs/toolenv.md §7).
    open: (spec: EpisodeSpec) =>
      Effect.sync((): Episode => {
        const state = engine.open(spec)
        return plain ? { execute: execute(state), executeSync: (call) => engine.run(state, call) } : { execute: execute(state) }
      })
  })
}

/** Builds the core from the ToolLibrary (and the GeneratedWorld, when the library is the generated one). */
export const makeEngine = (config: SimulatorConfig): Effect.Effect<Engine, never, ToolLibrary> =>
  Effect.gen(function*() {
    const library = yield* ToolLibrary
    const world = Option.getOrUndefined(yield* Effect.serviceOption(GeneratedWorld))
    // The world's operations serve the generated tools of the library; any other tool is rendered from its schema.
    return new Engine(library, world, { seed: config.seed, faultRate: config.faultRate, latency: config.latency })
  })

/** The three-layer simulator with deterministic rendering, over the ToolLibrary in context. */
export const layer = (config: Partial<SimulatorConfig> = {}): Layer.Layer<Simulator, ConfigError, ToolLibrary> =>
  Layer.effect(Simulator, Effect.gen(function*() {
    const decoded = yield* decodeConfig(config)
    if (decoded.render === "llm") {
      return yield* new ConfigError({ field: "render", value: "llm", message: "LLM rendering needs an endpoint: use SimulatorLlm.layer (layers/model/SimulatorLlm.ts)" })
    }
    return fromEngine(yield* makeEngine(decoded))
  }))
