/**
 * The learned policy's action space: from a round's context alone (request, history, seen tools — never the gold
 * task) the candidate searches, calls and answer facts, each a row of features, laid out for the turn distribution.
 * Pure and deterministic: the same context gives the same rows, so a trainer rebuilds a recorded step's space.
 */
import type { ToolCall } from "../domain/Call.ts"
import { callId, toolName } from "../domain/Ids.ts"
import type { CallId } from "../domain/Ids.ts"
import type { Json, JsonObject, JsonSchema } from "../domain/Json.ts"
import type { Plan } from "../domain/Plan.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { Paradigm, Step } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import { callKey } from "../math/CanonicalJson.ts"
import * as History from "../math/History.ts"
import { hash32 } from "../math/Random.ts"
import type { Choice, KindSlot, Layout } from "../math/TurnDistribution.ts"
import { defaultOptions, makeTokenizer } from "../retrieval/Tokenize.ts"
import * as JsonSchemaValidate from "../toolenv/JsonSchemaValidate.ts"
import { transientErrorKinds } from "../domain/Call.ts"

/** The action kinds a turn can take. */
export type Kind = "search" | "call" | "answer"

/** What the space is built from: the policy's context (the fields of `PolicyContext` it reads). */
export interface SpaceContext {
  readonly request: string
  readonly paradigm: Paradigm
  readonly round: number
  readonly maxRounds: number
  readonly controller: Step["controller"]
  readonly history: ReadonlyArray<Step>
  readonly tools: ReadonlyArray<ToolSpec>
}

/** Bounds of the enumeration (what keeps a round's matrix small). */
export interface SpaceOptions {
  /** Argument fillings per tool (best first, then variants). */
  readonly fillingsPerTool: number
  /** Answer facts per successful call, and in all. */
  readonly factsPerCall: number
  readonly factsTotal: number
  /** Array items looked at per array when enumerating facts and `$ref` sources. */
  readonly itemsPerArray: number
}

/** Defaults of the embedded policy. */
export const defaultSpaceOptions: SpaceOptions = { fillingsPerTool: 3, factsPerCall: 12, factsTotal: 40, itemsPerArray: 5 }

/** A search candidate: a capability clause of the request (or a re-search for a missing input). */
export interface SearchCandidate {
  readonly slot: string
  readonly query: string
  readonly clause: number
  readonly reason: "clause" | "missing_input"
}

/** Where one argument value came from. */
export type FillSource = "literal" | "enum" | "default" | "ref"

/** A call candidate: a seen tool with one argument filling. */
export interface CallCandidate {
  readonly tool: ToolSpec
  readonly arguments: JsonObject
  readonly sources: ReadonlyArray<FillSource>
  /** The clause the tool was retrieved for (-1: unknown). */
  readonly clause: number
}

/** An answer fact: one leaf of a successful observation. */
export interface FactCandidate {
  readonly callId: CallId
  readonly path: ReadonlyArray<string | number>
  readonly label: string
  readonly value: string
}

/** A round's action space. */
export interface Space {
  readonly layout: Layout
  /** rows × {@link width}, row-major. */
  readonly features: Float64Array
  /** The kind of each entry of `layout.kinds`. */
  readonly kinds: ReadonlyArray<Kind>
  readonly searches: ReadonlyArray<SearchCandidate>
  readonly calls: ReadonlyArray<CallCandidate>
  readonly facts: ReadonlyArray<FactCandidate>
  /** The first call id a new call may take (`c<n>`), and the ids already used. */
  readonly usedCallIds: ReadonlyArray<CallId>
  readonly clauses: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------------------------
// Feature layout: row type one-hot | context | candidate block.

const rowTypes = ["kind:search", "kind:call", "kind:answer", "plan", "search", "call", "fact"] as const
type RowType = typeof rowTypes[number]
const contextWidth = 20
const candidateWidth = 28

/** Width of a feature row. */
export const width = rowTypes.length + contextWidth + candidateWidth

const tokenizer = makeTokenizer(defaultOptions)
const tokenMemo = new Map<string, ReadonlySet<string>>()
/** The stemmed content words of a text, memoised (tool descriptions and payload keys repeat across rounds). */
const tokens = (text: string): ReadonlySet<string> => {
  const hit = tokenMemo.get(text)
  if (hit !== undefined) return hit
  const out = new Set(tokenizer.tokens(text))
  if (tokenMemo.size >= 200_000) tokenMemo.clear()
  tokenMemo.set(text, out)
  return out
}

/** The words of a payload leaf's own key (the last step of its path: `home_score` → home, score). */
const keyWordsOf = (path: ReadonlyArray<string | number>): ReadonlySet<string> => tokens(String(path.at(-1) ?? ""))

/** The clause whose words `text` covers best (-1 when it shares no word with any). */
const bestClause = (clauseTokens: ReadonlyArray<ReadonlySet<string>>, text: ReadonlySet<string>): number => {
  let best = -1
  let score = 0
  clauseTokens.forEach((c, i) => {
    const s = cover(c, text)
    if (s > score) {
      best = i
      score = s
    }
  })
  return best
}

/** Share of `a`'s tokens found in `b` (0 when `a` is empty). */
const cover = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  if (a.size === 0) return 0
  let n = 0
  for (const t of a) if (b.has(t)) n++
  return n / a.size
}

const clip01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x)

// ---------------------------------------------------------------------------------------------------------------
// The request: clauses and literals.

