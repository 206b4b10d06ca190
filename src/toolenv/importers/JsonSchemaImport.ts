/**
 * Turns the schema-ish things real tool libraries carry (JSON Schema of any draft, OpenAPI schemas,
 * Python type names, StableToolBench `template_response`s, example payloads) into the JSON-Schema
 * subset of src/domain/Json.ts, keeping what is valid and saying what was dropped.
 */
import type { Json, JsonObject, JsonSchema, JsonType } from "../../domain/Json.ts"

/** What a conversion kept and what it had to drop (one short note per problem). */
export interface Converted {
  readonly schema: JsonSchema | undefined
  readonly problems: ReadonlyArray<string>
}

/** The parts of a schema a type name implies. */
export interface TypeHint {
  readonly type?: JsonType
  readonly format?: string
  readonly items?: JsonSchema
  readonly note?: string
}

/** Whether a value is a plain (non-array) object. */
export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Sets `record[key] = value` as an own property even when the key is `__proto__` (plain assignment would
 * replace the object's prototype instead): keys here come from the data.
 */
export const setOwn = <A>(record: Record<string, A>, key: string, value: A): void => {
  if (key === "__proto__") Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true })
  else record[key] = value
}

/** Narrows an unknown decoded-from-JSON value to {@link Json} (it always is one when it came from JSON.parse). */
export const asJson = (u: unknown): Json | undefined => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return u
  if (typeof u === "number") return Number.isFinite(u) ? u : undefined
  if (Array.isArray(u)) {
    const out: Array<Json> = []
    for (const x of u) {
      const j = asJson(x)
      if (j === undefined) return undefined
      out.push(j)
    }
    return out
  }
  if (isRecord(u)) {
    const out: Record<string, Json> = {}
    for (const [k, v] of Object.entries(u)) {
      const j = asJson(v)
      if (j === undefined) return undefined
      setOwn(out, k, j)
    }
    return out
  }
  return undefined
}

const jsonTypes: ReadonlySet<string> = new Set(["string", "number", "integer", "boolean", "array", "object", "null"])

/**
 * Maps a type name from any of the sources to JSON-Schema parts: JSON-Schema names, ToolBench's
 * `STRING`/`NUMBER`/`ENUM`/`DATE (YYYY-MM-DD)`/`TIME (24-hour HH:MM)`/`GEOPOINT`/`BINARY`, Python's
 * `str`/`int`/`float`/`bool`/`list`/`dict`/`tuple`/`List[str]`/`Optional[int]`, BFCL's `dict`/`float`/`tuple`/`any`.
 * `{}` means "any type"; undefined means the name is not a type at all.
 */
export const typeHint = (raw: string): TypeHint | undefined => {
  const name = raw.trim()
  const lower = name.toLowerCase()
  if (jsonTypes.has(lower)) return { type: lower as JsonType }
  const generic = /^(optional|list|dict|tuple|set|union|sequence|array)\s*[[(](.*)[\])]$/i.exec(name)
  if (generic !== null) {
    const outer = (generic[1] ?? "").toLowerCase()
    const inner = generic[2] ?? ""
    if (outer === "optional") return typeHint(inner) ?? {}
    if (outer === "union") {
      const first = splitTopLevel(inner).map(typeHint).find((h) => h !== undefined && h.type !== "null")
      return first ?? {}
    }
    if (outer === "dict") return { type: "object" }
    const item = typeHint(splitTopLevel(inner)[0] ?? "")
    return item !== undefined && item.type !== undefined ? { type: "array", items: partsToSchema(item) } : { type: "array" }
  }
  switch (lower) {
    case "str":
    case "text":
    case "char":
    case "enum":
    case "uuid":
    case "email":
    case "url":
    case "password":
      return { type: "string" }
    case "float":
    case "double":
    case "decimal":
    case "numeric":
      return { type: "number" }
    case "int":
    case "long":
    case "int32":
    case "int64":
      return { type: "integer" }
    case "bool":
      return { type: "boolean" }
    case "list":
    case "tuple":
    case "set":
      return { type: "array" }
    case "dict":
    case "map":
    case "json":
      return { type: "object" }
    case "nonetype":
    case "none":
      return { type: "null" }
    case "any":
      return {}
    case "binary":
    case "file":
      return { type: "string", format: "binary" }
    case "date":
      return { type: "string", format: "date" }
    case "datetime":
    case "date-time":
      return { type: "string", format: "date-time" }
  }
  if (lower.startsWith("date (")) return { type: "string", format: "date" }
  if (lower.startsWith("time (") || lower === "time") return { type: "string", note: "24-hour time, HH:MM" }
  if (lower.startsWith("geopoint")) return { type: "string", note: "a point as \"latitude,longitude\"" }
  return undefined
}

