/**
 * Answer facts: the leaves of successful observations (bounded per call and in all), each with its candidate
 * features; the answer text of a choice; and which facts a recorded answer states (for the projection). Pure.
 */
import type { CallId } from "../../domain/Ids.ts"
import type { Reading } from "./Reading.ts"
import { countingWords, headPhrase, requestedCount } from "./Request.ts"
import { bestClause, clip01, cover, idLike, keyWordsOf, leaves, nameLike, renderLabel, tokens } from "./Text.ts"
import { candidateWidth } from "./Types.ts"
import type { FactCandidate, SpaceContext, SpaceOptions } from "./Types.ts"

/**
 * The fact columns other blocks read (`readinessFeatures`): the share of the clause's words its own key covers, a
 * counted item's display field, and the attribute a one-thing clause asks.
 */
export const factColumn = { ownKeyCoversClause: 13, countedDisplay: 20, attributeAsked: 21 } as const

/** Words that say how many, which, or ask (the counting words and a few more), stemmed: no attribute is named by them. */
const askingWords: ReadonlySet<string> = new Set([...countingWords, "up", "its", "need", "want", "current"].flatMap((w) => [...tokens(w)]))

/**
 * A clause's head words: the content words of what it asks for (`Request.headPhrase`: "the number of posts and
 * trending rank", not "the hashtag" it is asked of), without the words that only count, ask or number.
 */
export const headWords = (clause: string): ReadonlySet<string> =>
  new Set([...tokens(headPhrase(clause))].filter((w) => !askingWords.has(w) && !/^\d+$/.test(w)))

/** A payload leaf's record: the path of its list item ("results.0"), or "" for the whole payload when it is in no list. */
const recordOf = (path: ReadonlyArray<string | number>): string => {
  const at = path.findIndex((p) => typeof p === "number")
  return at < 0 ? "" : path.slice(0, at + 1).join(".")
}

