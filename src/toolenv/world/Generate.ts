/**
 * Generates the tool library: providers (RapidAPI-style tool groups) per category until each category's quota is
 * met, each provider offering several endpoints over one or two entity types, utilities or actions. Every endpoint
 * is an Op (what it does) plus a ToolSpec (how it is documented), both derived from the same choices.
 */
import type { JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { hashParts, rng as makeRng, type Rng } from "../../math/Random.ts"
import { type Category, categories, categoryQuotas } from "./Catalog.ts"
import { allActions, entityDefs } from "./Entities.ts"
import type { ActionDef, Attr, EntityDef, SeriesDef } from "./Model.ts"
import type { Envelope, Field, Meta, Op, Param, Role, Source } from "./Ops.ts"
import * as T from "./Wording.ts"
import { utility, type UtilityDef } from "./Utilities.ts"
import { capitalize, slug } from "./Values.ts"

/** A generated endpoint: its documentation and its behaviour. */
export interface GeneratedTool {
  readonly spec: ToolSpec
  readonly op: Op
}

/** How one provider writes its API. */
interface Style {
  readonly naming: T.Naming
  readonly camelFields: boolean
  readonly typedId: boolean
  readonly listEnvelope: number
  readonly objectEnvelope: number
  readonly noise: number
  readonly verbose: boolean
  readonly idStyle: number
  readonly limitName: string
  readonly queryName: string
  readonly range: readonly [string, string]
}

const defOf = (type: string): EntityDef | undefined => entityDefs.get(type)

/** Ids that are natural keys get parameter names after the key, as real APIs do. */
const naturalIdParams: Readonly<Record<string, ReadonlyArray<string>>> = {
  airport: ["iata", "airport_code", "iata_code"], airline: ["airline_code", "carrier_code"], flight: ["flight_number", "flight_iata"],
  stock: ["symbol", "ticker"], fund: ["symbol", "ticker"], crypto: ["symbol", "coin"], currency: ["currency", "code"],
  country: ["country_code", "iso2"], domain: ["domain", "hostname"], ip_address: ["ip", "ip_address"], hashtag: ["tag", "hashtag"],
  vulnerability: ["cve_id", "cve"], book: ["isbn", "isbn13"], vehicle: ["vin"], web_page: ["url", "page_url"], ml_model: ["model_id", "repo_id"],
  shipment: ["tracking_number", "tracking_id"], coupon: ["code", "coupon_code"], bank: ["bic", "swift_code"], chemical: ["cas", "cas_number"],
  device: ["device_id", "mac"], exercise: ["exercise", "slug"], publisher: ["source", "source_id"], crypto_exchange: ["exchange", "exchange_id"]
}

const queryNames: ReadonlyArray<string> = ["query", "q", "name", "search", "keyword", "term"]
const limitNames: ReadonlyArray<string> = ["limit", "max_results", "count", "size", "per_page", "top"]
const rangeNames: ReadonlyArray<readonly [string, string]> = [["start_date", "end_date"], ["from", "to"], ["date_from", "date_to"], ["since", "until"], ["begin", "end"]]

const drawStyle = (rng: Rng): Style => {
  const naming = rng.pick<T.Naming>(["title", "title", "title", "camel", "path", "snake", "short"])
  return {
    naming,
    camelFields: rng.next() < 0.25,
    typedId: rng.next() < 0.35,
    listEnvelope: rng.int(6),
    objectEnvelope: rng.int(4),
    noise: rng.next() * 0.6,
    verbose: rng.next() < 0.6,
    idStyle: rng.int(3),
    limitName: rng.pick(limitNames),
    queryName: rng.pick(queryNames),
    range: rng.pick(rangeNames)
  }
}

const caseOf = (style: Style, key: string): string => (style.camelFields ? T.camel(key) : key)

// ---------------------------------------------------------------------------------------------------------------
// Schemas of attributes and fields.

const schemaCache = new Map<string, JsonSchema>()

const attrSchema = (a: Pick<Attr, "type" | "format" | "label">, entity: string | undefined): JsonSchema => {
  const key = `${a.type}|${a.format ?? ""}|${a.label}|${entity ?? ""}`
  const hit = schemaCache.get(key)
  if (hit !== undefined) return hit
  // A list of ids annotates its items (each is an id); any other attribute annotates the field itself.
  const idList = a.type === "string[]" && entity?.endsWith(".id") === true
  const base: JsonSchema = a.type === "string[]"
    ? { type: "array", items: { type: "string", ...(idList && entity !== undefined ? { "x-entity": entity } : {}) } }
    : { type: a.type, ...(a.format === undefined ? {} : { format: a.format }) }
  const schema: JsonSchema = { ...base, description: a.label, ...(entity === undefined || idList ? {} : { "x-entity": entity }) }
  schemaCache.set(key, schema)
  return schema
}

/** The `x-entity` annotation of an attribute of `type`: references carry the referenced type's id or name. */
const entityOf = (type: string, a: Pick<Attr, "key" | "ref" | "names">): string =>
  a.ref !== undefined ? `${a.ref.type}.id` : a.names !== undefined ? `${a.names}.name` : `${type}.${a.key}`

const idAttr = (def: EntityDef): Pick<Attr, "key" | "label" | "type"> => ({ key: "id", label: def.id.label, type: "string" })
const nameAttr = (def: EntityDef): Pick<Attr, "key" | "label" | "type"> => ({ key: "name", label: def.nameLabel, type: "string" })

const nameOut = (def: EntityDef): string =>
  ["title", "headline", "subject", "address", "text", "tag", "description", "reference", "number"].includes(def.nameLabel) ? def.nameLabel : "name"

const fieldCache = new Map<string, Field>()

/** One response field carrying an attribute, shared between endpoints that render it the same way. */
const attrField = (out: string, key: string, schema: JsonSchema): Field => {
  const k = `${out}\u0000${key}\u0000${schema.description ?? ""}\u0000${schema["x-entity"] ?? ""}\u0000${schema.type ?? ""}`
  let f = fieldCache.get(k)
  if (f === undefined) fieldCache.set(k, f = { out, source: { kind: "attr", key }, schema })
  return f
}

/** Response fields for an entity's id, name and chosen attributes. */
const entityFields = (style: Style, def: EntityDef, attrs: ReadonlyArray<Attr>, withName = true): Array<Field> => {
  const fields: Array<Field> = [
    attrField(style.typedId ? caseOf(style, `${def.type}_id`) : "id", "id", attrSchema(idAttr(def), `${def.type}.id`))
  ]
  if (withName && def.createdOnly !== true) {
    fields.push(attrField(caseOf(style, nameOut(def)), "name", attrSchema(nameAttr(def), `${def.type}.name`)))
  }
  for (const a of attrs) fields.push(attrField(caseOf(style, a.key), a.key, attrSchema(a, entityOf(def.type, a))))
  return fields
}

const factAttrs = (def: EntityDef): ReadonlyArray<Attr> => def.attrs.filter((a) => a.fact !== false)

/** A random subset of attributes of size in [min, max], in declaration order. */
const someAttrs = (rng: Rng, attrs: ReadonlyArray<Attr>, min: number, max: number): Array<Attr> => {
  const k = Math.min(attrs.length, min + rng.int(Math.max(1, max - min + 1)))
  const chosen = new Set(rng.shuffle(attrs.map((_, i) => i)).slice(0, k))
  return attrs.filter((_, i) => chosen.has(i))
}

// ---------------------------------------------------------------------------------------------------------------
// Envelopes.

const metaSchemas: Readonly<Record<Meta["value"], JsonSchema>> = {
  total: { type: "integer", description: "total number of matches" },
  returned: { type: "integer", description: "number of items returned" },
  limit: { type: "integer", description: "page size" },
  page: { type: "integer", description: "page number" },
  ok: { type: "string", description: "request status" },
  success: { type: "boolean", description: "whether the request succeeded" }
}

const metaCache = new Map<string, Meta>()
const meta = (out: string, value: Meta["value"]): Meta => {
  const k = `${out}\u0000${value}`
  let m = metaCache.get(k)
  if (m === undefined) metaCache.set(k, m = { out, value, schema: metaSchemas[value] })
  return m
}

const listEnvelope = (style: Style, def: EntityDef | undefined): Envelope => {
  switch (style.listEnvelope) {
    case 0: return { path: ["results"], meta: [meta("total", "total")] }
    case 1: return { path: ["data"], meta: [meta(caseOf(style, "count"), "returned")] }
    case 2: return { path: [caseOf(style, slug(def?.plural ?? "items", "_"))], meta: [] }
    case 3: return { path: [], meta: [] }
    case 4: return { path: ["data", "items"], meta: [meta("status", "ok"), meta("total", "total")] }
    default: return { path: ["items"], meta: [meta("page", "page"), meta(caseOf(style, "per_page"), "limit"), meta("total", "total")] }
  }
}

const objectEnvelope = (style: Style, def: EntityDef | undefined): Envelope => {
  switch (style.objectEnvelope) {
    case 0: return { path: [], meta: [] }
    case 1: return { path: ["data"], meta: [] }
    case 2: return { path: [caseOf(style, slug(def?.noun ?? "result", "_"))], meta: [meta("status", "ok")] }
    default: return { path: ["result"], meta: [meta("success", "success")] }
  }
}

/** The response schema of an op: envelope around an item object or an array of them. */
export const responseSchema = (op: Pick<Op, "result" | "envelope" | "fields">): JsonSchema => {
  const properties: Record<string, JsonSchema> = {}
  for (const f of op.fields) properties[f.out] = f.schema
  const item: JsonSchema = { type: "object", properties, required: op.fields.map((f) => f.out) }
  let payload: JsonSchema = op.result === "list" ? { type: "array", items: item } : item
  const path = op.envelope.path
  for (let i = path.length - 1; i >= 0; i--) {
    const key = path[i] as string
    const props: Record<string, JsonSchema> = { [key]: payload }
    if (i === 0) for (const m of op.envelope.meta) props[m.out] = m.schema
    payload = { type: "object", properties: props, required: Object.keys(props) }
  }
  if (path.length === 0 && op.envelope.meta.length > 0 && payload.type === "object") {
    const props: Record<string, JsonSchema> = { ...payload.properties }
    for (const m of op.envelope.meta) props[m.out] = m.schema
    payload = { ...payload, properties: props, required: Object.keys(props) }
  }
  return payload
}

// ---------------------------------------------------------------------------------------------------------------
// Parameters.

const paramCache = new Map<string, Param>()

/** A parameter; identical parameters (same name, role, schema text) are one shared object. */
const param = (name: string, role: Role, schema: JsonSchema, required: boolean, extra?: { key?: string; refType?: string }): Param => {
  // Name, role, description and annotation fix everything else the builders put in a parameter.
  const k = `${name}\u0000${role}\u0000${required}\u0000${extra?.key ?? ""}\u0000${schema.type ?? ""}\u0000${schema.description ?? ""}\u0000${schema["x-entity"] ?? ""}`
  let p = paramCache.get(k)
  if (p === undefined) {
    p = { name, role, schema, required, ...(extra?.key === undefined ? {} : { key: extra.key }), ...(extra?.refType === undefined ? {} : { refType: extra.refType }) }
    paramCache.set(k, p)
  }
  return p
}

const idParamName = (style: Style, def: EntityDef, rng: Rng): string => {
  const natural = naturalIdParams[def.type]
  if (natural !== undefined && rng.next() < 0.7) return caseOf(style, rng.pick(natural))
  switch (style.idStyle) {
    case 0: return caseOf(style, `${def.type}_id`)
    case 1: return "id"
    default: return T.camel(`${def.type} id`)
  }
}

const idParam = (style: Style, def: EntityDef, rng: Rng, described: string): Param =>
  param(idParamName(style, def, rng), "id", {
    type: "string",
    description: `${capitalize(described)} of the ${def.noun} (e.g. ${def.id.example})`,
    "x-entity": `${def.type}.id`
  }, true)

const limitParam = (style: Style, def: EntityDef | undefined, defaultLimit: number): Param =>
  param(caseOf(style, style.limitName), "limit", {
    type: "integer", minimum: 1, maximum: 50, default: defaultLimit,
    description: `Maximum number of ${def?.plural ?? "items"} to return (1-50, default ${defaultLimit})`
  }, false)

const dateRangeParams = (style: Style, required: boolean): Array<Param> => [
  param(caseOf(style, style.range[0]), "from", { type: "string", format: "date", description: "First day (YYYY-MM-DD)" }, required),
  param(caseOf(style, style.range[1]), "to", { type: "string", format: "date", description: "Last day (YYYY-MM-DD); at most 31 days after the first" }, required)
]

const filterParam = (style: Style, def: EntityDef, a: Attr, required: boolean, rng: Rng): Param => {
  if (a.ref !== undefined) {
    const target = defOf(a.ref.type)
    return param(caseOf(style, a.key), "ref_id", {
      type: "string", description: `${capitalize(target?.id.label ?? "id")} of the ${target?.noun ?? a.ref.type} to filter by`, "x-entity": `${a.ref.type}.id`
    }, required, { key: a.key, refType: a.ref.type })
  }
  if (a.type === "boolean") return param(caseOf(style, a.key), "eq", { type: "boolean", description: `Only ${def.plural} where "${a.label}" is this value`, "x-entity": `${def.type}.${a.key}` }, required, { key: a.key })
  const values = a.values ?? []
  const name = caseOf(style, rng.next() < 0.7 ? a.key : `${a.key}_filter`)
  return param(name, "eq", { type: "string", enum: values, description: `Filter by ${a.label}`, "x-entity": `${def.type}.${a.key}` }, required, { key: a.key })
}

const rangeParam = (style: Style, def: EntityDef, a: Attr, bound: "min" | "max"): Param => {
  const name = caseOf(style, bound === "min" ? `min_${a.key}` : `max_${a.key}`)
  const schema: JsonSchema = a.format === "date"
    ? { type: "string", format: "date", description: `${bound === "min" ? "Earliest" : "Latest"} ${a.label}`, "x-entity": `${def.type}.${a.key}` }
    : { type: a.type === "integer" ? "integer" : "number", description: `${bound === "min" ? "Minimum" : "Maximum"} ${a.label}`, "x-entity": `${def.type}.${a.key}` }
  return param(name, bound, schema, false, { key: a.key })
}

const inputParam = (style: Style, input: { key: string; label: string; type: string; format?: string; values?: ReadonlyArray<string>; minimum?: number; maximum?: number; required: boolean }, rename = false): Param =>
  param(caseOf(style, rename && input.key === "text" ? "content" : input.key), "input", {
    type: input.type as "string",
    description: capitalize(input.label),
    ...(input.format === undefined ? {} : { format: input.format }),
    ...(input.values === undefined ? {} : { enum: input.values }),
    ...(input.minimum === undefined ? {} : { minimum: input.minimum }),
    ...(input.maximum === undefined ? {} : { maximum: input.maximum })
  }, input.required, { key: input.key })

// ---------------------------------------------------------------------------------------------------------------
// Endpoint builders: each returns the op, its name words, a path-style name and a description.

interface Endpoint {
  readonly op: Op
  /** Lower-case words of the endpoint name (`get team details`). */
  readonly words: string
  readonly path: string
  readonly description: string
  readonly method: "GET" | "POST"
  /** Whether it can start a task (needs nothing the caller could not know). */
  readonly entry: boolean
}

interface Ctx {
  readonly rng: Rng
  readonly style: Style
}

const describeFields = (ctx: Ctx, fields: ReadonlyArray<Field>, labels: ReadonlyMap<string, string>): string => {
  const named = fields.map((f) => labels.get(f.out)).filter((l): l is string => l !== undefined)
  if (!ctx.style.verbose || named.length === 0) return ""
  return ` ${ctx.rng.pick(["Returns", "Response includes", "Includes", "Fields:", "Provides"])} ${T.listing(named.slice(0, 7))}.`
}

const labelsOf = (def: EntityDef, fields: ReadonlyArray<Field>): ReadonlyMap<string, string> => {
  const m = new Map<string, string>()
  for (const f of fields) {
    if (f.source.kind !== "attr") continue
    const key = f.source.key
    m.set(f.out, key === "id" ? def.id.label : key === "name" ? def.nameLabel : def.attrs.find((a) => a.key === key)?.label ?? key)
  }
  return m
}

const noun = (ctx: Ctx, def: EntityDef): string => T.nounVariant(ctx.rng, def.noun, def.synonyms)
const plural = (ctx: Ctx, def: EntityDef): string => {
  const n = T.nounVariant(ctx.rng, def.plural, def.synonyms, 0.3)
  return n === def.plural ? n : n.endsWith("s") ? n : `${n}s`
}

const searchEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def).filter((a) => a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, def, attrs)
  const defaultLimit = rng.pick([5, 10, 10, 20])
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && a.ref === undefined && (a.values !== undefined || a.type === "boolean"))
  const params: Array<Param> = [
    param(caseOf(style, def.nameLabel === "title" && rng.next() < 0.5 ? "title" : style.queryName), "query", {
      type: "string", description: `${capitalize(rng.pick(["search text", "name or part of the name", "keywords", "free-text query"]))} to match against the ${def.noun}'s ${def.nameLabel}`, "x-entity": `${def.type}.name`
    }, true)
  ]
  if (eqAttrs.length > 0 && rng.next() < 0.35) params.push(filterParam(style, def, rng.pick(eqAttrs), false, rng))
  if (rng.next() < 0.8) params.push(limitParam(style, def, defaultLimit))
  const op: Op = { kind: "search", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, defaultLimit }
  const p = plural(ctx, def)
  const description = T.phrase(rng, [
    `Search ${p} by ${def.nameLabel}.`,
    `Find ${p} whose ${def.nameLabel} matches a query.`,
    `Look up ${p} by keyword and get their ${def.id.label}s.`,
    `Full-text search over ${def.plural}.`,
    `Returns ${p} matching the search term, best matches first.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return { op, words: T.phrase(rng, [`search ${def.plural}`, `find ${def.noun}`, `${def.noun} search`, `search ${def.plural} by name`]), path: `/${slug(def.plural)}/search`, description, method: "GET", entry: true }
}

const lookupEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def), 2, 5)
  const fields = entityFields(style, def, attrs)
  const params = [param(caseOf(style, def.nameLabel === "name" ? "name" : slug(def.nameLabel, "_")), "query", {
    type: "string", description: `Exact ${def.nameLabel} of the ${def.noun}`, "x-entity": `${def.type}.name`
  }, true)]
  const op: Op = { kind: "lookup", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const description = T.phrase(rng, [
    `Get a ${noun(ctx, def)} by its exact ${def.nameLabel}.`,
    `Resolve a ${def.noun} ${def.nameLabel} to its record.`,
    `Returns the ${def.noun} with the given ${def.nameLabel}; 404 when there is none.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return { op, words: T.phrase(rng, [`get ${def.noun} by name`, `${def.noun} lookup`, `find ${def.noun} by ${def.nameLabel}`]), path: `/${slug(def.plural)}/by-${slug(def.nameLabel)}`, description, method: "GET", entry: true }
}

const detailsEndpoint = (ctx: Ctx, def: EntityDef, variant: "full" | "some" | "lite"): Endpoint => {
  const { rng, style } = ctx
  const pool = factAttrs(def)
  const attrs = variant === "full" ? [...pool] : variant === "lite" ? someAttrs(rng, pool.filter((a) => a.ref === undefined), 1, 2) : someAttrs(rng, pool, 3, 7)
  const fields = entityFields(style, def, attrs, variant !== "lite" || rng.next() < 0.5)
  const params = [idParam(style, def, rng, def.id.label)]
  const op: Op = { kind: "details", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const n = noun(ctx, def)
  const lite = variant === "lite" ? ` Only the ${T.listing(attrs.map((a) => a.label))}.` : ""
  const description = T.phrase(rng, variant === "lite"
    ? [`Quick ${n} lookup by ${def.id.label}.`, `Get the ${T.listing(attrs.map((a) => a.label))} of a ${n}.`, `Lightweight ${n} endpoint.`]
    : [
      `Get detailed information about a ${n} by its ${def.id.label}.`,
      `Retrieve the full profile of a ${n}.`,
      `Returns ${def.noun} details for the given ${def.id.label}.`,
      `Look up a ${n} using its ID.`,
      `Fetch ${def.noun} data by ID.`
    ]) + lite + describeFields(ctx, fields, labelsOf(def, fields))
  const words = variant === "lite"
    ? T.phrase(rng, [`${def.noun} ${attrs[0]?.label ?? "summary"}`, `${def.noun} summary`, `get ${def.noun} ${attrs[0]?.key.replace(/_/g, " ") ?? "basics"}`])
    : T.phrase(rng, [`get ${def.noun} details`, `${def.noun} info`, `${def.noun} profile`, `get ${def.noun} by id`, `${def.noun} details`])
  return { op, words, path: `/${slug(def.plural)}/{${params[0]?.name ?? "id"}}${variant === "lite" ? `/${slug(attrs[0]?.key ?? "summary")}` : ""}`, description, method: "GET", entry: false }
}

const countEndpoint = (ctx: Ctx, def: EntityDef, countAttr: Attr, child: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const fields = entityFields(style, def, [countAttr], rng.next() < 0.5)
  const params = [idParam(style, def, rng, def.id.label)]
  const op: Op = { kind: "details", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  const description = T.phrase(rng, [
    `Get the number of ${child.plural} of a ${def.noun} (count only, no list).`,
    `Returns how many ${child.plural} a ${noun(ctx, def)} has.`,
    `${capitalize(countAttr.label)} for a ${def.noun}.`
  ])
  return { op, words: T.phrase(rng, [`${def.noun} ${child.plural} count`, `count ${def.noun} ${child.plural}`, `${def.noun} ${countAttr.key.replace(/_/g, " ")}`]), path: `/${slug(def.plural)}/{id}/${slug(child.plural)}/count`, description, method: "GET", entry: false }
}

const listEndpoint = (ctx: Ctx, def: EntityDef, by: Attr, byName: boolean): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def).filter((a) => a.key !== by.key && a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, def, attrs)
  const defaultLimit = rng.pick([10, 20, 25])
  const params: Array<Param> = []
  const target = by.ref === undefined ? undefined : defOf(by.ref.type)
  if (by.ref !== undefined && byName && target !== undefined) {
    params.push(param(caseOf(style, rng.next() < 0.5 ? target.type : `${target.type}_name`), "ref_name", {
      type: "string", description: `${capitalize(target.noun)} ${target.nameLabel}`, "x-entity": `${target.type}.name`
    }, true, { key: by.key, refType: target.type }))
  } else params.push(filterParam(style, def, by, true, rng))
  const ranges = def.attrs.filter((a) => a.filter === "range" && a.key !== by.key && (a.type === "integer" || a.type === "number" || a.format === "date"))
  if (ranges.length > 0 && rng.next() < 0.45) {
    const r = rng.pick(ranges)
    params.push(rangeParam(style, def, r, rng.next() < 0.5 ? "min" : "max"))
  }
  if (rng.next() < 0.75) params.push(limitParam(style, def, defaultLimit))
  const op: Op = { kind: "list", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, defaultLimit }
  const p = plural(ctx, def)
  const byLabel = target !== undefined ? target.noun : by.label
  const description = T.phrase(rng, [
    `List ${p} by ${byLabel}.`,
    `Returns ${p} filtered by ${byLabel}${params.length > 2 ? " and an optional range" : ""}.`,
    `Find all ${def.plural} for a given ${byLabel}.`,
    `${capitalize(def.plural)} in a ${byLabel}.`
  ]) + describeFields(ctx, fields, labelsOf(def, fields))
  return {
    op,
    words: T.phrase(rng, [`list ${def.plural} by ${byLabel}`, `${def.plural} by ${byLabel}`, `get ${def.plural}`, `${byLabel} ${def.plural}`]),
    path: `/${slug(def.plural)}?${params[0]?.name ?? "filter"}=`,
    description, method: "GET", entry: target === undefined || byName
  }
}

const childrenEndpoint = (ctx: Ctx, parent: EntityDef, child: EntityDef, via: "parent" | "inverse", name: string, label: string): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(child).filter((a) => a.ref?.type !== parent.type && a.names !== parent.type && a.type !== "string[]"), 1, 3)
  const fields = entityFields(style, child, attrs)
  const defaultLimit = rng.pick([10, 20, 50])
  const params: Array<Param> = [idParam(style, parent, rng, parent.id.label)]
  if (rng.next() < 0.5) params.push(limitParam(style, child, defaultLimit))
  const op: Op = { kind: "children", type: child.type, params, result: "list", envelope: listEnvelope(style, child), fields, defaultLimit, relation: { via, from: parent.type, name } }
  const description = T.phrase(rng, [
    `List the ${label} of a ${noun(ctx, parent)}.`,
    `Get all ${label} for a given ${parent.noun} ${parent.id.label}.`,
    `Returns the ${label} belonging to a ${parent.noun}.`,
    `${capitalize(label)} of a ${parent.noun}.`
  ]) + describeFields(ctx, fields, labelsOf(child, fields))
  return { op, words: T.phrase(rng, [`${parent.noun} ${label}`, `get ${parent.noun} ${label}`, `list ${label} by ${parent.noun}`]), path: `/${slug(parent.plural)}/{id}/${slug(name)}`, description, method: "GET", entry: false }
}