const splitTopLevel = (text: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let current = ""
  for (const ch of text) {
    if (ch === "[") depth++
    if (ch === "]") depth--
    if (ch === "," && depth === 0) {
      parts.push(current.trim())
      current = ""
    } else current += ch
  }
  if (current.trim().length > 0) parts.push(current.trim())
  return parts
}

const partsToSchema = (h: TypeHint): JsonSchema => {
  const out: { -readonly [K in keyof JsonSchema]: JsonSchema[K] } = {}
  if (h.type !== undefined) out.type = h.type
  if (h.format !== undefined) out.format = h.format
  if (h.items !== undefined) out.items = h.items
  return out
}

/**
 * The schema of a field declared by a type name and a description (API-Bank, Seal-Tools and ToolBench fields):
 * the hint's parts, a string when the name is not a type (`hint` undefined), the description when not empty.
 */
export const schemaOfHint = (hint: TypeHint | undefined, description: string): JsonSchema => {
  const schema = hint === undefined ? { type: "string" as const } : partsToSchema(hint)
  return description.length > 0 ? { ...schema, description } : schema
}

/** A schema from a type name, or undefined when the name is not one {@link typeHint} knows. */
export const schemaOfTypeName = (raw: string): JsonSchema | undefined => {
  const h = typeHint(raw)
  return h === undefined ? undefined : partsToSchema(h)
}

/** Limits that keep a hostile or huge payload from blowing up a conversion (depth counts properties and items, not `$ref`/`allOf` hops). */
const maxDepth = 12
const maxProperties = 300

/** Infers a schema from an example payload (the shape of the first item stands for an array's items). */
export const schemaFromExample = (value: unknown, depth = 0): JsonSchema | undefined => {
  if (value === null) return { type: "null" }
  switch (typeof value) {
    case "string":
      return { type: "string" }
    case "boolean":
      return { type: "boolean" }
    case "number":
      return { type: Number.isInteger(value) ? "integer" : "number" }
  }
  if (depth >= maxDepth) return Array.isArray(value) ? { type: "array" } : { type: "object" }
  if (Array.isArray(value)) {
    const first = value.find((x) => x !== null)
    const items = first === undefined ? undefined : schemaFromExample(first, depth + 1)
    return items === undefined ? { type: "array" } : { type: "array", items }
  }
  if (isRecord(value)) {
    const properties: Record<string, JsonSchema> = {}
    let n = 0
    for (const [k, v] of Object.entries(value)) {
      if (n++ >= maxProperties) break
      const s = schemaFromExample(v, depth + 1)
      if (s !== undefined) setOwn(properties, k, s)
    }
    return { type: "object", properties }
  }
  return undefined
}

/**
 * Converts a StableToolBench `template_response`: leaves are type names (`"str"`, `"int"`, `"NoneType"`,
 * `"empty list"`, `"list of str with length 8"`), arrays hold one item template, `_list_length` is dropped.
 */
export const schemaFromTemplate = (template: unknown, depth = 0): JsonSchema | undefined => {
  if (typeof template === "string") {
    const listOf = /^list of (\w+)/i.exec(template)
    if (listOf !== null) {
      const items = schemaOfTypeName(listOf[1] ?? "")
      return items !== undefined && items.type !== undefined ? { type: "array", items } : { type: "array" }
    }
    if (/^empty list$/i.test(template)) return { type: "array" }
    if (/^empty dict$/i.test(template)) return { type: "object" }
    return schemaOfTypeName(template) ?? { type: "string" }
  }
  if (depth >= maxDepth) return undefined
  if (Array.isArray(template)) {
    const first = template[0]
    const items = first === undefined ? undefined : schemaFromTemplate(first, depth + 1)
    return items === undefined ? { type: "array" } : { type: "array", items }
  }
  if (isRecord(template)) {
    const properties: Record<string, JsonSchema> = {}
    let n = 0
    for (const [k, v] of Object.entries(template)) {
      if (k === "_list_length") continue
      if (n++ >= maxProperties) break
      const s = schemaFromTemplate(v, depth + 1)
      if (s !== undefined) setOwn(properties, k, s)
    }
    return { type: "object", properties }
  }
  return schemaFromExample(template, depth)
}

