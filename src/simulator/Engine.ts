/**
 * The simulator's synchronous core: one call through faults, L1 (interface validation), L2 (state: ids must be
 * known, entities must exist, records persist within the episode) and L3 (deterministic rendering). The Effect
 * service (src/Simulator.ts) wraps it with latency and optional LLM rendering; benchmarks call it directly.
 */
import { errorOutcome, type CallOutcome, type ErrorKind, type ToolCall } from "../domain/Call.ts"
import type { Json, JsonObject } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import * as Validate from "../JsonSchemaValidate.ts"
import { callKey } from "../math/CanonicalJson.ts"
import { hash32 } from "../math/Random.ts"
import type { EpisodeSpec } from "../Simulator.ts"
import type { Library } from "../ToolLibrary.ts"
import { entityDefs } from "../world/Entities.ts"
import type { World } from "../world/World.ts"
import * as Faults from "./Faults.ts"
import * as Generated from "./Generated.ts"
import * as Generic from "./Generic.ts"

/** Configuration of the core. */
export interface EngineConfig {
  /** Seed of everything not fixed by a generated world (imported tools' values); mixed into fault draws. */
  readonly seed: number
  /** Probability of a transient fault per call attempt (default 0.05). */
  readonly faultRate: number
  /** Latency model; undefined = calls take no time. */
  readonly latency: Faults.LatencyModel | undefined
}

/** The state of one episode (one rollout). */
export interface EpisodeState {
  readonly taskId: string
  readonly seed: number
  /** The request, lower-cased: ids it mentions are known. */
  readonly request: string
  readonly faults: boolean
  readonly base: number
  /** Ids returned by completed calls. */
  readonly known: Set<string>
  /** Attempts per call identity (tool + canonical arguments). */
  readonly attempts: Map<string, number>
  /** Records created by actions. */
  readonly records: Map<string, Generated.CreatedRecord>
}

/** The result of one call, before its effects on the episode are committed. */
export interface Step {
  readonly outcome: CallOutcome
  readonly attempt: number
  /** How long the call takes under the latency model (0 without one). */
  readonly latencyMs: number
  /** The tool, when the call named a known one. */
  readonly spec: ToolSpec | undefined
  /** The arguments after L1 coercion, when they validated. */
  readonly args: JsonObject | undefined
  /** Registers the ids the call produced and the record it created; call once the call completes. */
  readonly commit: () => void
}

interface IdCheck {
  readonly param: string
  readonly type: string
  readonly noun: string
  readonly public: boolean
}

interface CompiledTool {
  readonly spec: ToolSpec
  readonly ids: ReadonlyArray<IdCheck>
  readonly run: (args: JsonObject, ctx: Generated.ExecContext) => Generated.Result
}

const noop = (): void => {}

/** The simulator core over a library (and the generated world, when the library is generated). */
export class Engine {
  private readonly compiled = new Map<string, CompiledTool>()

  constructor(readonly library: Library, readonly world: World | undefined, readonly config: EngineConfig) {}

  /** Opens an episode. */
  open(spec: EpisodeSpec): EpisodeState {
    return {
      taskId: spec.taskId,
      seed: spec.seed,
      request: spec.request.toLowerCase(),
      faults: spec.faults ?? true,
      base: Faults.episodeBase(hash32(String(spec.seed), this.config.seed), spec.taskId),
      known: new Set(),
      attempts: new Map(),
      records: new Map()
    }
  }

  private compile(spec: ToolSpec): CompiledTool {
    const hit = this.compiled.get(spec.name)
    if (hit !== undefined) return hit
    const ids: Array<IdCheck> = []
    for (const [param, schema] of Object.entries(spec.parameters.properties)) {
      const entity = schema["x-entity"]
      if (entity === undefined || !entity.endsWith(".id")) continue
      const type = entity.slice(0, -3)
      const def = entityDefs.get(type)
      ids.push({ param, type, noun: def?.noun ?? type.replace(/_/g, " "), public: def?.publicIds === true })
    }
    const op = spec.source.kind === "generated" ? this.world?.ops.get(spec.name) : undefined
    let run: CompiledTool["run"]
    if (op !== undefined && this.world !== undefined) {
      run = Generated.compile(op, this.world.universe)
    } else {
      const render = Generic.compileRenderer(spec, this.config.seed, this.world?.universe)
      run = (args, ctx) => ({ ok: true, payload: render(args, ctx.produced) })
    }
    const c: CompiledTool = { spec, ids, run }
    this.compiled.set(spec.name, c)
    return c
  }