const openers = /^(hi!?|hello!?|quick question:|i need some help\.|for a report i'm writing:|can you help me out\?)\s*/i
const joiners = /^(also|in addition|and|plus|separately|at the same time|then|after that)\s*,?\s*/i

/**
 * The text with every `.`, `?` and `!` inside a quoted value masked (same length), except one that ends the quote
 * (`"Dr. No."` may end a sentence), so a split on the masked text never cuts a value like `"Acme Inc. Holdings"`.
 */
const maskQuoted = (text: string): string =>
  text.replace(/"[^"]*"/g, (quoted) => quoted.slice(0, -2).replace(/[.?!]/g, "_") + quoted.slice(-2))

/** The request split into capability clauses (sentences, without openers and joining words). */
export const clausesOf = (request: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  // sentence ends outside quotes: split on . ? ! followed by a space and a capital or a quote
  const text = request.replace(openers, "")
  const parts: Array<string> = []
  let from = 0
  for (const m of maskQuoted(text).matchAll(/(?<=[.?!]["”]?)\s+(?=["A-Z])/g)) {
    parts.push(text.slice(from, m.index))
    from = m.index + m[0].length
  }
  parts.push(text.slice(from))
  for (const part of parts) {
    const clause = part.replace(openers, "").replace(joiners, "").trim()
    if (clause.length > 0) out.push(clause)
  }
  return out.length > 0 ? out : [request.trim()]
}

/**
 * The search queries a clause gives: its capability words only (`bare`: quoted values — names, texts — pull in tools
 * that merely mention their words) and the whole clause (`full`), both without the closing punctuation.
 */
export const clauseQueries = (clause: string): { readonly bare: string; readonly full: string } => ({
  bare: clause.replace(/\s*"[^"]*"\s*/g, " ").replace(/[\s:,]+$/, "").replace(/[.?!]+$/, "").replace(/\s+/g, " ").trim(),
  full: clause.replace(/[.?!]+$/, "")
})

/** A literal value written in a clause, with the words just before it (what it is). */
export interface Literal {
  readonly value: string
  readonly kind: "quoted" | "number" | "date"
  readonly label: ReadonlySet<string>
  readonly clause: number
}

const numberWords: Readonly<Record<string, number>> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 }

/** Quoted strings, bare ISO dates (`2024-04-13`, what `format: date` parameters take) and bare numbers of every clause. */
export const literalsOf = (clauses: ReadonlyArray<string>): ReadonlyArray<Literal> => {
  const out: Array<Literal> = []
  clauses.forEach((clause, index) => {
    for (const m of clause.matchAll(/"([^"]+)"|(?<![\w.-])(\d{4}-\d{2}-\d{2})(?![\w-])|(?<![\w.-])(-?\d+(?:\.\d+)?)(?![\w-])/g)) {
      const before = clause.slice(0, m.index).split(/\s+/).slice(-4).join(" ")
      const value = m[1] ?? m[2] ?? m[3] ?? ""
      out.push({ value, kind: m[1] !== undefined ? "quoted" : m[2] !== undefined ? "date" : "number", label: tokens(before), clause: index })
    }
  })
  return out
}

/** How many items a clause asks for ("first three", "top 3"; default 1 for "the first of"). */
const requestedCount = (clause: string): number => {
  const m = clause.toLowerCase().match(/\b(?:first|top|latest|last)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b/)
  if (m === null) return /\b(list|all|which are|name)\b/i.test(clause) ? 3 : 1
  const word = m[1] as string
  return numberWords[word] ?? Number(word)
}

// ---------------------------------------------------------------------------------------------------------------
// The history, read for features.

interface Seen {
  /** tool → (clause, rank, normalised score, from a re-search) of its best hit. */
  readonly hits: ReadonlyMap<string, { readonly clause: number; readonly rank: number; readonly score: number; readonly research: boolean }>
  readonly searchedClauses: ReadonlyMap<number, number>
  readonly clauseSuccess: ReadonlySet<number>
  readonly clauseAttempted: ReadonlySet<number>
  readonly toolOk: ReadonlySet<string>
  readonly toolFailedHard: ReadonlySet<string>
  readonly settled: ReadonlySet<string>
  readonly transient: ReadonlySet<string>
  /** call ids whose output a later call consumed through a `$ref`. */
  readonly consumed: ReadonlySet<string>
  readonly researched: ReadonlySet<string>
}

const slotClause = (slot: string): { readonly clause: number; readonly research: boolean } => {
  const m = slot.match(/^(s|r)(\d+)/)
  return m === null ? { clause: -1, research: false } : { clause: Number(m[2]) - 1, research: m[1] === "r" }
}

/**
 * The clause a search served: by its slot when the slot is one of ours (`s<k>`, `r<k>_…`), else the clause its
 * query covers best (at least half of the query's words; -1 when none does, e.g. a search by a tool's own name).
 */
const clauseOfSearch = (slot: string, query: string, clauseTokens: ReadonlyArray<ReadonlySet<string>>): { readonly clause: number; readonly research: boolean } => {
  const own = slotClause(slot)
  if (own.clause >= 0 && own.clause < clauseTokens.length) return own
  const q = tokens(query)
  let best = -1
  let bestScore = 0.5
  clauseTokens.forEach((c, i) => {
    const score = cover(q, c)
    if (score > bestScore || (score === bestScore && best < 0)) {
      best = i
      bestScore = score
    }
  })
  return { clause: best, research: false }
}

