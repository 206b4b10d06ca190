/**
 * Importer of Berkeley Function-Calling Leaderboard function docs (`BFCL_v4_*.json`, JSON Lines: each record
 * has `function: [{name, description, parameters: {type: "dict", properties, required}}]`). Identical
 * functions repeated across records and files are kept once; BFCL's Python-flavoured types are mapped.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { canonicalJson } from "../../math/CanonicalJson.ts"
import { convertSchema } from "./JsonSchemaImport.ts"
import { safeName, shortHash, uniquifyNames } from "./Naming.ts"
import { dataFiles, isDirectory, listDir, parseJsonLines, readText } from "./Read.ts"
import { type Collector, collector, combine, ImportError, type ImportReport, type ImportResult, oneLine } from "./ImportReport.ts"

/** One BFCL function doc. */
export const RawFunction = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  parameters: Schema.optionalKey(Schema.NullOr(Schema.Unknown))
})

/** One BFCL record: an id and its functions (the question is not needed here). */
export const RawRecord = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  function: Schema.Array(Schema.Unknown)
})

const decodeRecord = Schema.decodeUnknownResult(RawRecord)
const decodeFunction = Schema.decodeUnknownResult(RawFunction)

/** The BFCL test category of a file name (`BFCL_v4_live_multiple.json` → `live_multiple`). */
export const categoryOf = (file: string): string =>
  nodePath.basename(file).replace(/\.jsonl?$/, "").replace(/^BFCL_v\d+_/, "")

/** Converts BFCL `parameters` (`type: "dict"`) to a ParametersSchema; problems are reported. */
export const convertParameters = (raw: unknown, at: string, issues: Collector): ParametersSchema => {
  if (raw === undefined || raw === null) return { type: "object", properties: {}, required: [] }
  const converted = convertSchema(raw)
  if (converted.problems.length > 0) issues.issue(at, `parameters repaired: ${converted.problems.join("; ")}`)
  const s: JsonSchema | undefined = converted.schema
  if (s === undefined || (s.type !== "object" && s.properties === undefined)) {
    issues.issue(at, `parameters are not an object schema (type ${JSON.stringify(s?.type ?? null)}); the function takes no arguments`)
    return { type: "object", properties: {}, required: [] }
  }
  const properties = s.properties ?? {}
  const required = (s.required ?? []).filter((r) => Object.hasOwn(properties, r))
  return {
    type: "object",
    properties,
    required,
    ...(s.description !== undefined ? { description: s.description } : {})
  }
}

/** Converts the records of several files (in the given order); identical functions are kept once. */
export const convertFiles = (files: ReadonlyArray<{ readonly file: string; readonly text: string }>, source: string): ImportResult => {
  const unique = new Map<string, ToolSpec>()
  const reports: Array<ImportReport> = []
  for (const { file, text } of files) {
    const issues = collector()
    const label = nodePath.basename(file)
    const category = categoryOf(file)
    for (const line of parseJsonLines(text)) {
      const at = `${label}:${line.line}`
      if (Result.isFailure(line.value)) {
        issues.skip(at, `record skipped: ${line.value.failure}`)
        continue
      }
      const record = decodeRecord(line.value.success)
      if (Result.isFailure(record)) {
        issues.skip(at, `record skipped: ${oneLine(record.failure.message)}`)
        continue
      }
      const recordId = record.success.id ?? `line ${line.line}`
      record.success.function.forEach((rawFn, i) => {
        const where = `${label}#${recordId}/function[${i}]`
        const fn = decodeFunction(rawFn)
        if (Result.isFailure(fn)) {
          issues.skip(where, `function skipped: ${oneLine(fn.failure.message)}`)
          return
        }
        const name = fn.success.name.trim()
        if (name.length === 0) {
          issues.skip(where, "function skipped: empty name")
          return
        }
        const key = canonicalJson(rawFn)
        if (unique.has(key)) return
        const parameters = convertParameters(fn.success.parameters, where, issues)
        const dot = name.lastIndexOf(".")
        unique.set(key, {
          id: toolId(`bfcl:${name}@${shortHash(key)}`),
          name: toolName(safeName(name)),
          group: dot > 0 ? name.slice(0, dot) : name,
          apiName: name,
          category,
          description: (fn.success.description ?? "").trim(),
          parameters,
          source: { kind: "bfcl", ref: where }
        })
        issues.load()
      })
    }
    reports.push(issues.report(label))
  }
  const tools = uniquifyNames([...unique.values()])
  return { tools, report: combine(source, reports) }
}

/** Loads BFCL files (JSON Lines). A missing file fails the load; a bad line or function is skipped and reported. */
export const loadFiles = Effect.fn("Bfcl.loadFiles")(function* (paths: ReadonlyArray<string>) {
  const files = yield* Effect.forEach(paths, (file) => readText(file).pipe(Effect.map((text) => ({ file, text }))))
  return convertFiles(files, paths.length === 1 ? (paths[0] ?? "") : paths.join(", "))
})

/** Loads every `BFCL_*.json` directly inside a folder (not `possible_answer/`), in name order. */
export const loadDirectory = Effect.fn("Bfcl.loadDirectory")(function* (dir: string) {
  if (!(yield* isDirectory(dir))) return yield* new ImportError({ source: dir, message: "not a folder" })
  const entries = yield* listDir(dir)
  const folderIssues = collector()
  const names = dataFiles(entries, /^BFCL_.*\.jsonl?$/, folderIssues)
  if (names.length === 0) return yield* new ImportError({ source: dir, message: "no BFCL_*.json files" })
  const files = yield* Effect.forEach(names, (n) => readText(nodePath.join(dir, n)).pipe(Effect.map((text) => ({ file: n, text }))))
  const result = convertFiles(files, dir)
  return { tools: result.tools, report: combine(dir, [folderIssues.report(dir), result.report]) } satisfies ImportResult
})
