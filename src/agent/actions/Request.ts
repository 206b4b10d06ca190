/**
 * The request, read for the action space: its capability clauses, the search queries a clause gives, the literal
 * values it writes (with the words before each), and how many items a clause asks for. Pure.
 */
import { tokens } from "./Text.ts"

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
export const requestedCount = (clause: string): number => {
  const m = clause.toLowerCase().match(/\b(?:first|top|latest|last)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b/)
  if (m === null) return /\b(list|all|which are|name)\b/i.test(clause) ? 3 : 1
  const word = m[1] as string
  return numberWords[word] ?? Number(word)
}