const readHistory = (history: ReadonlyArray<Step>, clauseTokens: ReadonlyArray<ReadonlySet<string>>): Seen => {
  const hits = new Map<string, { clause: number; rank: number; score: number; research: boolean }>()
  const searchedClauses = new Map<number, number>()
  const clauseSuccess = new Set<number>()
  const clauseAttempted = new Set<number>()
  const toolOk = new Set<string>()
  const toolFailedHard = new Set<string>()
  const settled = new Set<string>()
  const transient = new Set<string>()
  const consumed = new Set<string>()
  const researched = new Set<string>()
  for (const step of history) {
    for (const search of step.searches) {
      const { clause, research } = clauseOfSearch(search.slot, search.query, clauseTokens)
      if (research) researched.add(search.query)
      else searchedClauses.set(clause, (searchedClauses.get(clause) ?? 0) + 1)
      const top = search.hits[0]?.score ?? 1
      search.hits.forEach((hit, rank) => {
        const known = hits.get(hit.tool)
        if (known === undefined || rank < known.rank) hits.set(hit.tool, { clause, rank, score: top > 0 ? hit.score / top : 0, research })
      })
    }
    for (const o of step.observations) {
      const clause = hits.get(o.tool)?.clause ?? -1
      clauseAttempted.add(clause)
      const key = callKey(o.tool, o.arguments)
      for (const ref of o.refs) consumed.add(ref)
      if (o.outcome._tag === "ok") {
        toolOk.add(o.tool)
        clauseSuccess.add(clause)
        settled.add(key)
        transient.delete(key)
      } else if (transientErrorKinds.has(o.outcome.error.kind)) {
        transient.add(key)
      } else {
        if (o.attempts > 0) settled.add(key)
        toolFailedHard.add(o.tool)
      }
    }
  }
  return { hits, searchedClauses, clauseSuccess, clauseAttempted, toolOk, toolFailedHard, settled, transient, consumed, researched }
}

// ---------------------------------------------------------------------------------------------------------------
// Argument fillings.

interface ValueOption {
  readonly value: Json
  readonly source: FillSource
  readonly match: number
  /** A literal of the tool's own clause. */
  readonly ownClause?: boolean
}

const paramTokens = (name: string, schema: JsonSchema): ReadonlySet<string> =>
  tokens(`${name} ${schema.description ?? ""} ${(schema["x-entity"] ?? "").replace(/[._]/g, " ")}`)

const typeFits = (schema: JsonSchema, value: string, kind: Literal["kind"]): boolean => {
  if (schema.type === "integer") return /^-?\d+$/.test(value)
  if (schema.type === "number") return /^-?\d+(\.\d+)?$/.test(value)
  if (schema.type === "boolean" || schema.type === "array" || schema.type === "object") return false
  if (schema.format === "date") return /^\d{4}-\d{2}-\d{2}$/.test(value)
  return kind === "quoted" || schema.type === undefined
}

/** Leaves of a payload (bounded): path and value. */
const leaves = (payload: Json, itemsPerArray: number, maxDepth = 5): ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly value: Json }> => {
  const out: Array<{ path: Array<string | number>; value: Json }> = []
  const walk = (value: Json, path: Array<string | number>, depth: number): void => {
    if (out.length >= 400) return
    if (Array.isArray(value)) {
      if (depth >= maxDepth) return
      value.slice(0, itemsPerArray).forEach((item, i) => walk(item, [...path, i], depth + 1))
    } else if (value !== null && typeof value === "object") {
      if (depth >= maxDepth) return
      for (const [k, v] of Object.entries(value)) walk(v as Json, [...path, k], depth + 1)
    } else if (value !== null) {
      out.push({ path, value })
    }
  }
  walk(payload, [], 0)
  return out
}

/** The response schema at a payload path (array indices step into `items`). */
const schemaAt = (schema: JsonSchema | undefined, path: ReadonlyArray<string | number>): JsonSchema | undefined => {
  let at = schema
  for (const part of path) {
    if (at === undefined) return undefined
    at = typeof part === "number" ? at.items : at.properties?.[part]
  }
  return at
}

/** A field of an earlier successful output that a `$ref` may point at. */
interface RefSource {
  readonly ref: string
  readonly key: string
  readonly keyTokens: ReadonlySet<string>
  readonly entity: string | undefined
  readonly later: boolean
}

const refSources = (
  outputs: ReadonlyArray<{ readonly id: string; readonly tool: ToolSpec | undefined; readonly payload: Json }>,
  itemsPerArray: number
): ReadonlyArray<RefSource> =>
  outputs.flatMap((src) =>
    leaves(src.payload, itemsPerArray).flatMap((leaf): Array<RefSource> => {
      const key = leaf.path[leaf.path.length - 1]
      if (typeof key !== "string" || typeof leaf.value === "boolean") return []
      return [{
        ref: [src.id, ...leaf.path].join("."),
        key,
        keyTokens: tokens(key),
        entity: schemaAt(src.tool?.response, leaf.path)?.["x-entity"],
        later: leaf.path.some((p) => typeof p === "number" && p > 0)
      }]
    })
  )

const valueOptions = (
  name: string,
  schema: JsonSchema,
  literals: ReadonlyArray<Literal>,
  clause: number,
  sources: ReadonlyArray<RefSource>
): ReadonlyArray<ValueOption> => {
  const want = paramTokens(name, schema)
  const out: Array<ValueOption> = []
  const entity = schema["x-entity"]
  for (const lit of literals) {
    if (!typeFits(schema, lit.value, lit.kind)) continue
    if (schema.enum !== undefined && !schema.enum.some((e) => String(e) === lit.value)) continue
    const base = cover(lit.label, want)
    // a literal of the tool's own clause is what the clause asks the tool for; another clause's is a distractor
    const sameClause = lit.clause === clause ? 0.5 : clause < 0 ? 0.25 : -0.25
    const value: Json = schema.type === "integer" || schema.type === "number" ? Number(lit.value) : lit.value
    out.push({ value, source: "literal", match: clip01(0.5 * base + sameClause + (schema.enum !== undefined ? 0.5 : 0)), ownClause: lit.clause === clause })
  }
  const nameTokens = tokens(name)
  for (const src of sources) {
    // both sides annotated with different entities: a field of another kind of thing, whatever its name
    if (entity !== undefined && src.entity !== undefined && src.entity !== entity) continue
    const entityMatch = entity !== undefined && src.entity === entity ? 1 : 0
    const nameMatch = src.key === name ? 1 : cover(nameTokens, src.keyTokens)
    const score = Math.max(entityMatch, 0.8 * nameMatch)
    if (score < 0.5) continue
    // the first item of an array is what "the first of ..." means; later items are weaker
    out.push({ value: { $ref: src.ref }, source: "ref", match: clip01(score - (src.later ? 0.3 : 0)) })
  }
  if (schema.enum !== undefined && schema.enum.length > 0 && !out.some((o) => o.source === "literal")) {
    out.push({ value: schema.enum[0] as Json, source: "enum", match: 0 })
  }
  if (schema.default !== undefined) out.push({ value: schema.default, source: "default", match: 0.1 })
  out.sort((a, b) => b.match - a.match)
  // distinct values, best first
  const seen = new Set<string>()
  return out.filter((o) => {
    const k = JSON.stringify(o.value)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  }).slice(0, 4)
}

