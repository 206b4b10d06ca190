/**
 * Importer of OpenAPI 3 (and Swagger 2.0) documents in JSON: one tool per operation. Path, query and
 * header parameters and the properties of a JSON request body become the tool's parameters; the schema
 * of the first 2xx JSON response becomes its response. Local `$ref`s are resolved with cycle protection.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { Json, JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { asJson, convertSchema, isRecord, pointerResolver, type RefResolver, schemaFromExample, setOwn } from "./JsonSchemaImport.ts"
import { safeName, slugOrHash, uniquifyTools } from "./Naming.ts"
import { parseJson, readText } from "./Read.ts"
import { type Collector, collector, ImportError, type ImportResult, oneLine, withSource } from "./ImportReport.ts"

const methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"] as const

/** The top of an OpenAPI / Swagger document (the rest is read leniently, field by field). */
export const RawDocument = Schema.Struct({
  openapi: Schema.optionalKey(Schema.String),
  swagger: Schema.optionalKey(Schema.String),
  info: Schema.optionalKey(Schema.Struct({ title: Schema.optionalKey(Schema.String), description: Schema.optionalKey(Schema.String) })),
  paths: Schema.Record(Schema.String, Schema.Unknown)
})

/** One parameter object (after `$ref` resolution). */
export const RawParameter = Schema.Struct({
  name: Schema.String,
  in: Schema.String,
  required: Schema.optionalKey(Schema.Union([Schema.Boolean, Schema.Literals(["true", "false"])])),
  description: Schema.optionalKey(Schema.String),
  schema: Schema.optionalKey(Schema.Unknown),
  type: Schema.optionalKey(Schema.String),
  format: Schema.optionalKey(Schema.String),
  items: Schema.optionalKey(Schema.Unknown),
  enum: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  default: Schema.optionalKey(Schema.Unknown)
})

const decodeDocument = Schema.decodeUnknownResult(RawDocument)
const decodeParameter = Schema.decodeUnknownResult(RawParameter)

/** Options of {@link convertDocument} / {@link loadFile}. */
export interface Options {
  /** The category of every tool (default: the document's `info.title`). */
  readonly category?: string
  /** The provider name (default: `info.title`, else the file name). */
  readonly group?: string
}

/** Follows `$ref` chains of non-schema objects (parameters, request bodies, responses); a cycle or dangling ref gives undefined. */
const deref = (u: unknown, resolve: RefResolver): unknown => {
  const seen = new Set<string>()
  let node = u
  while (isRecord(node) && typeof node["$ref"] === "string") {
    const ref = node["$ref"]
    if (seen.has(ref)) return undefined
    seen.add(ref)
    node = resolve(ref)
  }
  return node
}

const isJsonMedia = (media: string): boolean => /json/i.test(media) || media === "*/*"
const isFormMedia = (media: string): boolean => /x-www-form-urlencoded|multipart\/form-data/i.test(media)

/** The schema (and first example) of a content map, preferring JSON media types. */
const fromContent = (content: unknown, allowForm: boolean): { schema?: unknown; example?: unknown } | undefined => {
  if (!isRecord(content)) return undefined
  const medias = Object.keys(content)
  const media = medias.find(isJsonMedia) ?? (allowForm ? medias.find(isFormMedia) : undefined)
  if (media === undefined) return undefined
  const entry = content[media]
  if (!isRecord(entry)) return undefined
  let example: unknown = entry["example"]
  if (example === undefined && isRecord(entry["examples"])) {
    const first = Object.values(entry["examples"])[0]
    example = isRecord(first) ? first["value"] : undefined
  }
  return { schema: entry["schema"], example }
}

interface Operation {
  readonly path: string
  readonly method: (typeof methods)[number]
  readonly op: Readonly<Record<string, unknown>>
  readonly shared: ReadonlyArray<unknown>
}

