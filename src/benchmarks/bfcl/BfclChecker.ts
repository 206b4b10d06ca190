/**
 * BFCL v4's AST checker for the Python categories, rule for rule as `bfcl_eval/eval_checker/ast_eval/ast_checker.py`
 * and the relevance runner of `eval_runner.py` apply them (error types spelled as BFCL spells them), and its
 * leaderboard aggregates. Pure: entries, answers and decoded model output in, verdicts out.
 */
import * as Py from "./BfclValue.ts"
import type { Py as PyValue, PyDict } from "./BfclValue.ts"
import * as Decode from "./BfclDecode.ts"

/** A checker's verdict on one entry (BFCL's `{"valid", "error", "error_type"}`). */
export interface Check {
  readonly valid: boolean
  readonly error: ReadonlyArray<string>
  readonly errorType?: string
}

/** How names are compared: `underscoreToDot` is BFCL's option for FC models whose API forbids `.` in names. */
export interface CheckOptions {
  readonly underscoreToDot: boolean
}

const ok: Check = { valid: true, error: [] }
const bad = (errorType: string, ...error: ReadonlyArray<string>): Check => ({ valid: false, error, errorType })

/** BFCL's Python type names of a function doc's parameter types (`tuple` is checked as a list, `any` as a str). */
const pythonType: Readonly<Record<string, string>> = {
  string: "str",
  integer: "int",
  float: "float",
  boolean: "bool",
  array: "list",
  tuple: "list",
  dict: "dict",
  any: "str"
}

/** The types whose elements are checked one level deep. */
const nestedChecked = new Set(["array", "tuple"])

