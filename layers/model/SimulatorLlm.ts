/**
 * The simulator with LLM-rendered responses (L3 "llm" mode): L1, L2 and faults as in Simulator.layer, then an
 * OpenAI-compatible model writes the response body from the tool's documentation, the arguments and the facts the
 * deterministic renderer computed. Every rendering is cached in a SQLite file keyed by (tool, canonical arguments,
 * world seed), so a repeated call answers the same — across episodes and processes. Output that is not JSON, breaks
 * the response schema, or drops a fact falls back to the deterministic payload; every fallback is counted. A damaged or
 * read-only cache degrades with a warning (layers/storage/RenderCacheSqlite.ts) and never turns a call into an error.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ConfigError } from "../../src/domain/Errors.ts"
import { Json, type JsonObject, type JsonSchema } from "../../src/domain/Json.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import { conforms } from "../../src/toolenv/JsonSchemaValidate.ts"
import { canonicalJson } from "../../src/math/CanonicalJson.ts"
import { responseShape } from "../../src/toolenv/simulator/Generic.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import type { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import { OpenAiClient } from "./OpenAiClient.ts"
import * as RenderCacheSqlite from "../storage/RenderCacheSqlite.ts"

/** Configuration of the LLM renderer. */
export interface SimulatorLlmConfig {
  /** The SQLite file of the render cache (created with its folder when missing; checked and repaired at open). */
  readonly cachePath: string
  /** L1/L2/fault/latency settings, as for Simulator.layer. */
  readonly simulator?: Partial<Omit<Simulator.SimulatorConfig, "render">>
  /** Which successful calls the model renders: all, or only tools that are not generated (default all). */
  readonly scope?: "all" | "imported"
  /** Sampling temperature of the renderer (default 0: the cache makes answers stable anyway). */
  readonly temperature?: number
  /** Output budget per rendering (default 1024 tokens). */
  readonly maxTokens?: number
}

/** Counts of the renderer since the layer was built. */
export interface RenderStats {
  /** Renderings asked of the model (cache misses). */
  readonly llmCalls: number
  /** Calls answered from the cache. */
  readonly cacheHits: number
  /** Model answers that were used. */
  readonly accepted: number
  /** Model answers rejected (not JSON, schema violation, missing fact) → deterministic payload. */
  readonly invalid: number
  /** Model requests that failed (transport, status) → deterministic payload. */
  readonly errors: number
  /** Cached rows with a non-JSON payload, deleted and re-rendered. */
  readonly repaired: number
  /** How the render cache serves now: it degrades on SQLite failures instead of failing calls. */
  readonly cache: RenderCacheSqlite.CacheMode
}

/** The renderer's counters. */
export class SimulatorLlmStats extends Context.Service<SimulatorLlmStats, {
  readonly get: Effect.Effect<RenderStats>
}>()("paraagent/SimulatorLlmStats") {}

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Json))

/** The leaf values of a payload's fields annotated with `x-entity`: the facts a rendering must keep. */
export const pinnedFacts = (schema: JsonSchema, payload: Json): Array<string> => {
  const out: Array<string> = []
  const walk = (s: JsonSchema | undefined, v: Json | undefined): void => {
    if (s === undefined || v === undefined || v === null) return
    if (Array.isArray(v)) {
      for (const x of v) walk(s.items, x)
      return
    }
    if (typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(s.properties?.[k], x)
      return
    }
    if (s["x-entity"] !== undefined) out.push(typeof v === "string" ? v : JSON.stringify(v))
  }
  walk(schema, payload)
  return out
}

/** Every leaf value of a payload, as text. */
const leaves = (payload: Json): Set<string> => {
  const out = new Set<string>()
  const walk = (v: Json): void => {
    if (v === null) return
    if (Array.isArray(v)) for (const x of v) walk(x)
    else if (typeof v === "object") for (const x of Object.values(v)) walk(x)
    else out.add(typeof v === "string" ? v : JSON.stringify(v))
  }
  walk(payload)
  return out
}

