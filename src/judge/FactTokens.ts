/**
 * Text normalisation and factual-token extraction for the rule judge: numbers, dates, ids, quoted values and
 * named entities, each compared in a canonical form so "1,234.0", "1234" and "1 234" are one number.
 * Linear time: answers are cut to {@link MAX_EXTRACTED_CHARS}, words to {@link MAX_WORD_CHARS}, masking is one pass.
 */

/**
 * Fact tokens are extracted from at most this many characters of an answer. The rest is not read for facts: the
 * rule judge counts it as unrequested content (see Responsiveness.ts), so such an answer never gets Quality YES.
 * Twice the LLM judge's answer budget (Prompt.ts `budgets.answer`), far above any answer's length budget.
 */
export const MAX_EXTRACTED_CHARS = 8_000

/**
 * A run of non-space characters longer than this is not a fact (the longest ids we see, UUIDs and hex digests, are
 * ≤ 64): it is blanked before extraction, which bounds every regex's backtracking by this length.
 */
export const MAX_WORD_CHARS = 100

/**
 * The text fact tokens are extracted from: the first {@link MAX_EXTRACTED_CHARS} characters, every whitespace run
 * collapsed to one space (one newline when it held one), every word longer than {@link MAX_WORD_CHARS} blanked.
 * One linear pass.
 */
export const boundForExtraction = (text: string): string => {
  const head = text.length <= MAX_EXTRACTED_CHARS ? text : text.slice(0, MAX_EXTRACTED_CHARS)
  const out: Array<string> = []
  let i = 0
  while (i < head.length) {
    const start = i
    if (isSpace(head.charCodeAt(i))) {
      let newline = false
      while (i < head.length && isSpace(head.charCodeAt(i))) {
        if (head.charCodeAt(i) === 10) newline = true
        i++
      }
      out.push(newline ? "\n" : " ")
    } else {
      while (i < head.length && !isSpace(head.charCodeAt(i))) i++
      out.push(i - start > MAX_WORD_CHARS ? " " : head.slice(start, i))
    }
  }
  return out.join("")
}

const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 160

/** Blanks the given spans of a text (same length, so later offsets stay valid), in one pass over sorted spans. */
export const maskSpans = (text: string, spans: ReadonlyArray<readonly [number, number]>): string => {
  if (spans.length === 0) return text
  const sorted = [...spans].sort((a, b) => a[0] - b[0])
  const out: Array<string> = []
  let at = 0
  for (const [start, end] of sorted) {
    const s = Math.max(start, at)
    if (end <= s) continue
    out.push(text.slice(at, s), " ".repeat(end - s))
    at = end
  }
  out.push(text.slice(at))
  return out.join("")
}

/** Lower-case, strip accents, turn every non-alphanumeric run into one space, trim. `"Real Madrid C.F."` → `"real madrid c f"`. */
export const normalizeText = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()

/** Whether `needle` occurs in `haystack` as a whole run of normalised tokens (both already normalised). */
export const containsTokens = (haystack: string, needle: string): boolean =>
  needle.length > 0 && ` ${haystack} `.includes(` ${needle} `)

// ---------------------------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------------------------

/** A number as written: its value and how many decimals were shown (for rounding-tolerant comparison). */
export interface NumberToken {
  readonly value: number
  readonly decimals: number
  readonly text: string
}

// Thousands separators (1,234,567.89) or plain digits; not glued to letters/underscores (those are ids) and
// not the tail of a dotted version or a decimal already matched.
// The lookahead refuses a digit too, so "42km" is no number (not "4"): digits glued to letters are checked as
// fabricated-number candidates (RuleJudge) instead.
const NUMBER = /(?<![\p{L}\p{N}_.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\p{L}\p{N}_]|\.\d)/gu

const toNumberToken = (raw: string): NumberToken | undefined => {
  const percent = raw.endsWith("%")
  const body = (percent ? raw.slice(0, -1) : raw).replace(/,/g, "")
  const value = Number(body)
  if (!Number.isFinite(value)) return undefined
  const dot = body.indexOf(".")
  return { value, decimals: dot < 0 ? 0 : body.length - dot - 1, text: raw }
}

/** Blanks line-leading list markers ("1." / "2)"): layout, not claims. */
export const maskListMarkers = (text: string): string => text.replace(LIST_MARKER, (m) => " ".repeat(m.length))

