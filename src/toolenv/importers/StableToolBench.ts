/**
 * Importer of StableToolBench query files (`solvable_queries/test_instruction/G1_instruction.json`, ...):
 * each query with its relevant `[tool_name, api_name]` pairs and its `api_list` as ToolSpecs named and
 * id'd exactly as the tool-folder importer names the same API, so the two merge without duplicates.
 */
import { Effect, Result, Schema } from "effect"
import * as nodePath from "node:path"
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId } from "../../domain/Ids.ts"
import { compareIds, uniquifyNames } from "./Naming.ts"
import { parseJson, readText } from "./Read.ts"
import { collector, ImportError, type ImportReport, oneLine } from "./ImportReport.ts"
import { matchKey, toSpec } from "./ToolBench.ts"

/** A relevant API of a query, as the benchmark names it. */
export interface RelevantApi {
  readonly tool: string
  readonly api: string
}

/** One benchmark query. */
export interface BenchmarkQuery {
  readonly id: string
  readonly query: string
  /** The `relevant APIs` pairs, in the file's order. */
  readonly relevant: ReadonlyArray<RelevantApi>
  /** The query's `api_list` as tool specs (after {@link mergeQueryApis}: the library's specs). */
  readonly apis: ReadonlyArray<ToolSpec>
}

/** The queries of one file and the report of their import. */
export interface QueryFile {
  readonly queries: ReadonlyArray<BenchmarkQuery>
  readonly report: ImportReport
}

const OptionalText = Schema.optionalKey(Schema.NullOr(Schema.String))

/** One `api_list` entry of a query. */
export const RawQueryApi = Schema.Struct({
  category_name: Schema.String,
  tool_name: Schema.String,
  api_name: Schema.String,
  api_description: OptionalText,
  method: OptionalText,
  required_parameters: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Unknown))),
  optional_parameters: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.Unknown))),
  template_response: Schema.optionalKey(Schema.Unknown)
})

/** One query record. */
export const RawQuery = Schema.Struct({
  query: Schema.String,
  query_id: Schema.Union([Schema.Number, Schema.String]),
  api_list: Schema.Array(Schema.Unknown),
  "relevant APIs": Schema.optionalKey(Schema.Array(Schema.Unknown))
})

const RelevantPair = Schema.Tuple([Schema.String, Schema.String])

const decodeQuery = Schema.decodeUnknownResult(RawQuery)
const decodeQueryApi = Schema.decodeUnknownResult(RawQueryApi)
const decodePair = Schema.decodeUnknownResult(RelevantPair)

/** Converts the parsed content of a query file (an array of queries); `file` labels issues and refs. */
export const convertQueries = (content: unknown, file: string): QueryFile | undefined => {
  if (!Array.isArray(content)) return undefined
  const issues = collector()
  const queries: Array<BenchmarkQuery> = []
  content.forEach((raw, qi) => {
    const decoded = decodeQuery(raw)
    if (Result.isFailure(decoded)) {
      issues.skip(`${file}[${qi}]`, `query skipped: ${oneLine(decoded.failure.message)}`)
      return
    }
    const q = decoded.success
    const id = String(q.query_id)
    const at = `${file}#query=${id}`
    const apis: Array<ToolSpec> = []
    const ids = new Set<string>()
    if (q.api_list.length === 0) issues.issue(`${at}/api_list`, "empty api_list: the query offers no API (kept; its relevant APIs resolve through the library only)")
    q.api_list.forEach((rawApi, ai) => {
      const a = decodeQueryApi(rawApi)
      if (Result.isFailure(a)) {
        issues.issue(`${at}/api_list[${ai}]`, `API dropped: ${oneLine(a.failure.message)}`)
        return
      }
      const api = a.success
      const spec = toSpec(
        {
          category: api.category_name,
          tool: api.tool_name,
          api: api.api_name,
          description: api.api_description ?? "",
          method: api.method ?? undefined,
          required: api.required_parameters ?? [],
          optional: api.optional_parameters ?? [],
          template: api.template_response
        },
        "stabletoolbench",
        `${at}/api_list[${ai}]`,
        issues
      )
      if (ids.has(spec.id)) return
      ids.add(spec.id)
      apis.push(spec)
    })
    const relevant: Array<RelevantApi> = []
    ;(q["relevant APIs"] ?? []).forEach((rawPair, ri) => {
      const pair = decodePair(rawPair)
      if (Result.isFailure(pair)) {
        issues.issue(`${at}/relevant APIs[${ri}]`, `relevant pair dropped: ${oneLine(pair.failure.message)}`)
        return
      }
      relevant.push({ tool: pair.success[0], api: pair.success[1] })
    })
    queries.push({ id, query: q.query, relevant, apis })
    issues.load()
  })
  return { queries, report: issues.report(file) }
}

