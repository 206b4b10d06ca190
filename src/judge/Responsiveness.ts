/**
 * The rule judge's responsiveness checks: pure, precision-like tests that an answer states the requested facts
 * *to the point* — not buried in unrequested observation content, not an echo of the request, not hedged across records.
 */
import type { Json } from "../domain/Json.ts"
import type { GoldFact } from "../domain/Task.ts"
import {
  containsTokens,
  type FactToken,
  MAX_EXTRACTED_CHARS,
  normalizeText,
  digitRuns,
  numberStates,
  parseWholeDate,
  parseWholeNumber
} from "./FactTokens.ts"

// ---------------------------------------------------------------------------------------------------------------
// Thresholds (documented in docs/reward.md, "The rule judge: responsiveness")
// ---------------------------------------------------------------------------------------------------------------

/**
 * At most this share of the answer's content words may be unrequested observation content: words of successful
 * payloads' values that are neither in a gold value nor in the request ("requested" is what the user asked, never what
 * the agent itself sent as arguments).
 * Leaves room for a sentence of context ("Stephen Curry led the Warriors with 31 points on 2024-03-05"), not for a dump.
 */
export const UNREQUESTED_SHARE_MAX = 1 / 3

/**
 * At least this share of the answer's distinct factual tokens must state a gold value or come from the request (the
 * entity asked about): the answer's precision against the requested facts.
 */
export const FACT_PRECISION_MIN = 0.5

/** The length budget, in characters: a fixed allowance for the sentence around the facts. */
export const LENGTH_BASE_CHARS = 200
/** The length budget: per character of the request (an answer may restate what was asked, once or so). */
export const LENGTH_PER_REQUEST_CHAR = 1.5
/** The length budget: per gold fact, for its label. */
export const LENGTH_PER_FACT_CHARS = 80
/** The length budget: per character of a gold value (a value may be written out in another layout). */
export const LENGTH_PER_VALUE_CHAR = 2

/** Echo: a word counts as copied when it sits in a run of at least this many words found, in order, in the request. */
export const ECHO_RUN_WORDS = 3
/** Echo: an answer whose content words are at least this share copied from the request, stating no gold value the request does not already state, states nothing. */
export const ECHO_SHARE_MIN = 0.6

/**
 * Dump: an answer that states at least this share of the distinct values the successful calls returned, one of them
 * unrequested, reproduces the observations rather than selecting the requested facts — however short they were.
 */
export const DUMP_COVERAGE_MIN = 0.8
/** Dump: observations with more distinct values than this are not checked (no answer within the extraction cap could state 80% of them). */
export const DUMP_MAX_VALUES = 10_000
/** Wrong entity: at most this many other-record values are compared per fact (bounds the work on a huge payload). */
export const MAX_RIVALS_PER_FACT = 2_000

/** The responsiveness checks, by the names a verdict's rationale gives them (`<name>: <message>`). */
export const checkNames = ["length", "unrequested", "precision", "echo", "entity", "dump", "cap"] as const
/** One responsiveness check's name. */
export type CheckName = (typeof checkNames)[number]

/** Words that carry no fact: stripped before the word shares are computed. */
const STOPWORDS: ReadonlySet<string> = new Set([
  "a", "an", "the", "of", "and", "or", "is", "are", "was", "were", "be", "been", "to", "in", "on", "at", "for", "with",
  "by", "from", "as", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom", "whose", "here",
  "there", "has", "have", "had", "not", "no", "yes", "i", "you", "we", "they", "he", "she", "my", "your", "our", "their",
  "his", "her", "do", "does", "did", "can", "could", "would", "will", "s", "also", "than", "then", "so", "if", "but"
])

// ---------------------------------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------------------------------

