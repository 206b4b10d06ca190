/**
 * Importer of a Model Context Protocol `tools/list` result (`{tools: [{name, description, inputSchema,
 * outputSchema?, annotations?}]}`), bare or inside its JSON-RPC response envelope, or several pages of it.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { JsonSchema, ParametersSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { convertSchema, pointerResolver } from "./JsonSchemaImport.ts"
import { safeName, uniquifyNames } from "./Naming.ts"
import { parseJson, readText } from "./Read.ts"
import { type Collector, collector, ImportError, type ImportResult, oneLine, withSource } from "./ImportReport.ts"

/** One tool of a `tools/list` result. */
export const RawTool = Schema.Struct({
  name: Schema.String,
  title: Schema.optionalKey(Schema.NullOr(Schema.String)),
  description: Schema.optionalKey(Schema.NullOr(Schema.String)),
  inputSchema: Schema.optionalKey(Schema.Unknown),
  outputSchema: Schema.optionalKey(Schema.Unknown),
  annotations: Schema.optionalKey(Schema.Unknown)
})

/** A `tools/list` result. */
export const ListResult = Schema.Struct({ tools: Schema.Array(Schema.Unknown) })

/** The JSON-RPC response that carries a `tools/list` result. */
export const Envelope = Schema.Struct({ jsonrpc: Schema.optionalKey(Schema.String), result: ListResult })

const decodeTool = Schema.decodeUnknownResult(RawTool)
const decodeList = Schema.decodeUnknownResult(ListResult)
const decodeEnvelope = Schema.decodeUnknownResult(Envelope)

/** Options of {@link convertList} / {@link loadFile}. */
export interface Options {
  /** The server's name: the group of its tools and part of their ids (default: the file name). */
  readonly server?: string
  /** The category of every tool (default `MCP`). */
  readonly category?: string
}

/** The pages of tools in a parsed document: a result, an envelope, or an array of either. */
const pages = (content: unknown): ReadonlyArray<ReadonlyArray<unknown>> | undefined => {
  const one = (u: unknown): ReadonlyArray<unknown> | undefined => {
    const env = decodeEnvelope(u)
    if (Result.isSuccess(env)) return env.success.result.tools
    const list = decodeList(u)
    return Result.isSuccess(list) ? list.success.tools : undefined
  }
  if (Array.isArray(content)) {
    const all = content.map(one)
    return all.every((p) => p !== undefined) ? (all as ReadonlyArray<ReadonlyArray<unknown>>) : undefined
  }
  const p = one(content)
  return p === undefined ? undefined : [p]
}

const inputParameters = (raw: unknown, at: string, issues: Collector): ParametersSchema => {
  if (raw === undefined) {
    issues.issue(at, "no inputSchema; the tool takes no arguments")
    return { type: "object", properties: {}, required: [] }
  }
  const converted = convertSchema(raw, pointerResolver(raw))
  if (converted.problems.length > 0) issues.issue(at, `inputSchema repaired: ${converted.problems.join("; ")}`)
  const s: JsonSchema | undefined = converted.schema
  if (s === undefined || (s.type !== undefined && s.type !== "object")) {
    issues.issue(at, `inputSchema is not an object schema (type ${JSON.stringify(s?.type ?? null)}); the tool takes no arguments`)
    return { type: "object", properties: {}, required: [] }
  }
  const properties = s.properties ?? {}
  return {
    type: "object",
    properties,
    required: (s.required ?? []).filter((r) => Object.hasOwn(properties, r)),
    ...(s.additionalProperties !== undefined ? { additionalProperties: s.additionalProperties } : {})
  }
}

/** Converts a parsed `tools/list` document; undefined when it is not one. */
export const convertList = (content: unknown, label: string, options: Options = {}): ImportResult | undefined => {
  const found = pages(content)
  if (found === undefined) return undefined
  const issues = collector()
  const server = options.server ?? nodePath.basename(label).replace(/\.json$/i, "")
  const category = options.category ?? "MCP"
  const specs: Array<ToolSpec> = []
  const seen = new Set<string>()
  found.forEach((tools, page) => {
    tools.forEach((raw, i) => {
      const at = found.length > 1 ? `${label}#page[${page}].tools[${i}]` : `${label}#tools[${i}]`
      const decoded = decodeTool(raw)
      if (Result.isFailure(decoded)) {
        issues.skip(at, `tool skipped: ${oneLine(decoded.failure.message)}`)
        return
      }
      const t = decoded.success
      const name = t.name.trim()
      if (name.length === 0) {
        issues.skip(at, "tool skipped: empty name")
        return
      }
      if (seen.has(name)) {
        issues.skip(at, `tool ${JSON.stringify(name)} listed twice; the first is kept`)
        return
      }
      seen.add(name)
      const parameters = inputParameters(t.inputSchema, at, issues)
      let response: JsonSchema | undefined
      if (t.outputSchema !== undefined) {
        const converted = convertSchema(t.outputSchema, pointerResolver(t.outputSchema))
        if (converted.problems.length > 0) issues.issue(at, `outputSchema repaired: ${converted.problems.join("; ")}`)
        response = converted.schema
      }
      const description = (t.description ?? t.title ?? "").trim()
      specs.push({
        id: toolId(`mcp:${server}/${name}`),
        name: toolName(safeName(name)),
        group: server,
        apiName: name,
        category,
        description,
        parameters,
        ...(response !== undefined ? { response } : {}),
        source: { kind: "mcp", ref: at }
      })
      issues.load()
    })
  })
  return { tools: uniquifyNames(specs), report: issues.report(label) }
}

/** Loads a saved `tools/list` result (JSON); fails when the file cannot be read, is not JSON or holds no tool list. */
export const loadFile = Effect.fn("Mcp.loadFile")(function* (path: string, options: Options = {}) {
  const text = yield* readText(path)
  const parsed = parseJson(text)
  if (Result.isFailure(parsed)) return yield* new ImportError({ source: path, message: parsed.failure })
  const result = convertList(parsed.success, nodePath.basename(path), options)
  if (result === undefined) {
    return yield* new ImportError({ source: path, message: "not a tools/list result: expected {tools: [...]}, {result: {tools: [...]}} or an array of them" })
  }
  return withSource(result, path)
})