/** Why a model answer was rejected, or undefined when it is usable. */
export const rejection = (spec: ToolSpec, deterministic: Json, answer: Json): string | undefined => {
  const { schema } = responseShape(spec)
  const issues = conforms(schema, answer)
  if (issues.length > 0) return `schema: ${issues[0]?.message ?? ""}`
  const have = leaves(answer)
  const missing = pinnedFacts(schema, deterministic).find((f) => !have.has(f))
  return missing === undefined ? undefined : `fact ${JSON.stringify(missing)} missing`
}

/** The messages asking the model to render one response. */
export const prompt = (spec: ToolSpec, args: JsonObject, deterministic: Json) => {
  const { schema, example } = responseShape(spec)
  const doc = [
    `API: ${spec.group} / ${spec.apiName}${spec.method === undefined ? "" : ` (${spec.method})`}`,
    `Category: ${spec.category}`,
    `Description: ${spec.description}`,
    `Parameters: ${JSON.stringify(spec.parameters)}`,
    `Response schema: ${JSON.stringify(schema)}`,
    ...(example === undefined ? [] : [`Example response: ${JSON.stringify(example)}`]),
    `Request arguments: ${JSON.stringify(args)}`,
    `Backend facts (keep every value exactly): ${JSON.stringify(deterministic)}`
  ].join("\n")
  return [
    {
      role: "system" as const,
      content: "You are the backend of a REST API. Answer a request with the JSON response body only: no prose, no markdown fences. Follow the response schema, keep every backend fact unchanged, and make any other field realistic for this API."
    },
    { role: "user" as const, content: doc }
  ]
}

/** The simulator with LLM rendering over the ToolLibrary in context (and the GeneratedWorld, when present). */
export const layer = (
  config: SimulatorLlmConfig
): Layer.Layer<Simulator.Simulator | SimulatorLlmStats, ConfigError | RenderCacheSqlite.RenderCacheError, ToolLibrary | OpenAiClient> =>
  Layer.effectContext(Effect.gen(function*() {
    const decoded = yield* Simulator.decodeConfig({ ...config.simulator, render: "llm" })
    const engine = yield* Simulator.makeEngine(decoded)
    const client = yield* OpenAiClient
    const cache = yield* RenderCacheSqlite.open(config.cachePath)
    const stats = { llmCalls: 0, cacheHits: 0, accepted: 0, invalid: 0, errors: 0 }

    const render: Simulator.Render = (spec, args, payload) =>
      Effect.gen(function*() {
        if (config.scope === "imported" && spec.source.kind === "generated") return payload
        const seed = spec.source.kind === "generated" && engine.world !== undefined ? engine.world.seed : decoded.seed
        const key = { tool: spec.name, args: canonicalJson(args), seed }
        const cached = yield* cache.get(key)
        if (cached !== undefined) {
          stats.cacheHits++
          return cached
        }
        stats.llmCalls++
        const answer = yield* client.chat({
          messages: prompt(spec, args, payload),
          temperature: config.temperature ?? 0,
          maxTokens: config.maxTokens ?? 1024,
          responseFormat: { type: "json_object" }
        }).pipe(
          Effect.map((r) => ({ ok: true as const, content: r.content })),
          Effect.catchTag("OpenAiError", (e) => Effect.succeed({ ok: false as const, content: e.message }))
        )
        let chosen: Json = payload
        let source = "fallback"
        if (!answer.ok) stats.errors++
        else {
          const parsed = Option.getOrUndefined(decodeJson(answer.content.trim().replace(/^```(?:json)?\s*|\s*```$/g, "")))
          const why = parsed === undefined ? "not JSON" : rejection(spec, payload, parsed)
          if (parsed !== undefined && why === undefined) {
            chosen = parsed
            source = "llm"
            stats.accepted++
          } else {
            stats.invalid++
            yield* Effect.logDebug(`SimulatorLlm: ${spec.name} rendering rejected (${why}); deterministic payload used`)
          }
        }
        // The first stored answer wins (a concurrent identical call may have stored one meanwhile).
        return yield* cache.put(key, chosen, source)
      })

    return Context.make(Simulator.Simulator, Simulator.fromEngine(engine, render)).pipe(
      Context.add(SimulatorLlmStats, SimulatorLlmStats.of({ get: Effect.gen(function*() {
        return { ...stats, repaired: yield* cache.repaired, cache: yield* cache.mode }
      }) }))
    )
  }))
