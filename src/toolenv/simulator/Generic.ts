/**
 * The deterministic L3 renderer for tools that are not generated (imported libraries): walks the tool's response
 * schema — or a schema inferred from its example response — and fills it with plausible values chosen from the field
 * names, formats and example values. Fields annotated `x-entity: "<type>.<attr>"` take a value that is a function of
 * (seed, type, entity id, attr): the same entity shows the same facts in every call and every tool (L2 consistency).
 */
import type { Json, JsonObject, JsonSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { canonicalJson } from "../../math/CanonicalJson.ts"
import { hash32 } from "../../math/Random.ts"
import type { Universe } from "../world/Universe.ts"
import * as V from "../world/Values.ts"
import * as W from "../world/Words.ts"

/** The date format an example string shows (`2024-04-15` → date, `2024-04-15T…` → date-time), if any. */
const dateFormatOf = (example: string): "date" | "date-time" | undefined =>
  /^\d{4}-\d{2}-\d{2}$/.test(example) ? "date" : /^\d{4}-\d{2}-\d{2}T/.test(example) ? "date-time" : undefined

/** Infers a JSON schema from an example value (objects, arrays, primitives). */
export const inferSchema = (example: Json): JsonSchema => {
  if (example === null) return { type: "string" }
  if (Array.isArray(example)) return { type: "array", items: example.length > 0 ? inferSchema(example[0] as Json) : { type: "string" } }
  switch (typeof example) {
    case "string": {
      const format = dateFormatOf(example)
      return format === undefined ? { type: "string" } : { type: "string", format }
    }
    case "number": return { type: Number.isInteger(example) ? "integer" : "number" }
    case "boolean": return { type: "boolean" }
    default: {
      const record = example as { readonly [key: string]: Json }
      const properties: Record<string, JsonSchema> = {}
      for (const k of Object.keys(record)) properties[k] = inferSchema(record[k] as Json)
      return { type: "object", properties, required: Object.keys(properties) }
    }
  }
}

const isEmptyObjectSchema = (s: JsonSchema | undefined): boolean =>
  s === undefined || (s.type === "object" && (s.properties === undefined || Object.keys(s.properties).length === 0)) || s.type === undefined && s.properties === undefined && s.items === undefined

/** The fallback shape for a tool that documents no response: a status, a data record and the query echoed. */
export const fallbackSchema = (spec: ToolSpec): JsonSchema => ({
  type: "object",
  properties: {
    status: { type: "string", enum: ["success"] },
    data: {
      type: "object",
      properties: {
        id: { type: "string" },
        name: { type: "string" },
        description: { type: "string" },
        value: { type: "number" },
        updated_at: { type: "string", format: "date-time" }
      },
      required: ["id", "name", "description", "value", "updated_at"]
    },
    query: { type: "object", description: `arguments of ${spec.apiName}` }
  },
  required: ["status", "data", "query"]
})

/** The schema and example the renderer follows for a tool. */
export const responseShape = (spec: ToolSpec): { readonly schema: JsonSchema; readonly example: Json | undefined } => {
  if (!isEmptyObjectSchema(spec.response) && spec.response !== undefined) return { schema: spec.response, example: spec.example }
  if (spec.example !== undefined && spec.example !== null && typeof spec.example === "object") return { schema: inferSchema(spec.example), example: spec.example }
  return { schema: fallbackSchema(spec), example: undefined }
}

/** Keeps the character classes of a sample (letters stay letters, digits stay digits) with new characters. */
const reshape = (sample: string, h: number): string => {
  let out = ""
  let x = h
  for (let i = 0; i < sample.length; i++) {
    if (i % 6 === 0) x = hash32(String(i), h)
    const c = sample.charCodeAt(i)
    const r = x % 26
    x = Math.floor(x / 7) + i
    if (c >= 48 && c <= 57) out += String(r % 10)
    else if (c >= 65 && c <= 90) out += String.fromCharCode(65 + r)
    else if (c >= 97 && c <= 122) out += String.fromCharCode(97 + r)
    else out += sample[i]
  }
  return out
}

const categorical = /^[A-Za-z][A-Za-z _/-]{0,23}$/

/** A string value for a field, from its name, format and example. */
const stringFor = (key: string, schema: JsonSchema, h: number, example: Json | undefined): string => {
  if (schema.enum !== undefined && schema.enum.length > 0) return String(V.pick(schema.enum, h))
  const k = key.toLowerCase()
  const fmt = schema.format ?? (typeof example === "string" ? (dateFormatOf(example) ?? (/^https?:\/\//.test(example) ? "uri" : /@/.test(example) ? "email" : undefined)) : undefined)
  if (fmt === "date") return V.pastDate(h, 0, 1500)
  if (fmt === "date-time") return V.dateTimeOn(h, V.today - (h % 400))
  if (fmt === "email" || /email/.test(k)) return V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h)
  if (fmt === "uri" || fmt === "url" || /(url|link|href|website|image|logo|avatar|thumbnail|icon)$/.test(k)) {
    return /image|logo|avatar|thumbnail|icon/.test(k) ? `https://images.example-cdn.com/${V.hex(h, 12)}.jpg` : `https://www.${V.domainFor(V.compound(h), V.sub(h, "t"))}/${V.slug(V.title(V.sub(h, "p")))}`
  }
  if (typeof example === "string" && example.length > 0) {
    // Short categorical values ("success", "USD", "active") are kept: they are part of the API's vocabulary.
    if (categorical.test(example) && !/name|title|city|country|author|user/.test(k)) return example
    if (!/name|title/.test(k)) return reshape(example, h)
  }
  if (/phone|mobile|tel$/.test(k)) return V.phone(h)
  if (/(^|_)(id|uuid|guid)$|Id$/.test(key)) return V.alphanumeric(h, 12)
  if (/date|_at$|time|timestamp|updated|created|published/.test(k)) return V.pastDate(h, 0, 900)
  if (/first_?name/.test(k)) return V.pick(W.firstNames, h)
  if (/last_?name|surname/.test(k)) return V.pick(W.lastNames, h)
  if (/city|town/.test(k)) return V.placeName(h)
  if (/country/.test(k)) return V.pick(W.countries, h)[0]
  if (/address|street/.test(k)) return V.streetAddress(h)
  if (/company|brand|org|publisher|manufacturer/.test(k)) return V.companyName(h)
  if (/author|user|owner|player|artist|person|driver|host|name$/.test(k) && !/file|product|team|song|movie/.test(k)) return V.personName(h)
  if (/title|headline|subject/.test(k)) return V.title(h)
  if (/currency/.test(k)) return V.pick(W.currencies, h)[0]
  if (/lang/.test(k)) return V.pick(W.languages, h)[1]
  if (/status|state/.test(k)) return V.pick(["active", "ok", "success", "pending", "completed"], h)
  if (/type|kind|category|genre|class/.test(k)) return V.pick(W.topics, h)
  if (/description|summary|text|content|message|bio|comment|snippet/.test(k)) return V.sentence(h, V.capitalize(V.pick(W.commonWords, V.sub(h, "s"))))
  if (/code|symbol|ticker/.test(k)) return V.letters(h, 3 + (h % 2))
  if (/colou?r/.test(k)) return V.pick(W.colours, h)
  if (/token|key|hash|secret/.test(k)) return V.hex(h, 32)
  return `${V.capitalize(V.pick(W.commonWords, h))} ${V.pick(W.titleNouns, V.sub(h, "n"))}`
}

/** A number for a field, from its name, bounds and example. */
const numberFor = (key: string, schema: JsonSchema, h: number, example: Json | undefined): number => {
  const integer = schema.type === "integer"
  const k = key.toLowerCase()
  let x: number
  if (typeof example === "number") x = example * (0.5 + V.unit(h))
  else if (/lat/.test(k)) x = V.float(h, -60, 70, 5)
  else if (/lon|lng/.test(k)) x = V.float(h, -170, 170, 5)
  else if (/year/.test(k)) x = V.int(h, 1990, 2024)
  else if (/rating|stars|score/.test(k)) x = V.float(h, 1, 5, 1)
  else if (/percent|pct|ratio|rate/.test(k)) x = V.float(h, 0, 100, 2)
  else if (/age$/.test(k)) x = V.int(h, 18, 80)
  else if (/price|amount|cost|fee|salary|revenue|balance|value|total_price/.test(k)) x = V.amount(h, 1, 5000)
  else if (/count|total|num|number|quantity|size|views|likes|followers|page|limit/.test(k)) x = V.logInt(h, 1, 100000)
  else if (/(^|_)id$/.test(k)) x = V.int(h, 1000, 999999)
  else x = V.float(h, 0, 1000, 2)
  const lo = schema.minimum
  const hi = schema.maximum
  if (lo !== undefined && x < lo) x = lo + (hi !== undefined && hi > lo ? V.unit(V.sub(h, "r")) * (hi - lo) : V.unit(V.sub(h, "r")) * 10)
  if (hi !== undefined && x > hi) x = hi - (lo !== undefined && hi > lo ? V.unit(V.sub(h, "r")) * (hi - lo) : V.unit(V.sub(h, "r")) * 10)
  return integer ? Math.round(x) : Math.round(x * 100) / 100
}

/** The entities a render is about: per type, the id of the current entity of that type. */
type Scope = ReadonlyMap<string, string>

/** The compiled renderer of one tool. */
export type Renderer = (args: JsonObject, produced: Array<string>) => Json

const entityParts = (annotation: string | undefined): readonly [string, string] | undefined => {
  if (annotation === undefined) return undefined
  const dot = annotation.lastIndexOf(".")
  return dot <= 0 ? undefined : [annotation.slice(0, dot), annotation.slice(dot + 1)]
}

/** Compiles the renderer of an imported tool; `universe` lends world facts to annotated types the world knows. */
export const compileRenderer = (spec: ToolSpec, seed: number, universe: Universe | undefined): Renderer => {
  const { schema, example } = responseShape(spec)
  const toolSeed = hash32(spec.name, seed)
  const idParams: Array<readonly [string, string]> = []
  for (const [name, p] of Object.entries(spec.parameters.properties)) {
    const parts = entityParts(p["x-entity"])
    if (parts !== undefined && parts[1] === "id") idParams.push([parts[0], name])
  }

  const entityValue = (type: string, id: string, attr: string, key: string, s: JsonSchema, ex: Json | undefined): Json => {
    const i = universe === undefined ? -1 : universe.def(type) === undefined ? -1 : universe.indexOf(type, id)
    if (i >= 0 && universe !== undefined && (attr === "name" || universe.attrDef(type, attr) !== undefined)) {
      const v = universe.attr(type, i, attr)
      if (v !== null && (s.type === undefined || typeof v === (s.type === "integer" ? "number" : s.type) || (s.type === "array" && Array.isArray(v)))) return v
    }
    const h = hash32(`${type}.${attr}`, hash32(id, seed))
    return leaf(key, s, h, ex)
  }

  const leaf = (key: string, s: JsonSchema, h: number, ex: Json | undefined): Json => {
    if (s.enum !== undefined && s.enum.length > 0) return V.pick(s.enum, h)
    switch (s.type) {
      case "integer":
      case "number": return numberFor(key, s, h, ex)
      case "boolean": return typeof ex === "boolean" ? ((h & 1) === 0 ? ex : !ex) : (h & 1) === 0
      case "null": return null
      default: return stringFor(key, s, h, ex)
    }
  }

  const render = (s: JsonSchema, key: string, h: number, scope: Scope, ex: Json | undefined, args: JsonObject, produced: Array<string>, item = false): Json => {
    const parts = entityParts(s["x-entity"])
    if (parts !== undefined && s.type !== "object" && s.type !== "array") {
      const [type, attr] = parts
      const current = scope.get(type)
      if (attr === "id") {
        const id = current ?? (typeof ex === "string" && ex.length > 0 ? reshape(ex, h) : `${type.slice(0, 3)}_${V.alphanumeric(h, 10)}`)
        produced.push(id)
        return s.type === "integer" || s.type === "number" ? Number.parseInt(id.replace(/\D/g, "").slice(0, 9) || "0", 10) : id
      }
      if (current !== undefined) return entityValue(type, current, attr, key, s, ex)
    }
    if (s.type === "array") {
      const items = s.items ?? { type: "string" }
      const exItems = Array.isArray(ex) ? ex : undefined
      const n = exItems !== undefined && exItems.length > 0 ? Math.min(10, exItems.length) : 1 + (h % 4)
      const out: Array<Json> = []
      for (let i = 0; i < n; i++) out.push(render(items, key, hash32(String(i), h), scope, exItems?.[i % Math.max(1, exItems.length)], args, produced, true))
      return out
    }
    if (s.type === "object" || s.properties !== undefined) {
      const props = s.properties ?? {}
      const exObj = ex !== null && ex !== undefined && typeof ex === "object" && !Array.isArray(ex) ? ex as { readonly [k: string]: Json } : undefined
      if (Object.keys(props).length === 0) return key === "query" ? args : exObj ?? {}
      // An object whose fields carry `<type>.id` is an entity: fix its id first so its other fields follow it.
      // A list item is a new entity even when the request is about another entity of its type.
      let inner = scope
      for (const [k, p] of Object.entries(props)) {
        const parts2 = entityParts(p["x-entity"])
        if (parts2 !== undefined && parts2[1] === "id" && (item || !scope.has(parts2[0]))) {
          const without = new Map(inner)
          without.delete(parts2[0])
          const id = String(render(p, k, hash32(k, h), without, exObj?.[k], args, []))
          without.set(parts2[0], id)
          inner = without
        }
      }
      const out: { [k: string]: Json } = {}
      for (const [k, p] of Object.entries(props)) out[k] = render(p, k, hash32(k, h), inner, exObj?.[k], args, produced)
      return out
    }
    return leaf(key, s, h, ex)
  }

  return (args, produced) => {
    const scope = new Map<string, string>()
    for (const [type, name] of idParams) {
      const v = args[name]
      if (typeof v === "string" || typeof v === "number") scope.set(type, String(v))
    }
    const h = hash32(canonicalJson(args), toolSeed)
    return render(schema, "", h, scope, example, args, produced)
  }
}
