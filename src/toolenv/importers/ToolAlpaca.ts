/**
 * Importer of the ToolAlpaca evaluation files (`eval_real.json`, `eval_simulated.json`): each API carries its
 * OpenAPI document as a JSON string, read by the OpenAPI importer (group = the API's name, category = its
 * `Category`).
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { ToolSpec } from "../../domain/Tool.ts"
import { uniquifyNames } from "./Naming.ts"
import * as OpenApi from "./OpenApi.ts"
import { parseJson, readText } from "./Read.ts"
import { collector, combine, ImportError, type ImportReport, type ImportResult, oneLine, withSource } from "./ImportReport.ts"

/** One ToolAlpaca API: its name, category and OpenAPI document (a JSON string). */
export const RawAlpacaApi = Schema.Struct({
  Name: Schema.String,
  Category: Schema.optionalKey(Schema.String),
  Documentation: Schema.String
})

const decodeAlpaca = Schema.decodeUnknownResult(RawAlpacaApi)

/** Converts a ToolAlpaca evaluation file: each API's OpenAPI document through {@link OpenApi.convertDocument}. */
export const convertFile = (content: unknown, label: string): ImportResult | undefined => {
  if (!Array.isArray(content)) return undefined
  const reports: Array<ImportReport> = []
  const tools: Array<ToolSpec> = []
  content.forEach((raw, i) => {
    const issues = collector()
    const at = `${label}[${i}]`
    const api = decodeAlpaca(raw)
    if (Result.isFailure(api)) {
      issues.skip(at, `API skipped: ${oneLine(api.failure.message)}`)
      reports.push(issues.report(at))
      return
    }
    const doc = parseJson(api.success.Documentation)
    const converted = Result.isSuccess(doc)
      ? OpenApi.convertDocument(doc.success, `${label}#${api.success.Name}`, { group: api.success.Name, category: api.success.Category ?? "ToolAlpaca" })
      : undefined
    if (converted === undefined) {
      issues.skip(at, `API ${JSON.stringify(api.success.Name)} skipped: Documentation is not an OpenAPI document${Result.isFailure(doc) ? ` (${doc.failure})` : ""}`)
      reports.push(issues.report(at))
      return
    }
    tools.push(...converted.tools)
    reports.push(converted.report)
  })
  return { tools: uniquifyNames(tools), report: combine(label, reports) }
}

/** Loads a ToolAlpaca evaluation file (`eval_real.json`, `eval_simulated.json`). */
export const loadFile = Effect.fn("ToolAlpaca.loadFile")(function* (path: string) {
  const text = yield* readText(path)
  const parsed = parseJson(text)
  if (Result.isFailure(parsed)) return yield* new ImportError({ source: path, message: parsed.failure })
  const result = convertFile(parsed.success, nodePath.basename(path))
  if (result === undefined) return yield* new ImportError({ source: path, message: "not a ToolAlpaca file: expected an array of APIs" })
  return withSource(result, path)
})
