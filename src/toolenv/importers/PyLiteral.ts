/**
 * A reader of Python literals (dicts, lists, tuples, strings, numbers, True/False/None), enough for the
 * API descriptions API-Bank writes as Python (`input_parameters = {'token': {'type': 'str', ...}}`).
 * A bare name where a value belongs (`'type': str`) is read as the string `"str"` and noted.
 */
import type { Json } from "../../domain/Json.ts"
import { setOwn } from "./JsonSchemaImport.ts"

/** A parsed literal and where it ended, or where and why parsing failed. */
export type Parsed =
  | { readonly ok: true; readonly value: Json; readonly end: number; readonly notes: ReadonlyArray<string> }
  | { readonly ok: false; readonly at: number; readonly message: string }

interface State {
  readonly text: string
  pos: number
  readonly notes: Array<string>
  /** The first failure; once set, every step returns at once and the parse unwinds. */
  error: { readonly at: number; readonly message: string } | undefined
}

const maxDepth = 64

/** Parses one Python literal starting at `start` (leading blanks and comments skipped). */
export const parse = (text: string, start = 0): Parsed => {
  const st: State = { text, pos: start, notes: [], error: undefined }
  skip(st)
  const v = value(st, 0)
  if (st.error !== undefined) return { ok: false, at: st.error.at, message: st.error.message }
  return { ok: true, value: v, end: st.pos, notes: st.notes }
}

/** Records the first failure; returns a placeholder the callers discard once they see `st.error`. */
const fail = (st: State, message: string): null => {
  if (st.error === undefined) st.error = { at: st.pos, message }
  return null
}

const skip = (st: State): void => {
  const t = st.text
  while (st.pos < t.length) {
    const c = t[st.pos]
    if (c === " " || c === "\t" || c === "\n" || c === "\r") st.pos++
    else if (c === "\\" && t[st.pos + 1] === "\n") st.pos += 2
    else if (c === "#") {
      while (st.pos < t.length && t[st.pos] !== "\n") st.pos++
    } else break
  }
}

const value = (st: State, depth: number): Json => {
  if (st.error !== undefined) return null
  if (depth > maxDepth) return fail(st, `nested deeper than ${maxDepth}`)
  const c = st.text[st.pos]
  if (c === undefined) return fail(st, "unexpected end of text")
  if (c === "{") return dictOrSet(st, depth)
  if (c === "[") return sequence(st, "]", depth)
  if (c === "(") return sequence(st, ")", depth)
  if (isStringStart(st)) return strings(st)
  if (/[-+0-9.]/.test(c)) return number(st)
  const name = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(st.text.slice(st.pos, st.pos + 200))
  if (name !== null) {
    st.pos += name[0].length
    switch (name[0]) {
      case "True":
        return true
      case "False":
        return false
      case "None":
        return null
    }
    st.notes.push(`bare name ${name[0]} read as a string`)
    return name[0]
  }
  return fail(st, `unexpected character ${JSON.stringify(c)}`)
}

