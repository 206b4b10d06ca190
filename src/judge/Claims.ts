/**
 * The claim reader: an answer → the text the rule judge reads (NFKC, invisible characters removed, digits of every
 * script and CJK numerals read as digits, JSON rendered as `label: value` lines) → segments, each one claim (an
 * optional label bound to a value part) → the value-bearing spans (numbers however written, dates, times, ids, quoted
 * values, names, plain text values) and the residue the reader cannot parse. Quality and Faithfulness read exactly
 * these spans, so no text is seen by one and hidden from the other. Pure; linear in the answer's length.
 */
import { extractFactSpans, type FactSpan, MAX_EXTRACTED_CHARS, MAX_WORD_CHARS, normalizeText, type NumberToken } from "./FactTokens.ts"
import { readNumberWords } from "./Numerals.ts"
import { normalize, renderJsonIn } from "./ClaimText.ts"
export { normalize, renderJson } from "./ClaimText.ts"

/** The reader reads at most this many characters of the normalised answer; the rest is unread content (unsupported). */
export const MAX_READ_CHARS = MAX_EXTRACTED_CHARS

/** Raw characters normalised before the read limit applies (normalisation only shrinks text; the rest is unread). */
export const RAW_READ_CHARS = 4 * MAX_READ_CHARS

/**
 * A value part of at most this many content words with no typed value in it is a text value to check ("status:
 * shipped", "not classified", "held at customs"); a longer one, or one that opens like a sentence ("I need …"), is prose.
 */
export const MAX_TEXT_VALUE_WORDS = 4

/** Words that open a sentence, not a value: a value part starting with one is prose. */
const SENTENCE_OPENERS: ReadonlySet<string> = new Set(["i", "we", "you", "it", "he", "she", "they", "this", "that", "there", "here", "please", "let"])
// ---------------------------------------------------------------------------------------------------------------
// The reading
// ---------------------------------------------------------------------------------------------------------------

/** A word of the read text: letters and digits, normalised (accents stripped, lower case), with its offsets. */
export interface Word {
  readonly norm: string
  readonly start: number
  readonly end: number
}

/** One claim: a label part (what the claim is about) and a value part (what it says of it), or a free segment. */
export interface Segment {
  readonly start: number
  readonly end: number
  /** Where the value part starts; `start` for a free segment, `end` for a table header (all label). */
  readonly valueStart: number
  /** The normalised words of the label ("" words for a free segment). */
  readonly label: ReadonlyArray<string>
  /**
   * When the value part holds another separator ("Voici ce que … : <label> : <value>", a frame before the label):
   * the words between the first and the last separator, a second candidate label, and where the last value starts.
   */
  readonly inner?: { readonly label: ReadonlyArray<string>; readonly valueStart: number }
  /** `claim`: label and value; `free`: no label found (prose, a value alone); `header`: a table header row. */
  readonly kind: "claim" | "free" | "header"
}

/** What a value-bearing span holds. */
export type SpanKind = "number" | "date" | "id" | "quoted" | "entity" | "text" | "residue"

/** A value-bearing span of the read text. */
export interface ValueSpan {
  readonly kind: SpanKind
  readonly start: number
  readonly end: number
  /** The span's text (for `residue`, the whole unparsed token). */
  readonly text: string
  readonly number?: NumberToken
  readonly iso?: string
  /** Index of the segment holding its start. */
  readonly segment: number
  /** Whether it sits in the segment's label part (what the claim is about) rather than its value part. */
  readonly inLabel: boolean
  /** Whether it is the whole value of its segment (nothing but stopwords and punctuation around it). */
  readonly whole: boolean
  /** A number written as one ambiguous word ("one", "first"): read only as the whole value of a claim. */
  readonly ambiguous?: boolean
}

/** The answer as the rule judge reads it. */
export interface Reading {
  /** The read text: normalised, JSON rendered, markdown emphasis and list markers dropped, whitespace collapsed, cut at {@link MAX_READ_CHARS}, over-long words blanked. */
  readonly text: string
  /** Characters of the normalised answer past the read prefix: never read, so judged as unsupported content. */
  readonly unread: number
  readonly words: ReadonlyArray<Word>
  readonly segments: ReadonlyArray<Segment>
  /** Every value-bearing span, ordered by start. Residue spans hold words longer than {@link MAX_WORD_CHARS}. */
  readonly spans: ReadonlyArray<ValueSpan>
  /** Offset of the first retraction ("disregard all of the above"), or −1: claims before it are withdrawn. */
  readonly retraction: number
  /** O(log n) look-ups over `words`. */
  readonly index: WordIndex
}

