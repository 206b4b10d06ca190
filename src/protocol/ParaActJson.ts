/**
 * A JSON reader that knows where things are: it parses one JSON value starting at any offset of a larger text,
 * reports a syntax error at the exact offset of the problem, and keeps the span of every value and key.
 * The ParaAct parser uses the spans to turn a schema error's path into an offset in the model's turn text.
 */
import type { Json } from "../domain/Json.ts"

/** Where one JSON value sits in its text: `[start, end)`, plus the spans of its members. */
export interface JsonSpan {
  readonly start: number
  readonly end: number
  /** Object members by key (the last occurrence wins, as with `JSON.parse`), with the offset of the key. */
  readonly keys?: ReadonlyMap<string, { readonly keyStart: number; readonly value: JsonSpan }>
  /** Array items in order. */
  readonly items?: ReadonlyArray<JsonSpan>
}

/** A parsed value, its span, and the offset just after it. */
export interface JsonRead {
  readonly value: Json
  readonly span: JsonSpan
  readonly end: number
}

/** A syntax error: the offset of the offending character (or the end of the text) and what was expected. */
export interface JsonSyntaxError {
  readonly offset: number
  readonly message: string
}

/** The result of reading JSON: a value or a syntax error. Plain data so this module has no runtime dependency. */
export type JsonResult = { readonly ok: true; readonly read: JsonRead } | { readonly ok: false; readonly error: JsonSyntaxError }

/** Nesting deeper than this is a syntax error: it bounds the recursion of this reader and of every consumer. */
export const maxDepth = 128

/** JSON's four whitespace characters (RFC 8259 §2); other Unicode spaces are not JSON whitespace. */
const isJsonSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** The offset of the first non-whitespace character at or after `from` (JSON whitespace only). */
export const skipJsonSpace = (text: string, from: number): number => {
  let i = from
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++
  return i
}

/** A short, printable rendering of the character at `offset` for error messages. */
export const describeAt = (text: string, offset: number): string => {
  if (offset >= text.length) return "end of text"
  const c = text.codePointAt(offset) ?? 0
  return c < 0x20 || c === 0x7f ? `character U+${c.toString(16).toUpperCase().padStart(4, "0")}` : JSON.stringify(String.fromCodePoint(c))
}

class Reader {
  pos: number
  error: JsonSyntaxError | undefined = undefined
  constructor(readonly text: string, start: number) {
    this.pos = start
  }

  fail(offset: number, message: string): undefined {
    this.error = { offset, message }
    return undefined
  }

