/**
 * Call candidates: each retrieved tool × up to `fillingsPerTool` argument fillings — request literals matched against
 * the parameter's words, enum values, defaults, and `$ref`s to fields of earlier outputs — each with its candidate
 * features. Pure.
 */
import type { Json, JsonObject, JsonSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { callKey } from "../../math/CanonicalJson.ts"
import * as JsonSchemaValidate from "../../toolenv/JsonSchemaValidate.ts"
import type { Reading } from "./Reading.ts"
import type { Literal } from "./Request.ts"
import { operationKey } from "./Seen.ts"
import { clip01, cover, leaves, schemaAt, tokens } from "./Text.ts"
import { candidateWidth } from "./Types.ts"
import type { CallCandidate, FillSource, SpaceOptions } from "./Types.ts"

// Argument fillings.

interface ValueOption {
  readonly value: Json
  readonly source: FillSource
  readonly match: number
  /** A literal of the tool's own clause. */
  readonly ownClause?: boolean
}

const paramTokens = (name: string, schema: JsonSchema): ReadonlySet<string> =>
  tokens(`${name} ${schema.description ?? ""} ${(schema["x-entity"] ?? "").replace(/[._]/g, " ")}`)

const typeFits = (schema: JsonSchema, value: string, kind: Literal["kind"]): boolean => {
  if (schema.type === "integer") return /^-?\d+$/.test(value)
  if (schema.type === "number") return /^-?\d+(\.\d+)?$/.test(value)
  if (schema.type === "boolean" || schema.type === "array" || schema.type === "object") return false
  if (schema.format === "date") return /^\d{4}-\d{2}-\d{2}$/.test(value)
  return kind === "quoted" || kind === "labelled" || schema.type === undefined
}

/**
 * The value a parenthesised item without a colon gives a parameter: the item after the parameter's description or
 * name (`applicant name Julia Madsen` → `Julia Madsen` for a parameter described "Applicant name"); undefined when
 * the item does not start with either.
 */
const phraseValue = (item: string, name: string, schema: JsonSchema): string | undefined => {
  const lower = item.toLowerCase()
  for (const label of [schema.description ?? "", name.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2")]) {
    const l = label.toLowerCase().replace(/\s*\(.*\)\s*$/, "").trim()
    if (l.length > 0 && lower.startsWith(`${l} `)) return item.slice(l.length + 1).trim()
  }
  return undefined
}



/** A field of an earlier successful output that a `$ref` may point at. */
interface RefSource {
  readonly ref: string
  readonly key: string
  readonly keyTokens: ReadonlySet<string>
  readonly entity: string | undefined
  readonly later: boolean
}

const refSources = (
  outputs: ReadonlyArray<{ readonly id: string; readonly tool: ToolSpec | undefined; readonly payload: Json }>,
  itemsPerArray: number
): ReadonlyArray<RefSource> =>
  outputs.flatMap((src) =>
    leaves(src.payload, itemsPerArray).flatMap((leaf): Array<RefSource> => {
      const key = leaf.path[leaf.path.length - 1]
      if (typeof key !== "string" || typeof leaf.value === "boolean") return []
      return [{
        ref: [src.id, ...leaf.path].join("."),
        key,
        keyTokens: tokens(key),
        entity: schemaAt(src.tool?.response, leaf.path)?.["x-entity"],
        later: leaf.path.some((p) => typeof p === "number" && p > 0)
      }]
    })
  )

const valueOptions = (
  name: string,
  schema: JsonSchema,
  literals: ReadonlyArray<Literal>,
  clause: number,
  sources: ReadonlyArray<RefSource>
): ReadonlyArray<ValueOption> => {
  const want = paramTokens(name, schema)
  const out: Array<ValueOption> = []
  const entity = schema["x-entity"]
  for (const given of literals) {
    let lit = given
    if (given.kind === "phrase") {
      const value = phraseValue(given.value, name, schema)
      if (value === undefined) continue
      lit = { ...given, value, kind: "labelled", label: want }
    }
    if (!typeFits(schema, lit.value, lit.kind)) continue
    if (schema.enum !== undefined && !schema.enum.some((e) => String(e) === lit.value)) continue
    const base = cover(lit.label, want)
    // a literal of the tool's own clause is what the clause asks the tool for; another clause's is a distractor
    const sameClause = lit.clause === clause ? 0.5 : clause < 0 ? 0.25 : -0.25
    const value: Json = schema.type === "integer" || schema.type === "number" ? Number(lit.value) : lit.value
    out.push({ value, source: "literal", match: clip01(0.5 * base + sameClause + (schema.enum !== undefined ? 0.5 : 0)), ownClause: lit.clause === clause })
  }
  const nameTokens = tokens(name)
  for (const src of sources) {
    // both sides annotated with different entities: a field of another kind of thing, whatever its name
    if (entity !== undefined && src.entity !== undefined && src.entity !== entity) continue
    const entityMatch = entity !== undefined && src.entity === entity ? 1 : 0
    const nameMatch = src.key === name ? 1 : cover(nameTokens, src.keyTokens)
    const score = Math.max(entityMatch, 0.8 * nameMatch)
    if (score < 0.5) continue
    // the first item of an array is what "the first of ..." means; later items are weaker
    out.push({ value: { $ref: src.ref }, source: "ref", match: clip01(score - (src.later ? 0.3 : 0)) })
  }
  if (schema.enum !== undefined && schema.enum.length > 0 && !out.some((o) => o.source === "literal")) {
    out.push({ value: schema.enum[0] as Json, source: "enum", match: 0 })
  }
  if (schema.default !== undefined) out.push({ value: schema.default, source: "default", match: 0.1 })
  out.sort((a, b) => b.match - a.match)
  // distinct values, best first
  const seen = new Set<string>()
  return out.filter((o) => {
    const k = JSON.stringify(o.value)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  }).slice(0, 4)
}

interface Filling {
  /** A parameter naming an entity id (`x-entity` `*.id`) got a request literal (a name, usually: a 404). */
  readonly idByLiteral: boolean
  /** Literals taken from another clause than the tool's own. */
  readonly foreignLiterals: number
  readonly arguments: JsonObject
  readonly sources: ReadonlyArray<FillSource>
  readonly matches: ReadonlyArray<number>
  readonly filled: number
  readonly variant: number
  /** The request literals the filling carries (as strings). */
  readonly literalValues: ReadonlyArray<string>
}

const fillingsFor = (
  tool: ToolSpec,
  literals: ReadonlyArray<Literal>,
  clause: number,
  sources: ReadonlyArray<RefSource>,
  options: SpaceOptions
): ReadonlyArray<Filling> => {
  const required = tool.parameters.required
  const perParam = required.map((name) => valueOptions(name, tool.parameters.properties[name] ?? {}, literals, clause, sources))
  // optional parameters only when a request literal fits them well: one of their enum values (a filter the
  // request names), or a literal whose words name the parameter
  const optional: Array<[string, ValueOption]> = []
  const usedByRequired = new Set(perParam.map((o) => JSON.stringify(o[0]?.value)))
  for (const [name, schema] of Object.entries(tool.parameters.properties)) {
    if (required.includes(name)) continue
    const lit = valueOptions(name, schema, literals, clause, []).find((o) => o.source === "literal" && (schema.enum !== undefined || o.match >= 0.75))
    if (lit !== undefined && !usedByRequired.has(JSON.stringify(lit.value))) optional.push([name, lit])
  }
  const build = (pick: ReadonlyArray<number>, variant: number): Filling => {
    const args: Record<string, Json> = {}
    const srcs: Array<FillSource> = []
    const matches: Array<number> = []
    let filled = 0
    let idByLiteral = false
    let foreign = 0
    const literalValues: Array<string> = []
    required.forEach((name, i) => {
      const option = perParam[i]?.[pick[i] ?? 0]
      if (option === undefined) return
      if (option.source === "literal" && /\.id$/.test(tool.parameters.properties[name]?.["x-entity"] ?? "")) idByLiteral = true
      if (option.source === "literal" && option.ownClause === false) foreign++
      if (option.source === "literal") literalValues.push(String(option.value))
      args[name] = option.value
      srcs.push(option.source)
      matches.push(option.match)
      filled++
    })
    for (const [name, option] of optional) {
      if (option.source === "literal") literalValues.push(String(option.value))
      args[name] = option.value
      srcs.push(option.source)
      matches.push(option.match)
    }
    return { idByLiteral, foreignLiterals: foreign, arguments: args, sources: srcs, matches, filled, variant, literalValues }
  }
  const out: Array<Filling> = [build(required.map(() => 0), 0)]
  // variants: one parameter at a time moved to its next option
  for (let i = 0; i < required.length && out.length < options.fillingsPerTool; i++) {
    for (let k = 1; k < (perParam[i]?.length ?? 0) && out.length < options.fillingsPerTool; k++) {
      out.push(build(required.map((_, j) => (j === i ? k : 0)), out.length))
    }
  }
  return out
}


/** Arguments with every `$ref` replaced by the value it points at (for a validity feature; unresolved refs stay). */
export const resolvePreview = (args: JsonObject, outputs: ReadonlyMap<string, Json>): JsonObject => {
  const out: Record<string, Json> = {}
  for (const [k, v] of Object.entries(args)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof (v as JsonObject)["$ref"] === "string") {
      const [id, ...path] = ((v as JsonObject)["$ref"] as string).split(".")
      let at: Json | undefined = outputs.get(id ?? "")
      for (const p of path) {
        if (at === undefined || at === null || typeof at !== "object") {
          at = undefined
          break
        }
        at = Array.isArray(at) ? at[Number(p)] : (at as JsonObject)[p]
      }
      out[k] = at === undefined ? v : at
    } else {
      out[k] = v
    }
  }
  return out
}


/** The call candidates of a round and their features. */
export const callCandidates = (r: Reading, options: SpaceOptions): { readonly calls: ReadonlyArray<CallCandidate>; readonly features: ReadonlyArray<Float64Array> } => {
  const { clauseTokens, requestTokens, literals, history, seen, sortedTools, outputs } = r
  const sources = refSources(outputs, options.itemsPerArray)
  const calls: Array<CallCandidate> = []
  const callFeatures: Array<Float64Array> = []
  for (const tool of sortedTools) {
    if (!history.retrieved.has(tool.name)) continue
    const hit = seen.hits.get(tool.name)
    const clause = hit?.clause ?? -1
    const toolTokens = tokens(`${tool.name.replace(/_for_.*$/, "")} ${tool.description}`)
    const overlap = clause >= 0 ? cover(clauseTokens[clause] as ReadonlySet<string>, toolTokens) : cover(requestTokens, toolTokens)
    for (const filling of fillingsFor(tool, literals, clause, sources, options)) {
      const key = callKey(tool.name, filling.arguments)
      const required = tool.parameters.required.length
      const n = Math.max(1, filling.sources.length)
      const f = new Float64Array(candidateWidth)
      const rank = hit?.rank ?? 3
      if (rank < 3) f[rank] = 1
      f[3] = hit?.score ?? 0
      f[4] = overlap
      f[5] = required === 0 ? 1 : filling.filled / required
      f[6] = clip01(required / 4)
      f[7] = filling.sources.filter((s) => s === "literal").length / n
      f[8] = filling.sources.filter((s) => s === "ref").length / n
      f[9] = filling.sources.filter((s) => s === "enum" || s === "default").length / n
      f[10] = filling.matches.length === 0 ? 1 : filling.matches.reduce((a, b) => a + b, 0) / filling.matches.length
      f[11] = filling.matches.length === 0 ? 1 : Math.min(...filling.matches)
      const resolved = resolvePreview(filling.arguments, history.outputs)
      f[12] = JsonSchemaValidate.validateArguments(tool, resolved).ok ? 1 : 0
      f[13] = seen.settled.has(key) ? 1 : 0
      f[14] = seen.transient.has(key) ? 1 : 0
      f[15] = seen.toolFailedHard.has(tool.name) ? 1 : 0
      f[16] = seen.clauseSuccess.has(clause) ? 1 : 0
      f[17] = seen.toolOk.has(tool.name) ? 1 : 0
      f[18] = filling.variant / Math.max(1, options.fillingsPerTool - 1)
      f[19] = hit?.research === true ? 1 : 0
      f[20] = clause < 0 ? 1 : 0
      f[21] = required === 0 ? 1 : 0
      f[22] = literals.some((l) => l.clause === clause) ? 1 : 0
      f[23] = filling.idByLiteral ? 1 : 0
      f[24] = n === 0 ? 0 : filling.foreignLiterals / n
      // a request literal no successful call carried yet: the request's other item (`"Hover"` after `"NameCheap"`) is still to do
      f[25] = filling.literalValues.length === 0 ? 0 : filling.literalValues.filter((v) => !seen.servedValues.has(v)).length / filling.literalValues.length
      calls.push({ tool, arguments: filling.arguments, sources: filling.sources, clause, repeats: seen.operations.has(operationKey(tool.name, resolved)),
        opensClause: clause >= 0 && !seen.clauseSuccess.has(clause) && f[5] === 1 && f[12] === 1 && f[13] === 0 })
      callFeatures.push(f)
    }
  }
  return { calls, features: callFeatures }
}
