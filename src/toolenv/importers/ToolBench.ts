/**
 * Importer of the ToolBench / StableToolBench tool folder (`<Category>/<tool>.json`, each with an `api_list`),
 * e.g. ToolEnv2404: one ToolSpec per API, with a stable id, a unique OpenAI-safe name and `matchKey`
 * to find a benchmark's `[tool_name, api_name]` pairs in the library.
 */
import { Effect, Result, Schema } from "effect"
import * as path from "node:path"
import type { Json, JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import type { SourceKind, ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { coerceDefault, convertSchema, parseMaybeJsonValue, schemaFromExample, schemaFromTemplate, schemaOfHint, setOwn, typeHint } from "./JsonSchemaImport.ts"
import { maxNameLength, shortHash, uniquifyTools } from "./Naming.ts"
import { dataFiles, isDirectory, listDir, parseJson, readText } from "./Read.ts"
import { capDescription, type Collector, collector, combine, ImportError, type ImportResult, oneLine } from "./ImportReport.ts"

/** How many tool files are read at once. */
export const readConcurrency = 32

const OptionalText = Schema.optionalKey(Schema.NullOr(Schema.String))

/** One parameter as ToolBench writes it (`type` is `STRING`, `NUMBER`, `ENUM`, `DATE (YYYY-MM-DD)`, ...). */
export const RawParameter = Schema.Struct({
  name: Schema.String,
  type: OptionalText,
  description: OptionalText,
  default: Schema.optionalKey(Schema.Unknown)
})
/** One parameter as ToolBench writes it. */
export type RawParameter = typeof RawParameter.Type

/** One entry of a tool file's `api_list`. */
export const RawApi = Schema.Struct({
  name: Schema.String,
  description: OptionalText,
  method: OptionalText,
  url: OptionalText,
  required_parameters: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Unknown))),
  optional_parameters: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Unknown))),
  schema: Schema.optionalKey(Schema.Unknown),
  test_endpoint: Schema.optionalKey(Schema.Unknown)
})

/** A ToolBench tool file: a RapidAPI tool and its APIs. */
export const RawTool = Schema.Struct({
  tool_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  title: Schema.optionalKey(Schema.NullOr(Schema.String)),
  tool_description: OptionalText,
  api_list: Schema.Array(Schema.Unknown)
})

const decodeParameter = Schema.decodeUnknownResult(RawParameter)
const decodeApi = Schema.decodeUnknownResult(RawApi)
const decodeTool = Schema.decodeUnknownResult(RawTool)

/** One API in the shape shared by the tool folder and the query files' `api_list`. */
export interface ApiRecord {
  readonly category: string
  readonly tool: string
  readonly toolDescription?: string | undefined
  readonly api: string
  readonly description: string
  readonly method?: string | undefined
  readonly required: ReadonlyArray<unknown>
  readonly optional: ReadonlyArray<unknown>
  /** The RapidAPI `schema` (JSON Schema, often malformed or empty). */
  readonly schema?: unknown
  /** StableToolBench's `template_response`. */
  readonly template?: unknown
  /** An example response (`test_endpoint`), as JSON text or a value. */
  readonly example?: unknown
}

const normalizeForKey = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "")

/**
 * The key that matches a benchmark's `[tool_name, api_name]` to a library entry: both parts folded to
 * lowercase, accents removed, and every character that is not a letter or digit (spaces, `_`, `-`,
 * punctuation, emoji) dropped, joined by `/`. `("Random Word API", "Get Word_by-Start")` and
 * `("random_word_api", "get word by start")` give the same key.
 */
export const matchKey = (toolName: string, apiName: string): string => `${normalizeForKey(toolName)}/${normalizeForKey(apiName)}`

/**
 * ToolBench's own normalisation of tool and API names: every character outside `[A-Za-z0-9_]` becomes
 * `_`, runs of `_` collapse, lowercase, no `_` at either end (`"Números a letras"` → `n_meros_a_letras`).
 * A name with no such character at all becomes `x<hash>` so it is never empty.
 */
export const standardize = (name: string): string => {
  const s = name.replace(/[^A-Za-z0-9_]/g, "_").replace(/_+/g, "_").toLowerCase().replace(/^_+|_+$/g, "")
  return s.length > 0 ? s : `x${shortHash(name)}`
}