interface Filling {
  /** A parameter naming an entity id (`x-entity` `*.id`) got a request literal (a name, usually: a 404). */
  readonly idByLiteral: boolean
  /** Literals taken from another clause than the tool's own. */
  readonly foreignLiterals: number
  readonly arguments: JsonObject
  readonly sources: ReadonlyArray<FillSource>
  readonly matches: ReadonlyArray<number>
  readonly filled: number
  readonly variant: number
}

const fillingsFor = (
  tool: ToolSpec,
  literals: ReadonlyArray<Literal>,
  clause: number,
  sources: ReadonlyArray<RefSource>,
  options: SpaceOptions
): ReadonlyArray<Filling> => {
  const required = tool.parameters.required
  const perParam = required.map((name) => valueOptions(name, tool.parameters.properties[name] ?? {}, literals, clause, sources))
  // optional parameters only when a request literal fits them well: one of their enum values (a filter the
  // request names), or a literal whose words name the parameter
  const optional: Array<[string, ValueOption]> = []
  const usedByRequired = new Set(perParam.map((o) => JSON.stringify(o[0]?.value)))
  for (const [name, schema] of Object.entries(tool.parameters.properties)) {
    if (required.includes(name)) continue
    const lit = valueOptions(name, schema, literals, clause, []).find((o) => o.source === "literal" && (schema.enum !== undefined || o.match >= 0.75))
    if (lit !== undefined && !usedByRequired.has(JSON.stringify(lit.value))) optional.push([name, lit])
  }
  const build = (pick: ReadonlyArray<number>, variant: number): Filling => {
    const args: Record<string, Json> = {}
    const srcs: Array<FillSource> = []
    const matches: Array<number> = []
    let filled = 0
    let idByLiteral = false
    let foreign = 0
    required.forEach((name, i) => {
      const option = perParam[i]?.[pick[i] ?? 0]
      if (option === undefined) return
      if (option.source === "literal" && /\.id$/.test(tool.parameters.properties[name]?.["x-entity"] ?? "")) idByLiteral = true
      if (option.source === "literal" && option.ownClause === false) foreign++
      args[name] = option.value
      srcs.push(option.source)
      matches.push(option.match)
      filled++
    })
    for (const [name, option] of optional) {
      args[name] = option.value
      srcs.push(option.source)
      matches.push(option.match)
    }
    return { idByLiteral, foreignLiterals: foreign, arguments: args, sources: srcs, matches, filled, variant }
  }
  const out: Array<Filling> = [build(required.map(() => 0), 0)]
  // variants: one parameter at a time moved to its next option
  for (let i = 0; i < required.length && out.length < options.fillingsPerTool; i++) {
    for (let k = 1; k < (perParam[i]?.length ?? 0) && out.length < options.fillingsPerTool; k++) {
      out.push(build(required.map((_, j) => (j === i ? k : 0)), out.length))
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------------------------
// Building the space.

const idLike = (key: string): boolean => /(^|_)id$|Id$|^id$|uuid|_code$/.test(key)
const nameLike = (key: string): boolean => /name|title|headline|label/i.test(key)

const renderLabel = (path: ReadonlyArray<string | number>): string =>
  path.filter((p): p is string => typeof p === "string").slice(-2).join(" ").replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").toLowerCase()

/** Builds a round's action space from the policy's context. */
export const build = (context: SpaceContext, options: SpaceOptions = defaultSpaceOptions): Space => {
  const clauses = clausesOf(context.request)
  const clauseTokens = clauses.map(tokens)
  const requestTokens = tokens(context.request)
  const literals = literalsOf(clauses)
  const history = History.of(context.history)
  const seen = readHistory(context.history, clauseTokens)
  const last = context.history[context.history.length - 1]
  const single = context.paradigm === "ReAct" || context.paradigm === "DFSDT"
  const executionBegan = context.history.some((s) => s.observations.some((o) => o.attempts > 0))
  const byName = new Map(context.tools.map((t) => [t.name as string, t]))
  // by name: the space must not depend on the order the runtime lists the tools in (a rebuilt context may differ)
  const sortedTools = [...context.tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

  // --- context features
  const ctx = new Float64Array(contextWidth)
  const controllers = ["Need", "May", "No", "Answer"] as const
  ctx[0] = context.round / Math.max(1, context.maxRounds)
  ctx[1] = context.round >= context.maxRounds - 1 ? 1 : 0
  controllers.forEach((c, i) => (ctx[2 + i] = context.controller === c ? 1 : 0))
  const covered = clauses.filter((_, i) => seen.clauseSuccess.has(i)).length
  ctx[6] = covered / clauses.length
  ctx[7] = clauses.filter((_, i) => seen.searchedClauses.has(i)).length / clauses.length
  ctx[8] = last?.observations.some((o) => o.outcome._tag === "ok") === true ? 1 : 0
  ctx[9] = last?.observations.some((o) => o.outcome._tag === "error" && transientErrorKinds.has(o.outcome.error.kind)) === true ? 1 : 0
  ctx[10] = last?.observations.some((o) => o.outcome._tag === "error" && !transientErrorKinds.has(o.outcome.error.kind)) === true ? 1 : 0
  ctx[11] = (last?.searches.length ?? 0) > 0 ? 1 : 0
  ctx[12] = (last?.turn?.calls.length ?? 0) > 0 ? 1 : 0
  ctx[13] = clip01(context.tools.length / 12)
  ctx[14] = clip01(history.successes.length / 6)
  ctx[15] = history.latestPlan !== undefined ? 1 : 0
  ctx[16] = clip01(clauses.length / 4)
  ctx[17] = single ? 1 : 0
  ctx[18] = context.paradigm === "ExploreThenExecute" ? 1 : 0
  ctx[19] = last === undefined ? 1 : last.turn === undefined ? 1 : 0

  // --- search candidates
  const searches: Array<SearchCandidate> = []
  const searchFeatures: Array<Float64Array> = []
  const searchAllowed = !(context.paradigm === "ExploreThenExecute" && executionBegan)
  if (searchAllowed) {
    clauses.forEach((clause, i) => {
      const f = new Float64Array(candidateWidth)
      f[0] = clip01((seen.searchedClauses.get(i) ?? 0) / 2)
      f[1] = seen.clauseSuccess.has(i) ? 1 : 0
      f[2] = seen.clauseAttempted.has(i) ? 1 : 0
      f[3] = literals.some((l) => l.clause === i) ? 1 : 0
      f[4] = i / Math.max(1, clauses.length - 1)
      f[5] = 0
      const { bare, full } = clauseQueries(clause)
      searches.push({ slot: `s${i + 1}`, query: bare.length > 0 ? bare : full, clause: i, reason: "clause" })
      searchFeatures.push(f)
      if (bare.length > 0 && bare !== full) {
        const g = Float64Array.from(f)
        g[7] = 1
        searches.push({ slot: `s${i + 1}_full`, query: full, clause: i, reason: "clause" })
        searchFeatures.push(g)
      }
    })
    // re-searches for a missing input: a seen tool whose required parameter names an entity nothing provides
    const asked = new Set<string>()
    for (const tool of sortedTools) {
      const hit = seen.hits.get(tool.name)
      if (hit === undefined || hit.research) continue
      for (const name of tool.parameters.required) {
        const schema = tool.parameters.properties[name] ?? {}
        const entity = schema["x-entity"]
        if (entity === undefined || !/\.id$/.test(entity)) continue
        const noun = entity.replace(/\.id$/, "").replace(/_/g, " ")
        const literal = literals.find((l) => l.clause === hit.clause && l.kind === "quoted")
        const query = `search ${noun} by name${literal !== undefined ? ` ${literal.value}` : ""}`
        if (asked.has(query) || searches.length >= clauses.length + 6) continue
        asked.add(query)
        const f = new Float64Array(candidateWidth)
        f[0] = seen.researched.has(query) ? 1 : 0
        f[1] = seen.clauseSuccess.has(hit.clause) ? 1 : 0
        f[2] = seen.toolFailedHard.has(tool.name) ? 1 : 0
        f[3] = literal !== undefined ? 1 : 0
        f[5] = 1
        f[6] = history.successes.length > 0 ? 1 : 0
        searches.push({ slot: `r${hit.clause + 1}_${searches.length + 1}`, query, clause: hit.clause, reason: "missing_input" })
        searchFeatures.push(f)
      }
    }
  }

  // --- call candidates
  const outputs = [...history.outputs.entries()].map(([id, payload]) => {
    const tool = history.successes.find((s) => s.id === id)?.tool
    return { id, tool: tool === undefined ? undefined : byName.get(tool), payload }
  })
  const sources = refSources(outputs, options.itemsPerArray)
  const calls: Array<CallCandidate> = []
  const callFeatures: Array<Float64Array> = []
  for (const tool of sortedTools) {
    if (!history.retrieved.has(tool.name)) continue
    const hit = seen.hits.get(tool.name)
    const clause = hit?.clause ?? -1
    const toolTokens = tokens(`${tool.name.replace(/_for_.*$/, "")} ${tool.description}`)
    const overlap = clause >= 0 ? cover(clauseTokens[clause] as ReadonlySet<string>, toolTokens) : cover(requestTokens, toolTokens)
    for (const filling of fillingsFor(tool, literals, clause, sources, options)) {
      const key = callKey(tool.name, filling.arguments)
      const required = tool.parameters.required.length
      const n = Math.max(1, filling.sources.length)
      const f = new Float64Array(candidateWidth)
      const rank = hit?.rank ?? 3
      if (rank < 3) f[rank] = 1
      f[3] = hit?.score ?? 0
      f[4] = overlap
      f[5] = required === 0 ? 1 : filling.filled / required
      f[6] = clip01(required / 4)
      f[7] = filling.sources.filter((s) => s === "literal").length / n
      f[8] = filling.sources.filter((s) => s === "ref").length / n
      f[9] = filling.sources.filter((s) => s === "enum" || s === "default").length / n
      f[10] = filling.matches.length === 0 ? 1 : filling.matches.reduce((a, b) => a + b, 0) / filling.matches.length
      f[11] = filling.matches.length === 0 ? 1 : Math.min(...filling.matches)
      f[12] = JsonSchemaValidate.validateArguments(tool, resolvePreview(filling.arguments, history.outputs)).ok ? 1 : 0
      f[13] = seen.settled.has(key) ? 1 : 0
      f[14] = seen.transient.has(key) ? 1 : 0
      f[15] = seen.toolFailedHard.has(tool.name) ? 1 : 0
      f[16] = seen.clauseSuccess.has(clause) ? 1 : 0
      f[17] = seen.toolOk.has(tool.name) ? 1 : 0
      f[18] = filling.variant / Math.max(1, options.fillingsPerTool - 1)
      f[19] = hit?.research === true ? 1 : 0
      f[20] = clause < 0 ? 1 : 0
      f[21] = required === 0 ? 1 : 0
      f[22] = literals.some((l) => l.clause === clause) ? 1 : 0
      f[23] = filling.idByLiteral ? 1 : 0
      f[24] = n === 0 ? 0 : filling.foreignLiterals / n
      calls.push({ tool, arguments: filling.arguments, sources: filling.sources, clause })
      callFeatures.push(f)
    }
  }

  // --- answer facts
  const facts: Array<FactCandidate> = []
  const factFeatures: Array<Float64Array> = []
  for (const out of outputs) {
    if (facts.length >= options.factsTotal) break
    const found = out.tool === undefined ? -1 : (seen.hits.get(out.tool.name)?.clause ?? -1)
    // a tool found by a search of no clause: the clause its documentation matches best
    const clause = found >= 0 || out.tool === undefined ? found : bestClause(clauseTokens, tokens(`${out.tool.name.replace(/_for_.*$/, "")} ${out.tool.description}`))
    const cTokens = clause >= 0 ? (clauseTokens[clause] as ReadonlySet<string>) : requestTokens
    const count = clause >= 0 ? requestedCount(clauses[clause] as string) : 1
    let taken = 0
    const all = leaves(out.payload, options.itemsPerArray)
    // how well the best leaf of this call names what its clause asks (a leaf matching as well is a likely answer)
    const leafCover = all.map((leaf) => cover(keyWordsOf(leaf.path), cTokens))
    const bestCover = Math.max(0, ...leafCover)
    // each list item's display field: its first string leaf that is not an id (a name, a title, a post's text)
    const display = new Set<number>()
    const itemsSeen = new Set<string>()
    all.forEach((leaf, li) => {
      const at = leaf.path.findIndex((p) => typeof p === "number")
      if (at < 0 || typeof leaf.value !== "string" || idLike(String(leaf.path.at(-1) ?? ""))) return
      const item = leaf.path.slice(0, at + 1).join(".")
      if (itemsSeen.has(item)) return
      itemsSeen.add(item)
      display.add(li)
    })
    for (const [li, leaf] of all.entries()) {
      if (taken >= options.factsPerCall || facts.length >= options.factsTotal) break
      const key = String(leaf.path[leaf.path.length - 1] ?? "")
      const value = String(leaf.value)
      const keyTokens = tokens(leaf.path.filter((p) => typeof p === "string").join(" "))
      const leafTokens = keyWordsOf(leaf.path)
      const index = leaf.path.find((p): p is number => typeof p === "number")
      const f = new Float64Array(candidateWidth)
      f[0] = cover(keyTokens, cTokens)
      f[1] = cover(keyTokens, requestTokens)
      f[2] = idLike(key) ? 1 : 0
      f[3] = nameLike(key) ? 1 : 0
      f[4] = typeof leaf.value === "number" ? 1 : 0
      f[5] = index === undefined ? 0 : clip01(index / 4)
      f[6] = index === undefined || index < count ? 1 : 0
      f[7] = clip01(leaf.path.length / 5)
      f[8] = context.request.includes(value) ? 1 : 0
      f[9] = index === undefined ? 0 : 1
      f[10] = seen.consumed.has(out.id) ? 1 : 0
      f[11] = clip01(value.length / 60)
      f[12] = taken / options.factsPerCall
      f[13] = leafCover[li] as number
      f[14] = leafTokens.size > 0 && cover(leafTokens, cTokens) === 1 ? 1 : 0
      f[15] = bestCover > 0 && leafCover[li] === bestCover ? 1 : 0
      f[16] = typeof leaf.value === "boolean" ? 1 : 0
      f[17] = cover(cTokens, leafTokens)
      f[18] = leafTokens.size > 0 && cover(leafTokens, requestTokens) === 1 ? 1 : 0
      // a list question is answered by its items' names, a question about one thing by the attribute it names
      f[19] = count > 1 ? 1 : 0
      f[20] = count > 1 && display.has(li) && index !== undefined && index < count && !context.request.includes(value) ? 1 : 0
      f[21] = count <= 1 && f[15] === 1 && f[13] > 0 ? 1 : 0
      f[22] = display.has(li) ? 1 : 0
      facts.push({ callId: out.id as CallId, path: leaf.path, label: renderLabel(leaf.path), value })
      factFeatures.push(f)
      taken++
    }
  }

  // --- layout: kind rows, the plan row, then candidate rows
  const kinds: Array<Kind> = []
  if (searches.length > 0 && context.controller !== "Answer") kinds.push("search")
  if (calls.length > 0 && context.controller !== "Answer") kinds.push("call")
  kinds.push("answer")
  const planRow = kinds.length
  const kindRows = kinds.length + 1
  const groups: Record<Kind, ReadonlyArray<Float64Array>> = { search: searchFeatures, call: callFeatures, answer: factFeatures }
  const typeOf: Record<Kind, RowType> = { search: "search", call: "call", answer: "fact" }
  let next = kindRows
  const slots: Array<KindSlot> = kinds.map((kind, row) => {
    const count = groups[kind].length
    const slot: KindSlot = {
      row,
      start: next,
      end: next + count,
      mode: count === 0 ? "none" : single && kind !== "answer" ? "one" : "subset",
      plan: kind !== "answer"
    }
    next += count
    return slot
  })
  const rows = next
  const features = new Float64Array(rows * width)
  const put = (row: number, type: RowType, candidate?: Float64Array): void => {
    const base = row * width
    features[base + rowTypes.indexOf(type)] = 1
    features.set(ctx, base + rowTypes.length)
    if (candidate !== undefined) features.set(candidate, base + rowTypes.length + contextWidth)
  }
  kinds.forEach((kind, row) => put(row, `kind:${kind}` as RowType))
  put(planRow, "plan")
  slots.forEach((slot, i) => {
    const kind = kinds[i] as Kind
    groups[kind].forEach((f, j) => put(slot.start + j, typeOf[kind], f))
  })
  return {
    layout: { kinds: slots, planRow, rows },
    features,
    kinds,
    searches: kinds.includes("search") ? searches : [],
    calls: kinds.includes("call") ? calls : [],
    facts,
    usedCallIds: history.callIds,
    clauses
  }
}

/** Arguments with every `$ref` replaced by the value it points at (for a validity feature; unresolved refs stay). */
export const resolvePreview = (args: JsonObject, outputs: ReadonlyMap<string, Json>): JsonObject => {
  const out: Record<string, Json> = {}
  for (const [k, v] of Object.entries(args)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v) && typeof (v as JsonObject)["$ref"] === "string") {
      const [id, ...path] = ((v as JsonObject)["$ref"] as string).split(".")
      let at: Json | undefined = outputs.get(id ?? "")
      for (const p of path) {
        if (at === undefined || at === null || typeof at !== "object") {
          at = undefined
          break
        }
        at = Array.isArray(at) ? at[Number(p)] : (at as JsonObject)[p]
      }
      out[k] = at === undefined ? v : at
    } else {
      out[k] = v
    }
  }
  return out
}

/** A digest of the space's feature matrix and layout (recorded with a decision; a rebuilt space must match it). */
export const digest = (space: Space): string => {
  let h = hash32(JSON.stringify(space.layout))
  const bytes = new Uint8Array(space.features.buffer, space.features.byteOffset, space.features.byteLength)
  // hash32 over a string of the bytes in chunks keeps it pure and fast enough for ~10^4 floats
  for (let i = 0; i < bytes.length; i += 4096) h = hash32(String.fromCharCode(...bytes.subarray(i, i + 4096)), h)
  return h.toString(16).padStart(8, "0")
}

/** Fresh call ids for `n` new calls: `c<k>` with k counting on from the ids used so far, skipping any taken. */
const freshIds = (used: ReadonlyArray<CallId>, n: number): ReadonlyArray<CallId> => {
  const taken = new Set<string>(used)
  const out: Array<CallId> = []
  let k = used.length + 1
  while (out.length < n) {
    const id = `c${k++}`
    if (!taken.has(id)) out.push(callId(id))
  }
  return out
}

/** The facts chosen for an answer, as the answer text. */
export const renderAnswer = (facts: ReadonlyArray<FactCandidate>): string =>
  facts.length === 0
    ? "I could not get the information from the tools: every call I could make failed or returned nothing usable."
    : `Here is what the tools returned. ${facts.map((f) => `${f.label}: ${f.value}`).join("; ")}.`

/** The ParaAct turn a choice stands for. */
export const toTurn = (space: Space, choice: Choice): Turn => {
  const slot = space.layout.kinds[choice.kind] as KindSlot
  const kind = space.kinds[choice.kind] as Kind
  const picked = choice.selected.map((row) => row - slot.start)
  switch (kind) {
    case "search": {
      const searches = picked.map((i) => space.searches[i] as SearchCandidate)
      const plan: Plan | undefined = choice.plan
        ? { nodes: searches.map((s, i) => ({ id: callId(`p${i + 1}_${s.slot}`), slot: s.query, deps: [] })) }
        : undefined
      return {
        think: `Searching for ${searches.length} capability slot(s).`,
        ...(plan !== undefined ? { plan } : {}),
        searches: searches.map((s) => ({ slot: s.slot, query: s.query })),
        calls: []
      }
    }
    case "call": {
      const candidates = picked.map((i) => space.calls[i] as CallCandidate)
      const ids = freshIds(space.usedCallIds, candidates.length)
      const calls: Array<ToolCall> = candidates.map((c, i) => ({ id: ids[i] as CallId, tool: toolName(c.tool.name), arguments: c.arguments }))
      const plan: Plan | undefined = choice.plan
        ? { nodes: calls.map((c, i) => ({ id: c.id, tool: c.tool, slot: space.clauses[candidates[i]?.clause ?? -1] ?? c.tool, deps: [] })) }
        : undefined
      return {
        think: `Running ${calls.length} independent call(s).`,
        ...(plan !== undefined ? { plan } : {}),
        searches: [],
        calls
      }
    }
    case "answer": {
      const facts = picked.map((i) => space.facts[i] as FactCandidate)
      return { think: "Answering from the observations.", searches: [], calls: [], answer: renderAnswer(facts) }
    }
  }
}

/**
 * Whether a (lower-case) text states a value: the value occurs not inside a longer word or number, so "3" is not
 * stated by "2024-04-13" nor "1" by "11.2" (a plain substring test credited an answer with every short number).
 */
const states = (text: string, value: string): boolean => {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return new RegExp(`(?<![\\p{L}\\p{N}_]|\\p{N}[.,:-])${escaped}(?![\\p{L}\\p{N}_]|[.,:-]\\p{N})`, "u").test(text)
}

/**
 * Whether the values of an answer's part state a fact: its value as a whole word or number; for a yes/no value
 * (`true` / `false`, which many facts share) also every word of its key in the part (`valid format: true`).
 */
const statesFact = (values: string, fact: FactCandidate, label: string): boolean => {
  const value = fact.value.toLowerCase()
  if (!states(values, value)) return false
  if (value !== "true" && value !== "false") return true
  const key = keyWordsOf(fact.path)
  return key.size > 0 && cover(key, tokens(`${label} ${values}`)) === 1
}

/**
 * The facts an answer states, part by part (`;` or a line ends a part; a part reads `label: values`, and only its
 * values count — a label repeats the request's words and names). A value stated selects the facts of that value;
 * when several facts share it (a score of 4 and a rank of 4), those whose key the label names best are the ones
 * meant, and all of them only when the label names none.
 */
const answerRows = (facts: ReadonlyArray<FactCandidate>, text: string): ReadonlyArray<number> => {
  const rows = new Set<number>()
  for (const part of text.split(/[;\n]/)) {
    const colon = part.lastIndexOf(": ")
    const label = colon < 0 ? "" : part.slice(0, colon)
    const values = colon < 0 ? part : part.slice(colon + 2)
    const byValue = new Map<string, Array<number>>()
    facts.forEach((f, i) => {
      if (f.value.length > 0 && statesFact(values, f, label)) byValue.set(f.value, [...(byValue.get(f.value) ?? []), i])
    })
    const labelTokens = tokens(label)
    for (const matches of byValue.values()) {
      const named = matches.map((i) => cover(keyWordsOf((facts[i] as FactCandidate).path), labelTokens))
      const best = Math.max(...named)
      matches.forEach((i, k) => {
        if (best === 0 || named[k] === best) rows.add(i)
      })
    }
  }
  return [...rows].sort((a, b) => a - b)
}

/** How a recorded turn maps onto the space: the choice, and what of the turn the space cannot express. */
export interface Projection {
  readonly choice: Choice | undefined
  /** Actions of the turn with no candidate (labelled `search:<query>`, `call:<tool>`, `answer`, `mixed`). */
  readonly dropped: ReadonlyArray<string>
  /** Actions of the turn in all. */
  readonly actions: number
}

/**
 * Projects a recorded turn (a teacher's) onto the space: a search onto the clause candidate its query covers best
 * (at least half of the query's words), a call onto the candidate with the same tool and the same arguments, an
 * answer onto the facts whose values it states; a turn mixing kinds keeps its first kind's actions. Two actions
 * landing on one candidate keep one: the other counts as dropped, so a projection without drops replays every action.
 */
export const project = (space: Space, turn: Turn): Projection => {
  const kindIndex = (kind: Kind) => space.kinds.indexOf(kind)
  const plan = turn.plan !== undefined
  if (turn.answer !== undefined) {
    const k = kindIndex("answer")
    const slot = space.layout.kinds[k] as KindSlot
    const text = turn.answer.toLowerCase()
    const selected = answerRows(space.facts, text).map((i) => slot.start + i)
    if (slot.mode === "none") return { choice: { kind: k, selected: [], plan: false }, dropped: [], actions: 1 }
    return selected.length === 0
      ? { choice: undefined, dropped: ["answer"], actions: 1 }
      : { choice: { kind: k, selected, plan: false }, dropped: [], actions: 1 }
  }
  const dropped: Array<string> = []
  if (turn.searches.length > 0) {
    const k = kindIndex("search")
    const mixed = turn.calls.map((c) => `call:${c.tool}`)
    if (k < 0) return { choice: undefined, dropped: [...turn.searches.map((s) => `search:${s.query}`), ...mixed], actions: turn.searches.length + turn.calls.length }
    const slot = space.layout.kinds[k] as KindSlot
    const rows = new Set<number>()
    for (const s of turn.searches) {
      const q = tokens(s.query)
      let best = -1
      let bestScore = 0.5
      space.searches.forEach((c, i) => {
        const score = cover(q, tokens(c.query))
        if (score >= bestScore && (best < 0 || score > bestScore)) {
          best = i
          bestScore = score
        }
      })
      // a second search landing on a candidate already taken is not expressed either (the replay has one)
      if (best < 0 || rows.has(slot.start + best)) dropped.push(`search:${s.query}`)
      else rows.add(slot.start + best)
    }
    dropped.push(...mixed)
    const selected = [...rows].sort((a, b) => a - b)
    const fits = slot.mode !== "one" || selected.length === 1
    return {
      choice: selected.length > 0 && fits ? { kind: k, selected, plan } : undefined,
      dropped: fits ? dropped : [...dropped, ...selected.slice(1).map((r) => `search:${space.searches[r - slot.start]?.query}`)],
      actions: turn.searches.length + turn.calls.length
    }
  }
  const k = kindIndex("call")
  if (k < 0) return { choice: undefined, dropped: turn.calls.map((c) => `call:${c.tool}`), actions: turn.calls.length }
  const slot = space.layout.kinds[k] as KindSlot
  const rows = new Set<number>()
  for (const call of turn.calls) {
    const key = callKey(call.tool, call.arguments)
    const i = space.calls.findIndex((c) => c.tool.name === call.tool && callKey(c.tool.name, c.arguments) === key)
    if (i < 0 || rows.has(slot.start + i)) dropped.push(`call:${call.tool}`)
    else rows.add(slot.start + i)
  }
  const selected = [...rows].sort((a, b) => a - b)
  const fits = slot.mode !== "one" || selected.length === 1
  return {
    choice: selected.length > 0 && fits ? { kind: k, selected, plan } : undefined,
    dropped,
    actions: turn.calls.length
  }
}
