/**
 * Search candidates: one per capability clause of the request (its capability words, and the whole clause as a
 * variant), and re-searches for a missing input (a seen tool whose required parameter names an entity id nothing
 * provides). Each with its candidate features. Pure.
 */
import type { Reading } from "./Reading.ts"
import { clauseQueries } from "./Request.ts"
import { clip01 } from "./Text.ts"
import { candidateWidth } from "./Types.ts"
import type { SearchCandidate, SpaceContext } from "./Types.ts"

/** The search candidates of a round and their features. */
export const searchCandidates = (context: SpaceContext, r: Reading): { readonly searches: ReadonlyArray<SearchCandidate>; readonly features: ReadonlyArray<Float64Array> } => {
  const { clauses, literals, history, seen, executionBegan, sortedTools } = r
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
  return { searches, features: searchFeatures }
}
