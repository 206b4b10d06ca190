/**
 * BFCL's two decoders of a result line's `result`: FC style (`[{"<fn>": "<json args>"}]`, as the OpenAI-style FC
 * handlers decode it) and prompting style (text holding a Python list of calls, decoded as `default_decode_ast_prompting`
 * + `ast_parse` + `resolve_ast_by_type` do, keyword arguments only). Pure; see docs/benchmarks.md for the divergences.
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue, PyDict } from "./BfclValue.ts"

/** A decoded result: the calls as BFCL's checker receives them (`[{name: {param: value}}]`), or why decoding failed. */
export type Decoded = { readonly ok: true; readonly value: PyValue } | { readonly ok: false; readonly message: string }

// ---------------------------------------------------------------------------------------------------------------
// FC style

/**
 * FC style: a list whose items are `{name: arguments}`; arguments a JSON string (decoded with Python's int/float
 * distinction) or, as the Anthropic/Gemini-style handlers store them, already an object. A string result (the model
 * answered in text) iterates as characters and fails, except `""`, which decodes to no call, as in BFCL.
 */
export const decodeFc = (result: PyValue): Decoded => {
  if (result.t === "str") return result.v === "" ? { ok: true, value: Py.list([]) } : { ok: false, message: "'str' object has no attribute 'keys' (the model answered in text)" }
  if (result.t !== "list") return { ok: false, message: `'${Py.typeName(result)}' object is not iterable as a list of calls` }
  const out: Array<PyValue> = []
  for (const item of result.items) {
    if (item.t !== "dict") return { ok: false, message: `'${Py.typeName(item)}' object has no attribute 'keys'` }
    const first = item.entries[0]
    if (first === undefined) return { ok: false, message: "list index out of range (an empty call object)" }
    const [name, args] = first
    if (args.t === "str") {
      const parsed = Py.parseJson(args.v)
      if (!parsed.ok) return { ok: false, message: `arguments of ${Py.repr(name)} are not JSON: ${parsed.message}` }
      out.push(Py.dict([[name, parsed.value]]))
    } else if (args.t === "dict") out.push(Py.dict([[name, args]]))
    else return { ok: false, message: `the JSON object must be str, not ${Py.typeName(args)}` }
  }
  return { ok: true, value: Py.list(out) }
}

/** BFCL's `is_function_calling_format_output`: a list of one-key dicts whose value is a dict. */
export const isCallFormat = (decoded: PyValue): boolean =>
  decoded.t === "list" && decoded.items.every((item) => item.t === "dict" && item.entries.length === 1 && (item.entries[0] as readonly [PyValue, PyValue])[1].t === "dict")

/** BFCL's `is_empty_output`: not in call format, `[]`, or `[{}]`. */
export const isEmptyOutput = (decoded: PyValue): boolean => {
  if (!isCallFormat(decoded) || decoded.t !== "list") return true
  return decoded.items.length === 0 || (decoded.items.length === 1 && (decoded.items[0] as PyDict).entries.length === 0)
}

// ---------------------------------------------------------------------------------------------------------------
// Prompting style: a Python expression parser for the subset that ast_parse can resolve

type Node =
  | { readonly k: "const"; readonly value: PyValue; readonly ellipsis?: boolean }
  | { readonly k: "fstring"; readonly source: string }
  | { readonly k: "name"; readonly id: string }
  | { readonly k: "attr"; readonly value: Node; readonly attr: string }
  | { readonly k: "call"; readonly func: Node; readonly args: ReadonlyArray<Node>; readonly keywords: ReadonlyArray<Keyword> }
  | { readonly k: "subscript"; readonly value: Node; readonly slice: Node }
  | { readonly k: "slice"; readonly lower: Node | undefined; readonly upper: Node | undefined; readonly step: Node | undefined }
  | { readonly k: "list" | "tuple" | "set"; readonly elts: ReadonlyArray<Node> }
  | { readonly k: "dict"; readonly keys: ReadonlyArray<Node | undefined>; readonly values: ReadonlyArray<Node> }
  | { readonly k: "unary"; readonly op: "-" | "+" | "~" | "not"; readonly operand: Node }
  | { readonly k: "binop"; readonly op: string; readonly left: Node; readonly right: Node }
  | { readonly k: "starred"; readonly value: Node; readonly double: boolean }