/** Words that carry no fact: not content words of a label or a text value. */
export const STOPWORDS: ReadonlySet<string> = new Set([
  "a", "an", "the", "of", "and", "or", "is", "are", "was", "were", "be", "been", "to", "in", "on", "at", "for", "with",
  "by", "from", "as", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom", "whose", "here",
  "there", "has", "have", "had", "not", "no", "yes", "i", "you", "we", "they", "he", "she", "my", "your", "our", "their",
  "his", "her", "do", "does", "did", "can", "could", "would", "will", "s", "also", "than", "then", "so", "if", "but"
])

/** One space for every run of spaces, lines trimmed, blank lines dropped; a label alone on its line joins its value's line. */
const collapse = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.replace(/ {2,}/g, " ").trim())
    .filter((line) => line.length > 0)
    .join("\n")
    .replace(/(?<=[^\s:|])( ?):\n(?!\|)/g, "$1: ")

/**
 * Markdown that is layout: emphasis markers, heading marks, list bullets and numbers at a line start, table rules. A
 * list number is layout only when the item has content on its line: a line that is only "52." states 52.
 */
const dropLayout = (text: string): string =>
  text
    .replace(/\*\*|__/g, "")
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, "")
    .replace(/^[ \t]*(?:[-*•+]|\d{1,2}[.)])[ \t]+(?=\S)/gm, "")

const WORD = /[\p{L}\p{N}]+/gu

/** The words of a text, normalised, with offsets. */
export const wordsOf = (text: string): Array<Word> => {
  const out: Array<Word> = []
  for (const m of text.matchAll(WORD)) {
    const norm = m[0].normalize("NFKD").replace(/\p{M}+/gu, "").toLowerCase()
    if (norm.length > 0) out.push({ norm, start: m.index, end: m.index + m[0].length })
  }
  return out
}

/**
 * Blanks every whitespace-delimited token longer than {@link MAX_WORD_CHARS} (so no regex backtracks over it) and
 * returns where each was, with its text: the reader never drops it — it is a `residue` span, unsupported unless a tool
 * output holds exactly that token.
 */
const blankLongTokens = (text: string): { readonly text: string; readonly residue: Array<{ start: number; end: number; raw: string }> } => {
  const residue: Array<{ start: number; end: number; raw: string }> = []
  const out = text.replace(/\S{101,}/g, (m, offset: number) => {
    if (m.length <= MAX_WORD_CHARS) return m
    residue.push({ start: offset, end: offset + m.length, raw: m })
    return " ".repeat(m.length)
  })
  return { text: out, residue }
}

const ABBREVIATIONS: ReadonlySet<string> = new Set(["st", "dr", "mr", "mrs", "ms", "jr", "sr", "mt", "ft", "co", "inc", "ltd", "corp", "bros", "no", "vs", "prof", "gen", "ave", "e.g", "i.e", "etc", "approx"])

