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
  /**
   * `quoted` a quoted string; `number`, `date` bare ones; `labelled` a `label: value` pair in parentheses (its label is
   * the words before the colon); `phrase` an item in parentheses with no colon (`applicant name Julia Madsen`: which
   * words are the label is read against each parameter's description, `Calls.valueOptions`).
   */
  readonly kind: "quoted" | "number" | "date" | "labelled" | "phrase"
  readonly label: ReadonlySet<string>
  readonly clause: number
}

const numberWords: Readonly<Record<string, number>> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 }

/** The words a range's first and last value carry ("between A and B": A is the start, B the end). */
const rangeStart = "start first from since begin earliest minimum min"
const rangeEnd = "end last until latest maximum max"

/** The parenthesised parts of a clause (nesting kept inside: "(Height (cm): 171)" is one part). */
const parenthesised = (clause: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let from = -1
  for (let i = 0; i < clause.length; i++) {
    if (clause[i] === "(") {
      if (depth === 0) from = i + 1
      depth++
    } else if (clause[i] === ")" && depth > 0) {
      depth--
      if (depth === 0) out.push(clause.slice(from, i))
    }
  }
  return out
}

/** The items of a parenthesised part, split at the commas outside nested parentheses and quotes. */
const items = (part: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  let depth = 0
  let quoted = false
  let from = 0
  for (let i = 0; i < part.length; i++) {
    const c = part[i]
    if (c === "\"") quoted = !quoted
    else if (!quoted && c === "(") depth++
    else if (!quoted && c === ")") depth--
    else if (!quoted && depth === 0 && c === ",") {
      out.push(part.slice(from, i).trim())
      from = i + 1
    }
  }
  out.push(part.slice(from).trim())
  return out.filter((x) => x.length > 0)
}

/**
 * Quoted strings, bare ISO dates (`2024-04-13`, what `format: date` parameters take) and bare numbers of every
 * clause, each with the words before it ("between A and B" adds the words of a range's start to A and of its end to
 * B); and the unquoted values in parentheses: `label: value` pairs, and items without a colon (`phrase`).
 */
export const literalsOf = (clauses: ReadonlyArray<string>): ReadonlyArray<Literal> => {
  const out: Array<Literal> = []
  clauses.forEach((clause, index) => {
    let rangeOpen = false
    for (const m of clause.matchAll(/"([^"]+)"|(?<![\w.-])(\d{4}-\d{2}-\d{2})(?![\w-])|(?<![\w.-])(-?\d+(?:\.\d+)?)(?![\w-])/g)) {
      const before = clause.slice(0, m.index).split(/\s+/).slice(-4).join(" ")
      const value = m[1] ?? m[2] ?? m[3] ?? ""
      const previous = (clause.slice(0, m.index).trim().split(/\s+/).at(-1) ?? "").toLowerCase()
      let extra = ""
      if (m[2] !== undefined && /^(between|from|since)$/.test(previous)) {
        extra = rangeStart
        rangeOpen = true
      } else if (m[2] !== undefined && rangeOpen && /^(and|to|until)$/.test(previous)) {
        extra = rangeEnd
        rangeOpen = false
      }
      const label = extra.length > 0 ? new Set([...tokens(before), ...tokens(extra)]) : tokens(before)
      out.push({ value, kind: m[1] !== undefined ? "quoted" : m[2] !== undefined ? "date" : "number", label, clause: index })
    }
    for (const part of parenthesised(clause)) {
      for (const item of items(part)) {
        const colon = item.lastIndexOf(": ")
        if (colon > 0) {
          const value = item.slice(colon + 2).replace(/^"|"$/g, "").trim()
          if (value.length === 0 || out.some((l) => l.clause === index && l.value === value && l.kind !== "labelled" && l.kind !== "phrase" && /^-?\d/.test(value))) continue
          out.push({ value, kind: "labelled", label: tokens(item.slice(0, colon)), clause: index })
        } else if (/\s/.test(item) && !item.includes("\"")) {
          out.push({ value: item, kind: "phrase", label: tokens(item), clause: index })
        }
      }
    }
  })
  return out
}

