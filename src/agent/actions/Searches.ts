/**
 * Search candidates: one per capability clause of the request (its capability words, and the whole clause as a
 * variant), and re-searches for a missing input (a seen tool whose required parameter names an entity id nothing
 * provides). Each with its candidate features. Pure.
 */
import type { JsonSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import type { Reading } from "./Reading.ts"
import { clauseQueries, countingWords, ofPhrases } from "./Request.ts"
import { clip01, cover, tokens } from "./Text.ts"
import { candidateWidth } from "./Types.ts"
import type { SearchCandidate, SpaceContext } from "./Types.ts"

/**
 * The phrases of a clause's capability words: the clause cut at each "of" that opens a new noun phrase ("the page
 * count | of the first | of the books with language" → "page count", "books with language"; "number of ratings" stays
 * whole), each kept when it has a content word that is not a counting word; none when the clause does not cut.
 */
export const clausePhrases = (bare: string): ReadonlyArray<string> => {
  const parts = ofPhrases(bare)
  if (parts.length < 2) return []
  const out: Array<string> = []
  for (const part of parts.map((p) => p.replace(/^(the|a|an)\s+/i, "").trim())) {
    const words = [...tokens(part)].filter((w) => !countingWords.has(w))
    if (words.length > 0 && !out.includes(part)) out.push(part)
  }
  return out.length < 2 ? [] : out
}

/** The entity types whose ids a tool's response carries (`x-entity` `<type>.id`), first item's first. */
const entitiesOf = (tool: ToolSpec | undefined): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (schema: JsonSchema | undefined, depth: number): void => {
    if (schema === undefined || depth > 5) return
    const e = schema["x-entity"]
    if (e !== undefined && /\.id$/.test(e)) {
      const noun = e.replace(/\.id$/, "").replace(/_/g, " ")
      if (!out.includes(noun)) out.push(noun)
    }
    walk(schema.items, depth + 1)
    for (const v of Object.values(schema.properties ?? {})) walk(v, depth + 1)
  }
  walk(tool?.response, 0)
  return out
}

/** At most this many search candidates a round (clauses first, then phrases, hops, providers, missing inputs). */
export const maxSearches = 24

/**
 * Pages of one query's ranking the space offers: a query searched this many times is no longer a candidate (asked
 * again, a query returns its next page — `Retriever.pageOf`; the student-space oracle looks ahead over as many).
 */
export const maxPages = 4