  private latencyMs(state: EpisodeState, tool: string, key: string, attempt: number, kind: ErrorKind | undefined): number {
    const latency = this.config.latency
    if (latency === undefined) return 0
    return kind === "timeout" ? latency.timeoutMs : Faults.callLatency(latency, this.config.seed, state.base, tool, key, attempt)
  }

  private failure(state: EpisodeState, call: ToolCall, key: string, attempt: number, spec: ToolSpec | undefined, args: JsonObject | undefined, kind: ErrorKind, message: string): Step {
    return { outcome: errorOutcome(kind, message), attempt, latencyMs: this.latencyMs(state, call.tool, key, attempt, kind), spec, args, commit: noop }
  }

  /** Runs one call (with `$ref`s already resolved) and returns its outcome; nothing is committed yet. */
  step(state: EpisodeState, call: ToolCall): Step {
    const key = callKey(call.tool, call.arguments)
    const attempt = (state.attempts.get(key) ?? 0) + 1
    state.attempts.set(key, attempt)
    const spec = this.library.get(call.tool)
    if (spec === undefined) return this.failure(state, call, key, attempt, spec, undefined, "unknown_tool", `404 Not Found: no endpoint named '${call.tool}' in this API catalogue`)
    if (state.faults) {
      const fault = Faults.faultFor(state.base, key, attempt, this.config.faultRate)
      if (fault !== undefined) return this.failure(state, call, key, attempt, spec, undefined, fault, Faults.faultMessage[fault] ?? fault)
    }
    const validation = Validate.validateArguments(spec, call.arguments)
    if (!validation.ok) return this.failure(state, call, key, attempt, spec, undefined, "invalid_arguments", `400 Bad Request: ${Validate.describe(validation.errors)}`)
    const args = validation.value
    const tool = this.compile(spec)
    for (const check of tool.ids) {
      const v = args[check.param]
      if (v === undefined || check.public) continue
      const text = typeof v === "string" ? v : JSON.stringify(v)
      if (!state.known.has(text) && !state.request.includes(text.toLowerCase())) {
        return this.failure(state, call, key, attempt, spec, args, "not_found", `404 Not Found: ${check.noun} '${text}' does not exist`)
      }
    }
    const produced: Array<string> = []
    const result = tool.run(args, { records: state.records, produced })
    if (!result.ok) return this.failure(state, call, key, attempt, spec, args, result.kind, result.message)
    const record = result.record
    return {
      outcome: { _tag: "ok", payload: result.payload },
      attempt,
      latencyMs: this.latencyMs(state, call.tool, key, attempt, undefined),
      spec,
      args,
      commit: () => {
        for (const v of produced) state.known.add(v)
        if (record !== undefined) state.records.set(record.id, record)
      }
    }
  }

  /** Runs one call and commits it at once (no latency): the in-process hot path of benchmarks and gold runs. */
  run(state: EpisodeState, call: ToolCall): { readonly outcome: CallOutcome; readonly attempt: number } {
    const s = this.step(state, call)
    s.commit()
    return { outcome: s.outcome, attempt: s.attempt }
  }
}

/** A payload's value at a dotted path (`results.0.id`), or undefined. */
export const at = (payload: Json, path: string): Json | undefined => {
  let cur: Json | undefined = payload
  if (path === "") return cur
  for (const part of path.split(".")) {
    if (cur === null || cur === undefined || typeof cur !== "object") return undefined
    cur = Array.isArray(cur) ? (cur as ReadonlyArray<Json>)[Number(part)] : (cur as { readonly [k: string]: Json })[part]
  }
  return cur
}