const parameterSchema = (p: typeof RawParameter.Type, resolve: RefResolver, problems: Array<string>): JsonSchema => {
  // OpenAPI 3 puts the type under `schema`; Swagger 2 puts it on the parameter itself
  const source = p.schema ?? { type: p.type, format: p.format, items: p.items, enum: p.enum, default: p.default }
  const converted = convertSchema(source, resolve)
  problems.push(...converted.problems.map((m) => `parameter ${p.name}: ${m}`))
  const base: JsonSchema = converted.schema ?? { type: "string" }
  const description = (p.description ?? "").trim()
  return description.length > 0 ? { ...base, description } : base
}

const convertOperation = (o: Operation, resolve: RefResolver, ctx: { group: string; category: string; file: string; swagger: boolean }, issues: Collector): ToolSpec | undefined => {
  const where = `${ctx.file}#${o.method.toUpperCase()} ${o.path}`
  const problems: Array<string> = []
  const properties: Record<string, JsonSchema> = {}
  const required: Array<string> = []
  const add = (name: string, schema: JsonSchema, isRequired: boolean): void => {
    const key = Object.hasOwn(properties, name) ? `body_${name}` : name
    setOwn(properties, key, schema)
    if (isRequired) required.push(key)
  }
  // operation parameters override path-level ones with the same name and location
  const byKey = new Map<string, unknown>()
  for (const raw of [...o.shared, ...(Array.isArray(o.op["parameters"]) ? o.op["parameters"] : [])]) {
    const p = deref(raw, resolve)
    const decoded = decodeParameter(p)
    if (Result.isFailure(decoded)) {
      issues.issue(where, `parameter dropped: ${oneLine(decoded.failure.message)}`)
      continue
    }
    byKey.set(`${decoded.success.in}\u0000${decoded.success.name}`, decoded.success)
  }
  let swaggerBody: unknown
  for (const value of byKey.values()) {
    const p = value as typeof RawParameter.Type
    if (p.in === "body") {
      swaggerBody = p.schema
      continue
    }
    if (p.in === "cookie") continue
    add(p.name, parameterSchema(p, resolve, problems), p.in === "path" || p.required === true || p.required === "true")
  }
  // the request body: its properties become parameters (a non-object body becomes one `body` parameter)
  const bodyRef = deref(o.op["requestBody"], resolve)
  const body = ctx.swagger ? (swaggerBody !== undefined ? { schema: swaggerBody } : undefined) : isRecord(bodyRef) ? fromContent(bodyRef["content"], true) : undefined
  if (body?.schema !== undefined) {
    const converted = convertSchema(body.schema, resolve)
    problems.push(...converted.problems.map((m) => `request body: ${m}`))
    const s = converted.schema
    const bodyRequired = ctx.swagger ? true : isRecord(bodyRef) && bodyRef["required"] === true
    if (s?.properties !== undefined) {
      const req = new Set(s.required ?? [])
      for (const [name, schema] of Object.entries(s.properties)) add(name, schema, bodyRequired && req.has(name))
    } else if (s !== undefined) add("body", s, bodyRequired)
  }
  // the response: the first 2xx with a JSON schema (or example)
  let response: JsonSchema | undefined
  let example: Json | undefined
  const responses = isRecord(o.op["responses"]) ? o.op["responses"] : {}
  const codes = Object.keys(responses).filter((c) => /^2(\d\d|XX)$/i.test(c)).sort()
  for (const code of codes) {
    const r = deref(responses[code], resolve)
    if (!isRecord(r)) continue
    const found = ctx.swagger ? { schema: r["schema"], example: isRecord(r["examples"]) ? Object.values(r["examples"])[0] : undefined } : fromContent(r["content"], false)
    if (found === undefined) continue
    if (found.schema !== undefined) {
      const converted = convertSchema(found.schema, resolve)
      problems.push(...converted.problems.map((m) => `response ${code}: ${m}`))
      response = converted.schema
    }
    if (found.example !== undefined) example = asJson(found.example)
    if (response === undefined && example !== undefined) response = schemaFromExample(example)
    if (response !== undefined) break
  }
  if (problems.length > 0) issues.issue(where, `repaired: ${problems[0]}${problems.length > 1 ? ` (+${problems.length - 1} more)` : ""}`)
  const operationId = typeof o.op["operationId"] === "string" && o.op["operationId"].trim().length > 0 ? o.op["operationId"].trim() : undefined
  const apiName = operationId ?? `${o.method.toUpperCase()} ${o.path}`
  const summary = typeof o.op["summary"] === "string" ? o.op["summary"].trim() : ""
  const longer = typeof o.op["description"] === "string" ? o.op["description"].trim() : ""
  const description = summary.length > 0 && longer.length > 0 && !longer.startsWith(summary) ? `${summary}. ${longer}` : longer.length > 0 ? longer : summary
  const parameters: ParametersSchema = { type: "object", properties, required }
  return {
    id: toolId(`openapi:${slugOrHash(ctx.group)}/${apiName}`),
    name: toolName(safeName(operationId ?? `${o.method}${o.path}`)),
    group: ctx.group,
    apiName,
    category: ctx.category,
    description,
    parameters,
    ...(response !== undefined ? { response } : {}),
    ...(example !== undefined ? { example } : {}),
    method: o.method.toUpperCase(),
    source: { kind: "openapi", ref: where }
  }
}

