/**
 * The rule judge's Quality: gold values matched in the answer's claims (numbers, dates, ids, text), negation and hedging
 * cues, facts grouped by label, and where the answer states each — bound to the right label, affirmatively, not
 * hedged, contradicted or retracted.
 */
import type { GoldFact } from "../domain/Task.ts"
import type { Grade } from "../domain/Trajectory.ts"
import { factLabel } from "../agent/teacher/ScriptedRoles.ts"
import * as Claims from "./Claims.ts"
import { type Evidence, jsonLeaves } from "./Evidence.ts"
import { containsTokens, extractDates, extractNumbers, extractNumbersOutsideDates, maskSpans, normalizeText, numberStates, parseWholeDate, parseWholeNumber } from "./FactTokens.ts"

// ---------------------------------------------------------------------------------------------------------------
// Matching gold values
// ---------------------------------------------------------------------------------------------------------------

/**
 * Whether a text states a gold value: a numeric value only as a number (rounding-tolerant, never as the digits
 * of a date or an id), a date only as a date (any recognised layout), anything else as a run of normalised words.
 */
export const statesValue = (text: string, value: string): boolean => statesOf(value)(text)

/** {@link statesValue} with the gold value parsed once, for testing it against many texts. */
const statesOf = (value: string): (text: string) => boolean => {
  const number = parseWholeNumber(value)
  if (number !== undefined) {
    const truth = number.value
    return (text) => extractNumbersOutsideDates(text).some((shown) => numberStates(shown, truth))
  }
  const date = parseWholeDate(value)
  if (date !== undefined) return (text) => extractDates(text).some((d) => d.iso === date)
  const needle = normalizeText(value)
  return (text) => containsTokens(normalizeText(text), needle)
}

/** Whether a JSON payload's leaves (see {@link jsonLeaves}) hold a gold value, with the value parsed once. */
export const heldBy = (value: string): (leaves: ReturnType<typeof jsonLeaves>) => boolean => {
  const number = parseWholeNumber(value)
  const states = statesOf(value)
  return ({ numbers, strings }) => (number !== undefined && numbers.some((n) => numberStates(number, n))) || strings.some(states)
}

export const hasIdAt = (raw: string, id: string): boolean => {
  const needle = id.toLowerCase()
  let from = 0
  while (true) {
    const at = raw.indexOf(needle, from)
    if (at < 0) return false
    const before = raw[at - 1]
    const after = raw[at + needle.length]
    const boundary = (c: string | undefined) => c === undefined || !/[\p{L}\p{N}_]/u.test(c)
    if (boundary(before) && boundary(after)) return true
    from = at + 1
  }
}

/** YES when all, PARTIAL when some, NO when none (of a non-empty set). */
export const gradeShare = (hit: number, total: number): Grade => (hit === total ? "YES" : hit > 0 ? "PARTIAL" : "NO")

// ---------------------------------------------------------------------------------------------------------------
// Cues: negation, hedging
// ---------------------------------------------------------------------------------------------------------------

/** Words that negate the claim of their segment (English first; a few of French, German, Spanish, Portuguese). */
export const NEGATIONS: ReadonlySet<string> = new Set([
  "not", "never", "none", "neither", "nor", "without", "cannot", "false", "incorrect", "untrue", "inaccurate", "wrong",
  "except", "excluding", "unlike", "denied", "pas", "jamais", "nicht", "kein", "keine", "keinen", "keiner", "nunca", "nao", "nem"
])

/** Stems of "n't" contractions (the normaliser splits "isn't" into "isn" "t"). */
const CONTRACTIONS: ReadonlySet<string> = new Set(["isn", "wasn", "aren", "weren", "doesn", "didn", "don", "hasn", "haven", "hadn", "won", "wouldn", "couldn", "shouldn", "can", "ain", "mustn"])

/** Two-word negations: "rather than", "instead of", "other than". */
const NEGATION_PAIRS: ReadonlyMap<string, string> = new Map([["rather", "than"], ["instead", "of"], ["other", "than"]])

