/**
 * The lexer of BFCL's prompting-style decoder: Python source text into tokens (names, numbers with their values,
 * strings with Python's escapes, bytes and raw prefixes, operators), as CPython's tokenizer splits the subset ast_parse reads.
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue } from "./BfclValue.ts"

export type Token =
  | { readonly t: "name"; readonly v: string; readonly at: number }
  | { readonly t: "num"; readonly v: PyValue; readonly at: number }
  | { readonly t: "str"; readonly v: string; readonly bytes: boolean; readonly f: boolean; readonly source: string; readonly at: number }
  | { readonly t: "op"; readonly v: string; readonly at: number }
  | { readonly t: "end"; readonly at: number }

export const reserved = new Set([
  "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
  "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
  "return", "try", "while", "with", "yield"
])

const operators = ["**=", "//=", ">>=", "<<=", "...", "!=", "%=", "&=", "**", "*=", "+=", "-=", "->", "//", "/=", ":=", "<<", "<=", "==", ">=", ">>", "@=", "^=", "|=", "!", "%", "&", "(", ")", "*", "+", ",", "-", ".", "/", ":", ";", "<", "=", ">", "@", "[", "]", "^", "{", "|", "}", "~"]

interface Lexed {
  readonly tokens: ReadonlyArray<Token>
  readonly error: string | undefined
}

const identStart = /[\p{L}\p{Nl}_]/u
const identRest = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]/u

const numberPattern = /^(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][-+]?\d(?:_?\d)*)?[jJ]?)/

const numberValue = (text: string): PyValue | string => {
  const clean = text.replace(/_/g, "")
  if (/^0[xXoObB]/.test(clean)) return Py.int(BigInt(clean.toLowerCase().startsWith("0o") ? `0o${clean.slice(2)}` : clean))
  if (/[jJ]$/.test(clean)) return { t: "other", type: "complex", repr: `${clean.slice(0, -1)}j` }
  if (/^\d+$/.test(clean)) {
    if (/^0\d/.test(clean) && !/^0+$/.test(clean)) return "leading zeros in decimal integer literals are not permitted"
    return Py.int(BigInt(clean))
  }
  return Py.float(Number(clean))
}

const simpleEscapes: Readonly<Record<string, string>> = { "\n": "", "\\": "\\", "'": "'", "\"": "\"", a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" }

/** The value of a string literal's body (escapes processed unless raw); undefined for a malformed escape. */
const unescape = (body: string, raw: boolean, bytes: boolean): string | undefined => {
  if (raw) return body
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string
    if (c !== "\\") {
      out += c
      continue
    }
    const n = body[i + 1] ?? ""
    const simple = simpleEscapes[n]
    if (simple !== undefined) {
      out += simple
      i++
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i + 1)) as RegExpExecArray
      out += String.fromCodePoint(parseInt(m[0], 8))
      i += m[0].length
    } else if (n === "x" || (!bytes && (n === "u" || n === "U"))) {
      const len = n === "x" ? 2 : n === "u" ? 4 : 8
      const hex = body.slice(i + 2, i + 2 + len)
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) return undefined
      const code = parseInt(hex, 16)
      if (code > 0x10ffff) return undefined
      out += String.fromCodePoint(code)
      i += 1 + len
    } else if (!bytes && n === "N") {
      // named escapes need the Unicode name table: refused (a SyntaxError here, rare in model output)
      return undefined
    } else out += c
  }
  return out
}

/** Python's tokenizer, for the characters an expression can hold (comments, implicit line joining inside brackets). */
export const lex = (text: string): Lexed => {
  const tokens: Array<Token> = []
  let pos = 0
  const bad = (message: string): Lexed => ({ tokens, error: `${message} at offset ${pos}` })
  while (pos < text.length) {
    const c = text[pos] as string
    if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f") {
      pos++
      continue
    }
    if (c === "\\" && (text[pos + 1] === "\n" || (text[pos + 1] === "\r" && text[pos + 2] === "\n"))) {
      pos += text[pos + 1] === "\n" ? 2 : 3
      continue
    }
    if (c === "#") {
      while (pos < text.length && text[pos] !== "\n") pos++
      continue
    }
    const prefix = /^(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?(?='|")/.exec(text.slice(pos, pos + 3))
    if (prefix !== null) {
      const p = prefix[0].toLowerCase()
      const at = pos
      pos += prefix[0].length
      const q = text[pos] as string
      const triple = text.startsWith(q.repeat(3), pos)
      const close = triple ? q.repeat(3) : q
      pos += close.length
      const start = pos
      let end = -1
      while (pos < text.length) {
        const ch = text[pos] as string
        if (ch === "\\") {
          pos += 2
          continue
        }
        if (!triple && ch === "\n") return bad("unterminated string literal")
        if (text.startsWith(close, pos)) {
          end = pos
          break
        }
        pos++
      }
      if (end < 0) return bad("unterminated string literal")
      pos = end + close.length
      const isBytes = p.includes("b")
      const isF = p.includes("f")
      const body = text.slice(start, end)
      if (isBytes && /[^\x00-\x7f]/.test(body)) return bad("bytes can only contain ASCII literal characters")
      const value = isF ? body : unescape(body, p.includes("r"), isBytes)
      if (value === undefined) return bad("malformed escape in a string literal")
      tokens.push({ t: "str", v: value, bytes: isBytes, f: isF, source: text.slice(at, pos), at })
      continue
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(text[pos + 1] ?? ""))) {
      const m = numberPattern.exec(text.slice(pos, pos + 500))
      if (m === null) return bad("invalid number")
      const after = text[pos + m[0].length] ?? ""
      if (identRest.test(after)) return bad("invalid decimal literal")
      const v = numberValue(m[0])
      if (typeof v === "string") return bad(v)
      tokens.push({ t: "num", v, at: pos })
      pos += m[0].length
      continue
    }
    if (identStart.test(c)) {
      const at = pos
      pos++
      while (pos < text.length && identRest.test(text[pos] as string)) pos++
      tokens.push({ t: "name", v: text.slice(at, pos), at })
      continue
    }
    const op = operators.find((o) => text.startsWith(o, pos))
    if (op === undefined) return bad(`invalid character ${JSON.stringify(c)}`)
    tokens.push({ t: "op", v: op, at: pos })
    pos += op.length
  }
  tokens.push({ t: "end", at: pos })
  return { tokens, error: undefined }
}