/** The fact candidates of a round and their features. */
export const factCandidates = (context: SpaceContext, r: Reading, options: SpaceOptions): { readonly facts: ReadonlyArray<FactCandidate>; readonly features: ReadonlyArray<Float64Array> } => {
  const { clauses, clauseTokens, requestTokens, seen, outputs } = r
  const headTokens = clauses.map(headWords)
  const quoted = r.literals.filter((l) => l.kind === "quoted")
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
    // each leaf's own key words and its record, once
    const keyWords = all.map((leaf) => keyWordsOf(leaf.path))
    const records = all.map((leaf) => recordOf(leaf.path))
    // how well the best leaf of this call names what its clause asks (a leaf matching as well is a likely answer)
    const leafCover = keyWords.map((words) => cover(words, cTokens))
    const bestCover = Math.max(0, ...leafCover)
    // how much of the clause's head a leaf's own key names, and the best of the call's leaves
    const hTokens = clause >= 0 ? (headTokens[clause] as ReadonlySet<string>) : new Set<string>()
    const headCover = keyWords.map((words) => cover(words, hTokens))
    const bestHead = Math.max(0, ...headCover)
    // each leaf's record and the values it holds (only read when the request quotes a value)
    const recordValues = new Map<string, Set<string>>()
    for (const [li, leaf] of (quoted.length > 0 ? all : []).entries()) {
      const key = records[li] as string
      const values = recordValues.get(key) ?? new Set<string>()
      values.add(String(leaf.value).toLowerCase())
      recordValues.set(key, values)
    }
    const holds = (li: number, own: boolean) => {
      const values = recordValues.get(records[li] as string) ?? new Set<string>()
      return quoted.some((l) => (l.clause === clause) === own && values.has(l.value.toLowerCase()))
    }
    // each list item's display field: its first string leaf that is not an id (a name, a title, a post's text)
    const display = new Set<number>()
    const itemsSeen = new Set<string>()
    all.forEach((leaf, li) => {
      const item = records[li] as string
      if (item === "" || typeof leaf.value !== "string" || idLike(String(leaf.path.at(-1) ?? ""))) return
      if (itemsSeen.has(item)) return
      itemsSeen.add(item)
      display.add(li)
    })
    // the leaves most likely asked for first (the clause's words in the key, the first items' display fields, the
    // items the clause counts), then in payload order: a detail record's late fields are not cut by the per-call bound
    const priority = all.map((leaf, li) => {
      const index = leaf.path.find((p): p is number => typeof p === "number")
      const counted = index === undefined || index < count
      return ((leafCover[li] as number) > 0 && counted ? 2 : 0) + (display.has(li) && counted ? 2 : 0) + (counted ? 1 : 0)
    })
    const chosen = new Set(all.map((_, li) => li).sort((a, b) => (priority[b] as number) - (priority[a] as number) || a - b).slice(0, options.factsPerCall))
    for (const [li, leaf] of all.entries()) {
      if (!chosen.has(li)) continue
      if (taken >= options.factsPerCall || facts.length >= options.factsTotal) break
      const key = String(leaf.path[leaf.path.length - 1] ?? "")
      const value = String(leaf.value)
      const keyTokens = tokens(leaf.path.filter((p) => typeof p === "string").join(" "))
      const leafTokens = keyWords[li] as ReadonlySet<string>
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
      f[factColumn.ownKeyCoversClause] = leafCover[li] as number
      f[14] = leafTokens.size > 0 && cover(leafTokens, cTokens) === 1 ? 1 : 0
      f[15] = bestCover > 0 && leafCover[li] === bestCover ? 1 : 0
      f[16] = typeof leaf.value === "boolean" ? 1 : 0
      f[17] = cover(cTokens, leafTokens)
      f[18] = leafTokens.size > 0 && cover(leafTokens, requestTokens) === 1 ? 1 : 0
      // a list question is answered by its items' names, a question about one thing by the attribute it names
      f[19] = count > 1 ? 1 : 0
      f[factColumn.countedDisplay] = count > 1 && display.has(li) && index !== undefined && index < count && !context.request.includes(value) ? 1 : 0
      f[factColumn.attributeAsked] = count <= 1 && f[15] === 1 && (f[factColumn.ownKeyCoversClause] as number) > 0 ? 1 : 0
      f[22] = display.has(li) ? 1 : 0
      f[23] = cover(hTokens, keyTokens)
      f[24] = headCover[li] as number
      f[25] = bestHead > 0 && headCover[li] === bestHead ? 1 : 0
      f[26] = holds(li, true) ? 1 : 0
      f[27] = f[26] === 0 && holds(li, false) ? 1 : 0
      facts.push({ callId: out.id as CallId, path: leaf.path, label: renderLabel(leaf.path), value, clause })
      factFeatures.push(f)
      taken++
    }
  }
  return { facts, features: factFeatures }
}

/** The facts chosen for an answer, as the answer text. */
export const renderAnswer = (facts: ReadonlyArray<FactCandidate>): string =>
  facts.length === 0
    ? "I could not get the information from the tools: every call I could make failed or returned nothing usable."
    : `Here is what the tools returned. ${facts.map((f) => `${f.label}: ${f.value}`).join("; ")}.`

/**
 * Whether a (lower-case) text states a value: the value occurs not inside a longer word or number, so "3" is not
 * stated by "2024-04-13" nor "1" by "11.2" (a plain substring test credited an answer with every short number).
 */
const states = (text: string, value: string): boolean => statedPattern(value).test(text)

/** How many values' patterns {@link statedPattern} keeps compiled; past it the oldest is dropped first. */
const patternCapacity = 4096
const patterns = new Map<string, RegExp>()

/**
 * The pattern of a value stated as a whole word or number, compiled once per value: every answer is checked against
 * the same observed values again and again (a Unicode pattern costs far more to compile than to run). No `g` flag, so
 * `test` keeps no state between texts.
 */
const statedPattern = (value: string): RegExp => {
  const known = patterns.get(value)
  if (known !== undefined) return known
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_]|\\p{N}[.,:-])${escaped}(?![\\p{L}\\p{N}_]|[.,:-]\\p{N})`, "u")
  if (patterns.size >= patternCapacity) patterns.delete(patterns.keys().next().value as string)
  patterns.set(value, pattern)
  return pattern
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
export const answerRows = (facts: ReadonlyArray<FactCandidate>, text: string): ReadonlyArray<number> => {
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
