/**
 * The simulator's synchronous core: one call through faults, L1 (interface validation), L2 (state: ids must be
 * known, entities must exist, records persist within the episode) and L3 (deterministic rendering). The Effect
 * service (src/toolenv/Simulator.ts) wraps it with latency and optional LLM rendering; benchmarks call it directly.
 */
import { errorOutcome, type CallOutcome, type ErrorKind, type ToolCall } from "../../domain/Call.ts"
import type { JsonObject } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import * as Validate from "../JsonSchemaValidate.ts"
import { hash32 } from "../../math/Random.ts"
import type { TaskId } from "../../domain/Ids.ts"
import type { Library } from "../Library.ts"
import { entityDefs } from "../world/Entities.ts"
import type { World } from "../world/World.ts"
import * as Faults from "./Faults.ts"
import * as Generated from "./Generated.ts"
import * as Generic from "./Generic.ts"
import { callKey } from "../../math/CanonicalJson.ts"

/** What an episode is opened for. */
export interface EpisodeSpec {
  readonly taskId: TaskId
  /** Rollout seed: faults are a function of (seed, task, call, attempt). */
  readonly seed: number
  /** The user's request: values it mentions count as known to the agent (not a 404). */
  readonly request: string
  /** Inject the configured transient faults (default true). */
  readonly faults?: boolean
}

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
  /** Ids returned by completed calls: this set and `pending` together. */
  readonly known: Set<string>
  /** Ids of completed calls not (yet) in `known`: a few are scanned, many are moved into the set (most episodes never need it). */
  readonly pending: Array<ReadonlyArray<string>>
  /** Attempts per call identity (tool + canonical arguments). */
  readonly attempts: Map<string, number>
  /** Records created by actions. */
  readonly records: Map<string, Generated.CreatedRecord>
}

/** How the engine resolved one call (outcome, attempt, latency), before its effects on the episode are committed. */
export interface CallResolution {
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
}

interface CompiledTool {
  readonly spec: ToolSpec
  readonly validate: (args: unknown) => Validate.Validation
  /** The id parameters L2 checks (public ids excluded). */
  readonly ids: ReadonlyArray<IdCheck>
  readonly run: (args: JsonObject, ctx: Generated.ExecContext) => Generated.Result
}

/** One attempted call: its outcome and what committing it registers (no closure, no latency: the hot path's result). */
interface Attempt {
  readonly outcome: CallOutcome
  readonly attempt: number
  readonly key: string
  readonly tool: CompiledTool | undefined
  readonly args: JsonObject | undefined
  readonly produced: ReadonlyArray<string> | undefined
  readonly record: Generated.CreatedRecord | undefined
}

const noop = (): void => {}

const failed = (key: string, attempt: number, tool: CompiledTool | undefined, args: JsonObject | undefined, kind: ErrorKind, message: string): Attempt =>
  ({ outcome: errorOutcome(kind, message), attempt, key, tool, args, produced: undefined, record: undefined })

/** Pending ids beyond this many are moved into the known set at the next miss (a scan stays short, a set stays O(1)). */
const pendingScanLimit = 64

/** Whether an id was returned by a completed call of the episode: in the known set or among the pending ids. */
const isKnown = (state: EpisodeState, id: string): boolean => {
  if (state.known.has(id)) return true
  const pending = state.pending
  let count = 0
  for (let i = 0; i < pending.length; i++) {
    const ids = pending[i] as ReadonlyArray<string>
    count += ids.length
    for (let j = 0; j < ids.length; j++) if (ids[j] === id) return true
  }
  if (count > pendingScanLimit) {
    for (let i = 0; i < pending.length; i++) for (const v of pending[i] as ReadonlyArray<string>) state.known.add(v)
    pending.length = 0
  }
  return false
}

const commitAttempt = (state: EpisodeState, a: Attempt): void => {
  if (a.produced !== undefined && a.produced.length > 0) state.pending.push(a.produced)
  if (a.record !== undefined) state.records.set(a.record.id, a.record)
}