/** What the checks compare an answer with; built once per trajectory. */
export interface Context {
  readonly request: string
  readonly facts: ReadonlyArray<GoldFact>
  /** Normalised words of the request. */
  readonly requestWords: ReadonlySet<string>
  /** Word trigrams (of {@link ECHO_RUN_WORDS} words) of the request, joined by spaces. */
  readonly requestRuns: ReadonlySet<string>
  /** Normalised words of every gold value and of every gold fact's key (the requested field's own name). */
  readonly goldWords: ReadonlySet<string>
  /** The distinct leaf values of the successful payloads, normalised (numbers kept as numbers). */
  readonly values: ReadonlyArray<string | number>
  /** Normalised words of the values (not keys) of successful payloads. */
  readonly observationWords: ReadonlySet<string>
  /** Per gold fact (by index), the same field's values in the other records of the list that holds the gold one. */
  readonly rivals: ReadonlyArray<ReadonlyArray<string | number>>
}

const words = (text: string): ReadonlyArray<string> => {
  const n = normalizeText(text)
  return n.length === 0 ? [] : n.split(" ")
}

const addWords = (into: Set<string>, text: string): void => {
  for (const w of words(text)) into.add(w)
}

const walkValues = (value: Json, visit: (leaf: string | number | boolean) => void): void => {
  if (value === null) return
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return visit(value)
  if (Array.isArray(value)) {
    for (const item of value) walkValues(item, visit)
    return
  }
  for (const item of Object.values(value)) walkValues(item, visit)
}

/** The field a gold fact reads: the last path segment that is not a list index (`data.0.budget_usd` → `budget_usd`). */
export const factField = (fact: GoldFact): string | undefined =>
  fact.path.split(".").filter((s) => s !== "" && !/^\d+$/.test(s)).at(-1)

const holds = (leaf: Json | undefined, value: string): boolean => {
  if (leaf === undefined || leaf === null || typeof leaf === "object") return false
  const number = parseWholeNumber(value)
  if (number !== undefined && typeof leaf === "number") return numberStates(number, leaf)
  return normalizeText(String(leaf)) === normalizeText(value)
}

/**
 * The values of a gold fact's field in the *other* records of every list (in the payloads) whose one record holds
 * the gold value under that field: the values a wrong-entity answer would state. Values equal to a gold value are
 * left out (several facts may come from one list).
 */