const seriesEndpoint = (ctx: Ctx, def: EntityDef, s: SeriesDef): Endpoint => {
  const { rng, style } = ctx
  const metricOut = caseOf(style, rng.next() < 0.5 ? s.key : "value")
  const kind = rng.pick(["series", "series", "latest", "stats"] as const)
  const idp = idParam(style, def, rng, def.id.label)
  const valueSchema: JsonSchema = { type: s.type, description: s.label, "x-entity": `${def.type}.${s.key}` }
  if (kind === "series") {
    const fields: Array<Field> = [
      { out: rng.pick(["date", "day", "timestamp"]), source: { kind: "date" }, schema: { type: "string", format: "date", description: "day" } },
      { out: metricOut, source: { kind: "value" }, schema: valueSchema }
    ]
    const op: Op = { kind: "series", type: def.type, params: [idp, ...dateRangeParams(style, rng.next() < 0.6)], result: "list", envelope: listEnvelope(style, undefined), fields, metric: s.key }
    return {
      op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}/history`,
      words: T.phrase(rng, [`${def.noun} ${s.label} history`, `historical ${s.label}`, `get ${s.key.replace(/_/g, " ")} time series`, `daily ${s.label}`]),
      description: T.phrase(rng, [
        `Daily ${s.label} of a ${noun(ctx, def)} between two dates.`,
        `Historical ${s.label} for a ${def.noun}, one value per day (max 31 days).`,
        `Time series of ${s.label} for the given ${def.id.label}.`
      ])
    }
  }
  if (kind === "latest") {
    const fields: Array<Field> = [
      ...entityFields(style, def, [], rng.next() < 0.5),
      { out: metricOut, source: { kind: "value" }, schema: valueSchema },
      { out: rng.pick(["as_of", "date", "updated"]), source: { kind: "date" }, schema: { type: "string", format: "date", description: "date of the value" } }
    ]
    const op: Op = { kind: "latest", type: def.type, params: [idp], result: "object", envelope: objectEnvelope(style, def), fields, metric: s.key }
    return {
      op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}`,
      words: T.phrase(rng, [`current ${s.label}`, `${def.noun} ${s.label}`, `latest ${s.key.replace(/_/g, " ")}`, `real-time ${s.label}`]),
      description: T.phrase(rng, [`Current ${s.label} of a ${noun(ctx, def)}.`, `Latest ${s.label} for the given ${def.id.label}.`, `Real-time ${s.label} of a ${def.noun}.`])
    }
  }
  const stat = (o: string, st: "min" | "max" | "mean" | "days" | "change_pct", label: string): Field => ({ out: caseOf(style, o), source: { kind: "stat", stat: st }, schema: { type: st === "days" ? "integer" : "number", description: label } })
  const fields: Array<Field> = [
    stat("min", "min", `lowest ${s.label}`), stat("max", "max", `highest ${s.label}`), stat(rng.pick(["average", "mean", "avg"]), "mean", `average ${s.label}`),
    stat("days", "days", "days covered"), stat("change_pct", "change_pct", `change of ${s.label} over the period (%)`)
  ]
  const op: Op = { kind: "stats", type: def.type, params: [idp, ...dateRangeParams(style, true)], result: "object", envelope: objectEnvelope(style, undefined), fields, metric: s.key }
  return {
    op, method: "GET", entry: false, path: `/${slug(def.plural)}/{id}/${slug(s.key)}/stats`,
    words: T.phrase(rng, [`${s.label} statistics`, `${def.noun} ${s.key.replace(/_/g, " ")} summary`, `${s.label} min max average`]),
    description: T.phrase(rng, [`Minimum, maximum and average ${s.label} of a ${noun(ctx, def)} over a date range.`, `Summary statistics of ${s.label} between two dates (max 31 days).`])
  }
}