/** Words that hedge the claim of their segment: an alternative or uncertainty (English first; a few of other languages). */
export const HEDGES: ReadonlySet<string> = new Set([
  "or", "either", "maybe", "perhaps", "possibly", "probably", "likely", "unlikely", "might", "may", "could", "uncertain",
  "unsure", "unclear", "unverified", "unconfirmed", "guess", "guessing", "presumably", "supposedly", "allegedly",
  "reportedly", "apparently", "seemingly", "seems", "alternatively", "ou", "oder", "vielleicht", "peut", "probablement",
  "wahrscheinlich", "quizas", "quiza", "talvez", "probablemente", "forse", "oppure", "ovvero", "probabilmente"
])

// ---------------------------------------------------------------------------------------------------------------
// Facts, their labels, and where the answer states them
// ---------------------------------------------------------------------------------------------------------------

/** What a gold value is, for finding it and for telling a rival value of the same kind. */
type ValueKind = "number" | "date" | "id" | "boolean" | "text"

const kindOfValue = (value: string): ValueKind => {
  if (parseWholeNumber(value) !== undefined) return "number"
  if (parseWholeDate(value) !== undefined) return "date"
  const v = value.trim().toLowerCase()
  if (v === "true" || v === "false") return "boolean"
  return /\p{L}/u.test(value) && /\p{N}/u.test(value) && !/\s/.test(value.trim()) ? "id" : "text"
}

/** The facts stated under one label (a list's items share theirs, `factLabel`), and the label words only they have. */
export interface FactGroup {
  readonly label: string
  readonly facts: ReadonlyArray<number>
  readonly distinct: ReadonlySet<string>
}

export const contentWords = (text: string): ReadonlyArray<string> => normalizeText(text).split(" ").filter((w) => w.length > 0 && !Claims.STOPWORDS.has(w))

/**
 * The label groups of a task's facts: facts sharing `factLabel(key)` form one group; a group's distinct words are its
 * label's content words that no other group's label has ("population" vs "continent" of the same country).
 */
export const factGroups = (facts: ReadonlyArray<GoldFact>): ReadonlyArray<FactGroup> => {
  const byLabel = new Map<string, Array<number>>()
  facts.forEach((f, i) => {
    const label = normalizeText(factLabel(f.key))
    byLabel.set(label, [...(byLabel.get(label) ?? []), i])
  })
  const labels = [...byLabel.keys()]
  const words = labels.map((l) => new Set(contentWords(l)))
  return labels.map((label, g) => {
    const others = new Set(words.flatMap((ws, h) => (h === g ? [] : [...ws])))
    return { label, facts: byLabel.get(label) ?? [], distinct: new Set([...(words[g] ?? [])].filter((w) => !others.has(w))) }
  })
}

/**
 * The group a claim's label names, or undefined: the group whose distinct words the label covers best, when it covers at
 * least half of them and strictly more than any other group's. A label in another language, or a generic one
 * ("result name"), names none: its value is then read on its own.
 */
export const bindLabel = (groups: ReadonlyArray<FactGroup>, label: ReadonlyArray<string>): number | undefined => {
  if (label.length === 0 || groups.length === 0) return undefined
  const words = new Set(label)
  let best = -1
  let bestScore = 0
  let second = 0
  groups.forEach((g, i) => {
    if (g.distinct.size === 0) return
    let hit = 0
    for (const w of g.distinct) if (words.has(w)) hit++
    const score = hit / g.distinct.size
    if (score > bestScore) {
      second = bestScore
      bestScore = score
      best = i
    } else if (score > second) second = score
  })
  return best >= 0 && bestScore >= 0.5 && bestScore > second ? best : undefined
}

/** Where the answer states (or seems to state) a gold value. */
interface Occurrence {
  readonly fact: number
  readonly start: number
  readonly end: number
  readonly segment: number
  readonly inLabel: boolean
  readonly whole: boolean
}

/** Why a gold fact found in the answer is not stated. */
export type NotStated = "negated" | "hedged" | "retracted" | "bound to another label" | "contradicted" | "only in the request's words"

const wordIndex = (reading: Claims.Reading): ReadonlyMap<string, ReadonlyArray<number>> => {
  const index = new Map<string, Array<number>>()
  reading.words.forEach((w, i) => {
    const list = index.get(w.norm)
    if (list === undefined) index.set(w.norm, [i])
    else list.push(i)
  })
  return index
}