/** Segment boundaries of one line: `;`, and a sentence end (`.`/`!`/`?` then a space and an upper-case letter, digit or quote). */
const lineSegments = (text: string, from: number, to: number): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = []
  let start = from
  let quoted = false
  for (let i = from; i < to; i++) {
    const c = text[i]
    if (c === "\"") quoted = !quoted
    if (quoted) continue
    if (c === ";") {
      out.push([start, i])
      start = i + 1
      continue
    }
    if ((c === "." || c === "!" || c === "?") && text[i + 1] === " ") {
      const next = text[i + 2] ?? ""
      if (!/[\p{Lu}\p{N}"']/u.test(next)) continue
      if (c === ".") {
        // an initial ("Mia T. Bianchi") or an abbreviation ("St. Louis") does not end a sentence
        const before = /([\p{L}\p{N}.]+)$/u.exec(text.slice(Math.max(from, i - 12), i))?.[1] ?? ""
        const word = before.replace(/\./g, "")
        if ((word.length <= 1 && /\p{L}/u.test(word)) || ABBREVIATIONS.has(before.toLowerCase())) continue
      }
      out.push([start, i + 1])
      start = i + 2
    }
  }
  out.push([start, to])
  return out
}

const COPULA = /(?<![\p{L}\p{N}])(?:is|are|was|were|equals|equal to|has been|have been|stands at|amounts to|came to|totals|totalled|totaled)(?![\p{L}\p{N}])/giu

/**
 * The label separator of a segment outside quotes: the first `:` followed by a space (not a time or a URL), ` = `,
 * ` -> `, ` → ` or ` — `; else −1 and 0. The first, because values may hold colons ("Re: Project review") and labels
 * rarely do outside quotes.
 */
const separatorOf = (text: string, start: number, end: number): { readonly at: number; readonly length: number } => {
  let quoted = false
  for (let i = start; i < end; i++) {
    const c = text[i]
    if (c === "\"") quoted = !quoted
    if (quoted) continue
    if (c === ":" && (i + 1 === end || text[i + 1] === " " || text[i + 1] === "\n")) return { at: i, length: 1 }
    if ((c === "=" || c === "→" || c === "—") && text[i - 1] === " " && text[i + 1] === " ") return { at: i, length: 1 }
    if (c === "-" && text[i + 1] === ">" && text[i - 1] === " ") return { at: i, length: 2 }
  }
  return { at: -1, length: 0 }
}

/** The last `:` separator of [start, end) outside quotes (see {@link separatorOf}), or −1. */
const lastSeparatorOf = (text: string, start: number, end: number): { readonly at: number; readonly length: number } => {
  let quoted = false
  let last = { at: -1, length: 0 }
  for (let i = start; i < end; i++) {
    const c = text[i]
    if (c === "\"") quoted = !quoted
    if (!quoted && c === ":" && (i + 1 === end || text[i + 1] === " ")) last = { at: i, length: 1 }
  }
  return last
}

/**
 * The last copula ("is", "was", …) after at least one content word, outside quotes: the label/value boundary of a
 * sentence — the last, because what a sentence is about may itself hold one ("whether it is publicly traded … is true").
 * `contentFrom` is where the segment's first content word ends (−1: none). One regex pass over the segment.
 */
const copulaOf = (text: string, start: number, end: number, contentFrom: number): { readonly at: number; readonly length: number } => {
  if (contentFrom < 0 || contentFrom >= end) return { at: -1, length: 0 }
  const slice = text.slice(start, end)
  let quotes = 0
  for (let i = 0; i < contentFrom - start; i++) if (slice[i] === "\"") quotes++
  let pos = contentFrom - start
  let last = { at: -1, length: 0 }
  COPULA.lastIndex = pos
  for (let m = COPULA.exec(slice); m !== null; m = COPULA.exec(slice)) {
    for (let i = pos; i < m.index; i++) if (slice[i] === "\"") quotes++
    pos = m.index
    if (quotes % 2 === 0) last = { at: start + m.index, length: m[0].length }
  }
  return last
}

const TRIMMED = new Set([..." \n\t.,;:!?()[]\"'—-"].map((c) => c.charCodeAt(0)))

/** [start, end) without the spaces and punctuation at either end. */
export const trimmedBounds = (text: string, start: number, end: number): readonly [number, number] => {
  let s = start
  let e = end
  while (s < e && TRIMMED.has(text.charCodeAt(s))) s++
  while (e > s && TRIMMED.has(text.charCodeAt(e - 1))) e--
  return [s, e]
}

/** Builds the segments of the read text: lines, table rows and cells, sentences and `;` parts, each with its label. */
const segmentsOf = (text: string, index: WordIndex): Array<Segment> => {
  const segments: Array<Segment> = []
  const lines: Array<readonly [number, number]> = []
  let from = 0
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || text[i] === "\n") {
      lines.push([from, i])
      from = i + 1
    }
  }
  const cellsOf = (s: number, e: number): Array<readonly [number, number]> => {
    const cells: Array<readonly [number, number]> = []
    let at = text.indexOf("|", s)
    while (at >= 0 && at < e) {
      const next = text.indexOf("|", at + 1)
      if (next < 0 || next > e) break
      cells.push([at + 1, next])
      at = next
    }
    return cells
  }
  const isRule = (s: number, e: number) => /^\|?[\s:|-]+\|?$/.test(text.slice(s, e)) && text.slice(s, e).includes("-")
  let header: Array<ReadonlyArray<string>> | undefined
  for (let l = 0; l < lines.length; l++) {
    const [s, e] = lines[l] as readonly [number, number]
    const line = text.slice(s, e)
    if (line.startsWith("|") && line.indexOf("|", 1) > 0) {
      if (isRule(s, e)) continue
      const cells = cellsOf(s, e)
      const nextRule = l + 1 < lines.length && isRule(...(lines[l + 1] as readonly [number, number]))
      if (nextRule) {
        header = cells.map(([a, b]) => wordsOf(text.slice(a, b)).map((w) => w.norm))
        segments.push({ start: s, end: e, valueStart: e, label: [], kind: "header" })
        continue
      }
      if (cells.length === 2) {
        const [a, b] = cells as [readonly [number, number], readonly [number, number]]
        segments.push({ start: a[0], end: b[1], valueStart: b[0], label: wordsOf(text.slice(a[0], a[1])).map((w) => w.norm), kind: "claim" })
      } else {
        cells.forEach(([a, b], j) => {
          const label = header?.[j] ?? []
          segments.push({ start: a, end: b, valueStart: a, label, kind: label.length > 0 ? "claim" : "free" })
        })
      }
      continue
    }
    header = undefined
    for (const [a, b] of lineSegments(text, s, e)) {
      if (a >= b) continue
      // the earlier of a separator and a copula: "The emails are Re: Project 556" is about the emails
      const sep = separatorOf(text, a, b)
      const copula = copulaOf(text, a, b, index.firstContentEnd(a, b))
      const boundary = sep.at < 0 || (copula.at >= 0 && copula.at < sep.at) ? copula : sep
      if (boundary.at >= 0) {
        const valueStart = boundary.at + boundary.length
        const last = lastSeparatorOf(text, valueStart, b)
        segments.push({
          start: a,
          end: b,
          valueStart,
          label: wordsOf(text.slice(a, boundary.at)).map((w) => w.norm),
          kind: "claim",
          ...(last.at >= 0 ? { inner: { label: wordsOf(text.slice(valueStart, last.at)).map((w) => w.norm), valueStart: last.at + last.length } } : {})
        })
      } else {
        segments.push({ start: a, end: b, valueStart: a, label: [], kind: "free" })
      }
    }
  }
  return segments
}