/** The number a clause counts its items by ("first three", "top 3", "latest 5"), when it names one. */
const countNamed = (clause: string): number | undefined => {
  const m = clause.toLowerCase().match(/\b(?:first|top|latest|last)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b/)
  if (m === null) return undefined
  const word = m[1] as string
  return numberWords[word] ?? Number(word)
}

/** Words that ask for a list of things without saying how many ("all the invoices", "list the posts"). */
const listing = /\b(list|all|which are|name)\b/i

/** How many items a clause asks for ("first three", "top 3"; 3 for a list without a number; default 1 for "the first of"). */
export const requestedCount = (clause: string): number => countNamed(clause) ?? (listing.test(clause) ? 3 : 1)

/**
 * How many records of one list a clause's answer may draw on: the number it counts by ("the first three domains":
 * 3), every record when it asks for a list without a number ("all the invoices", "list the posts": Infinity), one
 * otherwise ("the wins of the first of the teams", "the monthly visits of the domain X").
 */
export const recordsAsked = (clause: string): number => countNamed(clause) ?? (listing.test(clause) ? Infinity : 1)

/** Words that say how many or which items, not what: a phrase of only these names no capability. */
export const countingWords: ReadonlySet<string> = new Set([
  "first", "top", "latest", "last", "all", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "list", "name",
  "tell", "find", "give", "show", "get", "look", "which", "what", "me"
])

/**
 * A text cut at each "of" that opens a new noun phrase ("the page count | of the first | of the books with language");
 * an "of" inside a phrase stays ("number of ratings").
 */
export const ofPhrases = (text: string): ReadonlyArray<string> => {
  const parts: Array<string> = []
  for (const piece of text.split(/\s+of\s+/i)) {
    if (parts.length > 0 && !/^(the|a|an|this|that|its|their|each|every)\s/i.test(piece)) parts[parts.length - 1] += ` of ${piece}`
    else parts.push(piece)
  }
  return parts
}

/** Words that open another request after "and" ("look up X and give me its Y"): not a second attribute. */
const requestOpeners = /^(give|tell|find|show|list|name|get|send|return|compute|calculate|convert|look|check|fetch|provide|let|please|what|which|who|how|i)\b/

/**
 * How many attributes a clause names: 1, plus each "and" that joins another attribute ("the rating and street address
 * of …" 2), plus the list commas before it ("the rating, address and phone" 3). Quoted values and parentheses are not
 * read; an "and" of a range ("between 2024-04-01 and 2024-04-14") or one that opens another request ("look up X and
 * give me its cuisine") joins no attribute.
 */
export const attributesAsked = (clause: string): number => {
  const bare = clause
    .replace(/"[^"]*"/g, " v ")
    .replace(/\((?:[^()]|\([^()]*\))*\)/g, " ")
    .toLowerCase()
  const parts = bare.split(/\s+and\s+/)
  let n = 1
  for (let i = 1; i < parts.length; i++) {
    const before = parts[i - 1] as string
    const after = (parts[i] as string).trim()
    if (/\b(between|from)\s+\S+\s*$/.test(before) || requestOpeners.test(after)) continue
    const tail = before.slice(before.lastIndexOf(" the ") + 1)
    n += 1 + (tail.match(/,/g)?.length ?? 0)
  }
  return n
}

/** How many values a clause asks for: the items it counts times the attributes it names of each. */
export const requestedValues = (clause: string): number => requestedCount(clause) * attributesAsked(clause)

/**
 * The head of a clause: what it asks for, before the "of" that opens the thing it is asked of ("find the number of
 * posts and trending rank | of the hashtag …" → "find the number of posts and trending rank"; "name all the domains
 * hosted there | of the IP address …"). Quoted values and parentheses are dropped; a clause with no such "of" is its own head.
 */
export const headPhrase = (clause: string): string => {
  const bare = clauseQueries(clause).bare.replace(/\s*\((?:[^()]|\([^()]*\))*\)/g, "")
  return ofPhrases(bare)[0] ?? ""
}