/** Converts a parsed OpenAPI 3 / Swagger 2.0 document; undefined when it is not one (no `paths`). */
export const convertDocument = (document: unknown, file: string, options: Options = {}): ImportResult | undefined => {
  const decoded = decodeDocument(document)
  if (Result.isFailure(decoded)) return undefined
  const doc = decoded.success
  const issues = collector()
  const swagger = doc.swagger !== undefined && doc.openapi === undefined
  if (!swagger && !(doc.openapi ?? "").startsWith("3")) issues.issue(file, `openapi version ${JSON.stringify(doc.openapi ?? null)} is not 3.x; read as 3.x`)
  if (swagger && !doc.swagger?.startsWith("2")) issues.issue(file, `swagger version ${JSON.stringify(doc.swagger)} is not 2.0; read as 2.0`)
  const title = (doc.info?.title ?? "").trim()
  // a title that names nothing ("API") gives way to the file name (`tmdb_oas.json` → tmdb)
  const stem = nodePath.basename(file).replace(/\.json$/i, "").replace(/[-_.]?(oas|openapi|swagger)$/i, "")
  const group = options.group ?? (/^(|api|openapi|swagger|rest api)$/i.test(title) ? stem : title)
  const category = options.category ?? group
  const resolve = pointerResolver(document)
  const specs: Array<ToolSpec> = []
  for (const [path, rawItem] of Object.entries(doc.paths)) {
    const item = deref(rawItem, resolve)
    if (!isRecord(item)) {
      issues.skip(`${file}#${path}`, "path item is not an object")
      continue
    }
    const shared = Array.isArray(item["parameters"]) ? item["parameters"] : []
    for (const method of methods) {
      const op = item[method]
      if (op === undefined) continue
      if (!isRecord(op)) {
        issues.skip(`${file}#${method.toUpperCase()} ${path}`, "operation is not an object")
        continue
      }
      const spec = convertOperation({ path, method, op, shared }, resolve, { group, category, file, swagger }, issues)
      if (spec !== undefined) {
        specs.push(spec)
        issues.load()
      }
    }
  }
  const tools = uniquifyTools(specs)
  return { tools, report: issues.report(file) }
}

/** Loads one OpenAPI 3 / Swagger 2.0 JSON file; fails when it cannot be read, is not JSON or has no `paths`. */
export const loadFile = Effect.fn("OpenApi.loadFile")(function* (path: string, options: Options = {}) {
  const text = yield* readText(path)
  const parsed = parseJson(text)
  if (Result.isFailure(parsed)) return yield* new ImportError({ source: path, message: `${parsed.failure} (only JSON documents are read)` })
  const result = convertDocument(parsed.success, nodePath.basename(path), options)
  if (result === undefined) return yield* new ImportError({ source: path, message: "not an OpenAPI document: no paths object" })
  return withSource(result, path)
})