/** Resolves a local `$ref` (`#/components/schemas/X`, `#/definitions/X`) to its target, or undefined. */
export type RefResolver = (ref: string) => unknown

/** Follows a JSON pointer (`#/a/b~1c`) inside a document. */
export const pointerResolver = (document: unknown): RefResolver => (ref) => {
  if (!ref.startsWith("#")) return undefined
  const parts = ref.slice(1).split("/").filter((p) => p.length > 0).map((p) => decodeURIComponent(p).replace(/~1/g, "/").replace(/~0/g, "~"))
  let node: unknown = document
  for (const p of parts) {
    if (!isRecord(node) && !Array.isArray(node)) return undefined
    node = (node as Record<string, unknown>)[p]
  }
  return node
}

const schemaKeywords: ReadonlySet<string> = new Set([
  "type",
  "properties",
  "items",
  "$ref",
  "allOf",
  "anyOf",
  "oneOf",
  "enum",
  "$schema",
  "additionalProperties",
  "format",
  "const"
])

const looksLikeSchema = (u: Readonly<Record<string, unknown>>): boolean => {
  for (const k of Object.keys(u)) if (schemaKeywords.has(k)) return true
  return false
}

/** A map `name → {type: ...}` with no wrapper (several RapidAPI `schema`s look like this). */
const looksLikePropertyMap = (u: Readonly<Record<string, unknown>>): boolean => {
  const values = Object.values(u)
  return values.length > 0 && values.every((v) => isRecord(v) && typeof v["type"] === "string" && typeHint(v["type"]) !== undefined)
}

interface Walk {
  readonly resolve: RefResolver | undefined
  readonly problems: Array<string>
  readonly refStack: Array<string>
}

/**
 * Converts a JSON Schema (any draft, or an OpenAPI schema object) to the subset, keeping what is valid:
 * local `$ref`s resolved with cycle protection (a cycle becomes an untyped object that says so), `allOf`
 * merged, the first non-null branch of `anyOf`/`oneOf`, a list of types narrowed to its first non-null
 * one, Python type names mapped. An object that is not a schema but a payload becomes the schema of
 * that payload. Returns `schema: undefined` when nothing usable is left.
 */
export const convertSchema = (input: unknown, resolve?: RefResolver): Converted => {
  const walk: Walk = { resolve, problems: [], refStack: [] }
  if (input === undefined || input === null || input === "") return { schema: undefined, problems: [] }
  if (!isRecord(input)) {
    if (typeof input === "string") {
      const parsed = parseMaybeJson(input)
      if (parsed !== undefined) return convertSchema(parsed, resolve)
    }
    return { schema: undefined, problems: [`not a schema object (${describe(input)})`] }
  }
  if (Object.keys(input).length === 0) return { schema: undefined, problems: [] }
  const schema = node(input, walk, 0, "")
  return { schema, problems: walk.problems }
}

const parseMaybeJson = (text: string): unknown => {
  const t = text.trim()
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined
  try {
    return JSON.parse(t) as unknown
  } catch {
    return undefined
  }
}

/** Parses text that may hold a JSON object or array (an example payload); any other text is kept as a string. */
export const parseMaybeJsonValue = (text: string): Json | undefined => {
  const parsed = parseMaybeJson(text)
  if (parsed !== undefined) return asJson(parsed)
  const t = text.trim()
  return t.length > 0 ? t : undefined
}

const describe = (u: unknown): string => {
  const text = typeof u === "string" ? JSON.stringify(u.length > 40 ? `${u.slice(0, 40)}…` : u) : Array.isArray(u) ? "an array" : String(u)
  return text
}