/** The search candidates of a round and their features. */
export const searchCandidates = (context: SpaceContext, r: Reading): { readonly searches: ReadonlyArray<SearchCandidate>; readonly features: ReadonlyArray<Float64Array> } => {
  const { clauses, clauseTokens, literals, history, seen, executionBegan, sortedTools, outputs } = r
  const searches: Array<SearchCandidate> = []
  const searchFeatures: Array<Float64Array> = []
  const searchAllowed = !(context.paradigm === "ExploreThenExecute" && executionBegan)
  if (!searchAllowed) return { searches, features: searchFeatures }
  const taken = new Set<string>()
  // a clause whose calls met a 400 / 404 (the wrong tool, or a wrong argument): worth searching again
  const clauseFailedHard = new Set<number>()
  for (const step of context.history) {
    for (const o of step.observations) {
      if (o.outcome._tag === "error" && seen.toolFailedHard.has(o.tool)) clauseFailedHard.add(seen.hits.get(o.tool)?.clause ?? -1)
    }
  }
  const push = (candidate: SearchCandidate, f: Float64Array): void => {
    const asked = seen.queries.get(candidate.query)
    if (taken.has(candidate.query) || searches.length >= maxSearches || (asked?.pages ?? 0) >= maxPages) return
    taken.add(candidate.query)
    const c = candidate.clause
    f[8] = candidate.reason === "phrase" ? 1 : 0
    f[9] = candidate.reason === "entity_hop" ? 1 : 0
    f[10] = candidate.reason === "provider" ? 1 : 0
    f[11] = clauseFailedHard.has(c) ? 1 : 0
    f[12] = c >= 0 ? cover(tokens(candidate.query), clauseTokens[c] as ReadonlySet<string>) : 0
    f[13] = asked !== undefined ? 1 : 0
    f[15] = (asked?.pages ?? 0) / maxPages
    f[16] = asked?.uncalled === true ? 1 : 0
    searches.push(candidate)
    searchFeatures.push(f)
  }
  const clauseBase = (i: number): Float64Array => {
    const f = new Float64Array(candidateWidth)
    f[0] = clip01((seen.searchedClauses.get(i) ?? 0) / 2)
    f[1] = seen.clauseSuccess.has(i) ? 1 : 0
    f[2] = seen.clauseAttempted.has(i) ? 1 : 0
    f[3] = literals.some((l) => l.clause === i) ? 1 : 0
    f[4] = i / Math.max(1, clauses.length - 1)
    return f
  }
  clauses.forEach((clause, i) => {
    const f = clauseBase(i)
    const { bare, full } = clauseQueries(clause)
    push({ slot: `s${i + 1}`, query: bare.length > 0 ? bare : full, clause: i, reason: "clause" }, f)
    if (bare.length > 0 && bare !== full) {
      const g = Float64Array.from(f)
      g[7] = 1
      push({ slot: `s${i + 1}_full`, query: full, clause: i, reason: "clause" }, g)
    }
  })
  // the clause's phrases: an attribute and the things it is of are often two tools (a list, then a detail)
  clauses.forEach((clause, i) => {
    clausePhrases(clauseQueries(clause).bare).forEach((phrase, k) => push({ slot: `s${i + 1}_p${k + 1}`, query: phrase, clause: i, reason: "phrase" }, clauseBase(i)))
  })
  // a quoted name with the noun before it ("the company \"X\"" → "search company by name"): the tool that finds it by name
  for (const lit of literals) {
    if (lit.kind !== "quoted") continue
    const before = (clauses[lit.clause] as string).slice(0, (clauses[lit.clause] as string).indexOf(`"${lit.value}"`)).trim().split(/\s+/)
    const noun = (before.at(-1) ?? "").toLowerCase().replace(/[^a-z0-9-]/g, "")
    if (noun.length < 3 || countingWords.has(noun) || !/^(the|a|an)$/i.test(before.at(-2) ?? "")) continue
    const f = clauseBase(lit.clause)
    f[14] = 1
    push({ slot: `s${lit.clause + 1}_n${searches.length + 1}`, query: `search ${noun} by name`, clause: lit.clause, reason: "phrase" }, f)
  }
  // the second hop: an output's entity type, with the words of its clause's phrases (`domain monthly visits`)
  const served = (tool: ToolSpec | undefined) => (tool === undefined ? -1 : (seen.hits.get(tool.name)?.clause ?? -1))
  for (const out of outputs) {
    const clause = served(out.tool)
    if (clause < 0) continue
    const bare = clauseQueries(clauses[clause] as string).bare
    const phrases = clausePhrases(bare)
    for (const noun of entitiesOf(out.tool).slice(0, 2)) {
      for (const phrase of phrases.length > 0 ? phrases : [bare]) {
        if (tokens(phrase).has([...tokens(noun)][0] ?? "")) continue
        const f = clauseBase(clause)
        f[5] = 1
        f[6] = 1
        push({ slot: `r${clause + 1}_h${searches.length + 1}`, query: `${noun} ${phrase}`, clause, reason: "entity_hop" }, f)
      }
    }
  }
  // a seen provider's other endpoints: the provider's name with the clause's phrases
  const providers = new Set<string>()
  for (const out of outputs) {
    const clause = served(out.tool)
    if (out.tool === undefined || clause < 0 || providers.has(`${out.tool.group}\u0000${clause}`)) continue
    providers.add(`${out.tool.group}\u0000${clause}`)
    const bare = clauseQueries(clauses[clause] as string).bare
    const phrases = clausePhrases(bare)
    for (const phrase of phrases.length > 0 ? phrases : [bare]) {
      const f = clauseBase(clause)
      f[5] = 1
      f[6] = 1
      push({ slot: `r${clause + 1}_v${searches.length + 1}`, query: `${out.tool.group} ${phrase}`, clause, reason: "provider" }, f)
    }
  }
  // re-searches for a missing input: a seen tool whose required parameter names an entity nothing provides
  const missing = new Set<string>()
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
      if (missing.has(query)) continue
      missing.add(query)
      const f = new Float64Array(candidateWidth)
      f[0] = seen.researched.has(query) ? 1 : 0
      f[1] = seen.clauseSuccess.has(hit.clause) ? 1 : 0
      f[2] = seen.toolFailedHard.has(tool.name) ? 1 : 0
      f[3] = literal !== undefined ? 1 : 0
      f[5] = 1
      f[6] = history.successes.length > 0 ? 1 : 0
      push({ slot: `r${hit.clause + 1}_${searches.length + 1}`, query, clause: hit.clause, reason: "missing_input" }, f)
    }
  }
  return { searches, features: searchFeatures }
}