  value(depth: number): { value: Json; span: JsonSpan } | undefined {
    const text = this.text
    this.pos = skipJsonSpace(text, this.pos)
    const start = this.pos
    if (start >= text.length) return this.fail(start, "expected a JSON value, found end of text")
    const c = text.charCodeAt(start)
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (depth >= maxDepth) return this.fail(start, `JSON nested deeper than ${maxDepth} levels`)
      return c === 0x7b ? this.object(depth + 1) : this.array(depth + 1)
    }
    if (c === 0x22 /* " */) {
      const s = this.string()
      return s === undefined ? undefined : { value: s, span: { start, end: this.pos } }
    }
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return this.number()
    for (const [word, value] of literals) {
      if (text.startsWith(word, start)) {
        this.pos = start + word.length
        return { value, span: { start, end: this.pos } }
      }
    }
    return this.fail(start, `expected a JSON value, found ${describeAt(text, start)}`)
  }

  object(depth: number): { value: Json; span: JsonSpan } | undefined {
    const text = this.text
    const start = this.pos
    this.pos++
    const entries: Array<[string, Json]> = []
    const keys = new Map<string, { keyStart: number; value: JsonSpan }>()
    this.pos = skipJsonSpace(text, this.pos)
    if (text.charCodeAt(this.pos) === 0x7d /* } */) {
      this.pos++
      return { value: {}, span: { start, end: this.pos, keys } }
    }
    for (;;) {
      this.pos = skipJsonSpace(text, this.pos)
      const keyStart = this.pos
      if (text.charCodeAt(keyStart) !== 0x22) {
        return this.fail(keyStart, `expected a quoted object key, found ${describeAt(text, keyStart)}`)
      }
      const key = this.string()
      if (key === undefined) return undefined
      this.pos = skipJsonSpace(text, this.pos)
      if (text.charCodeAt(this.pos) !== 0x3a /* : */) {
        return this.fail(this.pos, `expected ':' after an object key, found ${describeAt(text, this.pos)}`)
      }
      this.pos++
      const member = this.value(depth)
      if (member === undefined) return undefined
      entries.push([key, member.value])
      keys.set(key, { keyStart, value: member.span })
      this.pos = skipJsonSpace(text, this.pos)
      const next = text.charCodeAt(this.pos)
      if (next === 0x2c /* , */) {
        this.pos++
        continue
      }
      if (next === 0x7d /* } */) {
        this.pos++
        // fromEntries defines own properties, so a "__proto__" key stays data (as with JSON.parse); last key wins.
        return { value: Object.fromEntries(entries), span: { start, end: this.pos, keys } }
      }
      return this.fail(this.pos, `expected ',' or '}' after an object member, found ${describeAt(text, this.pos)}`)
    }
  }

  array(depth: number): { value: Json; span: JsonSpan } | undefined {
    const text = this.text
    const start = this.pos
    this.pos++
    const values: Array<Json> = []
    const items: Array<JsonSpan> = []
    this.pos = skipJsonSpace(text, this.pos)
    if (text.charCodeAt(this.pos) === 0x5d /* ] */) {
      this.pos++
      return { value: values, span: { start, end: this.pos, items } }
    }
    for (;;) {
      const item = this.value(depth)
      if (item === undefined) return undefined
      values.push(item.value)
      items.push(item.span)
      this.pos = skipJsonSpace(text, this.pos)
      const next = text.charCodeAt(this.pos)
      if (next === 0x2c) {
        this.pos++
        continue
      }
      if (next === 0x5d) {
        this.pos++
        return { value: values, span: { start, end: this.pos, items } }
      }
      return this.fail(this.pos, `expected ',' or ']' after an array item, found ${describeAt(text, this.pos)}`)
    }
  }

  /** Reads a string token at `pos` (which holds the opening quote). */
  string(): string | undefined {
    const text = this.text
    const start = this.pos
    let i = start + 1
    let escaped = false
    for (;;) {
      if (i >= text.length) return this.fail(start, "unterminated string")
      const c = text.charCodeAt(i)
      if (c === 0x22) break
      if (c < 0x20) return this.fail(i, `unescaped ${describeAt(text, i)} in a string`)
      if (c === 0x5c /* \ */) {
        escaped = true
        const e = text.charCodeAt(i + 1)
        if (e === 0x75 /* u */) {
          for (let k = 2; k < 6; k++) {
            const h = text.charCodeAt(i + k)
            const hex = (h >= 0x30 && h <= 0x39) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66)
            if (!hex) return this.fail(i, "invalid \\u escape: expected four hex digits")
          }
          i += 6
          continue
        }
        if (!escapes.has(e)) return this.fail(i, `invalid escape ${describeAt(text, i + 1)} in a string`)
        i += 2
        continue
      }
      i++
    }
    this.pos = i + 1
    // The token is valid JSON here, so JSON.parse decodes the escapes exactly as the standard says.
    return escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i)
  }

  number(): { value: Json; span: JsonSpan } | undefined {
    const text = this.text
    const start = this.pos
    let i = start
    const digit = (k: number) => {
      const c = text.charCodeAt(k)
      return c >= 0x30 && c <= 0x39
    }
    if (text.charCodeAt(i) === 0x2d) i++
    if (!digit(i)) return this.fail(i, `expected a digit, found ${describeAt(text, i)}`)
    if (text.charCodeAt(i) === 0x30) i++
    else while (digit(i)) i++
    if (text.charCodeAt(i) === 0x2e /* . */) {
      i++
      if (!digit(i)) return this.fail(i, `expected a digit after '.', found ${describeAt(text, i)}`)
      while (digit(i)) i++
    }
    const e = text.charCodeAt(i)
    if (e === 0x65 || e === 0x45) {
      i++
      const sign = text.charCodeAt(i)
      if (sign === 0x2b || sign === 0x2d) i++
      if (!digit(i)) return this.fail(i, `expected a digit in the exponent, found ${describeAt(text, i)}`)
      while (digit(i)) i++
    }
    this.pos = i
    const n = Number(text.slice(start, i))
    // -0 reads as 0: JSON.stringify writes -0 as "0", so this keeps parse ∘ print the identity.
    return { value: n === 0 ? 0 : n, span: { start, end: i } }
  }
}

const literals: ReadonlyArray<readonly [string, Json]> = [["true", true], ["false", false], ["null", null]]
/** The characters allowed after a backslash, other than `u`. */
const escapes = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74])

/**
 * Reads one JSON value that starts at `start` (after optional JSON whitespace) and stops right after it;
 * what follows is the caller's business. Same language as `JSON.parse`, except that nesting is bounded by
 * {@link maxDepth}; numbers too large for a double read as ±Infinity, as with `JSON.parse`.
 */
export const readJsonAt = (text: string, start: number): JsonResult => {
  const reader = new Reader(text, start)
  const read = reader.value(0)
  if (read === undefined) return { ok: false, error: reader.error ?? { offset: start, message: "invalid JSON" } }
  return { ok: true, read: { value: read.value, span: read.span, end: reader.pos } }
}

/** Reads a whole text as one JSON value (surrounding JSON whitespace allowed, nothing else). */
export const readJson = (text: string): JsonResult => {
  const result = readJsonAt(text, 0)
  if (!result.ok) return result
  const end = skipJsonSpace(text, result.read.end)
  if (end < text.length) {
    return { ok: false, error: { offset: end, message: `unexpected ${describeAt(text, end)} after the JSON value` } }
  }
  return result
}

/** Where a path into a value points: the deepest span the path reaches, and whether it reached all of it. */
export interface PathLocation {
  readonly offset: number
  /** The offset of the key when the path ends at an object member (else the value's offset). */
  readonly keyOffset: number
  /** The number of path segments that exist in the value. */
  readonly depth: number
  readonly complete: boolean
}

/** Follows `path` (object keys and array indexes) into a span tree as far as it exists. */
export const locate = (span: JsonSpan, path: ReadonlyArray<PropertyKey>): PathLocation => {
  let current = span
  let keyOffset = span.start
  let depth = 0
  for (const segment of path) {
    if (current.items !== undefined && typeof segment === "number") {
      const item = current.items[segment]
      if (item === undefined) break
      current = item
      keyOffset = item.start
    } else if (current.keys !== undefined && typeof segment === "string") {
      const member = current.keys.get(segment)
      if (member === undefined) break
      current = member.value
      keyOffset = member.keyStart
    } else break
    depth++
  }
  return { offset: current.start, keyOffset, depth, complete: depth === path.length }
}