const topEndpoint = (ctx: Ctx, def: EntityDef, by: Attr): Endpoint => {
  const { rng, style } = ctx
  const others = someAttrs(rng, factAttrs(def).filter((a) => a.key !== by.key && a.type !== "string[]"), 0, 2)
  const fields: Array<Field> = [
    { out: "rank", source: { kind: "rank" }, schema: { type: "integer", description: "position in the ranking" } },
    ...entityFields(style, def, [by, ...others])
  ]
  const defaultLimit = rng.pick([5, 10, 10, 25])
  const params: Array<Param> = [limitParam(style, def, defaultLimit)]
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && a.ref === undefined && a.values !== undefined)
  if (eqAttrs.length > 0 && rng.next() < 0.4) params.push(filterParam(style, def, rng.pick(eqAttrs), false, rng))
  const op: Op = { kind: "top", type: def.type, params, result: "list", envelope: listEnvelope(style, def), fields, metric: by.key, defaultLimit }
  const p = plural(ctx, def)
  return {
    op, method: "GET", entry: true, path: `/${slug(def.plural)}/top`,
    words: T.phrase(rng, [`top ${def.plural}`, `${def.plural} ranking`, `top ${def.plural} by ${by.key.replace(/_/g, " ")}`, `trending ${def.plural}`]),
    description: T.phrase(rng, [`Top ${p} ranked by ${by.label}.`, `Ranking of ${p} by ${by.label}, highest first.`, `The ${p} with the highest ${by.label}.`]) + describeFields(ctx, fields, labelsOf(def, fields))
  }
}