/** The words of [start, end) of the reading (binary search over word starts). */
const wordsBetween = (reading: Claims.Reading, start: number, end: number): ReadonlyArray<Claims.Word> => {
  const words = reading.words
  let lo = 0
  let hi = words.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((words[mid] as Claims.Word).start < start) lo = mid + 1
    else hi = mid
  }
  const out: Array<Claims.Word> = []
  for (let i = lo; i < words.length && (words[i] as Claims.Word).end <= end; i++) out.push(words[i] as Claims.Word)
  return out
}

/** Whether [start, end) covers every content word of the value part of its segment (O(log n)). */
const coversValue = (reading: Claims.Reading, seg: Claims.Segment, start: number, end: number): boolean => {
  const [vs, ve] = Claims.trimmedBounds(reading.text, seg.valueStart, seg.end)
  return reading.index.content(vs, ve) === reading.index.content(Math.max(vs, start), Math.min(ve, end))
}

/** Every place the reading states a gold value the way its kind is written (before any check of how it is stated). */
const occurrencesOf = (
  reading: Claims.Reading,
  fact: GoldFact,
  index: number,
  kind: ValueKind,
  words: ReadonlyMap<string, ReadonlyArray<number>>,
  supportedResidue: (span: Claims.ValueSpan) => boolean
): ReadonlyArray<Occurrence> => {
  const out: Array<Occurrence> = []
  const place = (start: number, end: number) => {
    const segment = Claims.segmentOf(reading, start)
    const seg = reading.segments[segment] as Claims.Segment
    const inLabel = end <= seg.valueStart
    out.push({ fact: index, start, end, segment, inLabel, whole: !inLabel && coversValue(reading, seg, start, end) })
  }
  if (kind === "number") {
    const truth = parseWholeNumber(fact.value)?.value ?? Number.NaN
    for (const s of reading.spans) {
      if (s.kind !== "number" || s.number === undefined || !numberStates(s.number, truth)) continue
      if (s.ambiguous === true && !(s.whole && !s.inLabel)) continue
      place(s.start, s.end)
    }
  } else if (kind === "date") {
    const iso = parseWholeDate(fact.value)
    for (const s of reading.spans) if (s.kind === "date" && s.iso === iso) place(s.start, s.end)
  } else {
    const needle = normalizeText(fact.value).split(" ").filter((w) => w.length > 0)
    for (const at of words.get(needle[0] ?? "") ?? []) {
      if (needle.every((w, k) => reading.words[at + k]?.norm === w)) place((reading.words[at] as Claims.Word).start, (reading.words[at + needle.length - 1] as Claims.Word).end)
    }
    if (kind === "boolean") {
      const alias = fact.value.trim().toLowerCase() === "true" ? "yes" : "no"
      for (const at of words.get(alias) ?? []) {
        const w = reading.words[at] as Claims.Word
        const segment = Claims.segmentOf(reading, w.start)
        const seg = reading.segments[segment] as Claims.Segment
        if (w.start >= seg.valueStart && coversValue(reading, seg, w.start, w.end)) place(w.start, w.end)
      }
    }
  }
  // a value longer than the reader's word limit is read only from a residue token a tool output holds whole
  for (const s of reading.spans) {
    if (s.kind === "residue" && supportedResidue(s) && statesValue(s.text, fact.value)) place(s.start, s.end)
  }
  return out
}

/**
 * The occurrences that lie inside a longer occurrence of another fact, in one sweep: sorted by start (longer first),
 * keeping the two furthest-reaching earlier spans of different facts.
 */
const nestedOccurrences = (all: ReadonlyArray<Occurrence>): ReadonlySet<Occurrence> => {
  const sorted = [...all].sort((a, b) => a.start - b.start || b.end - a.end)
  const out = new Set<Occurrence>()
  let best: Occurrence | undefined
  let second: Occurrence | undefined
  for (const o of sorted) {
    const covers = (p: Occurrence | undefined) => p !== undefined && p.fact !== o.fact && p.end >= o.end && p.end - p.start > o.end - o.start
    if (covers(best) || covers(second)) out.add(o)
    if (best === undefined || o.end > best.end) {
      if (best !== undefined && best.fact !== o.fact) second = best
      best = o
    } else if (o.fact !== best.fact && (second === undefined || o.end > second.end)) second = o
  }
  return out
}

/** One gold fact: stated or not, and why an occurrence did not count. */
export interface FactStatement {
  readonly fact: GoldFact
  readonly stated: boolean
  /** Set when the value occurs but no occurrence is a statement of the fact. */
  readonly reason?: NotStated
}