export const rivalValues = (facts: ReadonlyArray<GoldFact>, payloads: ReadonlyArray<Json>): ReadonlyArray<ReadonlyArray<string | number>> =>
  facts.map((fact) => {
    const field = factField(fact)
    if (field === undefined) return []
    const out: Array<string | number> = []
    const visit = (value: Json): void => {
      if (value === null || typeof value !== "object") return
      if (Array.isArray(value)) {
        const records = value.filter((v): v is { readonly [k: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v))
        if (records.some((r) => holds(r[field], fact.value))) {
          for (const r of records) {
            const leaf = r[field]
            if (out.length >= MAX_RIVALS_PER_FACT) break
            if ((typeof leaf === "string" || typeof leaf === "number") && !facts.some((f) => holds(leaf, f.value))) out.push(leaf)
          }
        }
        for (const item of value) visit(item)
        return
      }
      for (const item of Object.values(value)) visit(item)
    }
    for (const p of payloads) visit(p)
    return out
  })

/**
 * Builds the {@link Context} of a trajectory from its request, gold facts, and successful calls (their payloads: the
 * arguments the agent sent are not "requested" — the request is).
 */
export const makeContext = (
  request: string,
  facts: ReadonlyArray<GoldFact>,
  successes: ReadonlyArray<{ readonly arguments: Json; readonly payload: Json }>
): Context => {
  const requestWords = new Set(words(request))
  const seq = words(request)
  const requestRuns = new Set<string>()
  for (let i = 0; i + ECHO_RUN_WORDS <= seq.length; i++) requestRuns.add(seq.slice(i, i + ECHO_RUN_WORDS).join(" "))
  const goldWords = new Set<string>()
  for (const f of facts) {
    addWords(goldWords, f.value)
    addWords(goldWords, f.key)
  }
  const observationWords = new Set<string>()
  const values = new Set<string | number>()
  for (const s of successes) {
    walkValues(s.payload, (leaf) => {
      addWords(observationWords, String(leaf))
      if (values.size <= DUMP_MAX_VALUES) values.add(typeof leaf === "number" ? leaf : normalizeText(String(leaf)))
    })
  }
  values.delete("")
  return {
    request,
    facts,
    requestWords,
    requestRuns,
    goldWords,
    values: [...values],
    observationWords,
    rivals: rivalValues(facts, successes.map((s) => s.payload))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The checks
// ---------------------------------------------------------------------------------------------------------------

/** One failed responsiveness check, worded for the verdict's rationale. */
export interface Failure {
  readonly check: CheckName
  readonly message: string
}

/** The measurements behind the checks, and the checks that failed. */
export interface ResponsivenessCheck {
  /** Whether the answer is to the point: no check failed. */
  readonly ok: boolean
  /** An echo states nothing: Quality NO whatever the coverage. */
  readonly echo: boolean
  readonly failures: ReadonlyArray<Failure>
  readonly length: number
  readonly lengthBudget: number
  readonly unrequestedShare: number
  readonly precision: number
  /** The distinct factual tokens that state no requested fact and do not come from the request or the arguments. */
  readonly unrequestedFacts: number
  readonly echoShare: number
}

/** The text with every quotation ("…", “…”) whose words occur in the request blanked (same length). Linear. */
export const withoutRequestQuotes = (text: string, request: string): string => {
  const asked = ` ${normalizeText(request)} `
  return text.replace(/"([^"\n]{1,200})"|“([^”\n]{1,200})”/g, (m, a: string | undefined, b: string | undefined) =>
    asked.includes(` ${normalizeText(a ?? b ?? "")} `) ? " ".repeat(m.length) : m)
}

/** The length budget of an answer to a request with these gold facts (see the LENGTH_* constants). */
export const lengthBudget = (request: string, facts: ReadonlyArray<GoldFact>): number =>
  Math.round(
    LENGTH_BASE_CHARS + LENGTH_PER_REQUEST_CHAR * request.length +
      facts.reduce((sum, f) => sum + LENGTH_PER_FACT_CHARS + LENGTH_PER_VALUE_CHAR * f.value.length, 0)
  )

/** The content words of an answer (normalised, stopwords removed), from its judged prefix. */
const contentWords = (answer: string): ReadonlyArray<string> => words(answer).filter((w) => !STOPWORDS.has(w))

/** The share of content words that are unrequested observation content, and which they are (first few). */
export const unrequestedContent = (answer: string, context: Context): { readonly share: number; readonly sample: ReadonlyArray<string> } => {
  const content = contentWords(answer)
  if (content.length === 0) return { share: 0, sample: [] }
  const extra = content.filter((w) => context.observationWords.has(w) && !context.goldWords.has(w) && !context.requestWords.has(w))
  return { share: extra.length / content.length, sample: [...new Set(extra)].slice(0, 5) }
}

/**
 * The share of the observations' distinct values that the answer states, and how many of those it states are
 * unrequested (neither in a gold value nor in the request).
 */
export const dumpCoverage = (
  answerNormalized: string,
  answerNumbers: ReadonlySet<number>,
  context: Context
): { readonly share: number; readonly unrequested: number } => {
  if (context.values.length === 0 || context.values.length > DUMP_MAX_VALUES) return { share: 0, unrequested: 0 }
  const padded = ` ${answerNormalized} `
  const gold = context.facts.map((f) => normalizeText(f.value))
  const request = ` ${normalizeText(context.request)} `
  let stated = 0
  let unrequested = 0
  for (const v of context.values) {
    const text = typeof v === "number" ? normalizeText(String(v)) : v
    const says = typeof v === "number" ? answerNumbers.has(v) : padded.includes(` ${v} `)
    if (!says) continue
    stated++
    const requested = gold.some((g) => containsTokens(text, g) || containsTokens(g, text)) || request.includes(` ${text} `) ||
      words(text).every((w) => context.goldWords.has(w))
    if (!requested) unrequested++
  }
  return { share: stated / context.values.length, unrequested }
}

/** The share of an answer's words that sit in a run of {@link ECHO_RUN_WORDS} words copied from the request. */
export const echoShare = (answer: string, context: Context): number => {
  const seq = words(answer)
  if (seq.length === 0) return 0
  const copied = new Uint8Array(seq.length)
  for (let i = 0; i + ECHO_RUN_WORDS <= seq.length; i++) {
    if (context.requestRuns.has(seq.slice(i, i + ECHO_RUN_WORDS).join(" "))) copied.fill(1, i, i + ECHO_RUN_WORDS)
  }
  let n = 0
  for (const c of copied) n += c
  return n / seq.length
}

const tokenKey = (t: FactToken): string => `${t.kind}:${t.kind === "date" ? t.iso : t.kind === "number" ? String(t.number.value) : normalizeText(t.text)}`

/** Whether a factual token states (a part of) a gold value. */
export const tokenStatesGold = (token: FactToken, facts: ReadonlyArray<GoldFact>): boolean =>
  facts.some((f) => {
    switch (token.kind) {
      case "number": {
        const truth = parseWholeNumber(f.value)
        return truth !== undefined && numberStates(token.number, truth.value)
      }
      case "date":
        return parseWholeDate(f.value) === token.iso
      default: {
        const a = normalizeText(token.text)
        const b = normalizeText(f.value)
        return containsTokens(a, b) || containsTokens(b, a)
      }
    }
  })

/**
 * Precision against the requested facts: the share of the answer's distinct factual tokens that state a gold value
 * or that `isContext` accepts (the request). 1 for an answer with no factual token.
 */
export const factPrecision = (
  tokens: ReadonlyArray<FactToken>,
  facts: ReadonlyArray<GoldFact>,
  isContext: (token: FactToken) => boolean
): { readonly precision: number; readonly extra: ReadonlyArray<FactToken> } => {
  const distinct = new Map<string, FactToken>()
  for (const t of tokens) if (!distinct.has(tokenKey(t))) distinct.set(tokenKey(t), t)
  if (distinct.size === 0) return { precision: 1, extra: [] }
  const extra = [...distinct.values()].filter((t) => !tokenStatesGold(t, facts) && !isContext(t))
  return { precision: 1 - extra.length / distinct.size, extra }
}

/** The values of other records (wrong entities) that the answer states, per the context's rivals. */
export const statedRivals = (
  answerNormalized: string,
  answerNumbers: ReadonlyArray<{ readonly value: number; readonly decimals: number }>,
  context: Context,
  unquotedNormalized: string = answerNormalized
): ReadonlyArray<string> => {
  const unquotedPadded = ` ${unquotedNormalized} `
  const exact = new Set(answerNumbers.map((n) => n.value))
  const decimals = [...new Set(answerNumbers.filter((n) => n.decimals > 0).map((n) => n.decimals))]
  // what the request and the requested fields' names say is no claim about another record
  const asked = normalizeText([context.request, ...context.facts.map((f) => f.key)].join(" \u0000 "))
  const askedNumbers = new Set(digitRuns(asked).flatMap((r) => (r.number === undefined ? [] : [r.number.value])))
  const padded = ` ${answerNormalized} `
  const out: Array<string> = []
  for (const list of context.rivals) {
    for (const rival of list) {
      const asNumber = typeof rival === "number" ? rival : parseWholeNumber(rival)?.value
      if (asNumber !== undefined) {
        if (askedNumbers.has(asNumber)) continue
        const shown = exact.has(asNumber) || decimals.some((d) => exact.has(Math.round(asNumber * 10 ** d) / 10 ** d))
        if (shown) out.push(String(rival))
        continue
      }
      const needle = normalizeText(String(rival))
      if (needle.length < 3) continue
      // a record the request names ("A vs B") counts only where the answer is not quoting the request
      const where = containsTokens(asked, needle) ? unquotedPadded : padded
      if (where.includes(` ${needle} `)) out.push(String(rival))
    }
  }
  return [...new Set(out)]
}

/**
 * Every responsiveness check on an answer as the claim reader read it: `text` is the read text (normalised, at most
 * {@link MAX_EXTRACTED_CHARS} characters), `length` the answer's length as written, `unread` the characters past the
 * read limit (they count as unrequested). `tokens` are the answer's factual tokens, `isContext` accepts those the
 * request backs, `statesNewFact` says whether the answer states a gold value that the request does not already state.
 */
export const check = (
  text: string,
  length: number,
  unread: number,
  tokens: ReadonlyArray<FactToken>,
  context: Context,
  isContext: (token: FactToken) => boolean,
  statesNewFact: boolean
): ResponsivenessCheck => {
  const head = text
  const failures: Array<Failure> = []
  const budget = lengthBudget(context.request, context.facts)
  if (unread > 0) {
    failures.push({ check: "cap", message: `answer of ${length} characters, only the first ${MAX_EXTRACTED_CHARS} read; the rest counts as unrequested` })
  }
  if (length > budget) {
    failures.push({ check: "length", message: `${length} characters over a length budget of ${budget}` })
  }
  const unrequested = unrequestedContent(head, context)
  if (unrequested.share > UNREQUESTED_SHARE_MAX) {
    failures.push({
      check: "unrequested",
      message: `${Math.round(unrequested.share * 100)}% of its words are unrequested observation content (max ${Math.round(UNREQUESTED_SHARE_MAX * 100)}%: ${unrequested.sample.join(", ")})`
    })
  }
  const precise = factPrecision(tokens, context.facts, isContext)
  if (precise.precision < FACT_PRECISION_MIN) {
    failures.push({
      check: "precision",
      message: `fact precision ${precise.precision.toFixed(2)} < ${FACT_PRECISION_MIN} (${precise.extra.length} factual tokens neither requested nor from the request, e.g. ${precise.extra.slice(0, 3).map((t) => JSON.stringify(t.text)).join(", ")})`
    })
  }
  const normalized = normalizeText(head)
  const numbers = tokens.flatMap((t) => (t.kind === "number" ? [t.number] : []))
  const rivals = statedRivals(normalized, numbers, context, normalizeText(withoutRequestQuotes(head, context.request)))
  if (rivals.length > 0) {
    failures.push({ check: "entity", message: `states values of another record than the one asked about (${rivals.slice(0, 3).map((r) => JSON.stringify(r)).join(", ")})` })
  }
  const dump = dumpCoverage(normalized, new Set(numbers.map((n) => n.value)), context)
  if (dump.share >= DUMP_COVERAGE_MIN && dump.unrequested > 0) {
    failures.push({
      check: "dump",
      message: `states ${Math.round(dump.share * 100)}% of the values the tools returned, ${dump.unrequested} of them unrequested: a dump, not a selection (max ${DUMP_COVERAGE_MIN * 100}%)`
    })
  }
  const echo = echoShare(head, context)
  const isEcho = echo >= ECHO_SHARE_MIN && !statesNewFact
  if (isEcho) failures.push({ check: "echo", message: `echoes the request (${Math.round(echo * 100)}% of its words copied) and states no requested fact` })
  return {
    ok: failures.length === 0,
    echo: isEcho,
    failures,
    length,
    lengthBudget: budget,
    unrequestedShare: unrequested.share,
    precision: precise.precision,
    unrequestedFacts: precise.extra.length,
    echoShare: echo
  }
}