/** Look-ups over the words of a text, each O(log n): which words lie in a range, how many are content words. */
export interface WordIndex {
  /** The index of the first word starting at or after `offset`. */
  readonly at: (offset: number) => number
  /** How many words lie in [start, end). */
  readonly count: (start: number, end: number) => number
  /** How many content words (not stopwords) lie in [start, end). */
  readonly content: (start: number, end: number) => number
  /** Where the first content word (not a stopword, not a bare number) of [start, end) ends, or −1. */
  readonly firstContentEnd: (start: number, end: number) => number
}

const indexWords = (words: ReadonlyArray<Word>): WordIndex => {
  const contentBefore = new Int32Array(words.length + 1)
  const nextContent = new Int32Array(words.length + 1).fill(-1)
  words.forEach((w, i) => {
    contentBefore[i + 1] = (contentBefore[i] as number) + (STOPWORDS.has(w.norm) ? 0 : 1)
  })
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i] as Word
    nextContent[i] = !STOPWORDS.has(w.norm) && !/^\d+$/.test(w.norm) ? i : (nextContent[i + 1] as number)
  }
  const at = (offset: number): number => {
    let lo = 0
    let hi = words.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((words[mid] as Word).start < offset) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return {
    at,
    count: (start, end) => Math.max(0, at(end) - at(start)),
    content: (start, end) => Math.max(0, (contentBefore[at(end)] as number) - (contentBefore[at(start)] as number)),
    firstContentEnd: (start, end) => {
      const i = nextContent[at(start)] as number
      const w = words[i]
      return i < 0 || w === undefined || w.start >= end ? -1 : w.end
    }
  }
}

const ORDINAL_DIGITS = /(?<![\p{L}\p{N}_.,])(\d{1,3}(?:,\d{3})+|\d+)(st|nd|rd|th)(?![\p{L}\p{N}_])/giu

/** Phrases that withdraw what came before (matched on the normalised words joined by spaces). */
const RETRACTION_ALL = /\b(?:retract(?:s|ed|ing)?|disregard|scratch that|strike that|never ?mind|on second thought|i take (?:that|it|this|everything) back|i was wrong|(?:that|this|it|everything|all of (?:it|this|that|the above)|the above) (?:is|was|are|were) (?:wrong|incorrect|false|not (?:true|correct|accurate|right))|ignore (?:the|that|this|all|everything|my|previous|above|what)|correction|withdraw(?:n|s)?|none of (?:this|that|it|the above) (?:is|was) (?:true|correct|right|accurate)|do not (?:trust|use|rely on)|don t (?:trust|use|rely on)|made up|fabricated|hallucinated)\b/g