/** The facts an answer states, of those a complete answer must state. */
export interface QualityCheck {
  readonly grade: Grade
  readonly stated: ReadonlyArray<GoldFact>
  readonly missing: ReadonlyArray<GoldFact>
  /** Per fact, in task order. */
  readonly statements: ReadonlyArray<FactStatement>
  /** Where the answer states gold values in a value part (Faithfulness checks each against the tool outputs). */
  readonly valueOccurrences: ReadonlyArray<{ readonly fact: GoldFact; readonly start: number; readonly end: number }>
}

const inside = (ranges: ReadonlyArray<{ readonly start: number; readonly end: number }>, start: number, end: number): boolean =>
  ranges.some((r) => start >= r.start && end <= r.end)

/**
 * Quality's coverage: the gold facts the answer states **as claims** (docs/reward.md, "The claim reader"). An occurrence
 * of a gold value states its fact when it is in a claim's value part (or a segment with no label; a label part counts
 * only for a value the request itself names, outside quotations of the request), and
 * - the claim's label names the fact's group, or names none (`bindLabel`): a value under another fact's label is not
 *   a statement of either;
 * - no negation ("not", "n't", "never", "rather than"…) or hedge ("or", "maybe", "probably", a question mark…) sits in
 *   its segment outside gold values and the request's own words;
 * - its segment holds no other value of the same kind (a number beside a number fact, a date beside a date, an id beside
 *   an id) that is not a gold value of that label, the request's or a fact key's;
 * - no claim whose label names the fact's group binds another value to it;
 * - no retraction ("disregard all of the above", "correction") follows it.
 * All → YES, some → PARTIAL, none → NO. No (or an empty) answer is NO.
 */
