/**
 * The parser of BFCL's prompting-style decoder: tokens into an expression tree for the subset of Python that
 * `ast_parse` can resolve (calls with keyword arguments, literals, containers, unary and binary operators), and its
 * `ast.unparse`.
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue } from "./BfclValue.ts"
import { lex, reserved, type Token } from "./BfclPyLex.ts"

// ---------------------------------------------------------------------------------------------------------------
// Prompting style: a Python expression parser for the subset that ast_parse can resolve

export type Node =
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
export const parseExpression = (text: string): { readonly ok: true; readonly node: Node } | { readonly ok: false; readonly message: string } => {
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

export const unparse = (node: Node): string => {
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