const node = (u: unknown, walk: Walk, depth: number, at: string): JsonSchema | undefined => {
  if (typeof u === "boolean") return u ? {} : undefined
  if (!isRecord(u)) {
    if (typeof u === "string") {
      const named = schemaOfTypeName(u)
      if (named !== undefined) return named
    }
    walk.problems.push(`${at || "(root)"}: not a schema (${describe(u)})`)
    return undefined
  }
  if (depth >= maxDepth) {
    walk.problems.push(`${at || "(root)"}: nested deeper than ${maxDepth}, cut`)
    return { type: "object" }
  }
  const ref = u["$ref"]
  if (typeof ref === "string") return followRef(ref, u, walk, depth, at)
  if (!looksLikeSchema(u)) {
    if (looksLikePropertyMap(u)) return objectOf(u, undefined, walk, depth, at)
    if (depth === 0 && typeof u["description"] !== "string" && typeof u["title"] !== "string") {
      walk.problems.push("(root): an example payload, not a schema: schema inferred from it")
      return schemaFromExample(u)
    }
  }
  const out: { -readonly [K in keyof JsonSchema]: JsonSchema[K] } = {}
  const allOf = u["allOf"]
  if (Array.isArray(allOf)) mergeInto(out, allOf.map((part, i) => node(part, walk, depth, `${at}/allOf[${i}]`)))
  for (const key of ["anyOf", "oneOf"] as const) {
    const branches = u[key]
    if (Array.isArray(branches) && out.type === undefined) {
      const picked = branches.map((b, i) => node(b, walk, depth, `${at}/${key}[${i}]`)).find((s) => s !== undefined && s.type !== "null")
      if (picked !== undefined) mergeInto(out, [picked])
    }
  }
  const t = u["type"]
  if (typeof t === "string") {
    const hint = typeHint(t)
    if (hint === undefined) walk.problems.push(`${at || "(root)"}: unknown type ${JSON.stringify(t)} dropped`)
    else {
      if (hint.type !== undefined) out.type = hint.type
      if (hint.format !== undefined && out.format === undefined) out.format = hint.format
      if (hint.items !== undefined) out.items = hint.items
    }
  } else if (Array.isArray(t)) {
    const first = t.find((x): x is string => typeof x === "string" && x !== "null" && jsonTypes.has(x))
    if (first !== undefined) out.type = first as JsonType
    else if (t.includes("null")) out.type = "null"
  } else if (t !== undefined) walk.problems.push(`${at || "(root)"}: type is not a string (${describe(t)})`)
  const description = u["description"] ?? u["title"]
  if (typeof description === "string" && description.trim().length > 0) out.description = description.trim()
  if (typeof u["format"] === "string") out.format = u["format"]
  if (Array.isArray(u["enum"])) {
    const values = asJson(u["enum"])
    if (Array.isArray(values) && values.length > 0) out.enum = values
  } else if (u["const"] !== undefined) {
    const c = asJson(u["const"])
    if (c !== undefined) out.enum = [c]
  }
  if (u["default"] !== undefined) {
    const d = asJson(u["default"])
    if (d !== undefined) out.default = d
  }
  if (typeof u["minimum"] === "number") out.minimum = u["minimum"]
  if (typeof u["maximum"] === "number") out.maximum = u["maximum"]
  if (typeof u["additionalProperties"] === "boolean") out.additionalProperties = u["additionalProperties"]
  const props = u["properties"]
  if (isRecord(props)) {
    const obj = objectOf(props, u["required"], walk, depth, at)
    if (obj.properties !== undefined) out.properties = { ...(out.properties ?? {}), ...obj.properties }
    if (obj.required !== undefined) out.required = [...new Set([...(out.required ?? []), ...obj.required])]
    if (out.type === undefined) out.type = "object"
  } else if (props !== undefined) walk.problems.push(`${at || "(root)"}: properties is not an object (${describe(props)})`)
  const items = u["items"]
  if (items !== undefined) {
    const first = Array.isArray(items) ? items[0] : items
    const s = first === undefined ? undefined : node(first, walk, depth + 1, `${at}/items`)
    if (s !== undefined) out.items = s
    if (out.type === undefined) out.type = "array"
  }
  return out
}

