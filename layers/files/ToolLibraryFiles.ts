/**
 * ToolLibrary layers over real tool libraries on disk: a ToolBench-format folder (optionally merged with
 * StableToolBench query files' api_lists), BFCL, API-Bank, OpenAPI and MCP files, alone or together. G_dep
 * is inferred (src/toolenv/DepInference.ts) and every import report is logged, counts and first issues.
 */
import { Effect, Layer } from "effect"
import * as nodePath from "node:path"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import * as DepInference from "../../src/toolenv/DepInference.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as ApiBank from "../../src/toolenv/importers/ApiBank.ts"
import * as Bfcl from "../../src/toolenv/importers/Bfcl.ts"
import * as Mcp from "../../src/toolenv/importers/Mcp.ts"
import { uniquifyNames } from "../../src/toolenv/importers/Naming.ts"
import * as OpenApi from "../../src/toolenv/importers/OpenApi.ts"
import * as SealTools from "../../src/toolenv/importers/SealTools.ts"
import * as ToolAlpaca from "../../src/toolenv/importers/ToolAlpaca.ts"
import { capSpec, collector, type ImportError, type ImportReport, type ImportResult, summary } from "../../src/toolenv/importers/ImportReport.ts"
import * as StableToolBench from "../../src/toolenv/importers/StableToolBench.ts"
import * as ToolBench from "../../src/toolenv/importers/ToolBench.ts"
import { type Library, makeLibrary, ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"

/** One source of tools. */
export type Source =
  /** A ToolBench tool folder (`<Category>/<tool>.json`); query files add the APIs of their `api_list`s the folder lacks. */
  | { readonly kind: "toolbench"; readonly dir: string; readonly queryFiles?: ReadonlyArray<string> }
  /** A BFCL data folder (every `BFCL_*.json`) or one JSON Lines file. */
  | { readonly kind: "bfcl"; readonly path: string }
  /** An API-Bank data folder; `training: false` leaves out the APIs of the training dialogues. */
  | { readonly kind: "api-bank"; readonly dir: string; readonly training?: boolean }
  /** An OpenAPI 3 / Swagger 2.0 JSON document. */
  | { readonly kind: "openapi"; readonly path: string; readonly category?: string; readonly group?: string }
  /** A saved MCP `tools/list` result. */
  | { readonly kind: "mcp"; readonly path: string; readonly server?: string; readonly category?: string }
  /** Seal-Tools' `tool.jsonl`. */
  | { readonly kind: "seal-tools"; readonly path: string }
  /** A ToolAlpaca evaluation file (`eval_real.json`, `eval_simulated.json`): OpenAPI documents per API. */
  | { readonly kind: "toolalpaca"; readonly path: string }

/** Options of {@link load}. */
export interface Options {
  /** Options of G_dep inference. */
  readonly inference?: DepInference.Options
  /** How many issues of each report are logged (default 5). */
  readonly loggedIssues?: number
}

/** A loaded library, the reports of its imports, and how long it took. */
export interface Loaded {
  readonly library: Library
  readonly reports: ReadonlyArray<ImportReport>
  /** The rule behind each edge of `library.graph.edges`, same order (before duplicate removal by DepGraph). */
  readonly rules: ReadonlyArray<DepInference.Rule>
  readonly importMs: number
  readonly inferMs: number
}

/** The tools and reports of a source that is one import. */
const single = (imported: Effect.Effect<ImportResult, ImportError>) => Effect.map(imported, (r) => ({ tools: r.tools, reports: [r.report] }))

const importSource = (source: Source): Effect.Effect<{ tools: ReadonlyArray<ToolSpec>; reports: ReadonlyArray<ImportReport> }, ImportError> => {
  switch (source.kind) {
    case "toolbench":
      return Effect.gen(function* () {
        const folder = yield* ToolBench.loadDirectory(source.dir)
        const files = source.queryFiles ?? []
        if (files.length === 0) return { tools: folder.tools, reports: [folder.report] }
        const loaded = yield* Effect.forEach(files, (f) => StableToolBench.loadQueryFile(f))
        const merged = StableToolBench.mergeQueryApis(folder.tools, loaded.flatMap((q) => q.queries))
        const mergeReport: ImportReport = {
          source: `api_lists of ${files.map((f) => nodePath.basename(f)).join(", ")}`,
          loaded: merged.added,
          skipped: 0,
          issues: [],
          issueCount: 0
        }
        return { tools: merged.tools, reports: [folder.report, ...loaded.map((q) => q.report), mergeReport] }
      })
    case "bfcl":
      return single(/\.jsonl?$/i.test(source.path) ? Bfcl.loadFiles([source.path]) : Bfcl.loadDirectory(source.path))
    case "api-bank":
      return single(ApiBank.loadDirectory(source.dir, source.training === undefined ? {} : { training: source.training }))
    case "openapi":
      return single(OpenApi.loadFile(source.path, {
        ...(source.category !== undefined ? { category: source.category } : {}),
        ...(source.group !== undefined ? { group: source.group } : {})
      }))
    case "mcp":
      return single(Mcp.loadFile(source.path, {
        ...(source.server !== undefined ? { server: source.server } : {}),
        ...(source.category !== undefined ? { category: source.category } : {})
      }))
    case "seal-tools":
      return single(SealTools.loadSealTools(source.path))
    case "toolalpaca":
      return single(ToolAlpaca.loadFile(source.path))
  }
}

const label = (sources: ReadonlyArray<Source>): string =>
  sources
    .map((s) => {
      switch (s.kind) {
        case "toolbench":
          return `toolbench:${s.dir}${(s.queryFiles ?? []).length > 0 ? ` (+${(s.queryFiles ?? []).length} query files)` : ""}`
        case "api-bank":
          return `api-bank:${s.dir}`
        default:
          return `${s.kind}:${s.path}`
      }
    })
    .join(" + ")

/**
 * Imports the sources, makes names unique across them (the smallest id keeps a shared name), infers G_dep
 * and logs each report. Fails only when a source as a whole cannot be read.
 */
export const load = Effect.fn("ToolLibraryFiles.load")(function* (sources: ReadonlyArray<Source>, options: Options = {}) {
  const started = performance.now()
  const imported = yield* Effect.forEach(sources, importSource)
  // every format's specs within the same size caps (names, parameters, defaults, schemas), each cap a report line
  const capIssues = collector()
  const all = imported.flatMap((i) => i.tools).flatMap((t) => {
    const capped = capSpec(t, t.source.ref, capIssues)
    return capped === undefined ? [] : [capped]
  })
  const capReport = capIssues.report(`size caps (${label(sources)})`)
  const reports = [...imported.flatMap((i) => i.reports), ...(capReport.issueCount > 0 ? [capReport] : [])]
  const tools = sources.length > 1 ? uniquifyNames(all) : all
  const importMs = performance.now() - started
  const inferred = DepInference.infer(tools, options.inference)
  const graph = DepGraph.make(inferred.edges)
  const inferMs = performance.now() - started - importMs
  for (const r of reports) {
    const line = summary(r, options.loggedIssues ?? 5)
    yield* r.issueCount > 0 ? Effect.logWarning(line) : Effect.logInfo(line)
  }
  const library = makeLibrary(label(sources), inferred.tools, graph)
  const stats = DepGraph.stats(library.tools, graph)
  yield* Effect.logInfo(
    `${library.label}: ${stats.apis} APIs of ${stats.tools} tools in ${stats.categories} categories; G_dep ${stats.hardEdges} hard + ${stats.softEdges} soft edges, ${stats.toolsWithDeps} APIs with a dependency (import ${Math.round(importMs)} ms, inference ${Math.round(inferMs)} ms)`
  )
  return { library, reports, rules: inferred.rules, importMs, inferMs } satisfies Loaded
})

/** A ToolLibrary layer over any mix of sources. */
export const layer = (sources: ReadonlyArray<Source>, options: Options = {}): Layer.Layer<ToolLibrary, ImportError> =>
  Layer.effect(ToolLibrary)(load(sources, options).pipe(Effect.map((l) => l.library)))

/** A ToolLibrary layer over a ToolBench-format folder (e.g. ToolEnv2404), optionally merged with StableToolBench query files. */
export const layerToolBench = (dir: string, queryFiles: ReadonlyArray<string> = [], options: Options = {}): Layer.Layer<ToolLibrary, ImportError> =>
  layer([{ kind: "toolbench", dir, queryFiles }], options)
