/**
 * The parts a generated endpoint is built from, in its provider's drawn style: the style, response fields of entity
 * attributes, list and object envelopes, the response schema, and the parameters (ids, filters, ranges, limits, inputs).
 */
import type { JsonSchema } from "../../domain/Json.ts"
import type { Rng } from "../../math/Random.ts"
import { entityDefs } from "./Entities.ts"
import type { Attr, EntityDef } from "./Model.ts"
import type { Envelope, Field, Meta, Op, Param, Role } from "./Ops.ts"
import * as T from "./Wording.ts"
import { capitalize, slug } from "./Values.ts"

/** How one provider writes its API. */
export interface Style {
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

/** The entity definition of a type, when there is one. */
export const defOf = (type: string): EntityDef | undefined => entityDefs.get(type)

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

/** Draws how a provider writes its API (naming, field case, envelopes, parameter names) from its stream. */
export const drawStyle = (rng: Rng): Style => {
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

/** A field or parameter key in the style's case: camelCase or as written. */
export const caseOf = (style: Style, key: string): string => (style.camelFields ? T.camel(key) : key)

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
export const entityFields = (style: Style, def: EntityDef, attrs: ReadonlyArray<Attr>, withName = true): Array<Field> => {
  const fields: Array<Field> = [
    attrField(style.typedId ? caseOf(style, `${def.type}_id`) : "id", "id", attrSchema(idAttr(def), `${def.type}.id`))
  ]
  if (withName && def.createdOnly !== true) {
    fields.push(attrField(caseOf(style, nameOut(def)), "name", attrSchema(nameAttr(def), `${def.type}.name`)))
  }
  for (const a of attrs) fields.push(attrField(caseOf(style, a.key), a.key, attrSchema(a, entityOf(def.type, a))))
  return fields
}

/** An entity's attributes a request may ask for as facts. */
export const factAttrs = (def: EntityDef): ReadonlyArray<Attr> => def.attrs.filter((a) => a.fact !== false)

/** A random subset of attributes of size in [min, max], in declaration order. */
export const someAttrs = (rng: Rng, attrs: ReadonlyArray<Attr>, min: number, max: number): Array<Attr> => {
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

/** The envelope of a list response in the provider's style (`results`, `data`, `items` with page meta, ...). */
export const listEnvelope = (style: Style, def: EntityDef | undefined): Envelope => {
  switch (style.listEnvelope) {
    case 0: return { path: ["results"], meta: [meta("total", "total")] }
    case 1: return { path: ["data"], meta: [meta(caseOf(style, "count"), "returned")] }
    case 2: return { path: [caseOf(style, slug(def?.plural ?? "items", "_"))], meta: [] }
    case 3: return { path: [], meta: [] }
    case 4: return { path: ["data", "items"], meta: [meta("status", "ok"), meta("total", "total")] }
    default: return { path: ["items"], meta: [meta("page", "page"), meta(caseOf(style, "per_page"), "limit"), meta("total", "total")] }
  }
}

/** The envelope of an object response in the provider's style (bare, `data`, `result` with a status, ...). */
export const objectEnvelope = (style: Style, def: EntityDef | undefined): Envelope => {
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
export const param = (name: string, role: Role, schema: JsonSchema, required: boolean, extra?: { key?: string; refType?: string }): Param => {
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

/** The required id parameter of an entity, named in the style (usually after its natural key when it has one). */
export const idParam = (style: Style, def: EntityDef, rng: Rng, described: string): Param =>
  param(idParamName(style, def, rng), "id", {
    type: "string",
    description: `${capitalize(described)} of the ${def.noun} (e.g. ${def.id.example})`,
    "x-entity": `${def.type}.id`
  }, true)

/** The optional page-size parameter (1-50) with its default. */
export const limitParam = (style: Style, def: EntityDef | undefined, defaultLimit: number): Param =>
  param(caseOf(style, style.limitName), "limit", {
    type: "integer", minimum: 1, maximum: 50, default: defaultLimit,
    description: `Maximum number of ${def?.plural ?? "items"} to return (1-50, default ${defaultLimit})`
  }, false)

/** The first-day / last-day parameters of a date range (at most 31 days). */
export const dateRangeParams = (style: Style, required: boolean): Array<Param> => [
  param(caseOf(style, style.range[0]), "from", { type: "string", format: "date", description: "First day (YYYY-MM-DD)" }, required),
  param(caseOf(style, style.range[1]), "to", { type: "string", format: "date", description: "Last day (YYYY-MM-DD); at most 31 days after the first" }, required)
]

/** A filter on an attribute: a referenced entity's id, a boolean, or one of the attribute's values. */
export const filterParam = (style: Style, def: EntityDef, a: Attr, required: boolean, rng: Rng): Param => {
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

/** A minimum or maximum bound on a numeric or date attribute. */
export const rangeParam = (style: Style, def: EntityDef, a: Attr, bound: "min" | "max"): Param => {
  const name = caseOf(style, bound === "min" ? `min_${a.key}` : `max_${a.key}`)
  const schema: JsonSchema = a.format === "date"
    ? { type: "string", format: "date", description: `${bound === "min" ? "Earliest" : "Latest"} ${a.label}`, "x-entity": `${def.type}.${a.key}` }
    : { type: a.type === "integer" ? "integer" : "number", description: `${bound === "min" ? "Minimum" : "Maximum"} ${a.label}`, "x-entity": `${def.type}.${a.key}` }
  return param(name, bound, schema, false, { key: a.key })
}

/** A parameter for an input of an action or utility; `rename` writes a `text` input as `content`. */
export const inputParam = (style: Style, input: { key: string; label: string; type: string; format?: string; values?: ReadonlyArray<string>; minimum?: number; maximum?: number; required: boolean }, rename = false): Param =>
  param(caseOf(style, rename && input.key === "text" ? "content" : input.key), "input", {
    type: input.type as "string",
    description: capitalize(input.label),
    ...(input.format === undefined ? {} : { format: input.format }),
    ...(input.values === undefined ? {} : { enum: input.values }),
    ...(input.minimum === undefined ? {} : { minimum: input.minimum }),
    ...(input.maximum === undefined ? {} : { maximum: input.maximum })
  }, input.required, { key: input.key })