const featuredEndpoint = (ctx: Ctx, def: EntityDef): Endpoint => {
  const { rng, style } = ctx
  const attrs = someAttrs(rng, factAttrs(def), 2, 4)
  const fields = entityFields(style, def, attrs)
  const params = [param("date", "date", { type: "string", format: "date", description: "Day to get the pick for (default today)" }, false)]
  const op: Op = { kind: "featured", type: def.type, params, result: "object", envelope: objectEnvelope(style, def), fields }
  return {
    op, method: "GET", entry: true, path: `/${slug(def.plural)}/featured`,
    words: T.phrase(rng, [`${def.noun} of the day`, `featured ${def.noun}`, `random ${def.noun}`, `daily ${def.noun} pick`]),
    description: T.phrase(rng, [`A featured ${noun(ctx, def)}, changing every day.`, `Get today's ${def.noun} pick (or the pick of another day).`, `Random ${def.noun} of the day.`]) + describeFields(ctx, fields, labelsOf(def, fields))
  }
}

const recordFields = (ctx: Ctx, a: ActionDef, all: boolean): Array<Field> => {
  const rec = defOf(a.creates)
  const attrs = rec === undefined ? [] : all ? [...rec.attrs] : someAttrs(ctx.rng, rec.attrs, 2, 4)
  return rec === undefined ? [] : entityFields(ctx.style, rec, attrs, false)
}

