/**
 * Python values as BFCL's checker sees them: `int` and `float` kept apart (JSON `5` is an int, `5.0` a float), `bool`
 * its own type yet equal to 1/0, tuples apart from lists. A JSON reader that keeps those distinctions (as Python's
 * `json.loads` does), Python `==`, `in`, `repr` and `type(x).__name__`. Pure.
 */

/** One Python value. */
export type Py =
  | { readonly t: "none" }
  | { readonly t: "bool"; readonly v: boolean }
  | { readonly t: "int"; readonly v: bigint }
  | { readonly t: "float"; readonly v: number }
  | { readonly t: "str"; readonly v: string }
  | { readonly t: "list"; readonly items: ReadonlyArray<Py> }
  | { readonly t: "tuple"; readonly items: ReadonlyArray<Py> }
  | { readonly t: "dict"; readonly entries: ReadonlyArray<readonly [Py, Py]> }
  /** A value no BFCL parameter type maps to (complex, bytes, Ellipsis as a value): equal only to itself. */
  | { readonly t: "other"; readonly type: string; readonly repr: string }

/** A Python `dict`. */
export type PyDict = Extract<Py, { readonly t: "dict" }>

/** Constructors. */
export const none: Py = { t: "none" }
export const bool = (v: boolean): Py => ({ t: "bool", v })
export const int = (v: bigint | number): Py => ({ t: "int", v: typeof v === "bigint" ? v : BigInt(v) })
export const float = (v: number): Py => ({ t: "float", v })
export const str = (v: string): Py => ({ t: "str", v })
export const list = (items: ReadonlyArray<Py>): Py => ({ t: "list", items })
export const tuple = (items: ReadonlyArray<Py>): Py => ({ t: "tuple", items })
export const dict = (entries: ReadonlyArray<readonly [Py, Py]>): PyDict => ({ t: "dict", entries })
/** A dict with string keys. */
export const record = (fields: ReadonlyArray<readonly [string, Py]>): PyDict => dict(fields.map(([k, v]) => [str(k), v] as const))

/** `type(x).__name__`. */
export const typeName = (x: Py): string => {
  switch (x.t) {
    case "none":
      return "NoneType"
    case "other":
      return x.type
    default:
      return x.t
  }
}

const isNumeric = (x: Py): x is Extract<Py, { t: "bool" | "int" | "float" }> => x.t === "bool" || x.t === "int" || x.t === "float"

/** Python's exact comparison of an int with a float (no rounding through doubles). */
const intEqualsFloat = (i: bigint, f: number): boolean => Number.isFinite(f) && Number.isInteger(f) && BigInt(f) === i

const numericEq = (a: Extract<Py, { t: "bool" | "int" | "float" }>, b: Extract<Py, { t: "bool" | "int" | "float" }>): boolean => {
  const ai = a.t === "bool" ? (a.v ? 1n : 0n) : a.t === "int" ? a.v : undefined
  const bi = b.t === "bool" ? (b.v ? 1n : 0n) : b.t === "int" ? b.v : undefined
  if (ai !== undefined && bi !== undefined) return ai === bi
  if (ai !== undefined) return intEqualsFloat(ai, (b as { v: number }).v)
  if (bi !== undefined) return intEqualsFloat(bi, (a as { v: number }).v)
  return (a as { v: number }).v === (b as { v: number }).v
}

/** Python `a == b` (True == 1 == 1.0; a list never equals a tuple; dicts compare by key set and values). */
export const eq = (a: Py, b: Py): boolean => {
  if (isNumeric(a) && isNumeric(b)) return numericEq(a, b)
  switch (a.t) {
    case "none":
      return b.t === "none"
    case "str":
      return b.t === "str" && a.v === b.v
    case "list":
    case "tuple":
      return b.t === a.t && a.items.length === b.items.length && a.items.every((x, i) => eq(x, b.items[i] as Py))
    case "dict": {
      if (b.t !== "dict" || a.entries.length !== b.entries.length) return false
      return a.entries.every(([k, v]) => {
        const other = lookup(b, k)
        return other !== undefined && eq(v, other)
      })
    }
    case "other":
      return b.t === "other" && a.type === b.type && a.repr === b.repr
    default:
      return false
  }
}

/** `d[key]`, or undefined when the key is absent. */
export const lookup = (d: PyDict, key: Py): Py | undefined => {
  for (const [k, v] of d.entries) if (eq(k, key)) return v
  return undefined
}

/** `d[name]` for a string key. */
export const get = (d: PyDict, name: string): Py | undefined => lookup(d, str(name))

/** The string keys of a dict, in order (other keys are skipped). */
export const keys = (d: PyDict): ReadonlyArray<string> => d.entries.flatMap(([k]) => (k.t === "str" ? [k.v] : []))

/** `item in container`: membership of a list/tuple, a key of a dict, a substring of a str; undefined when Python would raise. */
export const contains = (container: Py, item: Py): boolean | undefined => {
  switch (container.t) {
    case "list":
    case "tuple":
      return container.items.some((x) => eq(x, item))
    case "dict":
      return lookup(container, item) !== undefined
    case "str":
      return item.t === "str" ? container.v.includes(item.v) : undefined
    default:
      return undefined
  }
}