/** BFCL's `standardize_string`: drop spaces and `,./-_*^`, lower-case, single quotes as double quotes. */
export const standardize = (s: string): string => s.replace(/[ ,./\-_*^]/g, "").toLowerCase().replace(/'/g, "\"")

const pyStr = (x: PyValue): string | undefined => (x.t === "str" ? x.v : undefined)

/** The type of a parameter's possible answers: the first that is not the optional marker `""`. */
const possibleAnswerType = (answers: ReadonlyArray<PyValue>): string | undefined => {
  for (const a of answers) if (!(a.t === "str" && a.v === "")) return Py.typeName(a)
  return undefined
}

interface TypeCheck extends Check {
  readonly isVariable: boolean
}

/**
 * BFCL's `type_checker`: the doc's type, arrays' elements one level deep; a value of the possible answers' own type
 * where the doc says otherwise passes as a "variable" (a failed element check still fails, as `type_error:nested`).
 */
const typeChecker = (param: string, value: PyValue, possible: ReadonlyArray<PyValue>, expectedDescription: string, expected: string, nested: string | undefined): TypeCheck => {
  const answerType = possibleAnswerType(possible)
  let nestedError: string | undefined
  if (Py.typeName(value) === expected) {
    if (nested === undefined) return { ...ok, isVariable: answerType !== undefined && answerType !== expected }
    for (const item of possible) {
      let flag = true
      if (item.t === "list") {
        for (const element of Py.sequence(value) ?? []) {
          if (!typeChecker(param, element, item.items, `<class '${nested}'>`, nested, undefined).valid) {
            flag = false
            break
          }
        }
      }
      if (flag) return { ...ok, isVariable: answerType !== undefined && answerType !== expected }
    }
    nestedError = `Nested type checking failed for parameter ${Py.repr(Py.str(param))}. Expected outer type ${expectedDescription} with inner type <class '${nested}'>. Parameter value: ${Py.repr(value)}.`
  }
  if (answerType !== undefined && Py.typeName(value) === answerType) {
    return nestedError === undefined
      ? { ...ok, isVariable: true }
      : { valid: false, error: [nestedError], errorType: "type_error:nested", isVariable: true }
  }
  const simple = `Incorrect type for parameter ${Py.repr(Py.str(param))}. Expected type ${expectedDescription}, got ${Py.typeName(value)}. Parameter value: ${Py.repr(value)}.`
  return { valid: false, error: nestedError === undefined ? [simple] : [nestedError, simple], errorType: "type_error:simple", isVariable: false }
}

const stringChecker = (param: string, value: string, possible: ReadonlyArray<PyValue>): Check => {
  const target = standardize(value)
  const options = possible.flatMap((p) => (p.t === "str" ? [standardize(p.v)] : []))
  return options.includes(target)
    ? ok
    : bad("value_error:string", `Invalid value for parameter ${Py.repr(Py.str(param))}: ${Py.repr(Py.str(value))}. Expected one of ${Py.repr(Py.list(possible))}. Case insensitive.`)
}

const standardizeItem = (x: PyValue): PyValue => (x.t === "str" ? Py.str(standardize(x.v)) : x)

const listChecker = (param: string, value: PyValue, possible: ReadonlyArray<PyValue>): Check => {
  const model = Py.list((Py.sequence(value) ?? []).map(standardizeItem))
  const options = possible.flatMap((p) => {
    const items = Py.sequence(p)
    return items === undefined ? [] : [Py.list(items.map(standardizeItem))]
  })
  return options.some((o) => Py.eq(model, o))
    ? ok
    : bad("value_error:list/tuple", `Invalid value for parameter ${Py.repr(Py.str(param))}: ${Py.repr(value)}. Expected one of ${Py.repr(Py.list(possible))}.`)
}

/** BFCL's `dict_checker`: one level deep; each candidate dict of the possible answers tried in turn. */
const dictChecker = (param: string, value: PyValue, candidates: ReadonlyArray<PyValue>): Check => {
  let result: Check = bad("dict_checker:unclear")
  for (const candidate of candidates) {
    if (candidate.t === "str" && candidate.v === "") continue
    if (value.t !== "dict" || candidate.t !== "dict") {
      result = bad("value_error:dict_key", `Cannot compare ${Py.repr(value)} with the possible answer ${Py.repr(candidate)} of parameter ${Py.repr(Py.str(param))}.`)
      continue
    }
    result = bad("dict_checker:unclear")
    let flag = true
    for (const [key, v] of value.entries) {
      const options = Py.lookup(candidate, key)
      if (options === undefined) {
        result = bad("value_error:dict_key", `Unexpected dict key parameter: '${pyStr(key) ?? Py.repr(key)}'.`)
        flag = false
        break
      }
      const standardized = (Py.sequence(options) ?? []).map(standardizeItem)
      if (!standardized.some((o) => Py.eq(standardizeItem(v), o))) {
        result = bad("value_error:dict_value", `Invalid value for parameter ${Py.repr(key)}: ${Py.repr(v)}. Expected one of ${Py.repr(Py.list(standardized))}.`)
        flag = false
        break
      }
    }
    for (const [key, options] of candidate.entries) {
      if (Py.lookup(value, key) === undefined && Py.contains(options, Py.str("")) !== true) {
        result = bad("value_error:dict_key", `Missing dict key parameter: '${pyStr(key) ?? Py.repr(key)}'.`)
        flag = false
        break
      }
    }
    if (flag) return ok
  }
  return result
}

/** BFCL's `list_dict_checker`: a list of dicts matched position by position against each candidate list. */
const listDictChecker = (param: string, value: PyValue, candidates: ReadonlyArray<PyValue>): Check => {
  let result: Check = bad("list_dict_checker:unclear")
  const model = Py.sequence(value) ?? []
  for (const candidate of candidates) {
    const items = Py.sequence(candidate) ?? []
    if (model.length !== items.length) {
      result = bad("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
      continue
    }
    let flag = true
    for (let i = 0; i < model.length; i++) {
      result = dictChecker(param, model[i] as PyValue, [items[i] as PyValue])
      if (!result.valid) {
        flag = false
        break
      }
    }
    if (flag) return ok
  }
  return result
}

/** The name a model must use for a documented function: dots as underscores under `underscoreToDot`. */
export const expectedName = (name: string, options: CheckOptions): string => (options.underscoreToDot && name.includes(".") ? name.replace(/\./g, "_") : name)

const asDict = (x: PyValue | undefined): PyDict | undefined => (x !== undefined && x.t === "dict" ? x : undefined)

/** BFCL's `simple_function_checker`: one call against one function doc and its possible answer. */
export const simpleFunctionChecker = (doc: PyDict, call: PyValue, answer: PyDict, options: CheckOptions): Check => {
  const possible = asDict(answer.entries[0]?.[1])
  const name = pyStr(Py.get(doc, "name") ?? Py.none)
  const parameters = asDict(Py.get(doc, "parameters"))
  const details = asDict(parameters === undefined ? undefined : Py.get(parameters, "properties")) ?? Py.dict([])
  const required = Py.sequence(parameters === undefined ? Py.none : (Py.get(parameters, "required") ?? Py.list([]))) ?? []
  if (possible === undefined || name === undefined) return bad("ast_checker:bad_possible_answer", "The possible answer or the function doc is not in BFCL's shape.")
  const funcName = expectedName(name, options)
  const modelCall = asDict(call)
  const params = modelCall === undefined ? undefined : asDict(Py.get(modelCall, funcName))
  if (modelCall === undefined || Py.get(modelCall, funcName) === undefined) {
    return bad("simple_function_checker:wrong_func_name", `Function name ${Py.repr(Py.str(funcName))} not found in model output.`)
  }
  if (params === undefined) return bad("ast_decoder:decoder_wrong_output_format", "The call's arguments are not a dict.")
  for (const r of required) {
    if (Py.lookup(params, r) === undefined) return bad("simple_function_checker:missing_required", `Missing required parameter: ${Py.repr(r)}.`)
  }
  for (const [paramKey, rawValue] of params.entries) {
    const param = pyStr(paramKey)
    const detail = asDict(Py.lookup(details, paramKey))
    const answers = Py.lookup(possible, paramKey)
    if (param === undefined || detail === undefined || answers === undefined) {
      return bad("simple_function_checker:unexpected_param", `Unexpected parameter: ${Py.repr(paramKey)}.`)
    }
    const possibleValues = Py.sequence(answers) ?? []
    const description = pyStr(Py.get(detail, "type") ?? Py.none) ?? ""
    const expected = pythonType[description]
    if (expected === undefined) return bad("ast_checker:unsupported_type", `Parameter ${Py.repr(paramKey)} has the type ${JSON.stringify(description)}, which BFCL's Python checker does not map.`)
    let nested: string | undefined
    if (nestedChecked.has(description)) {
      const itemsType = pyStr(Py.get(asDict(Py.get(detail, "items")) ?? Py.dict([]), "type") ?? Py.none)
      nested = itemsType === undefined ? undefined : pythonType[itemsType]
    }
    let value = rawValue
    if (description === "tuple" && value.t === "tuple") value = Py.list(value.items)
    if (description === "float" && value.t === "int") value = Py.float(Number(value.v))
    const typed = typeChecker(param, value, possibleValues, description, expected, nested)
    if (!typed.valid) return typed
    if (!typed.isVariable) {
      if (expected === "dict") {
        const r = dictChecker(param, value, possibleValues)
        if (!r.valid) return r
        continue
      }
      if (expected === "list" && nested === "dict") {
        const r = listDictChecker(param, value, possibleValues)
        if (!r.valid) return r
        continue
      }
      if (expected === "str") {
        const r = stringChecker(param, (value as { v: string }).v, possibleValues)
        if (!r.valid) return r
        continue
      }
      if (expected === "list") {
        const r = listChecker(param, value, possibleValues)
        if (!r.valid) return r
        continue
      }
    }
    if (!possibleValues.some((p) => Py.eq(value, p))) {
      return bad("value_error:others", `Invalid value for parameter ${Py.repr(paramKey)}: ${Py.repr(value)}. Expected one of ${Py.repr(answers)}.`)
    }
  }
  for (const [paramKey, answers] of possible.entries) {
    if (Py.lookup(params, paramKey) === undefined && Py.contains(answers, Py.str("")) !== true) {
      return bad("simple_function_checker:missing_optional", `Optional parameter ${Py.repr(paramKey)} not provided and not marked as optional.`)
    }
  }
  return ok
}

const docNamed = (docs: ReadonlyArray<PyValue>, name: string): PyDict | undefined =>
  docs.map(asDict).find((d) => d !== undefined && pyStr(Py.get(d, "name") ?? Py.none) === name)

const answerName = (answer: PyDict): string => pyStr(answer.entries[0]?.[0] ?? Py.none) ?? ""

/** BFCL's `parallel_function_checker_no_order`: each possible answer in turn takes the first unmatched call it accepts. */
export const parallelChecker = (docs: ReadonlyArray<PyValue>, calls: ReadonlyArray<PyValue>, answers: ReadonlyArray<PyDict>, options: CheckOptions): Check => {
  if (calls.length !== answers.length) return bad("parallel_function_checker_no_order:wrong_count", "Wrong number of functions.")
  const matched = new Set<number>()
  let result: Check = ok
  for (let i = 0; i < answers.length; i++) {
    const answer = answers[i] as PyDict
    const doc = docNamed(docs, answerName(answer))
    if (doc === undefined) return bad("ast_checker:function_doc_missing", `No function doc named ${JSON.stringify(answerName(answer))} for possible answer ${i}.`)
    const errors: Array<string> = []
    for (let index = 0; index < calls.length; index++) {
      if (matched.has(index)) continue
      result = simpleFunctionChecker(doc, calls[index] as PyValue, answer, options)
      if (result.valid) {
        matched.add(index)
        break
      }
      errors.push(`Model Result Index ${index}: ${result.errorType ?? ""}: ${result.error.join(" ")}`)
    }
    if (!result.valid) {
      const considered = calls.map((_, k) => k).filter((k) => !matched.has(k))
      return bad(
        "parallel_function_checker_no_order:cannot_find_match",
        `Could not find a matching function among index [${considered.join(", ")}] of model output for index ${i} of possible answers.`,
        ...errors
      )
    }
  }
  return ok
}

/** BFCL's `multiple_function_checker`: exactly one call, of the function the answer names. */
export const multipleChecker = (docs: ReadonlyArray<PyValue>, calls: ReadonlyArray<PyValue>, answers: ReadonlyArray<PyDict>, options: CheckOptions): Check => {
  if (calls.length !== answers.length) return bad("multiple_function_checker:wrong_count", "Wrong number of functions.")
  const answer = answers[0]
  if (answer === undefined) return ok
  const doc = docNamed(docs, answerName(answer))
  if (doc === undefined) return bad("ast_checker:function_doc_missing", `No function doc named ${JSON.stringify(answerName(answer))}.`)
  return simpleFunctionChecker(doc, calls[0] as PyValue, answer, options)
}

/** Which checker a category gets, by BFCL's rules on its name. */
export type CheckerKind = "relevance" | "irrelevance" | "parallel" | "multiple" | "simple"

/** Categories BFCL scores with something other than the Python AST checker (refused here). */
const notPythonAst = [
  { test: (c: string) => c.includes("javascript") || c.includes("java"), why: "a Java/JavaScript category (BFCL converts their string-typed values first; only the Python categories are scored here)" },
  { test: (c: string) => c.includes("multi_turn"), why: "a multi-turn category (scored by executing the calls, not by AST)" },
  { test: (c: string) => c.includes("web_search") || c.includes("memory"), why: "an agentic category (scored on the final answer, not by AST)" },
  { test: (c: string) => c.includes("format_sensitivity"), why: "the format-sensitivity category (not a scoring category)" },
  { test: (c: string) => c.includes("exec") || c.includes("rest") || c.includes("sql") || c.includes("chatable"), why: "a category BFCL v4 no longer evaluates" }
] as const

/** The checker of a category, or why the category is not a Python AST one. */
export const checkerOf = (category: string): { readonly ok: true; readonly kind: CheckerKind } | { readonly ok: false; readonly reason: string } => {
  const refused = notPythonAst.find((r) => r.test(category))
  if (refused !== undefined) return { ok: false, reason: refused.why }
  if (category.includes("irrelevance")) return { ok: true, kind: "irrelevance" }
  if (category.includes("relevance")) return { ok: true, kind: "relevance" }
  if (category.includes("parallel")) return { ok: true, kind: "parallel" }
  if (category.includes("multiple")) return { ok: true, kind: "multiple" }
  return { ok: true, kind: "simple" }
}

/** One test entry: its id and function docs (as Python values). */
export interface Entry {
  readonly id: string
  readonly functions: ReadonlyArray<PyValue>
}

/** BFCL's `ast_checker` for one decoded output. */
export const astChecker = (kind: "parallel" | "multiple" | "simple", entry: Entry, calls: ReadonlyArray<PyValue>, answers: ReadonlyArray<PyDict>, options: CheckOptions): Check => {
  if (kind === "parallel") return parallelChecker(entry.functions, calls, answers, options)
  if (kind === "multiple") return multipleChecker(entry.functions, calls, answers, options)
  if (calls.length !== 1) return bad("simple_function_checker:wrong_count", "Wrong number of functions.")
  const doc = asDict(entry.functions[0])
  const answer = answers[0]
  if (doc === undefined || answer === undefined) return bad("ast_checker:bad_possible_answer", "The entry has no function doc or no possible answer.")
  return simpleFunctionChecker(doc, calls[0] as PyValue, answer, options)
}

/**
 * Scores one result against its entry as BFCL's runners do: decode (a failure is `ast_decoder:decoder_failed`, or a
 * correct irrelevance), check the call format, then the AST checker (or the relevance rule).
 */
export const scoreEntry = (
  kind: CheckerKind,
  entry: Entry,
  answers: ReadonlyArray<PyDict> | undefined,
  result: PyValue,
  style: Decode.Style,
  options: CheckOptions
): Check => {
  const decoded = Decode.decode(result, style)
  if (kind === "irrelevance" || kind === "relevance") {
    const containsCall = decoded.ok && !Decode.isEmptyOutput(decoded.value)
    if (kind === "irrelevance") return containsCall ? bad("irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not.") : ok
    return containsCall ? ok : bad("relevance_error:decoder_failed", `Invalid syntax. Failed to decode AST when it should have. ${decoded.ok ? "" : decoded.message}`.trim())
  }
  if (!decoded.ok) return bad("ast_decoder:decoder_failed", `Invalid syntax. Failed to decode AST. ${decoded.message}`)
  if (!Decode.isCallFormat(decoded.value) || decoded.value.t !== "list") {
    return bad("ast_decoder:decoder_wrong_output_format", "Did not output in the specified format.")
  }
  if (answers === undefined) return bad("ast_checker:bad_possible_answer", "No possible answer for this entry.")
  return astChecker(kind, entry, decoded.value.items, answers, options)
}

// ---------------------------------------------------------------------------------------------------------------
// Aggregates (eval_runner_helper.generate_leaderboard_csv)

/** A category's accuracy and entry count. */
export interface CategoryScore {
  readonly accuracy: number
  readonly total: number
}

/** One aggregate: its value over the categories present, and the member categories that are absent. */
export interface Aggregate {
  readonly accuracy: number | null
  readonly total: number
  readonly present: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
}

const mean = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0) / xs.length

const aggregate = (members: ReadonlyArray<string>, scores: ReadonlyMap<string, CategoryScore>, weighted: boolean): Aggregate => {
  const present = members.filter((m) => scores.has(m))
  const parts = present.map((m) => scores.get(m) as CategoryScore)
  const total = parts.reduce((a, p) => a + p.total, 0)
  const accuracy = parts.length === 0
    ? null
    : weighted
    ? parts.reduce((a, p) => a + p.accuracy * p.total, 0) / Math.max(1, total)
    : mean(parts.map((p) => p.accuracy))
  return { accuracy, total, present, missing: members.filter((m) => !scores.has(m)) }
}

/** The categories of BFCL's simple column (v4 names, and the v3 name `simple`). */
const simpleColumn = ["simple_python", "simple", "simple_java", "java", "simple_javascript", "javascript"] as const

/**
 * BFCL's non-live and live aggregates over the categories present: non-live = unweighted mean of (simple, multiple,
 * parallel, parallel_multiple[, irrelevance]) with simple itself the mean of its language columns; live = mean
 * weighted by entry count. BFCL counts an absent category as 0 (and shows N/A); here it is left out and listed.
 */
export const aggregates = (scores: ReadonlyMap<string, CategoryScore>) => {
  const simple = aggregate(simpleColumn, scores, false)
  const withSimple = new Map(scores)
  if (simple.accuracy !== null) withSimple.set("(simple)", { accuracy: simple.accuracy, total: simple.total })
  const nonLiveAst = aggregate(["(simple)", "multiple", "parallel", "parallel_multiple"], withSimple, false)
  const nonLiveOverall = aggregate(["(simple)", "multiple", "parallel", "parallel_multiple", "irrelevance"], withSimple, false)
  const liveAst = aggregate(["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"], scores, true)
  const liveOverall = aggregate(["live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_irrelevance", "live_relevance"], scores, true)
  const rename = (a: Aggregate): Aggregate => ({
    ...a,
    present: a.present.flatMap((m) => (m === "(simple)" ? simple.present : [m])),
    missing: a.missing.flatMap((m) => (m === "(simple)" ? ["simple_python"] : [m]))
  })
  return {
    nonLive: { ast: rename(nonLiveAst), overall: rename(nonLiveOverall) },
    live: { ast: liveAst, overall: liveOverall }
  }
}