const actionEndpoint = (ctx: Ctx, a: ActionDef, target: EntityDef | undefined): Endpoint => {
  const { rng, style } = ctx
  const rec = defOf(a.creates)
  const params: Array<Param> = []
  if (target !== undefined) params.push(idParam(style, target, rng, target.id.label))
  for (const input of a.inputs) params.push(inputParam(style, input))
  const fields = recordFields(ctx, a, false)
  const op: Op = { kind: "action", type: a.creates, params, result: "object", envelope: objectEnvelope(style, rec), fields, action: a.key }
  const verb = a.key.replace(/_/g, " ")
  return {
    op, method: "POST", entry: target === undefined, path: target === undefined ? `/${slug(rec?.plural ?? a.creates)}` : `/${slug(target.plural)}/{id}/${slug(a.key)}`,
    words: target === undefined ? T.phrase(rng, [verb, `create ${rec?.noun ?? a.creates}`]) : T.phrase(rng, [`${verb} ${target.noun}`, `create ${rec?.noun ?? a.creates}`, `${target.noun} ${verb}`]),
    description: `${capitalize(a.label)}. ${T.phrase(rng, [`Returns the new ${rec?.noun ?? "record"} and its ${rec?.id.label ?? "id"}.`, `Responds with a ${rec?.id.label ?? "reference"} you can use to check the status later.`, "Creates the record and returns its reference."])}`
  }
}

