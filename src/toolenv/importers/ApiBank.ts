/**
 * Importer of API-Bank's API descriptions, from where they really are in the released data: the JSON
 * description lines inside the evaluation prompts (`test-data/level-{1,2}-api.json`), the Python
 * `api_info` column of `data/all_apis.csv`, and the ToolSearcher results of the training dialogues
 * (`training-data/*.json`, Python dict literals). Records are `{name, description, input_parameters,
 * output_parameters}` with Python type names.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { Json, JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { schemaOfHint, setOwn, typeHint } from "./JsonSchemaImport.ts"
import { safeName, uniquifyNames } from "./Naming.ts"
import * as PyLiteral from "./PyLiteral.ts"
import { isDirectory, parseJson, parseJsonLines, readText } from "./Read.ts"
import { type Collector, collector, ImportError, type ImportResult, oneLine } from "./ImportReport.ts"

/** The category and group of the evaluation APIs: they share one backend (a token from GetUserToken opens the others). */
export const evaluationGroup = "API-Bank"
/** The category of the APIs of the training dialogues (each is its own provider). */
export const trainingCategory = "API-Bank training"

/** One parameter or output field of an API-Bank description. */
export const RawField = Schema.Struct({
  type: Schema.optionalKey(Schema.Unknown),
  description: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** One API-Bank API description. */
export const RawApi = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  input_parameters: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  output_parameters: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})
/** One API-Bank API description. */
export type RawApi = typeof RawApi.Type

const decodeApi = Schema.decodeUnknownResult(RawApi)
const decodeField = Schema.decodeUnknownResult(RawField)

/** Options of {@link loadDirectory}. */
export interface Options {
  /** Keep the `ToolSearcher` meta-API (off by default: ParaAgent's `<search>` takes its place). */
  readonly keepToolSearcher?: boolean
  /** Also import the APIs found in the training dialogues (on by default). */
  readonly training?: boolean
}

const fieldSchema = (raw: unknown, where: string, issues: Collector): JsonSchema | undefined => {
  const f = decodeField(raw)
  if (Result.isFailure(f)) {
    issues.issue(where, `dropped: ${oneLine(f.failure.message)}`)
    return undefined
  }
  const typeName = typeof f.success.type === "string" ? f.success.type : undefined
  const hint = typeName === undefined ? undefined : typeHint(typeName)
  if (hint === undefined) issues.issue(where, `type ${JSON.stringify(f.success.type ?? null)} unknown, assumed string`)
  return schemaOfHint(hint, (f.success.description ?? "").trim())
}

/**
 * Converts one description. API-Bank does not say which inputs are required: an input whose
 * description says "optional" is optional, every other one required.
 */
export const toSpec = (api: RawApi, at: string, category: string, group: string, issues: Collector): ToolSpec => {
  const properties: Record<string, JsonSchema> = {}
  const required: Array<string> = []
  for (const [name, raw] of Object.entries(api.input_parameters ?? {})) {
    const s = fieldSchema(raw, `${at}.input_parameters.${name}`, issues)
    if (s === undefined) continue
    setOwn(properties, name, s)
    if (!/\boptional\b/i.test(s.description ?? "")) required.push(name)
  }
  const parameters: ParametersSchema = { type: "object", properties, required }
  const outputs: Record<string, JsonSchema> = {}
  for (const [name, raw] of Object.entries(api.output_parameters ?? {})) {
    const s = fieldSchema(raw, `${at}.output_parameters.${name}`, issues)
    if (s !== undefined) setOwn(outputs, name, s)
  }
  const name = api.name.trim()
  return {
    id: toolId(`api-bank:${name}`),
    name: toolName(safeName(name)),
    group,
    apiName: name,
    category,
    description: (api.description ?? "").trim(),
    parameters,
    ...(Object.keys(outputs).length > 0 ? { response: { type: "object", properties: outputs } } : {}),
    source: { kind: "api-bank", ref: at }
  }
}

/** A description found somewhere in the data, before conversion. */
interface Found {
  readonly at: string
  readonly value: Json
  readonly training: boolean
}

/** The JSON description lines of the evaluation prompts (`API descriptions:` followed by one JSON object per line). */
export const descriptionsInPrompts = (content: unknown, file: string, issues: Collector): ReadonlyArray<Found> => {
  if (!Array.isArray(content)) {
    issues.issue(file, "not an array of prompts; ignored")
    return []
  }
  const out: Array<Found> = []
  content.forEach((sample, i) => {
    const instruction = typeof sample === "object" && sample !== null ? (sample as { instruction?: unknown }).instruction : undefined
    if (typeof instruction !== "string") return
    instruction.split("\n").forEach((line, l) => {
      const t = line.trim()
      if (!t.startsWith("{\"name\"")) return
      const parsed = parseJson(t)
      if (Result.isFailure(parsed)) issues.skip(`${file}[${i}] line ${l + 1}`, `description skipped: ${parsed.failure}`)
      else out.push({ at: `${file}[${i}]`, value: parsed.success as Json, training: false })
    })
  })
  return out
}