const objectOf = (
  props: Readonly<Record<string, unknown>>,
  required: unknown,
  walk: Walk,
  depth: number,
  at: string
): { type: "object"; properties?: Record<string, JsonSchema>; required?: ReadonlyArray<string> } => {
  const properties: Record<string, JsonSchema> = {}
  let n = 0
  for (const [k, v] of Object.entries(props)) {
    if (n++ >= maxProperties) {
      walk.problems.push(`${at}: more than ${maxProperties} properties, rest dropped`)
      break
    }
    const s = node(v, walk, depth + 1, `${at}/${k}`)
    if (s !== undefined) setOwn(properties, k, s)
  }
  const req = Array.isArray(required) ? required.filter((r): r is string => typeof r === "string" && Object.hasOwn(properties, r)) : undefined
  if (Array.isArray(required) && req !== undefined && req.length < required.length) {
    const unknown = required.filter((r) => !(typeof r === "string" && Object.hasOwn(properties, r)))
    walk.problems.push(`${at || "(root)"}: required names no property: ${unknown.map((u) => JSON.stringify(u)).join(", ")}`)
  }
  return req !== undefined && req.length > 0 ? { type: "object", properties, required: req } : { type: "object", properties }
}

const followRef = (ref: string, u: Readonly<Record<string, unknown>>, walk: Walk, depth: number, at: string): JsonSchema | undefined => {
  const label = at || "(root)"
  if (walk.resolve === undefined) {
    walk.problems.push(`${label}: $ref ${ref} with no document to resolve it in`)
    return undefined
  }
  if (walk.refStack.includes(ref)) {
    return { type: "object", description: `recursive reference to ${ref.split("/").pop() ?? ref}` }
  }
  const target = walk.resolve(ref)
  if (target === undefined) {
    walk.problems.push(`${label}: unresolved $ref ${ref}`)
    return undefined
  }
  walk.refStack.push(ref)
  const resolved = node(target, walk, depth, at)
  walk.refStack.pop()
  if (resolved === undefined) return undefined
  const description = u["description"]
  return typeof description === "string" && description.trim().length > 0 ? { ...resolved, description: description.trim() } : resolved
}

const mergeInto = (out: { -readonly [K in keyof JsonSchema]: JsonSchema[K] }, parts: ReadonlyArray<JsonSchema | undefined>): void => {
  for (const p of parts) {
    if (p === undefined) continue
    if (p.type !== undefined && out.type === undefined) out.type = p.type
    if (p.description !== undefined && out.description === undefined) out.description = p.description
    if (p.format !== undefined && out.format === undefined) out.format = p.format
    if (p.enum !== undefined && out.enum === undefined) out.enum = p.enum
    if (p.items !== undefined && out.items === undefined) out.items = p.items
    if (p.default !== undefined && out.default === undefined) out.default = p.default
    if (p.minimum !== undefined && out.minimum === undefined) out.minimum = p.minimum
    if (p.maximum !== undefined && out.maximum === undefined) out.maximum = p.maximum
    if (p.properties !== undefined) out.properties = { ...(out.properties ?? {}), ...p.properties }
    if (p.required !== undefined) out.required = [...new Set([...(out.required ?? []), ...p.required])]
  }
}

/** Converts a typed default to the declared type (`"7"` for a number → 7); undefined when it does not fit or is empty. */
export const coerceDefault = (value: unknown, type: JsonType | undefined): Json | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value === "string") {
    const s = value.trim()
    if (s.length === 0) return undefined
    switch (type) {
      case "number":
      case "integer": {
        const n = Number(s)
        if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) return undefined
        return n
      }
      case "boolean":
        return s.toLowerCase() === "true" ? true : s.toLowerCase() === "false" ? false : undefined
      case "array":
      case "object": {
        const parsed = parseMaybeJson(s)
        const j = parsed === undefined ? undefined : asJson(parsed)
        if (j === undefined) return undefined
        return (type === "array") === Array.isArray(j) && (type === "array" || (typeof j === "object" && j !== null)) ? j : undefined
      }
      default:
        return value
    }
  }
  const j = asJson(value)
  if (j === undefined) return undefined
  switch (type) {
    case "number":
      return typeof j === "number" ? j : undefined
    case "integer":
      return typeof j === "number" && Number.isInteger(j) ? j : undefined
    case "boolean":
      return typeof j === "boolean" ? j : undefined
    case "string":
      return typeof j === "number" || typeof j === "boolean" ? String(j) : typeof j === "string" ? j : undefined
    case "array":
      return Array.isArray(j) ? j : undefined
    case "object":
      return isRecord(j) ? (j as JsonObject) : undefined
    default:
      return j
  }
}