/** The numbers written in a text (after dates and ids were masked out by the caller, when they should not count). */
export const extractNumbers = (text: string): ReadonlyArray<NumberToken> => {
  const out: Array<NumberToken> = []
  for (const match of text.matchAll(NUMBER)) {
    const token = toNumberToken(match[0])
    if (token !== undefined) out.push(token)
  }
  return out
}

/** A whole string that is one number (`" 1,234.5 "`, `"12%"`, `"5e-7"`), else undefined. */
export const parseWholeNumber = (text: string): NumberToken | undefined => {
  const trimmed = text.trim()
  if (/^[-+]?\d+(?:\.\d+)?e[-+]?\d+$/i.test(trimmed)) {
    // exponent notation (how JSON numbers sometimes print): decimals as many as the value needs
    const value = Number(trimmed)
    return Number.isFinite(value) ? { value, decimals: 20, text: trimmed } : undefined
  }
  if (!/^[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?$/.test(trimmed)) return undefined
  return toNumberToken(trimmed)
}

/**
 * Whether a number as written (`shown`) states the value `truth`: equal, or equal after rounding `truth`
 * to the decimals `shown` has when it has at least one (so 21.46 states 21.4567, but 21 does not state 21.4567).
 */
export const numberStates = (shown: NumberToken, truth: number): boolean => {
  if (shown.value === truth) return true
  if (shown.decimals === 0) return false
  const half = 0.5 * 10 ** -shown.decimals
  return Math.abs(shown.value - truth) <= half + 1e-12
}

// ---------------------------------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------------------------------

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1, january: 1, feb: 2, february: 2, mar: 3, march: 3, apr: 4, april: 4, may: 5, jun: 6, june: 6,
  jul: 7, july: 7, aug: 8, august: 8, sep: 9, sept: 9, september: 9, oct: 10, october: 10,
  nov: 11, november: 11, dec: 12, december: 12
}
const MONTH_NAME = "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?"

/** Date layouts recognised, each mapped to (year, month, day). US order for slashed dates (M/D/YYYY). */
const DATE_PATTERNS: ReadonlyArray<{ readonly re: RegExp; readonly ymd: (m: RegExpMatchArray) => readonly [string, string, string] }> = [
  // 2024-03-05, 2024-03-05T10:00:00Z, 2024/03/05
  { re: /\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b/gi, ymd: (m) => [m[1] ?? "", m[2] ?? "", m[3] ?? ""] },
  // March 5, 2024 / Mar 5th 2024
  { re: new RegExp(`\\b${MONTH_NAME}\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "gi"), ymd: (m) => [m[3] ?? "", m[1] ?? "", m[2] ?? ""] },
  // 5 March 2024 / 5th of March, 2024
  { re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_NAME},?\\s+(\\d{4})\\b`, "gi"), ymd: (m) => [m[3] ?? "", m[2] ?? "", m[1] ?? ""] },
  // 03/05/2024 (US month/day/year)
  { re: /\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/g, ymd: (m) => [m[3] ?? "", m[1] ?? "", m[2] ?? ""] }
]

const toIso = (year: string, month: string, day: string): string | undefined => {
  const m = /^\d+$/.test(month) ? Number(month) : MONTHS[month.toLowerCase().replace(/\.$/, "")]
  const d = Number(day)
  const y = Number(year)
  if (m === undefined || !Number.isInteger(m) || m < 1 || m > 12 || d < 1 || d > 31 || y < 1000) return undefined
  return `${y}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`
}

/** A date found in a text: its ISO form (yyyy-mm-dd) and where it was. */
export interface DateToken {
  readonly iso: string
  readonly start: number
  readonly end: number
}

/** The dates written in a text, in ISO form, with their spans (for masking). */
export const extractDates = (text: string): ReadonlyArray<DateToken> => {
  const out: Array<DateToken> = []
  // which characters an earlier pattern's date took: a date is short, so checking its span is O(1) per match
  const taken = new Uint8Array(text.length)
  const overlaps = (start: number, end: number): boolean => {
    for (let i = start; i < end; i++) if (taken[i] === 1) return true
    return false
  }
  for (const pattern of DATE_PATTERNS) {
    for (const match of text.matchAll(pattern.re)) {
      const start = match.index
      const end = start + match[0].length
      if (overlaps(start, end)) continue
      const [y, m, d] = pattern.ymd(match)
      const iso = toIso(y, m, d)
      if (iso === undefined) continue
      taken.fill(1, start, end)
      out.push({ iso, start, end })
    }
  }
  return out.sort((a, b) => a.start - b.start)
}

