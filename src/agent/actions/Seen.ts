/**
 * The history, read for the action space's features: what each search found (per tool: its clause, rank, score; per
 * query: the pages searched and whether a tool it brought is still uncalled),
 * which clauses were searched, attempted and succeeded, which calls settled, failed or failed transiently, and which
 * outputs a later call consumed. Pure.
 */
import { transientErrorKinds } from "../../domain/Call.ts"
import type { JsonObject } from "../../domain/Json.ts"
import type { Step } from "../../domain/Trajectory.ts"
import { callKey } from "../../math/CanonicalJson.ts"
import { defaultTopK } from "../../retrieval/Retriever.ts"
import { cover, tokens } from "./Text.ts"


export interface Seen {
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
  /** query → how many pages of it were searched, and whether a tool it brought is not yet called. */
  readonly queries: ReadonlyMap<string, { readonly pages: number; readonly uncalled: boolean }>
  /** The scalar argument values of the successful calls (as strings): a request literal among them has been served. */
  readonly servedValues: ReadonlySet<string>
  /** The operations of the successful calls ({@link operationKey}). */
  readonly operations: ReadonlySet<string>
}

/**
 * What a call does, whichever provider serves it: the stemmed content words of the tool's name without its provider
 * suffix (`musical_key_songs_for_rapid_song` and `songs_by_musical_key_for_ultra_tune` both give key, music, song),
 * and the argument values as a multiset (names differ between providers: `key`, `keyFilter`). Calls with one key ask
 * the same thing of the world.
 */
export const operationKey = (tool: string, args: JsonObject): string => {
  const words = [...tokens(tool.replace(/_for_.*$/, "").replace(/_/g, " "))].sort().join(" ")
  const values = Object.values(args).map((v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v))).sort()
  return `${words}|${JSON.stringify(values)}`
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

export const readHistory = (history: ReadonlyArray<Step>, clauseTokens: ReadonlyArray<ReadonlySet<string>>): Seen => {
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
  const servedValues = new Set<string>()
  const operations = new Set<string>()
  // per query: its first page's top score (a later page's scores are normalised by it), pages searched, tools brought
  const byQuery = new Map<string, { top: number; pages: number; tools: Set<string> }>()
  const called = new Set<string>()
  for (const step of history) {
    for (const search of step.searches) {
      const { clause, research } = clauseOfSearch(search.slot, search.query, clauseTokens)
      if (research) researched.add(search.query)
      else searchedClauses.set(clause, (searchedClauses.get(clause) ?? 0) + 1)
      const known = byQuery.get(search.query)
      const query = known ?? { top: search.hits[0]?.score ?? 1, pages: 0, tools: new Set<string>() }
      query.pages += 1
      byQuery.set(search.query, query)
      // a follow-up page's hits rank after the earlier pages' (page p starts at rank (p − 1)·k, k the default top-k the
      // policy acts under)
      const offset = ((search.page ?? 1) - 1) * defaultTopK
      const top = query.top
      search.hits.forEach((hit, i) => {
        const rank = offset + i
        query.tools.add(hit.tool)
        const best = hits.get(hit.tool)
        if (best === undefined || rank < best.rank) hits.set(hit.tool, { clause, rank, score: top > 0 ? hit.score / top : 0, research })
      })
    }
    for (const o of step.observations) {
      called.add(o.tool)
      const clause = hits.get(o.tool)?.clause ?? -1
      clauseAttempted.add(clause)
      const key = callKey(o.tool, o.arguments)
      for (const ref of o.refs) consumed.add(ref)
      if (o.outcome._tag === "ok") {
        toolOk.add(o.tool)
        clauseSuccess.add(clause)
        for (const v of Object.values(o.arguments)) if (v !== null && typeof v !== "object") servedValues.add(String(v))
        operations.add(operationKey(o.tool, o.arguments))
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
  const queries = new Map([...byQuery].map(([q, v]) => [q, { pages: v.pages, uncalled: [...v.tools].some((t) => !called.has(t)) }]))
  return { hits, searchedClauses, clauseSuccess, clauseAttempted, toolOk, toolFailedHard, settled, transient, consumed, researched, queries, servedValues, operations }
}