const isStringStart = (st: State): boolean => {
  const c = st.text[st.pos] ?? ""
  if (c === "'" || c === "\"") return true
  return /[rRbBuUfF]/.test(c) && (/['"]/.test(st.text[st.pos + 1] ?? "") || (/[rRbBuUfF]/.test(st.text[st.pos + 1] ?? "") && /['"]/.test(st.text[st.pos + 2] ?? "")))
}

const consume = (st: State, ch: string): boolean => {
  skip(st)
  if (st.text[st.pos] !== ch) {
    fail(st, `expected ${JSON.stringify(ch)}`)
    return false
  }
  st.pos++
  return true
}

const dictOrSet = (st: State, depth: number): Json => {
  st.pos++
  skip(st)
  if (st.text[st.pos] === "}") {
    st.pos++
    return {}
  }
  const first = value(st, depth + 1)
  skip(st)
  if (st.error !== undefined) return null
  if (st.text[st.pos] !== ":") {
    // a set literal: read as a list
    const items: Array<Json> = [first]
    while (st.error === undefined && st.text[st.pos] === ",") {
      st.pos++
      skip(st)
      if (st.text[st.pos] === "}") break
      items.push(value(st, depth + 1))
      skip(st)
    }
    return consume(st, "}") ? items : null
  }
  const out: Record<string, Json> = {}
  let key: Json = first
  while (st.error === undefined) {
    if (!consume(st, ":")) return null
    skip(st)
    setOwn(out, typeof key === "string" ? key : JSON.stringify(key), value(st, depth + 1))
    skip(st)
    if (st.text[st.pos] === ",") {
      st.pos++
      skip(st)
    }
    if (st.text[st.pos] === "}") {
      st.pos++
      return out
    }
    key = value(st, depth + 1)
    skip(st)
  }
  return null
}

const sequence = (st: State, close: string, depth: number): Json => {
  st.pos++
  const items: Array<Json> = []
  while (st.error === undefined) {
    skip(st)
    if (st.text[st.pos] === close) {
      st.pos++
      return items
    }
    items.push(value(st, depth + 1))
    skip(st)
    if (st.text[st.pos] === ",") st.pos++
    else if (st.text[st.pos] !== close) return fail(st, `expected "," or ${JSON.stringify(close)}`)
  }
  return null
}

const escapes: Readonly<Record<string, string>> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", "\"": "\"", "0": "\0", a: "\x07", b: "\b", f: "\f", v: "\v" }

/** One or more adjacent string literals (Python concatenates them). */
const strings = (st: State): Json => {
  let out = ""
  for (;;) {
    const s = string(st)
    if (s === null) return null
    out += s
    const save = st.pos
    skip(st)
    if (isStringStart(st)) continue
    st.pos = save
    return out
  }
}

const string = (st: State): string | null => {
  const t = st.text
  let raw = false
  while (/[rRbBuUfF]/.test(t[st.pos] ?? "")) {
    if (/[rR]/.test(t[st.pos] ?? "")) raw = true
    st.pos++
  }
  const q = t[st.pos] ?? ""
  const triple = t.startsWith(q.repeat(3), st.pos)
  const close = triple ? q.repeat(3) : q
  st.pos += close.length
  let out = ""
  for (;;) {
    if (st.pos >= t.length) return fail(st, "unterminated string")
    if (t.startsWith(close, st.pos)) {
      // a quote followed by a letter (`'the user's budget'`) is an apostrophe the writer forgot to escape
      if (!triple && /[A-Za-z]/.test(t[st.pos + 1] ?? "")) {
        st.notes.push(`unescaped ${close} inside a string kept as text`)
        out += close
        st.pos++
        continue
      }
      st.pos += close.length
      return out
    }
    const c = t[st.pos] as string
    if (c === "\n" && !triple) return fail(st, "newline in a one-line string")
    if (c === "\\" && !raw) {
      const n = t[st.pos + 1] ?? ""
      if (n === "\n") {
        st.pos += 2
        continue
      }
      if (n === "x" || n === "u") {
        const len = n === "x" ? 2 : 4
        const hex = t.slice(st.pos + 2, st.pos + 2 + len)
        if (hex.length === len && /^[0-9a-fA-F]+$/.test(hex)) {
          out += String.fromCharCode(parseInt(hex, 16))
          st.pos += 2 + len
          continue
        }
      }
      out += escapes[n] ?? `\\${n}`
      st.pos += 2
      continue
    }
    out += c
    st.pos++
  }
}

const number = (st: State): Json => {
  const m = /^[-+]?(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][-+]?\d+)?/.exec(st.text.slice(st.pos, st.pos + 64))
  if (m === null) return fail(st, "malformed number")
  st.pos += m[0].length
  const n = Number(m[0].replace(/_/g, ""))
  return Number.isFinite(n) ? n : fail(st, "malformed number")
}

/**
 * Reads the top-level assignments of a Python snippet (`name = <literal>` at the start of a line), e.g.
 * API-Bank's `description = "..."`, `input_parameters = {...}`. Assignments whose value is not a literal
 * are reported by name and reason.
 */
export const assignments = (text: string): { readonly values: ReadonlyMap<string, Json>; readonly problems: ReadonlyArray<string> } => {
  const values = new Map<string, Json>()
  const problems: Array<string> = []
  const re = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*/gm
  let m: RegExpExecArray | null
  let resumeAt = 0
  while ((m = re.exec(text)) !== null) {
    if (m.index < resumeAt) continue
    const name = m[1] ?? ""
    const parsed = parse(text, m.index + m[0].length)
    if (parsed.ok) {
      values.set(name, parsed.value)
      for (const n of parsed.notes) problems.push(`${name}: ${n}`)
      resumeAt = parsed.end
      re.lastIndex = parsed.end
    } else problems.push(`${name}: ${parsed.message} at offset ${parsed.at}`)
  }
  return { values, problems }
}