interface Keyword {
  /** undefined for `**mapping`. */
  readonly arg: string | undefined
  readonly value: Node
}

type Token =
  | { readonly t: "name"; readonly v: string; readonly at: number }
  | { readonly t: "num"; readonly v: PyValue; readonly at: number }
  | { readonly t: "str"; readonly v: string; readonly bytes: boolean; readonly f: boolean; readonly source: string; readonly at: number }
  | { readonly t: "op"; readonly v: string; readonly at: number }
  | { readonly t: "end"; readonly at: number }

const reserved = new Set([
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
const lex = (text: string): Lexed => {
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

interface ParseState {
  readonly tokens: ReadonlyArray<Token>
  i: number
  error: string | undefined
}

const placeholder: Node = { k: "const", value: Py.none }

const parseFail = (st: ParseState, message: string): Node => {
  if (st.error === undefined) {
    const tok = st.tokens[st.i]
    st.error = `${message} at offset ${tok?.at ?? 0}`
  }
  return placeholder
}

const peek = (st: ParseState): Token => st.tokens[st.i] ?? { t: "end", at: 0 }
const isOp = (tok: Token, v: string): boolean => tok.t === "op" && tok.v === v
const isName = (tok: Token, v: string): boolean => tok.t === "name" && tok.v === v

const expect = (st: ParseState, v: string): boolean => {
  if (isOp(peek(st), v)) {
    st.i++
    return true
  }
  parseFail(st, `expected '${v}'`)
  return false
}

/** Tokens after an expression that start syntax ast_parse could not resolve (comparisons, boolean ops, comprehensions, ...). */
const unsupportedFollow = new Set(["==", "!=", "<", ">", "<=", ">=", ":="])
const unsupportedWords = new Set(["and", "or", "if", "for", "in", "is", "not", "async"])

/** One expression (the `not_test` level down); a comparison, boolean operator, conditional or comprehension after it is refused. */
const expression = (st: ParseState, depth: number): Node => {
  if (st.error !== undefined) return placeholder
  if (depth > 200) return parseFail(st, "expression nested too deeply")
  const tok = peek(st)
  if (isName(tok, "not")) {
    st.i++
    return { k: "unary", op: "not", operand: expression(st, depth + 1) }
  }
  if (isName(tok, "lambda") || isName(tok, "yield") || isName(tok, "await")) return parseFail(st, `'${tok.t === "name" ? tok.v : ""}' expressions are not resolved by the decoder`)
  const node = binary(st, 0, depth)
  const next = peek(st)
  if ((next.t === "op" && unsupportedFollow.has(next.v)) || (next.t === "name" && unsupportedWords.has(next.v))) {
    return parseFail(st, "comparisons, boolean operators, conditionals and comprehensions are not resolved by the decoder")
  }
  return node
}

const binaryLevels: ReadonlyArray<ReadonlyArray<string>> = [["|"], ["^"], ["&"], ["<<", ">>"], ["+", "-"], ["*", "/", "//", "%", "@"]]

const binary = (st: ParseState, level: number, depth: number): Node => {
  if (level >= binaryLevels.length) return unary(st, depth)
  let left = binary(st, level + 1, depth)
  const ops = binaryLevels[level] as ReadonlyArray<string>
  for (;;) {
    const tok = peek(st)
    if (st.error !== undefined || tok.t !== "op" || !ops.includes(tok.v)) return left
    st.i++
    const right = binary(st, level + 1, depth)
    left = { k: "binop", op: tok.v, left, right }
  }
}

const unary = (st: ParseState, depth: number): Node => {
  const tok = peek(st)
  if (tok.t === "op" && (tok.v === "-" || tok.v === "+" || tok.v === "~")) {
    st.i++
    if (depth > 200) return parseFail(st, "expression nested too deeply")
    return { k: "unary", op: tok.v, operand: unary(st, depth + 1) }
  }
  return power(st, depth)
}

const power = (st: ParseState, depth: number): Node => {
  const base = primary(st, depth)
  if (isOp(peek(st), "**")) {
    st.i++
    return { k: "binop", op: "**", left: base, right: unary(st, depth + 1) }
  }
  return base
}

const primary = (st: ParseState, depth: number): Node => {
  let node = atom(st, depth)
  for (;;) {
    if (st.error !== undefined) return placeholder
    const tok = peek(st)
    if (isOp(tok, ".")) {
      st.i++
      const name = peek(st)
      if (name.t !== "name") return parseFail(st, "expected an attribute name")
      st.i++
      node = { k: "attr", value: node, attr: name.v }
    } else if (isOp(tok, "(")) {
      st.i++
      node = callArguments(st, node, depth)
    } else if (isOp(tok, "[")) {
      st.i++
      const slice = subscript(st, depth)
      if (!expect(st, "]")) return placeholder
      node = { k: "subscript", value: node, slice }
    } else return node
  }
}

const callArguments = (st: ParseState, func: Node, depth: number): Node => {
  const args: Array<Node> = []
  const keywords: Array<Keyword> = []
  const seen = new Set<string>()
  let sawDoubleStar = false
  while (st.error === undefined && !isOp(peek(st), ")")) {
    const tok = peek(st)
    const next = st.tokens[st.i + 1]
    if (tok.t === "name" && next !== undefined && isOp(next, "=")) {
      if (reserved.has(tok.v)) return parseFail(st, `cannot assign to ${tok.v}`)
      if (seen.has(tok.v)) return parseFail(st, `keyword argument repeated: ${tok.v}`)
      seen.add(tok.v)
      st.i += 2
      keywords.push({ arg: tok.v, value: expression(st, depth + 1) })
    } else if (isOp(tok, "**")) {
      st.i++
      sawDoubleStar = true
      keywords.push({ arg: undefined, value: expression(st, depth + 1) })
    } else if (isOp(tok, "*")) {
      st.i++
      if (sawDoubleStar) return parseFail(st, "iterable argument unpacking follows keyword argument unpacking")
      args.push({ k: "starred", value: expression(st, depth + 1), double: false })
    } else {
      if (keywords.length > 0) return parseFail(st, sawDoubleStar ? "positional argument follows keyword argument unpacking" : "positional argument follows keyword argument")
      args.push(expression(st, depth + 1))
    }
    if (isOp(peek(st), ",")) st.i++
    else break
  }
  if (!expect(st, ")")) return placeholder
  return { k: "call", func, args, keywords }
}

const sliceOrExpression = (st: ParseState, depth: number): Node => {
  const part = (): Node | undefined => {
    const tok = peek(st)
    return isOp(tok, ":") || isOp(tok, "]") || isOp(tok, ",") ? undefined : expression(st, depth + 1)
  }
  const lower = part()
  if (!isOp(peek(st), ":")) return lower ?? parseFail(st, "expected an index")
  st.i++
  const upper = part()
  let step: Node | undefined
  if (isOp(peek(st), ":")) {
    st.i++
    step = part()
  }
  return { k: "slice", lower, upper, step }
}

const subscript = (st: ParseState, depth: number): Node => {
  const first = sliceOrExpression(st, depth)
  if (!isOp(peek(st), ",")) return first
  const elts: Array<Node> = [first]
  while (st.error === undefined && isOp(peek(st), ",")) {
    st.i++
    if (isOp(peek(st), "]")) break
    elts.push(sliceOrExpression(st, depth))
  }
  return { k: "tuple", elts }
}

/** Items of a display up to `close`, each possibly starred; `sawComma` tells a one-item tuple from parentheses. */
const items = (st: ParseState, close: string, depth: number): { readonly elts: ReadonlyArray<Node>; readonly sawComma: boolean } => {
  const elts: Array<Node> = []
  let sawComma = false
  while (st.error === undefined && !isOp(peek(st), close)) {
    if (isOp(peek(st), "*")) {
      st.i++
      elts.push({ k: "starred", value: binary(st, 0, depth + 1), double: false })
    } else elts.push(expression(st, depth + 1))
    if (isOp(peek(st), ",")) {
      st.i++
      sawComma = true
    } else break
  }
  expect(st, close)
  return { elts, sawComma }
}

const braces = (st: ParseState, depth: number): Node => {
  if (isOp(peek(st), "}")) {
    st.i++
    return { k: "dict", keys: [], values: [] }
  }
  const keys: Array<Node | undefined> = []
  const values: Array<Node> = []
  const setItems: Array<Node> = []
  let isDict: boolean | undefined
  while (st.error === undefined && !isOp(peek(st), "}")) {
    if (isOp(peek(st), "**")) {
      if (isDict === false) return parseFail(st, "'**' in a set display")
      isDict = true
      st.i++
      keys.push(undefined)
      values.push(binary(st, 0, depth + 1))
    } else if (isOp(peek(st), "*")) {
      if (isDict === true) return parseFail(st, "'*' in a dict display")
      isDict = false
      st.i++
      setItems.push({ k: "starred", value: binary(st, 0, depth + 1), double: false })
    } else {
      const key = expression(st, depth + 1)
      if (isOp(peek(st), ":")) {
        if (isDict === false) return parseFail(st, "':' in a set display")
        isDict = true
        st.i++
        keys.push(key)
        values.push(expression(st, depth + 1))
      } else {
        if (isDict === true) return parseFail(st, "expected ':'")
        isDict = false
        setItems.push(key)
      }
    }
    if (isOp(peek(st), ",")) st.i++
    else break
  }
  if (!expect(st, "}")) return placeholder
  return isDict === false ? { k: "set", elts: setItems } : { k: "dict", keys, values }
}

const atom = (st: ParseState, depth: number): Node => {
  if (st.error !== undefined) return placeholder
  const tok = peek(st)
  switch (tok.t) {
    case "end":
      return parseFail(st, "unexpected end of input")
    case "num":
      st.i++
      return { k: "const", value: tok.v }
    case "str": {
      // adjacent literals concatenate; bytes with str is a SyntaxError; any f-string makes the whole a JoinedStr
      let text = ""
      let source = ""
      let f = false
      const bytes = tok.bytes
      while (peek(st).t === "str") {
        const part = peek(st) as Extract<Token, { t: "str" }>
        if (part.bytes !== bytes) return parseFail(st, "cannot mix bytes and nonbytes literals")
        text += part.v
        source += (source === "" ? "" : " ") + part.source
        f = f || part.f
        st.i++
      }
      if (f) return { k: "fstring", source }
      return { k: "const", value: bytes ? { t: "other", type: "bytes", repr: `b${Py.repr(Py.str(text))}` } : Py.str(text) }
    }
    case "name": {
      st.i++
      if (tok.v === "True") return { k: "const", value: Py.bool(true) }
      if (tok.v === "False") return { k: "const", value: Py.bool(false) }
      if (tok.v === "None") return { k: "const", value: Py.none }
      if (reserved.has(tok.v)) return parseFail(st, `invalid syntax near '${tok.v}'`)
      return { k: "name", id: tok.v }
    }
    case "op": {
      if (tok.v === "...") {
        st.i++
        return { k: "const", value: { t: "other", type: "ellipsis", repr: "Ellipsis" }, ellipsis: true }
      }
      if (tok.v === "(") {
        st.i++
        const { elts, sawComma } = items(st, ")", depth)
        const only = elts[0]
        return elts.length === 1 && !sawComma && only !== undefined && only.k !== "starred" ? only : { k: "tuple", elts }
      }
      if (tok.v === "[") {
        st.i++
        return { k: "list", elts: items(st, "]", depth).elts }
      }
      if (tok.v === "{") {
        st.i++
        return braces(st, depth)
      }
      return parseFail(st, `invalid syntax near '${tok.v}'`)
    }
  }
}

/** `ast.parse(text, mode="eval")` over the supported subset. */
const parseExpression = (text: string): { readonly ok: true; readonly node: Node } | { readonly ok: false; readonly message: string } => {
  const lexed = lex(text)
  if (lexed.error !== undefined) return { ok: false, message: `invalid syntax: ${lexed.error}` }
  const st: ParseState = { tokens: lexed.tokens, i: 0, error: undefined }
  let node = expression(st, 0)
  // a top-level tuple without parentheses (`f(a=1), g(b=2)`)
  if (st.error === undefined && isOp(peek(st), ",")) {
    const elts: Array<Node> = [node]
    while (st.error === undefined && isOp(peek(st), ",")) {
      st.i++
      if (peek(st).t === "end") break
      elts.push(expression(st, 0))
    }
    node = { k: "tuple", elts }
  }
  if (st.error === undefined && peek(st).t !== "end") parseFail(st, "invalid syntax")
  return st.error === undefined ? { ok: true, node } : { ok: false, message: `invalid syntax: ${st.error}` }
}

// ---------------------------------------------------------------------------------------------------------------
// ast.unparse (enough of it for the strings resolve_ast_by_type makes of positional calls and subscripts)

const binaryPrecedence: Readonly<Record<string, number>> = { "|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6, "@": 6, "**": 8 }

const precedenceOf = (node: Node): number =>
  node.k === "binop" ? (binaryPrecedence[node.op] ?? 0) : node.k === "unary" ? (node.op === "not" ? 0 : 7) : 9

const unparse = (node: Node): string => {
  switch (node.k) {
    case "const":
      return node.ellipsis === true ? "..." : Py.repr(node.value)
    case "fstring":
      return node.source
    case "name":
      return node.id
    case "attr":
      return `${unparse(node.value)}.${node.attr}`
    case "call":
      return `${unparse(node.func)}(${[...node.args.map(unparse), ...node.keywords.map((kw) => (kw.arg === undefined ? `**${unparse(kw.value)}` : `${kw.arg}=${unparse(kw.value)}`))].join(", ")})`
    case "subscript":
      return `${unparse(node.value)}[${node.slice.k === "tuple" && node.slice.elts.length > 0 ? node.slice.elts.map(unparse).join(", ") : unparse(node.slice)}]`
    case "slice":
      return `${node.lower === undefined ? "" : unparse(node.lower)}:${node.upper === undefined ? "" : unparse(node.upper)}${node.step === undefined ? "" : `:${unparse(node.step)}`}`
    case "list":
      return `[${node.elts.map(unparse).join(", ")}]`
    case "tuple":
      return node.elts.length === 1 ? `(${unparse(node.elts[0] as Node)},)` : `(${node.elts.map(unparse).join(", ")})`
    case "set":
      return `{${node.elts.map(unparse).join(", ")}}`
    case "dict":
      return `{${node.values.map((v, i) => {
        const key = node.keys[i]
        return key === undefined ? `**${unparse(v)}` : `${unparse(key)}: ${unparse(v)}`
      }).join(", ")}}`
    case "unary": {
      const inner = precedenceOf(node.operand) < precedenceOf(node) ? `(${unparse(node.operand)})` : unparse(node.operand)
      return node.op === "not" ? `not ${inner}` : `${node.op}${inner}`
    }
    case "binop": {
      const p = precedenceOf(node)
      const rightAssoc = node.op === "**"
      const side = (child: Node, right: boolean): string => {
        const cp = precedenceOf(child)
        const wrap = cp < p || (cp === p && right !== rightAssoc)
        return wrap ? `(${unparse(child)})` : unparse(child)
      }
      return `${side(node.left, false)} ${node.op} ${side(node.right, true)}`
    }
    case "starred":
      return `${node.double ? "**" : "*"}${unparse(node.value)}`
  }
}

// ---------------------------------------------------------------------------------------------------------------
// resolve_ast_call / resolve_ast_by_type, and the `eval` of a BinOp

type Resolved = { readonly ok: true; readonly value: PyValue } | { readonly ok: false; readonly message: string }

const failed = (message: string): Resolved => ({ ok: false, message })
const done = (value: PyValue): Resolved => ({ ok: true, value })

const isHashable = (x: PyValue): boolean => x.t !== "list" && x.t !== "dict" && (x.t !== "tuple" || x.items.every(isHashable))

/** A dict from pairs in order: a repeated key keeps its first place and its last value (Python's dict display). */
const dictFrom = (pairs: ReadonlyArray<readonly [PyValue, PyValue]>): PyDict => {
  const out: Array<readonly [PyValue, PyValue]> = []
  for (const [k, v] of pairs) {
    const at = out.findIndex(([existing]) => Py.eq(existing, k))
    if (at < 0) out.push([k, v])
    else out[at] = [(out[at] as readonly [PyValue, PyValue])[0], v]
  }
  return Py.dict(out)
}

/** `-operand.value`, the decoder's reading of every unary operator (`+5` and `not True` included) on a constant. */
const negateConstant = (operand: Node): Resolved => {
  if (operand.k !== "const" || operand.ellipsis === true) return failed(`bad operand for unary operator: ${unparse(operand)}`)
  const v = operand.value
  switch (v.t) {
    case "int":
      return done(Py.int(-v.v))
    case "float":
      return done(Py.float(-v.v))
    case "bool":
      return done(Py.int(v.v ? -1n : 0n))
    default:
      return failed(`bad operand type for unary -: '${Py.typeName(v)}'`)
  }
}

const functionName = (func: Node): string => {
  const parts: Array<string> = []
  let at = func
  while (at.k === "attr") {
    parts.push(at.attr)
    at = at.value
  }
  if (at.k === "name") parts.push(at.id)
  return parts.reverse().join(".")
}

const resolveCall = (call: Extract<Node, { k: "call" }>): Resolved => {
  const pairs: Array<readonly [PyValue, PyValue]> = []
  for (const kw of call.keywords) {
    const v = resolveValue(kw.value)
    if (!v.ok) return v
    pairs.push([kw.arg === undefined ? Py.none : Py.str(kw.arg), v.value])
  }
  return done(Py.dict([[Py.str(functionName(call.func)), dictFrom(pairs)]]))
}

const resolveAll = (nodes: ReadonlyArray<Node>): { readonly ok: true; readonly values: ReadonlyArray<PyValue> } | { readonly ok: false; readonly message: string } => {
  const values: Array<PyValue> = []
  for (const n of nodes) {
    const r = resolveValue(n)
    if (!r.ok) return r
    values.push(r.value)
  }
  return { ok: true, values }
}

const resolveValue = (node: Node): Resolved => {
  switch (node.k) {
    case "const":
      return done(node.ellipsis === true ? Py.str("...") : node.value)
    case "unary":
      return negateConstant(node.operand)
    case "list": {
      const r = resolveAll(node.elts)
      return r.ok ? done(Py.list(r.values)) : r
    }
    case "tuple": {
      const r = resolveAll(node.elts)
      return r.ok ? done(Py.tuple(r.values)) : r
    }
    case "dict": {
      const pairs: Array<readonly [PyValue, PyValue]> = []
      for (let i = 0; i < node.values.length; i++) {
        const keyNode = node.keys[i]
        if (keyNode === undefined) return failed("Unsupported AST type: <class 'NoneType'> (a ** inside a dict)")
        const k = resolveValue(keyNode)
        if (!k.ok) return k
        if (!isHashable(k.value)) return failed(`unhashable type: '${Py.typeName(k.value)}'`)
        const v = resolveValue(node.values[i] as Node)
        if (!v.ok) return v
        pairs.push([k.value, v.value])
      }
      return done(dictFrom(pairs))
    }
    case "binop":
      return evaluate(node)
    case "name":
      return done(Py.str(node.id))
    case "call":
      return node.keywords.length === 0 ? done(Py.str(unparse(node))) : resolveCall(node)
    case "subscript":
      return done(Py.str(`${unparse(node.value)}[${unparse(node.slice)}]`))
    case "fstring":
      return failed("Unsupported AST type: <class 'ast.JoinedStr'>")
    case "set":
      return failed("Unsupported AST type: <class 'ast.Set'>")
    case "starred":
      return failed("Unsupported AST type: <class 'ast.Starred'>")
    case "slice":
      return failed("Unsupported AST type: <class 'ast.Slice'>")
    case "attr":
      return failed("Unsupported AST type: <class 'ast.Attribute'>")
  }
}

/** Python's floor division and modulo of two ints. */
const floorDiv = (a: bigint, b: bigint): bigint => {
  const q = a / b
  return (a % b !== 0n) && ((a < 0n) !== (b < 0n)) ? q - 1n : q
}

const maxRepeat = 1_000_000

/** The value `eval` gives a BinOp over literals: numbers, strings, lists and tuples, with Python's operator rules. */
const evaluate = (node: Node): Resolved => {
  switch (node.k) {
    case "const":
      return node.ellipsis === true ? failed("unsupported operand: Ellipsis") : done(node.value)
    case "list":
    case "tuple": {
      const r = node.elts.map(evaluate)
      const bad = r.find((x) => !x.ok)
      if (bad !== undefined) return bad
      const values = r.map((x) => (x as { value: PyValue }).value)
      return done(node.k === "list" ? Py.list(values) : Py.tuple(values))
    }
    case "unary": {
      const r = evaluate(node.operand)
      if (!r.ok) return r
      const v = r.value
      if (node.op === "not") return done(Py.bool(!truthy(v)))
      if (v.t === "float" && node.op !== "~") return done(Py.float(node.op === "-" ? -v.v : v.v))
      const i = v.t === "int" ? v.v : v.t === "bool" ? (v.v ? 1n : 0n) : undefined
      if (i === undefined) return failed(`bad operand type for unary ${node.op}: '${Py.typeName(v)}'`)
      return done(Py.int(node.op === "-" ? -i : node.op === "+" ? i : -i - 1n))
    }
    case "binop": {
      const l = evaluate(node.left)
      if (!l.ok) return l
      const r = evaluate(node.right)
      if (!r.ok) return r
      return arithmetic(node.op, l.value, r.value)
    }
    case "name":
      return failed(`name '${node.id}' is not defined`)
    default:
      return failed(`cannot evaluate ${unparse(node)} (only literals are evaluated inside arithmetic)`)
  }
}

const truthy = (v: PyValue): boolean => {
  switch (v.t) {
    case "none":
      return false
    case "bool":
      return v.v
    case "int":
      return v.v !== 0n
    case "float":
      return v.v !== 0
    case "str":
      return v.v !== ""
    case "list":
    case "tuple":
      return v.items.length > 0
    case "dict":
      return v.entries.length > 0
    case "other":
      return true
  }
}

const asInt = (v: PyValue): bigint | undefined => (v.t === "int" ? v.v : v.t === "bool" ? (v.v ? 1n : 0n) : undefined)

const repeat = (seq: PyValue, times: bigint): Resolved => {
  const n = times < 0n ? 0 : Number(times)
  if (seq.t === "str") return seq.v.length * n > maxRepeat ? failed("result too large") : done(Py.str(seq.v.repeat(n)))
  if (seq.t === "list" || seq.t === "tuple") {
    if (seq.items.length * n > maxRepeat) return failed("result too large")
    const out: Array<PyValue> = []
    for (let k = 0; k < n; k++) out.push(...seq.items)
    return done(seq.t === "list" ? Py.list(out) : Py.tuple(out))
  }
  return failed("can't multiply sequence")
}

const arithmetic = (op: string, a: PyValue, b: PyValue): Resolved => {
  const ai = asInt(a)
  const bi = asInt(b)
  const unsupported = failed(`unsupported operand type(s) for ${op}: '${Py.typeName(a)}' and '${Py.typeName(b)}'`)
  if (ai !== undefined && bi !== undefined) {
    switch (op) {
      case "+":
        return done(Py.int(ai + bi))
      case "-":
        return done(Py.int(ai - bi))
      case "*":
        return done(Py.int(ai * bi))
      case "/":
        return bi === 0n ? failed("division by zero") : done(Py.float(Number(ai) / Number(bi)))
      case "//":
        return bi === 0n ? failed("integer division or modulo by zero") : done(Py.int(floorDiv(ai, bi)))
      case "%":
        return bi === 0n ? failed("integer division or modulo by zero") : done(Py.int(ai - bi * floorDiv(ai, bi)))
      case "**":
        if (bi < 0n) return ai === 0n ? failed("0.0 cannot be raised to a negative power") : done(Py.float(Number(ai) ** Number(bi)))
        return bi > 10_000n ? failed("exponent too large") : done(Py.int(ai ** bi))
      case "<<":
        return bi < 0n ? failed("negative shift count") : bi > 10_000n ? failed("shift too large") : done(Py.int(ai << bi))
      case ">>":
        return bi < 0n ? failed("negative shift count") : done(Py.int(ai >> bi))
      case "&":
        return done(Py.int(ai & bi))
      case "|":
        return done(Py.int(ai | bi))
      case "^":
        return done(Py.int(ai ^ bi))
      default:
        return unsupported
    }
  }
  const af = a.t === "float" ? a.v : ai !== undefined ? Number(ai) : undefined
  const bf = b.t === "float" ? b.v : bi !== undefined ? Number(bi) : undefined
  if (af !== undefined && bf !== undefined) {
    switch (op) {
      case "+":
        return done(Py.float(af + bf))
      case "-":
        return done(Py.float(af - bf))
      case "*":
        return done(Py.float(af * bf))
      case "/":
        return bf === 0 ? failed("float division by zero") : done(Py.float(af / bf))
      case "//":
        return bf === 0 ? failed("float floor division by zero") : done(Py.float(Math.floor(af / bf)))
      case "%":
        return bf === 0 ? failed("float modulo") : done(Py.float(af - bf * Math.floor(af / bf)))
      case "**": {
        if (af < 0 && !Number.isInteger(bf)) return failed("a negative number to a fractional power is complex")
        if (af === 0 && bf < 0) return failed("0.0 cannot be raised to a negative power")
        return done(Py.float(af ** bf))
      }
      default:
        return unsupported
    }
  }
  if (op === "+" && a.t === b.t && (a.t === "str" || a.t === "list" || a.t === "tuple")) {
    if (a.t === "str") return done(Py.str(a.v + (b as { v: string }).v))
    const items = [...(a as { items: ReadonlyArray<PyValue> }).items, ...(b as { items: ReadonlyArray<PyValue> }).items]
    return done(a.t === "list" ? Py.list(items) : Py.tuple(items))
  }
  if (op === "*" && bi !== undefined && (a.t === "str" || a.t === "list" || a.t === "tuple")) return repeat(a, bi)
  if (op === "*" && ai !== undefined && (b.t === "str" || b.t === "list" || b.t === "tuple")) return repeat(b, ai)
  return unsupported
}

/** Python's `str.strip(chars)`. */
const stripChars = (s: string, chars: string): string => {
  let start = 0
  let end = s.length
  while (start < end && chars.includes(s[start] as string)) start++
  while (end > start && chars.includes(s[end - 1] as string)) end--
  return s.slice(start, end)
}

/** Prompting style, as `default_decode_ast_prompting` + `ast_parse(language=Python)`: the text's list of calls. */
export const decodePrompting = (text: string): Decoded => {
  let s = stripChars(text, "`\n ")
  if (!s.startsWith("[")) s = `[${s}`
  if (!s.endsWith("]")) s = `${s}]`
  const cleaned = stripChars(s.trim(), "'")
  const parsed = parseExpression(cleaned)
  if (!parsed.ok) return parsed
  const body = parsed.node
  if (body.k === "call") {
    const r = resolveCall(body)
    return r.ok ? { ok: true, value: Py.list([r.value]) } : r
  }
  if (body.k !== "list" && body.k !== "tuple" && body.k !== "set") return { ok: false, message: `'${body.k}' object has no attribute 'elts'` }
  const out: Array<PyValue> = []
  for (const elem of body.elts) {
    if (elem.k !== "call") return { ok: false, message: `AssertionError: ${unparse(elem)} is not a call` }
    const r = resolveCall(elem)
    if (!r.ok) return r
    out.push(r.value)
  }
  return { ok: true, value: Py.list(out) }
}

/** The result styles a result file can hold. */
export type Style = "fc" | "prompting"

/** Decodes one result line's `result` in the given style (a prompting decode of a non-string fails, as in BFCL). */
export const decode = (result: PyValue, style: Style): Decoded =>
  style === "fc"
    ? decodeFc(result)
    : result.t === "str"
    ? decodePrompting(result.v)
    : { ok: false, message: `'${Py.typeName(result)}' object has no attribute 'strip'` }