/** The simulator core over a library (and the generated world, when the library is generated). */
export class Engine {
  /** Compiled tools by the name calls use (filled on first call of each tool). */
  private readonly tools = new Map<string, CompiledTool>()

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
      pending: [],
      attempts: new Map(),
      records: new Map()
    }
  }

  /** The compiled tool a call names, or undefined when the library has no such tool. */
  private tool(name: string): CompiledTool | undefined {
    const hit = this.tools.get(name)
    if (hit !== undefined) return hit
    const spec = this.library.get(name)
    if (spec === undefined) return undefined
    const ids: Array<IdCheck> = []
    for (const [param, schema] of Object.entries(spec.parameters.properties)) {
      const entity = schema["x-entity"]
      if (entity === undefined || !entity.endsWith(".id")) continue
      const type = entity.slice(0, -3)
      const def = entityDefs.get(type)
      if (def?.publicIds === true) continue
      ids.push({ param, type, noun: def?.noun ?? type.replace(/_/g, " ") })
    }
    const op = spec.source.kind === "generated" ? this.world?.ops.get(spec.name) : undefined
    let run: CompiledTool["run"]
    if (op !== undefined && this.world !== undefined) {
      run = Generated.compile(op, this.world.universe)
    } else {
      const render = Generic.compileRenderer(spec, this.config.seed, this.world?.universe)
      run = (args, ctx) => ({ ok: true, payload: render(args, ctx.produced) })
    }
    const c: CompiledTool = { spec, validate: Validate.argumentsValidator(spec.parameters), ids, run }
    this.tools.set(name, c)
    return c
  }

  private latencyMs(state: EpisodeState, tool: string, key: string, attempt: number, kind: ErrorKind | undefined): number {
    const latency = this.config.latency
    if (latency === undefined) return 0
    return kind === "timeout" ? latency.timeoutMs : Faults.callLatency(latency, this.config.seed, state.base, tool, key, attempt)
  }

  /** Faults, L1, L2 and L3 for one call; counts the attempt but commits nothing else. */
  private attempt(state: EpisodeState, call: ToolCall): Attempt {
    const key = callKey(call.tool, call.arguments)
    const attempt = (state.attempts.get(key) ?? 0) + 1
    state.attempts.set(key, attempt)
    const tool = this.tool(call.tool)
    if (tool === undefined) return failed(key, attempt, tool, undefined, "unknown_tool", `404 Not Found: no endpoint named '${call.tool}' in this API catalogue`)
    if (state.faults) {
      const fault = Faults.faultFor(state.base, key, attempt, this.config.faultRate)
      if (fault !== undefined) return failed(key, attempt, tool, undefined, fault, Faults.faultMessage[fault] ?? fault)
    }
    const validation = tool.validate(call.arguments)
    if (!validation.ok) return failed(key, attempt, tool, undefined, "invalid_arguments", `400 Bad Request: ${Validate.describe(validation.errors)}`)
    const args = validation.value
    const ids = tool.ids
    for (let i = 0; i < ids.length; i++) {
      const check = ids[i] as IdCheck
      const v = args[check.param]
      if (v === undefined) continue
      const text = typeof v === "string" ? v : JSON.stringify(v)
      if (!isKnown(state, text) && !state.request.includes(text.toLowerCase())) {
        return failed(key, attempt, tool, args, "not_found", `404 Not Found: ${check.noun} '${text}' does not exist`)
      }
    }
    const produced: Array<string> = []
    const result = tool.run(args, { records: state.records, produced })
    if (!result.ok) return failed(key, attempt, tool, args, result.kind, result.message)
    return { outcome: { _tag: "ok", payload: result.payload }, attempt, key, tool, args, produced, record: result.record }
  }

  /** Runs one call (with `$ref`s already resolved) and returns its outcome; nothing is committed yet. */
  step(state: EpisodeState, call: ToolCall): CallResolution {
    const a = this.attempt(state, call)
    const kind = a.outcome._tag === "error" ? a.outcome.error.kind : undefined
    return {
      outcome: a.outcome,
      attempt: a.attempt,
      latencyMs: this.latencyMs(state, call.tool, a.key, a.attempt, kind),
      spec: a.tool?.spec,
      args: a.args,
      commit: a.produced === undefined && a.record === undefined ? noop : () => commitAttempt(state, a)
    }
  }

  /** Runs one call and commits it at once (no latency): the in-process hot path of benchmarks and gold runs. */
  run(state: EpisodeState, call: ToolCall): { readonly outcome: CallOutcome; readonly attempt: number } {
    const a = this.attempt(state, call)
    commitAttempt(state, a)
    return { outcome: a.outcome, attempt: a.attempt }
  }
}