/**
 * The callable name of a ToolBench API, ToolBench's `<api>_for_<tool>` with both parts
 * {@link standardize}d and, like ToolBench, the last 64 characters kept when longer; so the names match
 * the function names of ToolBench / StableToolBench trajectories. The loaders make collisions unique.
 */
export const toolBenchName = (toolName: string, apiName: string): string => {
  const full = `${standardize(apiName)}_for_${standardize(toolName)}`
  return full.length <= maxNameLength ? full : full.slice(-maxNameLength)
}

/** The stable id of a ToolBench API: `toolbench:<Category>/<tool>/<api>` with {@link standardize}d names (duplicates get `~2`, ...). */
export const toolBenchId = (category: string, toolName: string, apiName: string): string =>
  `toolbench:${category}/${standardize(toolName)}/${standardize(apiName)}`

const text = (s: string | null | undefined): string => (s ?? "").trim()

/** Converts ToolBench parameters to a ParametersSchema; dropped or repaired parameters are reported. */
export const convertParameters = (
  required: ReadonlyArray<unknown>,
  optional: ReadonlyArray<unknown>,
  at: string,
  issues: Collector
): ParametersSchema => {
  const properties: Record<string, JsonSchema> = {}
  const requiredNames: Array<string> = []
  const add = (raw: unknown, index: number, isRequired: boolean): void => {
    const where = `${at}.${isRequired ? "required" : "optional"}_parameters[${index}]`
    const decoded = decodeParameter(raw)
    if (Result.isFailure(decoded)) {
      issues.issue(where, `parameter dropped: ${oneLine(decoded.failure.message)}`)
      return
    }
    const p = decoded.success
    const name = p.name.trim()
    if (name.length === 0) {
      issues.issue(where, "parameter dropped: empty name")
      return
    }
    if (Object.hasOwn(properties, name)) {
      issues.issue(where, `parameter ${JSON.stringify(name)} listed twice; the first is kept`)
      return
    }
    const hint = p.type === undefined || p.type === null ? undefined : typeHint(p.type)
    if (hint === undefined) {
      issues.issue(where, `parameter ${JSON.stringify(name)}: type ${JSON.stringify(p.type ?? null)} unknown, assumed string`)
    }
    const description = capDescription(text(p.description), where, issues)
    const schema = schemaOfHint(hint, [description, hint?.note ?? ""].filter((s) => s.length > 0).join(" "))
    const value = coerceDefault(p.default, schema.type)
    setOwn(properties, name, value === undefined ? schema : { ...schema, default: value })
    if (isRequired) requiredNames.push(name)
  }
  required.forEach((r, i) => add(r, i, true))
  optional.forEach((r, i) => add(r, i, false))
  return { type: "object", properties, required: requiredNames }
}

const parseExample = (example: unknown): Json | undefined => {
  if (example === undefined || example === null || example === "") return undefined
  if (typeof example === "string") return parseMaybeJsonValue(example)
  return parseMaybeJsonValue(JSON.stringify(example))
}

/** Converts one API record to a ToolSpec (name not yet made unique). */
export const toSpec = (record: ApiRecord, kind: SourceKind, ref: string, issues: Collector): ToolSpec => {
  const parameters = convertParameters(record.required, record.optional, ref, issues)
  let response: JsonSchema | undefined
  if (record.schema !== undefined) {
    const converted = convertSchema(record.schema)
    response = converted.schema
    if (converted.problems.length > 0) {
      const more = converted.problems.length > 1 ? ` (+${converted.problems.length - 1} more)` : ""
      issues.issue(`${ref}.schema`, `response schema repaired: ${converted.problems[0]}${more}`)
    }
  }
  if (response === undefined && record.template !== undefined && record.template !== null) {
    response = schemaFromTemplate(record.template)
  }
  const example = parseExample(record.example)
  if (response === undefined && example !== undefined) response = schemaFromExample(example)
  const method = text(record.method)
  const groupDescription = capDescription(text(record.toolDescription), `${ref}.tool_description`, issues)
  return {
    id: toolId(toolBenchId(record.category, record.tool, record.api)),
    name: toolName(toolBenchName(record.tool, record.api)),
    group: record.tool,
    apiName: record.api,
    category: record.category,
    description: capDescription(record.description.trim(), `${ref}.description`, issues),
    ...(groupDescription.length > 0 ? { groupDescription } : {}),
    parameters,
    ...(response !== undefined ? { response } : {}),
    ...(example !== undefined ? { example } : {}),
    ...(method.length > 0 ? { method: method.toUpperCase() } : {}),
    source: { kind, ref }
  }
}

