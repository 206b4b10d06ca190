/**
 * The resolver of BFCL's prompting-style decoder: an expression tree into BFCL values, as `resolve_ast_call` /
 * `resolve_ast_by_type` do, with the `eval` of a BinOp (arithmetic, repetition, Python's floor division).
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue, PyDict } from "./BfclValue.ts"
import { unparse, type Node } from "./BfclPyParse.ts"

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

export const resolveCall = (call: Extract<Node, { k: "call" }>): Resolved => {
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
