/**
 * The real tool documentation the static encoder trains on: the importable libraries' own API texts (ToolEnv2404,
 * ToolAlpaca, Seal-Tools, API-Bank's API table, RestBench's OpenAPI specs, the public-apis table) — never query files.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import { toolId, toolName } from "../domain/Ids.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import * as ApiBank from "../toolenv/importers/ApiBank.ts"
import { collector, ImportError } from "../toolenv/importers/ImportReport.ts"
import * as OpenApi from "../toolenv/importers/OpenApi.ts"
import { parseJson, readText } from "../toolenv/importers/Read.ts"
import * as SealTools from "../toolenv/importers/SealTools.ts"
import * as ToolAlpaca from "../toolenv/importers/ToolAlpaca.ts"
import * as ToolBench from "../toolenv/importers/ToolBench.ts"

/** One documentation source: a name and its path inside the data folder. Only API documentation files are listed. */
export interface Source {
  readonly name: string
  readonly path: ReadonlyArray<string>
}

/**
 * The sources, in training order. ToolAlpaca's eval files are read for their APIs' OpenAPI documents only (the
 * importer ignores their instructions); API-Bank contributes its API table (`data/all_apis.csv`), not its dialogues.
 */
export const sources: ReadonlyArray<Source> = [
  { name: "toolenv2404", path: ["toolenv2404", "toolenv2404_filtered"] },
  { name: "toolalpaca-real", path: ["toolalpaca", "data", "eval_real.json"] },
  { name: "toolalpaca-simulated", path: ["toolalpaca", "data", "eval_simulated.json"] },
  { name: "seal-tools", path: ["seal-tools", "Seal-Tools_Dataset", "tool.jsonl"] },
  { name: "api-bank", path: ["api-bank", "data", "all_apis.csv"] },
  { name: "restbench-tmdb", path: ["restbench", "specs", "tmdb_oas.json"] },
  { name: "restbench-spotify", path: ["restbench", "specs", "spotify_oas.json"] },
  { name: "public-apis", path: ["public-apis", "public_apis_table.json"] }
]

/** What one source gave. */
export interface Loaded {
  readonly source: Source
  readonly file: string
  readonly tools: ReadonlyArray<ToolSpec>
}

/** A row of the public-apis table (`public_apis_table.json`). */
export const PublicApiRow = Schema.Struct({
  API: Schema.String,
  Description: Schema.String,
  Category: Schema.String
})

/** Converts the public-apis table: one tool per row (the API is its own group; no parameters are documented). */
export const convertPublicApis = (content: unknown, file: string): Result.Result<Array<ToolSpec>, ImportError> => {
  const rows = Schema.decodeUnknownResult(Schema.Array(PublicApiRow))(content)
  if (Result.isFailure(rows)) return Result.fail(new ImportError({ source: file, message: rows.failure.message }))
  const seen = new Set<string>()
  const tools: Array<ToolSpec> = []
  rows.success.forEach((row, i) => {
    const key = `${row.Category}/${row.API}`
    if (row.API.trim() === "" || seen.has(key)) return
    seen.add(key)
    tools.push({
      id: toolId(`public-apis:${key}`),
      name: toolName(`public_api_${i}`),
      group: row.API,
      apiName: row.API,
      category: row.Category,
      description: row.Description,
      parameters: { type: "object", properties: {}, required: [] },
      source: { kind: "user", ref: `${nodePath.basename(file)}[${i}]` }
    })
  })
  return Result.succeed(tools)
}

const loadJson = (file: string) =>
  readText(file).pipe(Effect.flatMap((text) => {
    const parsed = parseJson(text)
    return Result.isFailure(parsed) ? Effect.fail(new ImportError({ source: file, message: parsed.failure })) : Effect.succeed(parsed.success)
  }))

/** Loads one source from the data folder `root`; a missing or unreadable file is an `ImportError` naming it. */
export const loadSource = Effect.fn("DenseSources.loadSource")(function*(root: string, source: Source) {
  const file = nodePath.join(root, ...source.path)
  const tools: ReadonlyArray<ToolSpec> = yield* (() => {
    switch (source.name) {
      case "toolenv2404":
        return ToolBench.loadDirectory(file).pipe(Effect.map((r) => r.tools))
      case "toolalpaca-real":
      case "toolalpaca-simulated":
        return ToolAlpaca.loadFile(file).pipe(Effect.map((r) => r.tools))
      case "seal-tools":
        return SealTools.loadSealTools(file).pipe(Effect.map((r) => r.tools))
      case "api-bank":
        return readText(file).pipe(Effect.map((text) => {
          const issues = collector()
          return ApiBank.convertFound(ApiBank.descriptionsInCsv(text, nodePath.basename(file), issues), issues)
        }))
      case "restbench-tmdb":
      case "restbench-spotify":
        return OpenApi.loadFile(file).pipe(Effect.map((r) => r.tools))
      default:
        return loadJson(file).pipe(Effect.flatMap((json) => Effect.fromResult(convertPublicApis(json, file))))
    }
  })()
  return { source, file, tools } satisfies Loaded
})

/** Loads every source of {@link sources} (or the named subset) from the data folder `root`. */
export const loadAll = (root: string, names: ReadonlyArray<string> = sources.map((s) => s.name)) =>
  Effect.forEach(sources.filter((s) => names.includes(s.name)), (s) => loadSource(root, s))