/**
 * Reads an answer: normalises it ({@link normalize}), renders a JSON object as lines, drops markdown layout, collapses
 * whitespace, cuts it at {@link MAX_READ_CHARS} (the rest is `unread`), blanks words longer than {@link MAX_WORD_CHARS}
 * (each kept as a residue span), then segments it and finds every value-bearing span. Linear in the answer's length.
 */
export const read = (answer: string): Reading => {
  // normalisation only shrinks what is read (invisible characters, whitespace runs, JSON layout), so a raw prefix of
  // a few read limits holds everything that can be read; the rest is counted unread without being normalised
  const raw = answer.length <= RAW_READ_CHARS ? answer : answer.slice(0, RAW_READ_CHARS)
  const normalized = collapse(dropLayout(renderJsonIn(normalize(raw))))
  const head = normalized.length <= MAX_READ_CHARS ? normalized : normalized.slice(0, MAX_READ_CHARS)
  const { text, residue } = blankLongTokens(head)
  const words = wordsOf(text)
  const index = indexWords(words)
  const segments = segmentsOf(text, index)
  const segmentAt = indexer(segments)

  const typed: Array<FactSpan> = [...extractFactSpans(text)]
  const taken = new Uint8Array(text.length)
  for (const t of typed) taken.fill(1, t.start, t.end)
  const free = (start: number, end: number): boolean => {
    for (let i = start; i < end; i++) if (taken[i] === 1) return false
    return true
  }
  const spans: Array<Omit<ValueSpan, "segment" | "inLabel" | "whole">> = typed.map((t) => ({
    kind: t.kind,
    start: t.start,
    end: t.end,
    text: t.text,
    ...(t.kind === "number" ? { number: t.number } : {}),
    ...(t.kind === "date" ? { iso: t.iso } : {})
  }))
  // ordinals in digits ("412th") are numbers too
  for (const m of text.matchAll(ORDINAL_DIGITS)) {
    const end = m.index + m[0].length
    if (!free(m.index, end)) continue
    const value = Number((m[1] ?? "").replace(/,/g, ""))
    spans.push({ kind: "number", start: m.index, end, text: m[0], number: { value, decimals: 0, text: m[0] } })
    taken.fill(1, m.index, end)
  }
  // numbers in words ("forty-one thousand and seven", "thirty-first"), outside names and quotes; a number never runs
  // across punctuation other than a hyphen ("… seventy-three; two million …" are two numbers)
  const looseWords = words.filter((w) => free(w.start, w.end))
  const runs: Array<Array<Word>> = []
  looseWords.forEach((w, i) => {
    const previous = looseWords[i - 1]
    const joined = previous !== undefined && /^[ -]*$/.test(text.slice(previous.end, w.start))
    if (joined) runs[runs.length - 1]?.push(w)
    else runs.push([w])
  })
  for (const run of runs) {
    for (const n of readNumberWords(run.map((w) => w.norm))) {
      const first = run[n.from] as Word
      const last = run[n.to - 1] as Word
      const written = text.slice(first.start, last.end)
      spans.push({ kind: "number", start: first.start, end: last.end, text: written, number: { value: n.value, decimals: n.decimals, text: written }, ...(n.ambiguous ? { ambiguous: true } : {}) })
      taken.fill(1, first.start, last.end)
    }
  }
  // single capitalised words in a value part ("continent: Europe") or inside a sentence ("… for the Warriors")
  for (const w of words) {
    if (!free(w.start, w.end) || !/^\p{Lu}/u.test(text[w.start] ?? "") || w.norm.length < 2 || STOPWORDS.has(w.norm)) continue
    const seg = segments[segmentAt(w.start)]
    if (seg === undefined || w.start < seg.valueStart) continue
    const [vs] = trimmedBounds(text, seg.valueStart, seg.end)
    const initial = seg.kind === "free" && w.start === vs && index.count(seg.start, seg.end) > 3
    if (initial || LEADING.has(w.norm)) continue
    spans.push({ kind: "entity", start: w.start, end: w.end, text: text.slice(w.start, w.end) })
    taken.fill(1, w.start, w.end)
  }
  // a value part with no typed value is a text value ("status: shipped"), and so is each part of an answer of bare
  // values only ("shipped; studio"); prose sentences are not (their typed values are checked, their words are language)
  const bare = segments.every((seg) => seg.kind === "header" || index.count(seg.start, seg.end) <= 3)
  segments.forEach((seg) => {
    if (seg.kind === "header" || (seg.kind === "free" && !bare)) return
    const [vs, ve] = trimmedBounds(text, seg.inner?.valueStart ?? seg.valueStart, seg.end)
    if (vs >= ve || !free(vs, ve)) return
    const content = index.content(vs, ve)
    if (content > MAX_TEXT_VALUE_WORDS || SENTENCE_OPENERS.has(words[index.at(vs)]?.norm ?? "")) return
    if (content === 0 && !/(?<![\p{L}\p{N}])(?:yes|no)(?![\p{L}\p{N}])/iu.test(text.slice(vs, ve))) return
    spans.push({ kind: "text", start: vs, end: ve, text: text.slice(vs, ve) })
  })
  for (const r of residue) spans.push({ kind: "residue", start: r.start, end: r.end, text: r.raw })

  const placed: Array<ValueSpan> = spans
    .map((s) => {
      const at = segmentAt(s.start)
      const seg = segments[at]
      const inLabel = seg !== undefined && s.start < seg.valueStart
      const [vs, ve] = seg === undefined ? [s.start, s.end] : trimmedBounds(text, inLabel ? seg.start : seg.valueStart, inLabel ? seg.valueStart : seg.end)
      // whole: the span covers its part, or every content word of the part lies inside it
      const whole = (s.start <= vs && s.end >= ve) ||
        (s.start >= vs && s.end <= ve && index.content(vs, ve) === index.content(s.start, s.end))
      return { ...s, segment: at, inLabel, whole }
    })
    .sort((a, b) => a.start - b.start)

  // the first retraction phrase outside names, quotes and ids ("Correction Services Inc" retracts nothing)
  const lowered = words.map((w) => w.norm).join(" ")
  const named = new Uint8Array(text.length)
  for (const t of typed) if (t.kind !== "number" && t.kind !== "date") named.fill(1, t.start, t.end)
  const joinedStart = new Int32Array(words.length)
  let chars = 0
  words.forEach((w, i) => {
    joinedStart[i] = chars
    chars += w.norm.length + 1
  })
  let retraction = -1
  for (const m of lowered.matchAll(RETRACTION_ALL)) {
    const at = wordAtJoined(joinedStart, words, m.index)
    if (named[at] === 1) continue
    retraction = at
    break
  }
  return { text, unread: normalized.length - head.length + (answer.length - raw.length), words, segments, spans: placed, retraction, index }
}