/** What `for x in container` / `container[i]` walks: a list's items, a str's characters; undefined otherwise. */
export const sequence = (x: Py): ReadonlyArray<Py> | undefined =>
  x.t === "list" || x.t === "tuple" ? x.items : x.t === "str" ? [...x.v].map(str) : undefined

// ---------------------------------------------------------------------------------------------------------------
// repr

const reprString = (s: string): string => {
  const quote = s.includes("'") && !s.includes("\"") ? "\"" : "'"
  let out = quote
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0
    if (ch === "\\") out += "\\\\"
    else if (ch === quote) out += `\\${quote}`
    else if (ch === "\n") out += "\\n"
    else if (ch === "\r") out += "\\r"
    else if (ch === "\t") out += "\\t"
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`
    else out += ch
  }
  return out + quote
}

/** Python's `repr` of a float: shortest round-trip digits, always a `.0` or exponent, `inf`/`nan`. */
export const reprFloat = (v: number): string => {
  if (Number.isNaN(v)) return "nan"
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf"
  if (Object.is(v, -0)) return "-0.0"
  const abs = Math.abs(v)
  if (abs !== 0 && (abs >= 1e16 || abs < 1e-4)) {
    const [mantissa, exponent] = v.toExponential().split("e") as [string, string]
    const exp = Number(exponent)
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`
  }
  const text = String(v)
  return text.includes(".") ? text : `${text}.0`
}

/** Python `repr(x)`. */
export const repr = (x: Py): string => {
  switch (x.t) {
    case "none":
      return "None"
    case "bool":
      return x.v ? "True" : "False"
    case "int":
      return x.v.toString()
    case "float":
      return reprFloat(x.v)
    case "str":
      return reprString(x.v)
    case "list":
      return `[${x.items.map(repr).join(", ")}]`
    case "tuple":
      return x.items.length === 1 ? `(${repr(x.items[0] as Py)},)` : `(${x.items.map(repr).join(", ")})`
    case "dict":
      return `{${x.entries.map(([k, v]) => `${repr(k)}: ${repr(v)}`).join(", ")}}`
    case "other":
      return x.repr
  }
}

// ---------------------------------------------------------------------------------------------------------------
// JSON (as Python's json.loads reads it)

/** A parsed JSON text, or where and why it is not JSON. */
export type JsonParsed = { readonly ok: true; readonly value: Py } | { readonly ok: false; readonly message: string }

interface JsonState {
  readonly text: string
  pos: number
  /** The first failure; once set every reader returns at once. */
  error: string | undefined
}

const jsonFail = (st: JsonState, message: string): Py => {
  if (st.error === undefined) st.error = `${message} at offset ${st.pos}`
  return none
}

const jsonWs = (st: JsonState): void => {
  const t = st.text
  while (st.pos < t.length) {
    const c = t.charCodeAt(st.pos)
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) st.pos++
    else break
  }
}

const jsonEscapes: Readonly<Record<string, string>> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }

const jsonString = (st: JsonState): string | undefined => {
  const t = st.text
  st.pos++
  let out = ""
  let start = st.pos
  for (;;) {
    if (st.pos >= t.length) {
      jsonFail(st, "unterminated string")
      return undefined
    }
    const c = t.charCodeAt(st.pos)
    if (c === 0x22) {
      out += t.slice(start, st.pos)
      st.pos++
      return out
    }
    if (c < 0x20) {
      jsonFail(st, "control character in a string")
      return undefined
    }
    if (c !== 0x5c) {
      st.pos++
      continue
    }
    out += t.slice(start, st.pos)
    const e = t[st.pos + 1] ?? ""
    if (e === "u") {
      const hex = t.slice(st.pos + 2, st.pos + 6)
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
        jsonFail(st, "bad \\u escape")
        return undefined
      }
      out += String.fromCharCode(parseInt(hex, 16))
      st.pos += 6
    } else {
      const plain = jsonEscapes[e]
      if (plain === undefined) {
        jsonFail(st, "bad escape")
        return undefined
      }
      out += plain
      st.pos += 2
    }
    start = st.pos
  }
}

const jsonWords = [["true", bool(true)], ["false", bool(false)], ["null", none], ["NaN", float(NaN)], ["Infinity", float(Infinity)], ["-Infinity", float(-Infinity)]] as const

