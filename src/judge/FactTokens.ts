/**
 * Text normalisation and factual-token extraction for the rule judge: numbers, dates, ids, quoted values and
 * named entities, each compared in a canonical form so "1,234.0", "1234" and "1 234" are one number.
 */

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
const NUMBER = /(?<![\p{L}\p{N}_.])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?%?(?![\p{L}_]|\.\d)/gu

const toNumberToken = (raw: string): NumberToken | undefined => {
  const percent = raw.endsWith("%")
  const body = (percent ? raw.slice(0, -1) : raw).replace(/,/g, "")
  const value = Number(body)
  if (!Number.isFinite(value)) return undefined
  const dot = body.indexOf(".")
  return { value, decimals: dot < 0 ? 0 : body.length - dot - 1, text: raw }
}

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
  const taken: Array<readonly [number, number]> = []
  for (const pattern of DATE_PATTERNS) {
    for (const match of text.matchAll(pattern.re)) {
      const start = match.index
      const end = start + match[0].length
      if (taken.some(([s, e]) => start < e && end > s)) continue
      const [y, m, d] = pattern.ymd(match)
      const iso = toIso(y, m, d)
      if (iso === undefined) continue
      taken.push([start, end])
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
  let rest = text
  for (const d of dates) rest = rest.slice(0, d.start) + " ".repeat(d.end - d.start) + rest.slice(d.end)
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
const LIST_MARKER = /^(\s*)\d{1,2}[.)](?=\s)/gm
const HEADING = /^[ \t]*#{1,6}[ \t].*$/gm
// Bold labels only: "- **Top Scorer:**" names a field, while a plain "Klay Thompson: 22" line names a player.
const LABEL = /^([ \t]*(?:[-*•+]|\d{1,2}[.)])?[ \t]*\*\*)([^:\n*]{1,40}?)(:\*\*|\*\*:)/gm
const CAPITALISED = "\\p{Lu}[\\p{L}\\p{M}'’]*(?:[.-]\\p{L}[\\p{L}\\p{M}'’]*)*\\.?"
// "and" is left out on purpose: "Klay Thompson and Draymond Green" is two names, not one.
const CONNECTOR = "(?:of|de|del|della|di|da|du|des|la|le|van|von|der|den|the|&|al|bin|el)"
const ENTITY = new RegExp(`${CAPITALISED}(?:\\s+(?:${CONNECTOR}\\s+)?${CAPITALISED})+`, "gu")

/** Capitalised words that start sentences or clauses rather than names; stripped from the front of a span. */
const LEADING_STOPWORDS: ReadonlySet<string> = new Set([
  "the", "a", "an", "this", "that", "these", "those", "it", "its", "i", "we", "you", "he", "she", "they", "my", "our",
  "your", "their", "his", "her", "in", "on", "at", "for", "from", "to", "by", "with", "of", "as", "and", "but", "or",
  "so", "then", "also", "however", "according", "based", "here", "there", "yes", "no", "sorry", "unfortunately",
  "finally", "overall", "note", "today", "currently", "both", "all", "each", "every", "some", "if", "when", "while",
  "after", "before", "since", "because", "please", "answer", "result", "results", "is", "are", "was", "were"
])

const mask = (text: string, spans: ReadonlyArray<readonly [number, number]>): string => {
  let out = text
  for (const [start, end] of spans) out = out.slice(0, start) + " ".repeat(end - start) + out.slice(end)
  return out
}

const stripLeading = (span: string): string => {
  const words = span.split(/\s+/)
  let i = 0
  while (i < words.length && LEADING_STOPWORDS.has((words[i] ?? "").toLowerCase().replace(/[.’']/g, ""))) i++
  return words.slice(i).join(" ")
}

/**
 * The factual tokens of an answer, extracted in priority order (each kind masks its text from the later ones):
 * quoted values, dates, ids (letters mixed with digits), numbers (not line-leading list markers), and named
 * entities (two or more capitalised words, connectors like "of" allowed inside, sentence starters stripped; markdown
 * headings and line-leading bold labels such as `**Top Scorer:**` are not entities).
 */
export const extractFactTokens = (answer: string): ReadonlyArray<FactToken> => {
  const tokens: Array<FactToken> = []
  let text = answer

  const quotedSpans: Array<readonly [number, number]> = []
  for (const match of text.matchAll(QUOTED)) {
    const inner = (match[1] ?? match[2] ?? match[3] ?? match[4] ?? "").trim()
    if (normalizeText(inner).length > 0) tokens.push({ kind: "quoted", text: inner })
    quotedSpans.push([match.index, match.index + match[0].length])
  }
  text = mask(text, quotedSpans)

  const dates = extractDates(text)
  for (const date of dates) tokens.push({ kind: "date", text: text.slice(date.start, date.end), iso: date.iso })
  text = mask(text, dates.map((d) => [d.start, d.end] as const))

  const idSpans: Array<readonly [number, number]> = []
  // Clock times (10:30, 08:15:00) are compared as written, like ids.
  for (const match of text.matchAll(TIME)) {
    tokens.push({ kind: "id", text: match[0] })
    idSpans.push([match.index, match.index + match[0].length])
  }
  text = mask(text, idSpans)
  for (const match of text.matchAll(ID)) {
    // A plain decimal (3.5) or a clock time (10:30) is a number, not an id.
    if (/^[\d.:,-]+$/.test(match[0]) || /^\d+(?:st|nd|rd|th|s|k|m|km|kg|h|am|pm)$/i.test(match[0])) continue
    tokens.push({ kind: "id", text: match[0] })
    idSpans.push([match.index, match.index + match[0].length])
  }
  text = mask(text, idSpans)

  text = text.replace(LIST_MARKER, (m) => " ".repeat(m.length))
  const numberSpans: Array<readonly [number, number]> = []
  for (const match of text.matchAll(NUMBER)) {
    const number = toNumberToken(match[0])
    if (number === undefined) continue
    tokens.push({ kind: "number", text: match[0], number })
    numberSpans.push([match.index, match.index + match[0].length])
  }
  text = mask(text, numberSpans)

  // Markdown headings and line-leading bold labels ("- **Top scorer:** …") are layout, not claims.
  text = text.replace(HEADING, (m) => " ".repeat(m.length)).replace(LABEL, (_m, lead: string, label: string, colon: string) =>
    `${lead}${" ".repeat(label.length)}${colon}`
  )
  for (const match of text.matchAll(ENTITY)) {
    const span = stripLeading(match[0].replace(/\.$/, ""))
    if (span.split(/\s+/).filter((w) => /^\p{Lu}/u.test(w)).length >= 2) tokens.push({ kind: "entity", text: span })
  }
  return tokens
}