/** RFC 4180 CSV: quoted fields may hold commas, newlines and doubled quotes. */
export const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        field += "\""
        i++
      } else if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"" && field.length === 0) quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++
      row.push(field)
      rows.push(row)
      row = []
      field = ""
    } else field += c
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}

/** The `api_info` column of `all_apis.csv` (Python: `description = "..."`, `input_parameters = {...}`, ...). */
export const descriptionsInCsv = (text: string, file: string, issues: Collector): ReadonlyArray<Found> => {
  const rows = parseCsv(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  const header = rows[0] ?? []
  const col = (name: string): number => header.indexOf(name)
  const info = col("api_info")
  const cls = col("类名") >= 0 ? col("类名") : col("class_name")
  if (info < 0) {
    issues.issue(file, "no api_info column; ignored")
    return []
  }
  const out: Array<Found> = []
  rows.slice(1).forEach((row, r) => {
    if (row.length === 1 && (row[0] ?? "").trim().length === 0) return
    const at = `${file}:row ${r + 2}`
    const name = cls >= 0 ? (row[cls] ?? "").trim() : ""
    const { values, problems } = PyLiteral.assignments(row[info] ?? "")
    const description = values.get("description")
    if (typeof description !== "string") {
      issues.skip(at, `API ${JSON.stringify(name)} skipped: api_info has no description assignment${problems.length > 0 ? ` (${problems[0]})` : ""}`)
      return
    }
    for (const p of problems) issues.issue(at, `api_info repaired: ${p}`)
    out.push({
      at,
      value: { name, description, input_parameters: values.get("input_parameters") ?? {}, output_parameters: values.get("output_parameters") ?? {} },
      training: false
    })
  })
  return out
}

/** The ToolSearcher results of the training dialogues: `API-Request: [ToolSearcher(...)]->{'name': ...}` (one dict or a list). */
export const descriptionsInDialogues = (content: unknown, file: string, issues: Collector): ReadonlyArray<Found> => {
  if (!Array.isArray(content)) {
    issues.issue(file, "not an array of samples; ignored")
    return []
  }
  const out: Array<Found> = []
  const marker = /\[ToolSearcher\([^\n]*?\)\]->/g
  content.forEach((sample, i) => {
    const input = typeof sample === "object" && sample !== null ? (sample as { input?: unknown }).input : undefined
    if (typeof input !== "string") return
    for (const m of input.matchAll(marker)) {
      const at = `${file}[${i}]`
      const parsed = PyLiteral.parse(input, (m.index ?? 0) + m[0].length)
      if (!parsed.ok) {
        issues.skip(at, `ToolSearcher result skipped: ${parsed.message} at offset ${parsed.at}`)
        continue
      }
      for (const n of parsed.notes) issues.issue(at, `ToolSearcher result repaired: ${n}`)
      const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value]
      for (const item of items) out.push({ at, value: item, training: true })
    }
  })
  return out
}

/** `'input_parameters': {'none'}` or `{None}` (Python sets, read as `["none"]`, `[null]`) or `[]` mean "no parameters". */
const normalizeEmpty = (f: Found, issues: Collector): Json => {
  const v = f.value
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v
  const record = v as { readonly [key: string]: Json }
  let out: { [key: string]: Json } | undefined
  for (const key of ["input_parameters", "output_parameters"]) {
    const field = record[key]
    if (Array.isArray(field) && field.every((x) => x === null || (typeof x === "string" && /^(none|null|)$/i.test(x.trim())))) {
      out = { ...(out ?? record), [key]: {} }
      issues.issue(f.at, `${key} written as ${JSON.stringify(field)}: read as none`)
    }
  }
  return out ?? v
}

/**
 * Converts the descriptions found, first occurrence of a name wins (evaluation prompts, then the CSV,
 * then the training dialogues); a later description of the same name that differs is reported once.
 */
