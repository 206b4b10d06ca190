/**
 * src/toolenv/JsonSchemaValidate.ts against ajv, side by side on the same inputs: the argument validation of the gold
 * calls of 300 generated-world tasks, each as sent, with the lenient forms agents write, and broken six ways.
 * ajv is not a dependency: install it in a scratch folder (`cd /tmp/libmeasure && npm i ajv ajv-formats`), or point
 * LIBMEASURE at another one. Run: `npx tsx bench/json-schema-validate.ts [seconds-per-measurement]`.
 */
import { Argument } from "effect/cli"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as BenchFlags from "./BenchFlags.ts"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type { ToolCall } from "../src/domain/Call.ts"
import type { Json, JsonObject, JsonSchema, ParametersSchema } from "../src/domain/Json.ts"
import * as Refs from "../src/protocol/Refs.ts"
import * as JsonSchemaValidate from "../src/toolenv/JsonSchemaValidate.ts"
import { Engine } from "../src/toolenv/simulator/Engine.ts"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"

const { seconds } = await BenchFlags.parse("json-schema-validate", "our JSON-schema argument validator against ajv, side by side", {
  seconds: Argument.Finite("seconds").pipe(
    Argument.withSchema(RunConfig.FiniteIn({ minimum: 0.2, maximum: 600 })),
    Argument.withDescription("seconds per measurement (0.2–600)"),
    Argument.withDefault(1)
  )
})
const scratch = process.env["LIBMEASURE"] ?? "/tmp/libmeasure"

// The slice of ajv's API the bench uses.
interface AjvValidate {
  (data: unknown): boolean
  readonly errors?: ReadonlyArray<{ readonly instancePath: string; readonly message?: string }> | null
}
interface AjvInstance {
  readonly compile: (schema: object) => AjvValidate
  readonly addFormat: (name: string, format: RegExp) => unknown
}
type AjvClass = new (options: object) => AjvInstance

const loadAjv = (): { readonly Ajv: AjvClass; readonly addFormats: (ajv: AjvInstance) => unknown; readonly version: string } | string => {
  const req = createRequire(path.join(scratch, "package.json"))
  const resolved = ((): string | undefined => {
    try {
      return req.resolve("ajv")
    } catch {
      return undefined
    }
  })()
  if (resolved === undefined) return `skipped: ajv is not installed in ${scratch} (cd ${scratch} && npm i ajv ajv-formats)`
  const ajvModule = req("ajv") as { readonly default: AjvClass }
  const formatsModule = req("ajv-formats") as { readonly default: (ajv: AjvInstance) => unknown }
  const version = (req("ajv/package.json") as { readonly version: string }).version
  return { Ajv: ajvModule.default, addFormats: formatsModule.default, version }
}

const loaded = loadAjv()
if (typeof loaded === "string") {
  console.log(loaded)
  process.exit(0)
}

// ------------------------------------------------------------------------------------------------------------------
// Inputs: the gold calls of generated tasks (refs resolved by running them), then variants of each

const world = World.make({ seed: World.defaultSeed })
const tasks = Tasks.make(world).take({ split: "train", count: 300 })
const gold: Array<ToolCall> = []
{
  const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
  for (const t of tasks) {
    const state = engine.open({ taskId: t.id, seed: 0, request: t.request, faults: false })
    const outputs = new Map<string, Json>()
    for (const c of t.gold) {
      const call: ToolCall = { id: c.id, tool: c.tool, arguments: Refs.resolveRefs(c.arguments, (id) => outputs.get(id)).arguments }
      const r = engine.run(state, call)
      if (r.outcome._tag === "ok") outputs.set(c.id, r.outcome.payload)
      gold.push(call)
    }
  }
}

/** What a variant is, and whether an API applying the documented coercions should accept it. */
type Variant = "valid" | "lenient" | "missing" | "unknown" | "type" | "range" | "enum" | "format"
interface Case {
  readonly variant: Variant
  readonly parameters: ParametersSchema
  readonly args: JsonObject
}

/** The documented lenient forms: numbers and booleans as text, arrays of scalars as "a,b", null for an optional. */
const lenientForm = (parameters: ParametersSchema, args: JsonObject): JsonObject | undefined => {
  const out: Record<string, Json> = { ...args }
  let changed = false
  for (const [key, value] of Object.entries(args)) {
    const schema = parameters.properties[key]
    if (schema === undefined) continue
    if ((schema.type === "number" || schema.type === "integer") && typeof value === "number") {
      out[key] = String(value)
      changed = true
    } else if (schema.type === "boolean" && typeof value === "boolean") {
      out[key] = String(value)
      changed = true
    } else if (schema.type === "array" && Array.isArray(value) && value.length > 1 && value.every((v) => typeof v === "string" && !v.includes(","))) {
      out[key] = value.join(",")
      changed = true
    }
  }
  const optional = Object.keys(parameters.properties).find((k) => !parameters.required.includes(k) && args[k] === undefined)
  if (optional !== undefined) {
    out[optional] = null
    changed = true
  }
  return changed ? out : undefined
}

