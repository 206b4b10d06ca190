/**
 * Writes inferred entities into tool schemas: `x-entity` on id-like parameters and on the response fields that
 * produce them, rebuilding only the schema branches that lead to a marked field.
 */
import type { JsonSchema } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import { setOwn } from "./importers/JsonSchemaImport.ts"

/** The tool with `x-entity` on the named parameters and on the response fields at the given paths. */
export const markEntities = (spec: ToolSpec, params: ReadonlyMap<string, string>, fields: ReadonlyMap<string, string>): ToolSpec => {
  if (params.size === 0 && fields.size === 0) return spec
  let parameters = spec.parameters
  if (params.size > 0) {
    const properties: Record<string, JsonSchema> = { ...parameters.properties }
    for (const [name, entity] of params) {
      const s = properties[name]
      if (s !== undefined) setOwn(properties, name, { ...s, "x-entity": entity })
    }
    parameters = { ...parameters, properties }
  }
  const response = spec.response === undefined || fields.size === 0 ? spec.response : markFields(spec.response, "", fields, prefixesOf(fields))
  return { ...spec, parameters, ...(response !== undefined ? { response } : {}) }
}

/** Every path that leads to a marked field (`items`, `items[]`, `items[].id` for `items[].id`). */
const prefixesOf = (fields: ReadonlyMap<string, string>): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const k of fields.keys()) {
    for (let i = 0; i < k.length; i++) if (k[i] === "." || k[i] === "[") out.add(k.slice(0, i))
    out.add(k)
  }
  return out
}

/** Rebuilds only the branches of the schema that lead to a marked path. */
const markFields = (s: JsonSchema, path: string, fields: ReadonlyMap<string, string>, prefixes: ReadonlySet<string>): JsonSchema => {
  const here = fields.get(path)
  let out: JsonSchema = here !== undefined && s.properties === undefined && !(s.type === "array" && s.items?.properties !== undefined) ? { ...s, "x-entity": here } : s
  if (s.items !== undefined) {
    const itemsPath = `${path}[]`
    if (prefixes.has(itemsPath)) {
      const items = markFields(s.items, itemsPath, fields, prefixes)
      if (items !== s.items) out = { ...out, items }
    }
  }
  if (s.properties !== undefined) {
    let changed: Record<string, JsonSchema> | undefined
    for (const [key, child] of Object.entries(s.properties)) {
      const childPath = path.length === 0 ? key : `${path}.${key}`
      if (!prefixes.has(childPath)) continue
      const next = markFields(child, childPath, fields, prefixes)
      if (next !== child) setOwn((changed ??= { ...s.properties }), key, next)
    }
    if (changed !== undefined) out = { ...out, properties: changed }
  }
  return out
}