export const convertFound = (found: ReadonlyArray<Found>, issues: Collector, options: Options = {}): Array<ToolSpec> => {
  const byName = new Map<string, { readonly spec: ToolSpec; readonly raw: string }>()
  const reportedVariants = new Set<string>()
  for (const f of found) {
    const api = decodeApi(normalizeEmpty(f, issues))
    if (Result.isFailure(api)) {
      issues.skip(f.at, `description skipped: ${oneLine(api.failure.message)}`)
      continue
    }
    const name = api.success.name.trim()
    if (name.length === 0) {
      issues.skip(f.at, "description skipped: empty name")
      continue
    }
    if (name === "ToolSearcher" && options.keepToolSearcher !== true) {
      if (!reportedVariants.has(name)) issues.skip(f.at, "ToolSearcher left out: ParaAgent's <search> takes its place")
      reportedVariants.add(name)
      continue
    }
    const raw = JSON.stringify(f.value)
    const previous = byName.get(name)
    if (previous !== undefined) {
      if (previous.raw !== raw && !reportedVariants.has(name)) {
        reportedVariants.add(name)
        issues.issue(f.at, `${name} is described differently in ${previous.spec.source.ref}; the first description is kept`)
      }
      continue
    }
    const category = f.training ? trainingCategory : evaluationGroup
    const spec = toSpec(api.success, f.at, category, f.training ? name : evaluationGroup, issues)
    byName.set(name, { spec, raw })
    issues.load()
  }
  return uniquifyNames([...byName.values()].map((v) => v.spec))
}

const prompts = ["test-data/level-1-api.json", "test-data/level-2-api.json"]
const csv = "data/all_apis.csv"
const dialogues = ["training-data/lv3-api-train.json", "training-data/lv3-train.json", "training-data/lv3-response-train.json"]

const readIfPresent = (file: string): Effect.Effect<string | undefined> =>
  readText(file).pipe(Effect.map((t): string | undefined => t), Effect.catchTag("ImportError", () => Effect.succeed(undefined)))

/**
 * Loads the API-Bank data folder (the layout of DAMO-ConvAI's `api-bank`). Any of the three sources may
 * be absent; the folder fails only when it is missing or none of them is there.
 */
export const loadDirectory = Effect.fn("ApiBank.loadDirectory")(function* (dir: string, options: Options = {}) {
  if (!(yield* isDirectory(dir))) return yield* new ImportError({ source: dir, message: "not a folder" })
  const issues = collector()
  const found: Array<Found> = []
  let sources = 0
  for (const rel of prompts) {
    const text = yield* readIfPresent(nodePath.join(dir, rel))
    if (text === undefined) continue
    sources++
    const parsed = parseJson(text)
    if (Result.isFailure(parsed)) issues.skip(rel, `file skipped: ${parsed.failure}`)
    else found.push(...descriptionsInPrompts(parsed.success, rel, issues))
  }
  const csvText = yield* readIfPresent(nodePath.join(dir, csv))
  if (csvText !== undefined) {
    sources++
    found.push(...descriptionsInCsv(csvText, csv, issues))
  }
  if (options.training !== false) {
    for (const rel of dialogues) {
      const text = yield* readIfPresent(nodePath.join(dir, rel))
      if (text === undefined) continue
      sources++
      const parsed = parseJson(text)
      if (Result.isFailure(parsed)) issues.skip(rel, `file skipped: ${parsed.failure}`)
      else found.push(...descriptionsInDialogues(parsed.success, rel, issues))
    }
  }
  if (sources === 0) {
    return yield* new ImportError({ source: dir, message: `none of ${[...prompts, csv, ...dialogues].join(", ")} found` })
  }
  const tools = convertFound(found, issues, options)
  return { tools, report: issues.report(dir) } satisfies ImportResult
})

/**
 * Loads a catalog file of API-Bank descriptions: a JSON array (or JSON Lines) of `{name, description,
 * input_parameters, output_parameters}` records, e.g. a tool catalog extracted from the prompts.
 */
export const loadCatalogFile = Effect.fn("ApiBank.loadCatalogFile")(function* (path: string, options: Options = {}) {
  const text = yield* readText(path)
  const issues = collector()
  const label = nodePath.basename(path)
  const whole = parseJson(text)
  const found: Array<Found> = []
  if (Result.isSuccess(whole) && Array.isArray(whole.success)) {
    whole.success.forEach((v, i) => found.push({ at: `${label}[${i}]`, value: v as Json, training: false }))
  } else {
    for (const { line, value } of parseJsonLines(text)) {
      if (Result.isFailure(value)) issues.skip(`${label}:${line}`, `record skipped: ${value.failure}`)
      else found.push({ at: `${label}:${line}`, value: value.success as Json, training: false })
    }
    if (found.length === 0 && Result.isFailure(whole)) return yield* new ImportError({ source: path, message: whole.failure })
  }
  const tools = convertFound(found, issues, options)
  return { tools, report: issues.report(path) } satisfies ImportResult
})