const recordEndpoint = (ctx: Ctx, a: ActionDef): Endpoint => {
  const { rng, style } = ctx
  const rec = defOf(a.creates)
  const fields = recordFields(ctx, a, rng.next() < 0.5)
  const params = rec === undefined ? [] : [idParam(style, rec, rng, rec.id.label)]
  const op: Op = { kind: "record", type: a.creates, params, result: "object", envelope: objectEnvelope(style, rec), fields, action: a.key }
  const n = rec?.noun ?? a.creates
  return {
    op, method: "GET", entry: false, path: `/${slug(rec?.plural ?? a.creates)}/{id}`,
    words: T.phrase(rng, [`get ${n} status`, `${n} details`, `check ${n}`, `retrieve ${n}`]),
    description: T.phrase(rng, [`Check the status of a ${n} by its ${rec?.id.label ?? "id"}.`, `Retrieve a ${n} created earlier.`, `Get ${n} details using the reference returned at creation.`])
  }
}

const convertEndpoint = (ctx: Ctx): Endpoint => {
  const { rng, style } = ctx
  const base = rng.pick(["from", "base", "from_currency", "source"])
  const quote = rng.pick(["to", "target", "to_currency", "symbols"])
  const cur: JsonSchema = { type: "string", "x-entity": "currency.id" }
  const params: Array<Param> = [
    param(caseOf(style, "amount"), "amount", { type: "number", minimum: 0, description: "Amount to convert" }, true),
    param(caseOf(style, base), "base", { ...cur, description: "ISO 4217 code of the source currency (e.g. USD)" }, true),
    param(caseOf(style, quote), "quote", { ...cur, description: "ISO 4217 code of the target currency (e.g. EUR)" }, true)
  ]
  const fields: Array<Field> = [
    { out: caseOf(style, rng.pick(["result", "converted_amount", "converted"])), source: { kind: "out", key: "result" }, schema: { type: "number", description: "converted amount" } },
    { out: "rate", source: { kind: "out", key: "rate" }, schema: { type: "number", description: "exchange rate" } },
    { out: caseOf(style, "from"), source: { kind: "arg", param: params[1]?.name ?? "from" }, schema: { type: "string", description: "source currency", "x-entity": "currency.id" } },
    { out: caseOf(style, "to"), source: { kind: "arg", param: params[2]?.name ?? "to" }, schema: { type: "string", description: "target currency", "x-entity": "currency.id" } }
  ]
  const op: Op = { kind: "convert", type: "", params, result: "object", envelope: objectEnvelope(style, undefined), fields }
  return {
    op, method: "GET", entry: true, path: "/convert",
    words: T.phrase(rng, ["convert currency", "currency converter", "exchange amount", "fx convert"]),
    description: T.phrase(rng, ["Convert an amount from one currency to another at today's rate.", "Currency conversion using live exchange rates.", "Exchange an amount between two ISO currencies."])
  }
}