/**
 * The numbers of a text outside its dates, plus each date's year: "2024-03-05" supports 2024 but not 5 or 3.
 * `dates` are the text's {@link extractDates}, when the caller has them already.
 */
export const extractNumbersOutsideDates = (text: string, dates: ReadonlyArray<DateToken> = extractDates(text)): ReadonlyArray<NumberToken> => {
  const rest = maskSpans(text, dates.map((d) => [d.start, d.end] as const))
  const years = dates.map((d): NumberToken => ({ value: Number(d.iso.slice(0, 4)), decimals: 0, text: d.iso.slice(0, 4) }))
  return [...extractNumbers(rest), ...years]
}

/** A whole string that is one date, in ISO form, else undefined. */
export const parseWholeDate = (text: string): string | undefined => {
  const trimmed = text.trim()
  const [only] = extractDates(trimmed)
  return only !== undefined && only.start === 0 && only.end === trimmed.length ? only.iso : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Factual tokens of an answer
// ---------------------------------------------------------------------------------------------------------------

/** The kinds of factual token the rule judge checks against the evidence (clock times count as ids). */
export type FactKind = "quoted" | "date" | "id" | "number" | "entity"

/** One factual token of an answer. */
export type FactToken =
  | { readonly kind: "quoted"; readonly text: string }
  | { readonly kind: "date"; readonly text: string; readonly iso: string }
  | { readonly kind: "id"; readonly text: string }
  | { readonly kind: "number"; readonly text: string; readonly number: NumberToken }
  | { readonly kind: "entity"; readonly text: string }

const QUOTED = /"([^"\n]{1,120})"|“([^”\n]{1,120})”|`([^`\n]{1,120})`|(?<![\p{L}\p{N}])'([^'\n]{1,120})'(?![\p{L}\p{N}])/gu
// A token mixing letters and digits (T42, usr_12, 3fa85f64-5717, ABC-123), possibly with _ - . : inside.
const ID = /(?<![\p{L}\p{N}_])(?=[\p{L}\p{N}_.:-]*\p{L})(?=[\p{L}\p{N}_.:-]*\p{N})[\p{L}\p{N}][\p{L}\p{N}_.:-]*[\p{L}\p{N}](?![\p{L}\p{N}_])/gu
const TIME = /(?<![\p{L}\p{N}_:])\d{1,2}:\d{2}(?::\d{2})?(?![\p{L}\p{N}_:])/gu
// A list marker at the start of a line ("1." / "2)") is layout, not a claim.
// Line-anchored patterns take only spaces and tabs before their marker, never newlines, and have one way to split
// them, so each line start costs that line's length at most (masking leaves long blank runs).
const LIST_MARKER = /^([ \t]*)\d{1,2}[.)](?=[ \t]+\S)/gm
const HEADING = /^[ \t]*#{1,6}[ \t].*$/gm
// Bold labels only: "- **Top Scorer:**" names a field, while a plain "Klay Thompson: 22" line names a player.
const LABEL = /^([ \t]*(?:(?:[-*•+]|\d{1,2}[.)])[ \t]*)?\*\*)([^:\n*]{1,40}?)(:\*\*|\*\*:)/gm
const CAPITALISED = "\\p{Lu}[\\p{L}\\p{M}'’]*(?:[.-]\\p{L}[\\p{L}\\p{M}'’]*)*\\.?"
// "and" is left out on purpose: "Klay Thompson and Draymond Green" is two names, not one.
const CONNECTOR = "(?:of|de|del|della|di|da|du|des|la|le|van|von|der|den|the|&|al|bin|el)"
// a name never runs across a line break ("Verma\nAge" are a list item's end and the next label's start)
const ENTITY = new RegExp(`${CAPITALISED}(?:[ \\t]+(?:${CONNECTOR}[ \\t]+)?${CAPITALISED})+`, "gu")

/** Capitalised words that start sentences or clauses rather than names; stripped from the front of a span. */
const LEADING_STOPWORDS: ReadonlySet<string> = new Set([
  "the", "a", "an", "this", "that", "these", "those", "it", "its", "i", "we", "you", "he", "she", "they", "my", "our",
  "your", "their", "his", "her", "in", "on", "at", "for", "from", "to", "by", "with", "of", "as", "and", "but", "or",
  "so", "then", "also", "however", "according", "based", "here", "there", "yes", "no", "sorry", "unfortunately",
  "finally", "overall", "note", "today", "currently", "both", "all", "each", "every", "some", "if", "when", "while",
  "after", "before", "since", "because", "please", "answer", "result", "results", "is", "are", "was", "were"
])