const cases: Array<Case> = []
for (const call of gold) {
  const spec = world.library.get(call.tool)
  if (spec === undefined) continue
  const parameters = spec.parameters
  const args = call.arguments
  const add = (variant: Variant, a: JsonObject | undefined) => {
    if (a !== undefined) cases.push({ variant, parameters, args: a })
  }
  add("valid", args)
  add("lenient", lenientForm(parameters, args))
  const required = parameters.required.find((k) => args[k] !== undefined)
  if (required !== undefined) {
    const { [required]: _dropped, ...rest } = args
    add("missing", rest)
  }
  add("unknown", { ...args, hallucinated_param: "x" })
  const entries = Object.entries(parameters.properties)
  const str = entries.find(([k, s]) => s.type === "string" && args[k] !== undefined && s.enum === undefined)
  if (str !== undefined) add("type", { ...args, [str[0]]: { nested: true } })
  const num = entries.find(([, s]) => (s.type === "number" || s.type === "integer") && s.minimum !== undefined)
  if (num !== undefined) add("range", { ...args, [num[0]]: (num[1].minimum ?? 0) - 1 })
  const en = entries.find(([, s]) => s.enum !== undefined && s.enum.length > 0)
  if (en !== undefined) add("enum", { ...args, [en[0]]: "definitely-not-an-allowed-value" })
  const fmt = entries.find(([, s]) => s.type === "string" && (s.format === "date" || s.format === "email" || s.format === "date-time"))
  if (fmt !== undefined) add("format", { ...args, [fmt[0]]: "2024-13-45x" })
}

// ------------------------------------------------------------------------------------------------------------------
// ajv set up to mirror the documented rules as far as its options reach

/** Enum lists with repeated items: valid for us, an invalid schema for ajv (which refuses to compile it). */
const duplicateEnums = new Set<string>()

/** Our rule for unknown keys, written as JSON Schema: the root and every object with properties reject them. */
const toAjvSchema = (schema: JsonSchema, root: boolean, where = ""): object => {
  const { "x-entity": _entity, properties, items, ...rest } = schema
  const out: Record<string, unknown> = { ...rest }
  if (schema.enum !== undefined) {
    const unique = [...new Map(schema.enum.map((v) => [JSON.stringify(v), v])).values()]
    if (unique.length < schema.enum.length) duplicateEnums.add(`${where}: ${JSON.stringify(schema.enum)}`)
    out["enum"] = unique
  }
  if (properties !== undefined) {
    out["properties"] = Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, toAjvSchema(s, false, `${where}.${k}`)]))
  }
  if (items !== undefined) out["items"] = toAjvSchema(items, false, `${where}[]`)
  if (schema.type === "object" && schema.additionalProperties !== true && (root || Object.keys(properties ?? {}).length > 0)) {
    out["additionalProperties"] = false
  }
  return out
}