/**
 * Loads one StableToolBench query file. A malformed query or `api_list` entry is skipped and reported;
 * the file fails as a whole only when it cannot be read, is not JSON, or is not an array of queries.
 */
export const loadQueryFile = Effect.fn("StableToolBench.loadQueryFile")(function* (path: string) {
  const content = yield* readText(path)
  const parsed = parseJson(content)
  if (Result.isFailure(parsed)) return yield* new ImportError({ source: path, message: parsed.failure })
  const converted = convertQueries(parsed.success, nodePath.basename(path))
  if (converted === undefined) return yield* new ImportError({ source: path, message: "not a query file: expected a JSON array of queries" })
  return { queries: converted.queries, report: { ...converted.report, source: path } } satisfies QueryFile
})

/** Looks library entries up by category and {@link matchKey}. */
export interface Matcher {
  /** The entry for `(tool, api)`, preferring `category`; a key found in several other categories resolves to the smallest id. */
  readonly find: (tool: string, api: string, category?: string) => ToolSpec | undefined
}

/** Builds a {@link Matcher} over a library. */
export const matcher = (tools: ReadonlyArray<ToolSpec>): Matcher => {
  const byCategory = new Map<string, ToolSpec>()
  const byKey = new Map<string, ToolSpec>()
  for (const t of tools) {
    const key = matchKey(t.group, t.apiName)
    const ck = `${t.category}\u0000${key}`
    const c = byCategory.get(ck)
    if (c === undefined || compareIds(t.id, c.id) < 0) byCategory.set(ck, t)
    const k = byKey.get(key)
    if (k === undefined || compareIds(t.id, k.id) < 0) byKey.set(key, t)
  }
  return {
    find: (tool, api, category) => {
      const key = matchKey(tool, api)
      return (category === undefined ? undefined : byCategory.get(`${category}\u0000${key}`)) ?? byKey.get(key)
    }
  }
}

/** A library merged with the `api_list`s of query files. */
export interface Merged {
  /** The library's tools followed by the query APIs it lacked. */
  readonly tools: ReadonlyArray<ToolSpec>
  /** The queries with each `api_list` spec replaced by the library entry it matched (or the added one). */
  readonly queries: ReadonlyArray<BenchmarkQuery>
  /** Query APIs that were not in the library and were added. */
  readonly added: number
  /** Distinct query APIs found in the library. */
  readonly matched: number
}

/**
 * Merges the `api_list`s of queries into a library: an API already there (same category and
 * {@link matchKey}, else the same key in another category) is not added again; the others are added
 * once each, renamed with a hash suffix only if their name is taken. The library's own names never change.
 */
export const mergeQueryApis = (library: ReadonlyArray<ToolSpec>, queries: ReadonlyArray<BenchmarkQuery>): Merged => {
  const find = matcher(library).find
  const fresh = new Map<string, ToolSpec>()
  const matchedIds = new Set<string>()
  for (const q of queries) {
    for (const a of q.apis) {
      const hit = find(a.group, a.apiName, a.category)
      if (hit !== undefined) matchedIds.add(hit.id)
      else if (!fresh.has(a.id)) fresh.set(a.id, a)
    }
  }
  const taken = new Set(library.map((t) => t.name))
  const libraryIds = new Set<string>(library.map((t) => t.id))
  const originals = [...fresh.values()].sort((a, b) => compareIds(a.id, b.id))
  const candidates = originals.map((t) => {
    // a slug can coincide where the match keys differ ("Ω API" / "API"): keep ids unique all the same
    let id: string = t.id
    for (let n = 2; libraryIds.has(id); n++) id = `${t.id}~q${n}`
    return id === t.id ? t : { ...t, id: toolId(id) }
  })
  const added = uniquifyNames(candidates, taken)
  const byOriginalId = new Map<string, ToolSpec>()
  originals.forEach((t, i) => {
    const a = added[i]
    if (a !== undefined) byOriginalId.set(t.id, a)
  })
  const merged = queries.map((q) => ({
    ...q,
    apis: q.apis.map((a) => find(a.group, a.apiName, a.category) ?? byOriginalId.get(a.id) ?? a)
  }))
  return { tools: [...library, ...added], queries: merged, added: added.length, matched: matchedIds.size }
}

/**
 * The library entry of each relevant pair of a query: resolved through the query's own `api_list`
 * (which knows the category) and then the library; undefined when neither has it.
 */
export const resolveRelevant = (query: BenchmarkQuery, find: Matcher["find"]): ReadonlyArray<ToolSpec | undefined> =>
  query.relevant.map((r) => {
    const key = matchKey(r.tool, r.api)
    const own = query.apis.find((a) => matchKey(a.group, a.apiName) === key)
    return own !== undefined ? find(own.group, own.apiName, own.category) ?? own : find(r.tool, r.api)
  })