/** Abbreviations that end in a period inside a name ("St. Louis", "Acme Co. Holdings"); initials are single letters. */
const ABBREVIATIONS: ReadonlySet<string> = new Set([
  "st", "dr", "mr", "mrs", "ms", "jr", "sr", "mt", "ft", "co", "inc", "ltd", "corp", "bros", "no", "vs", "prof", "gen", "ave"
])

/** A factual token and where it sits (`[start, end)`) in the text it was read from. */
export type FactSpan = FactToken & { readonly start: number; readonly end: number }

/** A word of a text with its offsets. */
interface PlacedWord {
  readonly text: string
  readonly start: number
  readonly end: number
}

const placedWords = (text: string, offset: number): Array<PlacedWord> =>
  [...text.matchAll(/\S+/g)].map((m) => ({ text: m[0], start: offset + m.index, end: offset + m.index + m[0].length }))

/**
 * The entity spans of one capitalised run: cut after each word that ends a sentence (a word of two or more letters
 * followed by a period: "Mateus Obi. The distance" is "Mateus Obi" then "The distance", while initials and common
 * abbreviations — "Mia T. Bianchi", "St. Louis" — stay inside the name), leading sentence starters stripped.
 */
const entityPieces = (words: ReadonlyArray<PlacedWord>): ReadonlyArray<ReadonlyArray<PlacedWord>> => {
  const pieces: Array<Array<PlacedWord>> = []
  let current: Array<PlacedWord> = []
  for (const word of words) {
    current.push(word)
    const letters = word.text.replace(/[^\p{L}]/gu, "")
    if (word.text.endsWith(".") && letters.length >= 2 && !ABBREVIATIONS.has(letters.toLowerCase())) {
      pieces.push(current)
      current = []
    }
  }
  if (current.length > 0) pieces.push(current)
  return pieces.map((piece) => {
    let i = 0
    while (i < piece.length && LEADING_STOPWORDS.has((piece[i]?.text ?? "").toLowerCase().replace(/[.’']/g, ""))) i++
    return piece.slice(i)
  })
}

/**
 * The factual tokens of a text with their offsets, extracted in priority order (each kind masks its text from the
 * later ones): quoted values, dates, ids (letters mixed with digits) and clock times, numbers (not line-leading list
 * markers), and named entities (two or more capitalised words, connectors like "of" allowed inside, sentence starters
 * stripped; markdown headings and line-leading bold labels such as `**Top Scorer:**` are not entities). The caller
 * bounds the text (no word longer than {@link MAX_WORD_CHARS}, whitespace runs collapsed): then every regex runs in
 * time linear in the text, and masking keeps offsets.
 */
export const extractFactSpans = (bounded: string): ReadonlyArray<FactSpan> => {
  const tokens: Array<FactSpan> = []
  let text = bounded

  const quotedSpans: Array<readonly [number, number]> = []
  for (const match of text.matchAll(QUOTED)) {
    const inner = (match[1] ?? match[2] ?? match[3] ?? match[4] ?? "").trim()
    const start = match.index
    const end = match.index + match[0].length
    if (normalizeText(inner).length > 0) tokens.push({ kind: "quoted", text: inner, start, end })
    quotedSpans.push([start, end])
  }
  text = maskSpans(text, quotedSpans)

  const dates = extractDates(text)
  for (const date of dates) tokens.push({ kind: "date", text: text.slice(date.start, date.end), iso: date.iso, start: date.start, end: date.end })
  text = maskSpans(text, dates.map((d) => [d.start, d.end] as const))

  const idSpans: Array<readonly [number, number]> = []
  // Clock times (10:30, 08:15:00) are compared as written, like ids.
  for (const match of text.matchAll(TIME)) {
    tokens.push({ kind: "id", text: match[0], start: match.index, end: match.index + match[0].length })
    idSpans.push([match.index, match.index + match[0].length])
  }
  text = maskSpans(text, idSpans)
  for (const match of text.matchAll(ID)) {
    // A plain decimal (3.5) or a clock time (10:30) is a number, not an id.
    if (/^[\d.:,-]+$/.test(match[0]) || /^\d+(?:st|nd|rd|th|s|k|m|km|kg|h|am|pm)$/i.test(match[0])) continue
    tokens.push({ kind: "id", text: match[0], start: match.index, end: match.index + match[0].length })
    idSpans.push([match.index, match.index + match[0].length])
  }
  text = maskSpans(text, idSpans)

  text = maskListMarkers(text)
  const numberSpans: Array<readonly [number, number]> = []
  for (const match of text.matchAll(NUMBER)) {
    const number = toNumberToken(match[0])
    if (number === undefined) continue
    tokens.push({ kind: "number", text: match[0], number, start: match.index, end: match.index + match[0].length })
    numberSpans.push([match.index, match.index + match[0].length])
  }
  text = maskSpans(text, numberSpans)

  // Markdown headings and line-leading bold labels ("- **Top scorer:** …") are layout, not claims.
  text = text.replace(HEADING, (m) => " ".repeat(m.length)).replace(LABEL, (_m, lead: string, label: string, colon: string) =>
    `${lead}${" ".repeat(label.length)}${colon}`
  )
  for (const match of text.matchAll(ENTITY)) {
    for (const piece of entityPieces(placedWords(match[0], match.index))) {
      const first = piece[0]
      const last = piece[piece.length - 1]
      if (first === undefined || last === undefined) continue
      const end = last.text.endsWith(".") ? last.end - 1 : last.end
      const span = bounded.slice(first.start, end)
      if (piece.filter((w) => /^\p{Lu}/u.test(w.text)).length >= 2) tokens.push({ kind: "entity", text: span, start: first.start, end })
    }
  }
  return tokens
}

/**
 * The factual tokens of an answer ({@link extractFactSpans} of the answer as {@link boundForExtraction} bounds it), so
 * the time is linear in the answer's length and at most O({@link MAX_EXTRACTED_CHARS} · {@link MAX_WORD_CHARS}) in the regexes.
 */
export const extractFactTokens = (answer: string): ReadonlyArray<FactToken> =>
  extractFactSpans(boundForExtraction(answer)).map(({ start: _start, end: _end, ...token }) => token as FactToken)

// ---------------------------------------------------------------------------------------------------------------
// Digit runs (for the fabricated-number check)
// ---------------------------------------------------------------------------------------------------------------

/** A maximal run of digits in a text, groups joined by single `.` or `,` (`1,234.5`), whatever surrounds it. */
export interface DigitRun {
  readonly text: string
  /** Its digit groups with leading zeros stripped (`"03"` → `"3"`), as they would be compared with the evidence's. */
  readonly groups: ReadonlyArray<string>
  /** Its value when it reads as one number (thousands commas or one decimal point), else undefined. */
  readonly number: NumberToken | undefined
  /** Whether a `%` follows it. */
  readonly percent: boolean
  /** Whether an ordinal suffix follows it (`1st`, `22nd`): a rank, not a claimed quantity. */
  readonly ordinal: boolean
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57

const stripZeros = (group: string): string => group.replace(/^0+(?=\d)/, "")

/**
 * Every digit run of a text, in one linear scan: "42km" gives 42 and "ORD-17" gives 17, unlike {@link extractNumbers},
 * which leaves digits glued to letters to the id rules. Runs of more than {@link MAX_WORD_CHARS} characters are cut.
 */
export const digitRuns = (text: string): ReadonlyArray<DigitRun> => {
  const out: Array<DigitRun> = []
  let i = 0
  while (i < text.length) {
    if (!isDigit(text.charCodeAt(i))) {
      i++
      continue
    }
    const start = i
    while (
      i < text.length && i - start < MAX_WORD_CHARS &&
      (isDigit(text.charCodeAt(i)) || ((text[i] === "." || text[i] === ",") && isDigit(text.charCodeAt(i + 1)) && isDigit(text.charCodeAt(i - 1))))
    ) i++
    const raw = text.slice(start, i)
    const percent = text[i] === "%"
    const ordinal = /^(?:st|nd|rd|th)(?![\p{L}\p{N}])/iu.test(text.slice(i, i + 3))
    out.push({ text: raw, groups: raw.split(/[.,]/).map(stripZeros), number: parseWholeNumber(raw), percent, ordinal })
    // skip the rest of an over-long run
    while (i < text.length && isDigit(text.charCodeAt(i))) i++
  }
  return out
}

/** The digit groups of every digit run of a text (leading zeros stripped), for support checks. */
export const digitGroups = (text: string): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const run of digitRuns(text)) for (const g of run.groups) out.add(g)
  return out
}