export const quality = (
  facts: ReadonlyArray<GoldFact>,
  answer: string | Claims.Reading | undefined,
  request?: string,
  outputs?: Evidence
): QualityCheck => {
  const reading = typeof answer === "string" || answer === undefined ? Claims.read(answer?.trim() ?? "") : answer
  if (reading.text.trim().length === 0 || facts.length === 0) {
    return { grade: "NO", stated: [], missing: [...facts], statements: facts.map((fact) => ({ fact, stated: false })), valueOccurrences: [] }
  }
  const asked = request === undefined ? "" : normalizeText(Claims.normalize(request))
  const askedWords = new Set(asked.split(" "))
  const askedText = request === undefined ? "" : Claims.normalize(request)
  // numbers the request or the facts' labels name (not list positions: "team 2 of the teams" is labelled "the teams")
  // (a date's year is part of the date, not a number of its own)
  const askedSource = `${askedText} \u0000 ${facts.map((f) => Claims.normalize(factLabel(f.key))).join(" \u0000 ")}`
  const askedNumbers = new Set(extractNumbers(maskSpans(askedSource, extractDates(askedSource).map((d) => [d.start, d.end] as const))).map((n) => n.value))
  const askedDates = new Set(extractDates(askedText).map((d) => d.iso))
  const groups = factGroups(facts)
  const groupOf = facts.map((_, i) => groups.findIndex((g) => g.facts.includes(i)))
  const kinds = facts.map((f) => kindOfValue(f.value))
  const words = wordIndex(reading)
  const supportedResidue = (s: Claims.ValueSpan) => outputs !== undefined && outputs.sources.has(normalizeText(s.text))
  const found = facts.map((f, i) => occurrencesOf(reading, f, i, kinds[i] as ValueKind, words, supportedResidue))
  // a value inside another fact's longer value ("3uwunjb" in the short URL "https://sho.rt/3uwunjb") is part of that
  // value, not a statement of its own fact
  const nested = nestedOccurrences(found.flat())
  const occurrences = found.map((list) => list.filter((o) => !nested.has(o)))
  const gold = occurrences.flat()
  // masks over the read text and buckets per segment keep every check linear in the answer's length
  const mask = (ranges: ReadonlyArray<{ readonly start: number; readonly end: number }>): Uint8Array => {
    const m = new Uint8Array(reading.text.length + 1)
    for (const r of ranges) m.fill(1, r.start, r.end)
    return m
  }
  const goldMask = mask(gold)
  const typedMask = mask(reading.spans.filter((s) => s.kind === "quoted" || s.kind === "entity" || s.kind === "id" || s.kind === "residue"))
  const requestQuoteMask = mask(reading.spans.filter((s) => s.kind === "quoted" && containsTokens(asked, normalizeText(s.text))))
  const inGold = (start: number, end: number) => goldMask[start] === 1 && goldMask[Math.max(start, end - 1)] === 1
  const spansBySegment: Array<Array<Claims.ValueSpan>> = reading.segments.map(() => [])
  for (const sp of reading.spans) spansBySegment[sp.segment]?.push(sp)
  const goldBySegment: Array<Array<Occurrence>> = reading.segments.map(() => [])
  for (const o of gold) goldBySegment[o.segment]?.push(o)
  const factsAt = new Map<string, Set<number>>()
  for (const o of gold) {
    const key = `${o.start}:${o.end}`
    const set = factsAt.get(key) ?? new Set<number>()
    set.add(o.fact)
    factsAt.set(key, set)
  }
  const requestNames = facts.map((f) => request !== undefined && statesValue(askedText, f.value))

  // per segment: its cues, the group its label binds, and its values
  const cueCache = new Map<number, { readonly negated: boolean; readonly hedged: boolean }>()
  const cues = (segment: number) => {
    const hit = cueCache.get(segment)
    if (hit !== undefined) return hit
    const seg = reading.segments[segment] as Claims.Segment
    const ws = wordsBetween(reading, seg.start, seg.end)
    let negated = false
    let hedged = false
    ws.forEach((w, k) => {
      if (inGold(w.start, w.end) || typedMask[w.start] === 1) return
      if (w.start < seg.valueStart && askedWords.has(w.norm)) return
      const next = ws[k + 1]?.norm
      if (NEGATIONS.has(w.norm) || (CONTRACTIONS.has(w.norm) && next === "t") || (next !== undefined && NEGATION_PAIRS.get(w.norm) === next)) negated = true
      if (HEDGES.has(w.norm)) hedged = true
    })
    // a question mark that ends a word ("1997-09-17?"), not one inside a URL's query ("?ref=1")
    if (/\?(?![\p{L}\p{N}=&])/u.test(reading.text.slice(seg.start, seg.end))) hedged = true
    const out = { negated, hedged }
    cueCache.set(segment, out)
    return out
  }
  // A "label" made only of gold values ("Weekly digest trip 587, Re: Project feature 556" — a value holding a colon) is
  // no label: its values are values, and what follows the colon is what may name their group ("4.6: level" is bound
  // to the level's label, as a reversed claim).
  const contentOf = (from: number, to: number) => wordsBetween(reading, from, to).filter((w) => !Claims.STOPWORDS.has(w.norm))
  const labelOfValues = new Map<number, boolean>()
  const valuesOnlyLabel = (segment: number): boolean => {
    const hit = labelOfValues.get(segment)
    if (hit !== undefined) return hit
    const seg = reading.segments[segment] as Claims.Segment
    const label = contentOf(seg.start, seg.valueStart)
    const out = seg.kind === "claim" && label.length > 0 && label.every((w) => inGold(w.start, w.end))
    labelOfValues.set(segment, out)
    return out
  }
  // the label binds a group; a frame before the label ("Voici … : <label> : <value>") leaves the inner label to bind
  const boundCache = new Map<number, number | undefined>()
  const boundGroup = (segment: number): number | undefined => {
    if (boundCache.has(segment)) return boundCache.get(segment)
    const out = bindSegment(segment)
    boundCache.set(segment, out)
    return out
  }
  const bindSegment = (segment: number): number | undefined => {
    const seg = reading.segments[segment] as Claims.Segment
    if (seg.kind !== "claim") return undefined
    if (valuesOnlyLabel(segment)) {
      const rest = contentOf(seg.valueStart, seg.end).filter((w) => !inGold(w.start, w.end))
      return bindLabel(groups, rest.map((w) => w.norm))
    }
    return bindLabel(groups, seg.label) ?? (seg.inner === undefined ? undefined : bindLabel(groups, seg.inner.label))
  }
  /** Values in the segment's value part of the given kind that no allowed fact states and nobody asked about. */
  const extrasCache = new Map<string, ReadonlyArray<Claims.ValueSpan>>()
  const extras = (segment: number, kind: ValueKind, allowed: ReadonlyArray<number>): ReadonlyArray<Claims.ValueSpan> => {
    const key = `${segment}|${kind}|${allowed.join(",")}`
    const hit = extrasCache.get(key)
    if (hit !== undefined) return hit
    const out = extrasOf(segment, kind, allowed)
    extrasCache.set(key, out)
    return out
  }
  const extrasOf = (segment: number, kind: ValueKind, allowed: ReadonlyArray<number>): ReadonlyArray<Claims.ValueSpan> => {
    const seg = reading.segments[segment] as Claims.Segment
    const spanKind = kind === "number" ? "number" : kind === "date" ? "date" : kind === "id" ? "id" : undefined
    if (spanKind === undefined) return []
    return (spansBySegment[segment] ?? []).filter((s) => {
      if (s.inLabel || s.kind !== spanKind || s.ambiguous === true) return false
      if (s.start < seg.valueStart || inGold(s.start, s.end)) return false
      if (spanKind === "number") {
        const n = s.number
        return n !== undefined && !askedNumbers.has(n.value) && !allowed.some((i) => {
          const truth = parseWholeNumber(facts[i]?.value ?? "")
          return truth !== undefined && numberStates(n, truth.value)
        })
      }
      if (spanKind === "date") return s.iso !== undefined && !askedDates.has(s.iso) && !allowed.some((i) => parseWholeDate(facts[i]?.value ?? "") === s.iso)
      return !containsTokens(asked, normalizeText(s.text)) && !allowed.some((i) => containsTokens(normalizeText(facts[i]?.value ?? ""), normalizeText(s.text)))
    })
  }
  // a group is contradicted when a claim bound to its label carries another group's gold value or another value of its kind
  const contradictedGroups = new Set<number>()
  reading.segments.forEach((seg, segment) => {
    const g = boundGroup(segment)
    if (g === undefined) return
    const members = groups[g]?.facts ?? []
    // another group's gold value, unless it is also one of this group's (facts may share a value)
    const foreign = (goldBySegment[segment] ?? []).some((o) =>
      !o.inLabel && !members.includes(o.fact) && ![...(factsAt.get(`${o.start}:${o.end}`) ?? [])].some((f) => members.includes(f))
    )
    const memberKinds = new Set(members.map((m) => kinds[m] as ValueKind))
    const other = [...memberKinds].some((k) => extras(segment, k, members).length > 0)
    if (foreign || other) contradictedGroups.add(g)
  })

  const statements: Array<FactStatement> = facts.map((fact, i) => {
    const found = occurrences[i] ?? []
    if (found.length === 0) return { fact, stated: false }
    let reason: NotStated | undefined
    // the reason shown is the first about how the value is stated; "only in the request's words" only when none is
    const note = (r: NotStated) => {
      if (reason === undefined || reason === "only in the request's words") reason = r
      return false
    }
    const ok = found.some((found) => {
      const o = found.inLabel && valuesOnlyLabel(found.segment) ? { ...found, inLabel: false } : found
      if (requestNames[i] === true && requestQuoteMask[o.start] === 1) return note("only in the request's words")
      if (o.inLabel && requestNames[i] !== true) return note("only in the request's words")
      if (reading.retraction >= 0 && o.start < reading.retraction) return note("retracted")
      const c = cues(o.segment)
      if (c.negated) return note("negated")
      if (c.hedged) return note("hedged")
      if (o.inLabel) return true
      const g = boundGroup(o.segment)
      if (g !== undefined && g !== groupOf[i]) return note("bound to another label")
      if (contradictedGroups.has(groupOf[i] ?? -1)) return note("contradicted")
      const allowed = g === undefined ? facts.map((_, k) => k) : (groups[g]?.facts ?? [])
      if (extras(o.segment, kinds[i] as ValueKind, allowed).length > 0) return note("contradicted")
      return true
    })
    return ok ? { fact, stated: true } : { fact, stated: false, ...(reason !== undefined ? { reason } : {}) }
  })
  const stated = statements.filter((s) => s.stated).map((s) => s.fact)
  const missing = statements.filter((s) => !s.stated).map((s) => s.fact)
  return {
    grade: gradeShare(stated.length, facts.length),
    stated,
    missing,
    statements,
    valueOccurrences: gold.filter((o) => !o.inLabel || valuesOnlyLabel(o.segment)).map((o) => ({ fact: facts[o.fact] as GoldFact, start: o.start, end: o.end }))
  }
}

// ---------------------------------------------------------------------------------------------------------------