const ajv = new loaded.Ajv({ allErrors: true, coerceTypes: "array", strict: false })
loaded.addFormats(ajv)
ajv.addFormat("url", /^https?:\/\/[^\s/$.?#][^\s]*$/i)

const distinct = [...new Set(cases.map((c) => c.parameters))]
const toolOf = new Map(gold.flatMap((c) => {
  const spec = world.library.get(c.tool)
  return spec === undefined ? [] : [[spec.parameters, c.tool] as const]
}))
const ajvSchemas = distinct.map((p) => [p, toAjvSchema(p, true, toolOf.get(p) ?? "?")] as const)
let t0 = performance.now()
const ajvValidators = new Map(ajvSchemas.map(([p, schema]) => [p, ajv.compile(schema)] as const))
const ajvCompileMs = performance.now() - t0
// Fresh copies: ours caches validators per schema object, and the simulator already compiled these while running them.
const fresh = distinct.map((p) => structuredClone(p))
t0 = performance.now()
for (const p of fresh) JsonSchemaValidate.argumentsValidator(p)
const oursCompileMs = performance.now() - t0

// ------------------------------------------------------------------------------------------------------------------
// Correctness: the same verdict? the same coerced value when both accept?

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : x)

interface Tally {
  n: number
  oursAccept: number
  ajvAccept: number
  agree: number
  sameValue: number
  bothAccept: number
  example?: string
}
const tallies = new Map<Variant, Tally>()
for (const c of cases) {
  const tally = tallies.get(c.variant) ?? { n: 0, oursAccept: 0, ajvAccept: 0, agree: 0, sameValue: 0, bothAccept: 0 }
  tallies.set(c.variant, tally)
  const ours = JsonSchemaValidate.argumentsValidator(c.parameters)(c.args)
  const data: unknown = structuredClone(c.args)
  const validate = ajvValidators.get(c.parameters)
  const theirs = validate !== undefined && validate(data)
  tally.n++
  if (ours.ok) tally.oursAccept++
  if (theirs) tally.ajvAccept++
  if (ours.ok === theirs) tally.agree++
  else if (tally.example === undefined) {
    tally.example = `${canonical(c.args).slice(0, 140)} → ours ${ours.ok ? "accepts" : `rejects: ${JsonSchemaValidate.describe(ours.errors).slice(0, 120)}`}; ajv ${theirs ? "accepts" : `rejects: ${(validate?.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ""}`).join("; ").slice(0, 120)}`}`
  }
  if (ours.ok && theirs) {
    tally.bothAccept++
    if (canonical(ours.value) === canonical(data)) tally.sameValue++
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Speed: validations per second over the whole case list (ajv gets fresh copies, made outside the timer, since it
// coerces in place; ours never mutates its input)

const oursRate = (): number => {
  let n = 0
  let elapsed = 0
  while (elapsed < seconds * 1000) {
    const start = performance.now()
    for (const c of cases) JsonSchemaValidate.argumentsValidator(c.parameters)(c.args)
    elapsed += performance.now() - start
    n += cases.length
  }
  return n / (elapsed / 1000)
}
const ajvRate = (): number => {
  let n = 0
  let elapsed = 0
  const validators = cases.map((c) => ajvValidators.get(c.parameters))
  while (elapsed < seconds * 1000) {
    const copies = cases.map((c) => structuredClone(c.args))
    const start = performance.now()
    for (let i = 0; i < copies.length; i++) validators[i]?.(copies[i])
    elapsed += performance.now() - start
    n += cases.length
  }
  return n / (elapsed / 1000)
}

oursRate()
ajvRate()
const runs: Array<readonly [number, number]> = []
for (let r = 0; r < 3; r++) runs.push([oursRate(), ajvRate()])

const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`
console.log(`node ${process.version}, ajv ${loaded.version} (allErrors, coerceTypes "array", ajv-formats), load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
console.log(`${gold.length} gold calls of ${tasks.length} tasks → ${cases.length} cases over ${distinct.length} parameter schemas`)
if (duplicateEnums.size > 0) {
  console.log(`${duplicateEnums.size} enum(s) with repeated items (ajv rejects such a schema; deduplicated for it), e.g. ${[...duplicateEnums][0]}`)
}
console.log(`compile all schemas: ours ${oursCompileMs.toFixed(1)} ms, ajv ${ajvCompileMs.toFixed(1)} ms (ajv/ours ${(ajvCompileMs / oursCompileMs).toFixed(1)}×)`)
console.log("variant   cases  ours-accept  ajv-accept  same-verdict  same-value(both accept)")
for (const [variant, t] of tallies) {
  console.log(`${variant.padEnd(9)} ${String(t.n).padStart(5)}  ${String(t.oursAccept).padStart(11)}  ${String(t.ajvAccept).padStart(10)}  ${pct(t.agree, t.n).padStart(12)}  ${t.bothAccept === 0 ? "-" : pct(t.sameValue, t.bothAccept)}`)
}
for (const [variant, t] of tallies) if (t.example !== undefined) console.log(`  first disagreement (${variant}): ${t.example}`)
for (const [i, [ours, theirs]] of runs.entries()) {
  console.log(`run ${i + 1}: ours ${ours.toFixed(0)} validations/s, ajv ${theirs.toFixed(0)} validations/s, ours/ajv ${(ours / theirs).toFixed(2)}`)
}
const bestOurs = Math.max(...runs.map((r) => r[0]))
const bestAjv = Math.max(...runs.map((r) => r[1]))
console.log(`best: ours/ajv = ${(bestOurs / bestAjv).toFixed(2)} (${bestOurs.toFixed(0)} vs ${bestAjv.toFixed(0)} validations/s)`)