/** A tool file that yields nothing, with the reason in its report. */
const skippedFile = (ref: string, reason: string): ImportResult => {
  const issues = collector()
  issues.skip(ref, `tool file skipped: ${reason}`)
  return { tools: [], report: issues.report(ref) }
}

/** Converts the parsed content of one tool file (exported for tests and for other loaders of the same format). */
export const convertToolFile = (content: unknown, category: string, ref: string): ImportResult => {
  const decoded = decodeTool(content)
  if (Result.isFailure(decoded)) return skippedFile(ref, oneLine(decoded.failure.message))
  const tool = decoded.success
  const name = text(tool.tool_name) || text(tool.name) || text(tool.title)
  if (name.length === 0) return skippedFile(ref, "no tool_name, name or title")
  if (tool.api_list.length === 0) return skippedFile(ref, "empty api_list: no API to import")
  const issues = collector()
  const tools: Array<ToolSpec> = []
  tool.api_list.forEach((raw, i) => {
    const at = `${ref}#api_list[${i}]`
    const api = decodeApi(raw)
    if (Result.isFailure(api)) {
      issues.skip(at, `API skipped: ${oneLine(api.failure.message)}`)
      return
    }
    const a = api.success
    if (a.name.trim().length === 0) {
      issues.skip(at, "API skipped: empty name")
      return
    }
    tools.push(
      toSpec(
        {
          category,
          tool: name,
          toolDescription: tool.tool_description ?? undefined,
          api: a.name.trim(),
          description: text(a.description),
          method: a.method ?? undefined,
          required: a.required_parameters ?? [],
          optional: a.optional_parameters ?? [],
          schema: a.schema,
          example: a.test_endpoint
        },
        "toolbench",
        at,
        issues
      )
    )
    issues.load()
  })
  return { tools, report: issues.report(ref) }
}

const loadFile = (dir: string, category: string, file: string): Effect.Effect<ImportResult> => {
  const ref = `${category}/${file}`
  return readText(path.join(dir, category, file)).pipe(
    Effect.map((content) => {
      const parsed = parseJson(content)
      return Result.isFailure(parsed) ? skippedFile(ref, parsed.failure) : convertToolFile(parsed.success, category, ref)
    }),
    Effect.catchTag("ImportError", (e) => Effect.succeed(skippedFile(ref, e.message)))
  )
}

/**
 * Loads a ToolBench-format folder: every `<Category>/*.json` (read {@link readConcurrency} at a time unless
 * `concurrency` says otherwise).
 * Unparseable files, files with an empty `api_list`, folders named `*.json` and malformed APIs are skipped and
 * reported; repaired parameters and response schemas, and descriptions cut to `maxDescriptionLength`, are reported
 * too. Fails only when the folder itself cannot be listed (an empty result is the caller's to judge: query files may
 * bring the APIs).
 */
export const loadDirectory = Effect.fn("ToolBench.loadDirectory")(function* (dir: string, options: { readonly concurrency?: number } = {}) {
  if (!(yield* isDirectory(dir))) return yield* new ImportError({ source: dir, message: "not a folder (expected <Category>/<tool>.json)" })
  const entries = yield* listDir(dir)
  const strays = entries.filter((e) => !e.isDirectory).map((e) => e.name)
  const categories = entries.filter((e) => e.isDirectory).map((e) => e.name)
  const folderIssues = collector()
  const files = yield* Effect.forEach(categories, (category) =>
    listDir(path.join(dir, category)).pipe(
      Effect.map((list) => dataFiles(list, /\.json$/, folderIssues, (name) => `${category}/${name}`).map((file) => ({ category, file })))
    ))
  const results = yield* Effect.forEach(files.flat(), ({ category, file }) => loadFile(dir, category, file), {
    concurrency: Math.max(1, options.concurrency ?? readConcurrency)
  })
  const strayIssues = collector()
  for (const s of strays) strayIssues.issue(s, "file outside a category folder, ignored")
  const tools = uniquifyTools(results.flatMap((r) => r.tools))
  const report = combine(dir, [strayIssues.report(dir), folderIssues.report(dir), ...results.map((r) => r.report)])
  return { tools, report } satisfies ImportResult
})
