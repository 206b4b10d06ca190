/**
 * Importer of the Seal-Tools tool list (`Seal-Tools_Dataset/tool.jsonl`: one `{api_name, api_description,
 * field, parameters, required, responses}` per line, Python type names).
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { JsonSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { schemaOfHint, setOwn, typeHint } from "./JsonSchemaImport.ts"
import { safeName, uniquifyNames } from "./Naming.ts"
import { parseJsonLines, readText } from "./Read.ts"
import { type Collector, collector, type ImportResult, oneLine, withSource } from "./ImportReport.ts"

/** One Seal-Tools tool. */
export const RawSealTool = Schema.Struct({
  api_name: Schema.String,
  api_description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  field: Schema.optionalKey(Schema.NullOr(Schema.String)),
  parameters: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))),
  required: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  responses: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)))
})

const RawField = Schema.Struct({ type: Schema.optionalKey(Schema.String), description: Schema.optionalKey(Schema.NullOr(Schema.String)) })

const decodeSeal = Schema.decodeUnknownResult(RawSealTool)
const decodeField = Schema.decodeUnknownResult(RawField)

const fields = (raw: Readonly<Record<string, unknown>>, at: string, issues: Collector): Record<string, JsonSchema> => {
  const out: Record<string, JsonSchema> = {}
  for (const [name, value] of Object.entries(raw)) {
    const f = decodeField(value)
    if (Result.isFailure(f)) {
      issues.issue(`${at}.${name}`, `dropped: ${oneLine(f.failure.message)}`)
      continue
    }
    const hint = f.success.type === undefined ? undefined : typeHint(f.success.type)
    if (hint === undefined) issues.issue(`${at}.${name}`, `type ${JSON.stringify(f.success.type ?? null)} unknown, assumed string`)
    setOwn(out, name, schemaOfHint(hint, (f.success.description ?? "").trim()))
  }
  return out
}

/**
 * Converts Seal-Tools JSON Lines. `category` = the first part of `field` (`Chemical Engineering` of
 * `Chemical Engineering/Forensic engineering`), `group` = the whole field; each tool is its own API.
 */
export const convertSealTools = (text: string, label: string): ImportResult => {
  const issues = collector()
  const tools: Array<ToolSpec> = []
  const seen = new Set<string>()
  for (const line of parseJsonLines(text)) {
    const at = `${label}:${line.line}`
    if (Result.isFailure(line.value)) {
      issues.skip(at, `tool skipped: ${line.value.failure}`)
      continue
    }
    const decoded = decodeSeal(line.value.success)
    if (Result.isFailure(decoded)) {
      issues.skip(at, `tool skipped: ${oneLine(decoded.failure.message)}`)
      continue
    }
    const t = decoded.success
    const name = t.api_name.trim()
    if (name.length === 0 || seen.has(name)) {
      issues.skip(at, name.length === 0 ? "tool skipped: empty api_name" : `tool ${JSON.stringify(name)} listed twice; the first is kept`)
      continue
    }
    seen.add(name)
    const properties = fields(t.parameters ?? {}, `${at}.parameters`, issues)
    const required = (t.required ?? []).filter((r) => Object.hasOwn(properties, r))
    if (required.length < (t.required ?? []).length) issues.issue(at, "required names a parameter that does not exist; dropped from required")
    const responses = fields(t.responses ?? {}, `${at}.responses`, issues)
    const field = (t.field ?? "").trim()
    tools.push({
      id: toolId(`seal-tools:${name}`),
      name: toolName(safeName(name)),
      group: field.length > 0 ? field : name,
      apiName: name,
      category: field.split("/")[0]?.trim() || "Seal-Tools",
      description: (t.api_description ?? "").trim(),
      parameters: { type: "object", properties, required },
      ...(Object.keys(responses).length > 0 ? { response: { type: "object", properties: responses } } : {}),
      source: { kind: "seal-tools", ref: at }
    })
    issues.load()
  }
  return { tools: uniquifyNames(tools), report: issues.report(label) }
}

/** Loads Seal-Tools' `tool.jsonl`. */
export const loadSealTools = Effect.fn("SealTools.loadSealTools")(function* (path: string) {
  const text = yield* readText(path)
  const result = convertSealTools(text, nodePath.basename(path))
  return withSource(result, path)
})