const jsonObject = (st: JsonState, depth: number): Py => {
  st.pos++
  const entries: Array<readonly [Py, Py]> = []
  const index = new Map<string, number>()
  jsonWs(st)
  if (st.text[st.pos] === "}") {
    st.pos++
    return dict(entries)
  }
  while (st.error === undefined) {
    jsonWs(st)
    if (st.text[st.pos] !== "\"") return jsonFail(st, "expected a string key")
    const key = jsonString(st)
    if (key === undefined) return none
    jsonWs(st)
    if (st.text[st.pos] !== ":") return jsonFail(st, "expected ':'")
    st.pos++
    const v = jsonValue(st, depth + 1)
    const at = index.get(key)
    if (at === undefined) {
      index.set(key, entries.length)
      entries.push([str(key), v])
    } else entries[at] = [str(key), v]
    jsonWs(st)
    const c = st.text[st.pos]
    st.pos++
    if (c === "}") return dict(entries)
    if (c !== ",") {
      st.pos--
      return jsonFail(st, "expected ',' or '}'")
    }
  }
  return none
}

const jsonArray = (st: JsonState, depth: number): Py => {
  st.pos++
  const items: Array<Py> = []
  jsonWs(st)
  if (st.text[st.pos] === "]") {
    st.pos++
    return list(items)
  }
  while (st.error === undefined) {
    items.push(jsonValue(st, depth + 1))
    jsonWs(st)
    const c = st.text[st.pos]
    st.pos++
    if (c === "]") return list(items)
    if (c !== ",") {
      st.pos--
      return jsonFail(st, "expected ',' or ']'")
    }
  }
  return none
}

const numberToken = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y

const jsonValue = (st: JsonState, depth: number): Py => {
  if (st.error !== undefined) return none
  if (depth > 512) return jsonFail(st, "nested too deeply")
  jsonWs(st)
  const c = st.text[st.pos]
  if (c === "{") return jsonObject(st, depth)
  if (c === "[") return jsonArray(st, depth)
  if (c === "\"") {
    const s = jsonString(st)
    return s === undefined ? none : str(s)
  }
  if (c === "t" || c === "f" || c === "n" || c === "N" || c === "I" || (c === "-" && st.text[st.pos + 1] === "I")) {
    for (const [word, v] of jsonWords) {
      if (st.text.startsWith(word, st.pos)) {
        st.pos += word.length
        return v
      }
    }
  }
  numberToken.lastIndex = st.pos
  const m = numberToken.exec(st.text)
  if (m === null) return jsonFail(st, "unexpected character")
  st.pos += m[0].length
  return m[1] === undefined && m[2] === undefined ? int(BigInt(m[0])) : float(Number(m[0]))
}

/**
 * Reads a JSON text as Python's `json.loads` does: a number with a fraction or exponent is a float, else an int;
 * `NaN`, `Infinity`, `-Infinity` are accepted; a repeated key keeps its first place and its last value.
 */
export const parseJson = (text: string): JsonParsed => {
  const st: JsonState = { text, pos: 0, error: undefined }
  const value = jsonValue(st, 0)
  jsonWs(st)
  if (st.error === undefined && st.pos < text.length) jsonFail(st, "extra data")
  return st.error === undefined ? { ok: true, value } : { ok: false, message: st.error }
}

/** A Python value back to plain JSON-able data (ints beyond 2^53 become numbers; tuples become arrays). */
export const toJson = (x: Py): unknown => {
  switch (x.t) {
    case "none":
      return null
    case "bool":
      return x.v
    case "int":
      return Number(x.v)
    case "float":
      return Number.isFinite(x.v) ? x.v : String(x.v)
    case "str":
      return x.v
    case "list":
    case "tuple":
      return x.items.map(toJson)
    case "dict":
      return Object.fromEntries(x.entries.map(([k, v]) => [k.t === "str" ? k.v : repr(k), toJson(v)]))
    case "other":
      return x.repr
  }
}

/** `json.dumps(x)`: a float keeps its `.0` (so it reads back as a float), tuples are arrays, non-str keys are repr'd. */
export const jsonText = (x: Py): string => {
  switch (x.t) {
    case "none":
      return "null"
    case "bool":
      return x.v ? "true" : "false"
    case "int":
      return x.v.toString()
    case "float":
      return Number.isNaN(x.v) ? "NaN" : !Number.isFinite(x.v) ? (x.v > 0 ? "Infinity" : "-Infinity") : reprFloat(x.v)
    case "str":
      return JSON.stringify(x.v)
    case "list":
    case "tuple":
      return `[${x.items.map(jsonText).join(", ")}]`
    case "dict":
      return `{${x.entries.map(([k, v]) => `${JSON.stringify(k.t === "str" ? k.v : repr(k))}: ${jsonText(v)}`).join(", ")}}`
    case "other":
      return JSON.stringify(x.repr)
  }
}

/** Plain JSON data (as `JSON.parse` gives it) as a Python value: integral numbers become ints. */
export const fromJson = (x: unknown): Py => {
  if (x === null || x === undefined) return none
  if (typeof x === "boolean") return bool(x)
  if (typeof x === "number") return Number.isInteger(x) ? int(BigInt(x)) : float(x)
  if (typeof x === "string") return str(x)
  if (Array.isArray(x)) return list(x.map(fromJson))
  if (typeof x === "object") return record(Object.entries(x as Record<string, unknown>).map(([k, v]) => [k, fromJson(v)] as const))
  return str(String(x))
}
