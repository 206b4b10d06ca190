/**
 * BFCL's two decoders of a result line's `result`: FC style (`[{"<fn>": "<json args>"}]`, as the OpenAI-style FC
 * handlers decode it) and prompting style (text holding a Python list of calls, decoded as `default_decode_ast_prompting`
 * + `ast_parse` + `resolve_ast_by_type` do, keyword arguments only). Pure; see docs/benchmarks.md for the divergences.
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue, PyDict } from "./BfclValue.ts"
import { parseExpression, unparse } from "./BfclPyParse.ts"
import { resolveCall } from "./BfclPyEval.ts"

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