/** Capitalised words that start sentences or address the reader rather than name something. */
const LEADING: ReadonlySet<string> = new Set([
  "here", "according", "based", "however", "also", "note", "sorry", "unfortunately", "finally", "overall", "today",
  "currently", "please", "answer", "result", "results", "yes", "no", "i", "we", "you", "it", "they", "he", "she",
  "hi", "hello", "hey", "thanks", "thank", "dear", "ok", "okay", "sure", "great", "done"
])

/** The segment holding an offset (binary search over segment starts); the last segment before it when between two. */
const indexer = (segments: ReadonlyArray<Segment>) => (offset: number): number => {
  let lo = 0
  let hi = segments.length - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((segments[mid] as Segment).start <= offset) {
      best = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}

/** The text offset of the word at a character offset of the words joined by single spaces (binary search). */
const wordAtJoined = (joinedStart: Int32Array, words: ReadonlyArray<Word>, at: number): number => {
  let lo = 0
  let hi = words.length - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((joinedStart[mid] as number) <= at) {
      best = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return words[best]?.start ?? 0
}

/** The index of the segment holding an offset. */
export const segmentOf = (reading: Reading, offset: number): number => indexer(reading.segments)(offset)

/** Whether a normalised text states a run of normalised words (whole words). */
export const hasRun = (haystack: string, needle: string): boolean => needle.length > 0 && ` ${haystack} `.includes(` ${needle} `)

/** The normalised words of a text as one string (what word runs are matched in). */
export const normWords = (text: string): string => normalizeText(text)