const utilityEndpoint = (ctx: Ctx, u: UtilityDef): Endpoint => {
  const { rng, style } = ctx
  const rename = rng.next() < 0.3
  const params = u.inputs.map((i) => inputParam(style, i, rename))
  const outs = u.outputs.filter((o, k) => k === 0 || rng.next() < 0.8)
  const fields: Array<Field> = outs.map((o) => ({
    out: caseOf(style, o.key),
    source: { kind: "out", key: o.key },
    schema: o.type === "string[]" ? { type: "array", items: { type: "string" }, description: o.label } : { type: o.type, description: o.label }
  }))
  const op: Op = { kind: "utility", type: "", params, result: "object", envelope: objectEnvelope(style, undefined), fields, utility: u.key }
  const topic = T.nounVariant(rng, u.topic, u.synonyms, 0.5)
  return {
    op, method: rng.next() < 0.5 ? "POST" : "GET", entry: true, path: `/${slug(u.key)}`,
    words: T.phrase(rng, [u.label.split(" ").slice(0, 2).join(" "), u.topic, u.key.replace(/_/g, " ")]),
    description: `${capitalize(u.label)}. ${T.phrase(rng, [`Fast ${topic} endpoint.`, `${capitalize(topic)} API.`, `Simple ${topic}.`, ""])}`.trim() + describeFields(ctx, fields, new Map(outs.map((o) => [caseOf(style, o.key), o.label])))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Providers.

type Relation = { readonly child: EntityDef; readonly via: "parent" | "inverse"; readonly name: string; readonly label: string }

const allRelations = new Map<string, ReadonlyArray<Relation>>()

/** Relations seen from a type: its block children and the types whose references name it (computed once per type). */
const relationsOf = (def: EntityDef, allowed: ReadonlySet<string>): Array<Relation> => {
  let all = allRelations.get(def.type)
  if (all === undefined) {
    const found: Array<Relation> = []
    for (const other of entityDefs.values()) {
      if (other.createdOnly === true) continue
      if (other.parent?.type === def.type) found.push({ child: other, via: "parent", name: other.parent.relation, label: other.plural })
      const seen = new Set<string>()
      for (const a of other.attrs) {
        const r = a.ref
        if (r?.type !== def.type || r.inverse === undefined || seen.has(r.inverse)) continue
        seen.add(r.inverse)
        found.push({ child: other, via: "inverse", name: r.inverse, label: r.inverseLabel ?? other.plural })
      }
    }
    all = found
    allRelations.set(def.type, all)
  }
  return all.filter((r) => r.via === "parent" || allowed.has(r.child.type))
}

/** Candidate endpoints of a provider serving `def` in category `cat`; entry endpoints first. */
const candidates = (ctx: Ctx, def: EntityDef, cat: Category): { entries: Array<() => Endpoint>; others: Array<() => Endpoint> } => {
  const { rng } = ctx
  const entries: Array<() => Endpoint> = []
  const others: Array<() => Endpoint> = []
  const allowed = new Set([...cat.types, def.type])
  if (def.searchable !== false) {
    entries.push(() => searchEndpoint(ctx, def))
    if (rng.next() < 0.3) entries.push(() => lookupEndpoint(ctx, def))
  }
  const eqAttrs = def.attrs.filter((a) => a.filter === "eq" && (a.values !== undefined || a.ref !== undefined))
  for (const a of rng.shuffle(eqAttrs).slice(0, 2)) {
    const byName = a.ref !== undefined && defOf(a.ref.type)?.searchable !== false && rng.next() < 0.4
    ;(a.ref === undefined || byName ? entries : others).push(() => listEndpoint(ctx, def, a, byName))
  }
  const ranked = def.attrs.filter((a) => a.filter === "range" && (a.type === "integer" || a.type === "number"))
  if (ranked.length > 0 && rng.next() < 0.5) {
    const by = rng.pick(ranked)
    entries.push(() => topEndpoint(ctx, def, by))
  }
  if (rng.next() < 0.12) entries.push(() => featuredEndpoint(ctx, def))
  others.push(() => detailsEndpoint(ctx, def, rng.next() < 0.3 ? "full" : "some"))
  if (rng.next() < 0.3) others.push(() => detailsEndpoint(ctx, def, "lite"))
  for (const rel of rng.shuffle(relationsOf(def, allowed)).slice(0, 3)) {
    others.push(() => childrenEndpoint(ctx, def, rel.child, rel.via, rel.name, rel.label))
    const countAttr = rel.via === "parent" ? def.attrs.find((a) => a.counts === rel.child.type) : undefined
    if (countAttr !== undefined && rng.next() < 0.5) others.push(() => countEndpoint(ctx, def, countAttr, rel.child))
  }
  for (const s of def.series ?? []) others.push(() => seriesEndpoint(ctx, def, s))
  for (const a of def.actions ?? []) {
    const withStatus = rng.next() < 0.75
    others.push(() => actionEndpoint(ctx, a, def))
    if (withStatus) others.push(() => recordEndpoint(ctx, a))
  }
  if (def.type === "currency") entries.push(() => convertEndpoint(ctx))
  return { entries, others }
}

const brandSuffixes: ReadonlyArray<string> = ["Hub", "API", "ly", "ify", "io", "Pro", "Plus", "Now", "Base", "Stack", "Wise", "Labs", "Cloud", "Data", "Live", "Zone", "Point", "Flow", "Kit", "X", "Go", "Sense", "Scope", "Feed"]

const brandName = (rng: Rng, cat: Category, taken: Set<string>): string => {
  for (let attempt = 0; attempt < 40; attempt++) {
    const stem = rng.pick(cat.stems)
    const style = rng.int(5)
    const name = style === 0 ? `${stem}${rng.pick(brandSuffixes)}`
      : style === 1 ? `${stem} ${rng.pick(["Central", "Insights", "Connect", "Direct", "Engine", "Works", "Tracker", "Finder", "Radar", "Pulse", "Genie"])}`
      : style === 2 ? `${rng.pick(["Open", "Smart", "Rapid", "True", "Global", "Easy", "Ultra", "Instant", "Neo", "Meta"])}${stem}`
      : style === 3 ? `${stem}${rng.pick(brandSuffixes)} ${rng.pick(["API", "v2", "Pro", "Lite", "Free"])}`
      : `${stem}${rng.pick(["ly", "io", "ify", "r", "ster", "ora"])}`
    if (!taken.has(name)) {
      taken.add(name)
      return name
    }
  }
  let k = 2
  const base = `${rng.pick(cat.stems)}${rng.pick(brandSuffixes)}`
  while (taken.has(`${base} ${k}`)) k++
  taken.add(`${base} ${k}`)
  return `${base} ${k}`
}

/** Endpoints per provider: long-tailed, 1..20, mean ≈ 4 (ToolEnv2404 has ≈ 3.8 APIs per tool). */
const groupSize = (rng: Rng): number => Math.min(20, 1 + Math.floor(Math.exp(0.9 + 0.8 * rng.normal())))

const callableName = (api: string, group: string, taken: Set<string>): string => {
  const a = T.snake(api).slice(0, 40) || "endpoint"
  const g = T.snake(group).slice(0, 63 - 5 - a.length) || "api"
  let name = `${a}_for_${g}`.slice(0, 64)
  for (let k = 2; taken.has(name); k++) name = `${`${a}_for_${g}`.slice(0, 60)}_${k}`
  taken.add(name)
  return name
}

/** Options of {@link generate}. */
export interface GenerateOptions {
  readonly seed: number
  /** Number of interfaces (default 50,011, the paper's library). */
  readonly size?: number
}

/** Generates the library's endpoints, deterministically from the seed. */
export const generate = (options: GenerateOptions): ReadonlyArray<GeneratedTool> => {
  const { seed } = options
  const quotas = categoryQuotas(options.size)
  const brands = new Set<string>()
  const names = new Set<string>()
  const out: Array<GeneratedTool> = []
  for (const [catName, quota] of quotas) {
    const cat = categories.find((c) => c.name === catName)
    if (cat === undefined) continue
    let made = 0
    for (let k = 0; made < quota; k++) {
      const rng = makeRng(hashParts(seed, "provider", cat.name, k))
      const style = drawStyle(rng)
      const ctx: Ctx = { rng, style }
      const group = brandName(rng, cat, brands)
      const size = Math.min(quota - made, groupSize(rng))
      const endpoints = providerEndpoints(ctx, cat, size)
      if (endpoints.length === 0) continue
      const kindWord = T.phrase(rng, cat.domain.endsWith("data") ? ["API", "service", "feed", "platform"] : ["API", "service", "data feed", "platform", "toolkit"])
      const groupDescription = `${group} ${T.phrase(rng, ["offers", "provides", "is", "delivers", "gives developers"])} ${T.article(cat.domain)} ${cat.domain} ${kindWord}${endpoints.length > 1 ? ` with ${endpoints.length} endpoints` : ""}.${rng.next() < style.noise ? ` ${rng.pick(T.noiseSentences)}` : ""}`
      const seenApis = new Set<string>()
      for (const e of endpoints) {
        let apiName = T.endpointName(style.naming, e.words, e.path)
        if (seenApis.has(apiName)) apiName = `${apiName} ${seenApis.size + 1}`
        seenApis.add(apiName)
        const name = callableName(apiName, group, names)
        const parameters: ParametersSchema = {
          type: "object",
          properties: Object.fromEntries(e.op.params.map((p) => [p.name, p.schema])),
          required: e.op.params.filter((p) => p.required).map((p) => p.name)
        }
        const description = e.description + (rng.next() < style.noise ? ` ${rng.pick(T.noiseSentences)}` : "")
        const spec: ToolSpec = {
          id: toolId(`generated:${cat.name}/${slug(group)}/${slug(apiName) || "endpoint"}`),
          name: toolName(name),
          group,
          apiName,
          category: cat.name,
          description,
          groupDescription,
          parameters,
          response: responseSchema(e.op),
          method: e.method,
          source: { kind: "generated", ref: `world:${seed}#${out.length}` }
        }
        out.push({ spec, op: e.op })
        made++
      }
    }
  }
  return out
}

/** Chooses a provider's endpoints: one or two entity types, or utilities / standalone actions. */
const providerEndpoints = (ctx: Ctx, cat: Category, size: number): Array<Endpoint> => {
  const { rng } = ctx
  const utilityOnly = cat.types.length === 0 || (cat.utilities.length > 0 && rng.next() < 0.22)
  const actionOnly = !utilityOnly && cat.actions.length > 0 && rng.next() < 0.25
  if (actionOnly) {
    const a = allActions.find((x) => x.action.key === rng.pick(cat.actions) && x.target === undefined)
    if (a !== undefined) return [actionEndpoint(ctx, a.action, undefined), recordEndpoint(ctx, a.action)].slice(0, Math.max(1, size))
  }
  if (utilityOnly) {
    // Each utility once, then (room permitting) a standalone action with its status endpoint, then variants.
    const keys = rng.shuffle(cat.utilities.length > 0 ? cat.utilities : ["text_stats"])
    const eps: Array<Endpoint> = []
    for (const k of keys) {
      const u = utility(k)
      if (u !== undefined && eps.length < size) eps.push(utilityEndpoint(ctx, u))
    }
    const a = cat.actions.length === 0 ? undefined : allActions.find((x) => x.action.key === rng.pick(cat.actions) && x.target === undefined)
    if (a !== undefined && size - eps.length >= 2) eps.push(actionEndpoint(ctx, a.action, undefined), recordEndpoint(ctx, a.action))
    for (let i = 0; eps.length < size && i < size; i++) {
      const u = utility(keys[i % keys.length] ?? "")
      if (u !== undefined) eps.push(utilityEndpoint(ctx, u))
    }
    return eps
  }
  // Primary type skewed to the category's first types; a second type sometimes.
  const typeAt = (): string => cat.types[Math.floor(rng.next() ** 1.6 * cat.types.length)] ?? cat.types[0] ?? ""
  const primary = defOf(typeAt())
  if (primary === undefined) return []
  const types = [primary]
  if (size >= 4 && cat.types.length > 1 && rng.next() < 0.45) {
    const second = defOf(typeAt())
    if (second !== undefined && second.type !== primary.type) types.push(second)
  }
  const entries: Array<() => Endpoint> = []
  const others: Array<() => Endpoint> = []
  for (const d of types) {
    const c = candidates(ctx, d, cat)
    entries.push(...rng.shuffle(c.entries))
    others.push(...rng.shuffle(c.others))
  }
  if (cat.utilities.length > 0 && rng.next() < 0.2) {
    const u = utility(rng.pick(cat.utilities))
    if (u !== undefined) others.push(() => utilityEndpoint(ctx, u))
  }
  // A single-endpoint provider is any endpoint; larger ones start with an entry point so their ids are reachable.
  const head = 1 + rng.int(2)
  const ordered = size === 1 ? rng.shuffle([...entries, ...others]) : [...entries.slice(0, head), ...rng.shuffle([...entries.slice(head), ...others])]
  const picked = ordered.slice(0, size).map((f) => f())
  return picked
}
