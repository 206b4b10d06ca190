/**
 * A BFCL run as data: a category's test entries and possible answers (`BFCL_v4_<category>.json` +
 * `possible_answer/BFCL_v4_<category>.json`, JSON Lines), a result file's lines, and the scoring of every requested
 * category into verdicts and BFCL's summary. Pure: texts in, values out; a malformed file is a typed error.
 */
import { Result, Schema } from "effect"
import * as Checker from "./BfclChecker.ts"
import * as Py from "./BfclValue.ts"
import type { Py as PyValue, PyDict } from "./BfclValue.ts"
import type * as Decode from "./BfclDecode.ts"

/** A BFCL input file that cannot be used, naming the file, the line and what is wrong. */
export class BfclInputError extends Schema.TaggedError<BfclInputError>()("BfclInputError", {
  file: Schema.String,
  message: Schema.String
}) {}

/** One message of an entry's question. */
export interface Message {
  readonly role: string
  readonly content: string
}

/** One test entry: id, the question's first turn, the function docs (as Python values), and the raw line. */
export interface TestEntry extends Checker.Entry {
  readonly question: ReadonlyArray<Message>
  readonly line: string
}

/** A category ready to score: its entries in file order, and its possible answers by id (none for (ir)relevance). */
export interface Category {
  readonly name: string
  readonly kind: Checker.CheckerKind
  readonly entries: ReadonlyArray<TestEntry>
  readonly answers: ReadonlyMap<string, ReadonlyArray<PyDict>> | undefined
}

/** The file names of a category in a BFCL data folder. */
export const fileNames = (category: string) => ({
  entries: `BFCL_v4_${category}.json`,
  answers: `possible_answer/BFCL_v4_${category}.json`
})

/** The category of a data file name (`BFCL_v4_live_multiple.json` → `live_multiple`), or undefined. */
export const categoryOfFile = (name: string): string | undefined => /^BFCL_v4_(.+)\.json$/.exec(name)?.[1]

interface Line {
  readonly number: number
  readonly text: string
  readonly value: PyDict
}

const lines = (file: string, text: string): Result.Result<ReadonlyArray<Line>, BfclInputError> => {
  const out: Array<Line> = []
  const raw = text.split(/\r?\n/)
  for (let i = 0; i < raw.length; i++) {
    const line = (raw[i] as string).replace(/^\uFEFF/, "")
    if (line.trim() === "") continue
    const parsed = Py.parseJson(line)
    if (!parsed.ok) return Result.fail(new BfclInputError({ file, message: `line ${i + 1} is not JSON: ${parsed.message}` }))
    if (parsed.value.t !== "dict") return Result.fail(new BfclInputError({ file, message: `line ${i + 1} is not a JSON object` }))
    out.push({ number: i + 1, text: line, value: parsed.value })
  }
  return Result.succeed(out)
}

const idOf = (file: string, line: Line): Result.Result<string, BfclInputError> => {
  const id = Py.get(line.value, "id")
  return id !== undefined && id.t === "str" && id.v !== ""
    ? Result.succeed(id.v)
    : Result.fail(new BfclInputError({ file, message: `line ${line.number} has no string "id"` }))
}

const messagesOf = (question: PyValue | undefined): ReadonlyArray<Message> | undefined => {
  // BFCL's question is a list of turns, each a list of messages; single-turn categories have one turn
  const turns = question === undefined ? undefined : Py.sequence(question)
  const first = turns?.[0]
  const messages = first === undefined ? undefined : Py.sequence(first)
  if (messages === undefined) return undefined
  const out: Array<Message> = []
  for (const m of messages) {
    if (m.t !== "dict") return undefined
    const role = Py.get(m, "role")
    const content = Py.get(m, "content")
    if (role?.t !== "str" || content?.t !== "str") return undefined
    out.push({ role: role.v, content: content.v })
  }
  return out
}

/** Parses a category's test file. */
export const parseEntries = (file: string, text: string): Result.Result<ReadonlyArray<TestEntry>, BfclInputError> => {
  const parsed = lines(file, text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const out: Array<TestEntry> = []
  const seen = new Set<string>()
  for (const line of parsed.success) {
    const id = idOf(file, line)
    if (Result.isFailure(id)) return Result.fail(id.failure)
    if (seen.has(id.success)) return Result.fail(new BfclInputError({ file, message: `line ${line.number}: id ${JSON.stringify(id.success)} appears twice` }))
    seen.add(id.success)
    const functions = Py.get(line.value, "function")
    const docs = functions === undefined ? undefined : Py.sequence(functions)
    if (docs === undefined || functions?.t !== "list") return Result.fail(new BfclInputError({ file, message: `line ${line.number} (${id.success}): "function" is not a list of function docs` }))
    const question = messagesOf(Py.get(line.value, "question"))
    if (question === undefined) return Result.fail(new BfclInputError({ file, message: `line ${line.number} (${id.success}): "question" is not [[{role, content}, ...]]` }))
    out.push({ id: id.success, functions: docs, question, line: line.text })
  }
  return Result.succeed(out)
}

/** Parses a category's possible-answer file: id → ground truth (a list of `{function: {param: [values]}}`). */
export const parseAnswers = (file: string, text: string): Result.Result<ReadonlyMap<string, ReadonlyArray<PyDict>>, BfclInputError> => {
  const parsed = lines(file, text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const out = new Map<string, ReadonlyArray<PyDict>>()
  for (const line of parsed.success) {
    const id = idOf(file, line)
    if (Result.isFailure(id)) return Result.fail(id.failure)
    const truth = Py.get(line.value, "ground_truth")
    const items = truth?.t === "list" ? truth.items : undefined
    if (items === undefined || !items.every((g) => g.t === "dict" && g.entries.length === 1 && (g.entries[0] as readonly [PyValue, PyValue])[1].t === "dict")) {
      return Result.fail(new BfclInputError({ file, message: `line ${line.number} (${id.success}): "ground_truth" is not a list of {function: {parameter: [values]}}` }))
    }
    out.set(id.success, items as ReadonlyArray<PyDict>)
  }
  return Result.succeed(out)
}

/** Builds a category from its texts; an AST category needs a possible answer for every entry. */
export const category = (
  name: string,
  entries: { readonly file: string; readonly text: string },
  answers: { readonly file: string; readonly text: string } | undefined
): Result.Result<Category, BfclInputError> => {
  const checker = Checker.checkerOf(name)
  if (!checker.ok) return Result.fail(new BfclInputError({ file: entries.file, message: `category ${name} is ${checker.reason}` }))
  const parsedEntries = parseEntries(entries.file, entries.text)
  if (Result.isFailure(parsedEntries)) return Result.fail(parsedEntries.failure)
  const relevance = checker.kind === "relevance" || checker.kind === "irrelevance"
  if (relevance) return Result.succeed({ name, kind: checker.kind, entries: parsedEntries.success, answers: undefined })
  if (answers === undefined) return Result.fail(new BfclInputError({ file: entries.file, message: `category ${name} needs ${fileNames(name).answers}` }))
  const parsedAnswers = parseAnswers(answers.file, answers.text)
  if (Result.isFailure(parsedAnswers)) return Result.fail(parsedAnswers.failure)
  const missing = parsedEntries.success.find((e) => !parsedAnswers.success.has(e.id))
  if (missing !== undefined) return Result.fail(new BfclInputError({ file: answers.file, message: `no possible answer for ${missing.id}` }))
  return Result.succeed({ name, kind: checker.kind, entries: parsedEntries.success, answers: parsedAnswers.success })
}

/** Parses a result file (BFCL's `{"id", "result", ...}` lines): id → result; a repeated id is refused. */
export const parseResults = (file: string, text: string): Result.Result<ReadonlyMap<string, PyValue>, BfclInputError> => {
  const parsed = lines(file, text)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const out = new Map<string, PyValue>()
  for (const line of parsed.success) {
    const id = idOf(file, line)
    if (Result.isFailure(id)) return Result.fail(id.failure)
    if (out.has(id.success)) return Result.fail(new BfclInputError({ file, message: `line ${line.number}: a second result for ${id.success}` }))
    const result = Py.get(line.value, "result")
    if (result === undefined) return Result.fail(new BfclInputError({ file, message: `line ${line.number} (${id.success}) has no "result"` }))
    out.set(id.success, result)
  }
  return Result.succeed(out)
}

/** One entry's verdict line (`--verdicts`). */
export interface Verdict {
  readonly id: string
  readonly category: string
  readonly valid: boolean
  readonly error_type?: string
  readonly error?: ReadonlyArray<string>
}

/** One category's score. */
export interface CategorySummary {
  readonly accuracy: number
  readonly correct: number
  readonly total: number
  /** Entries with no result line (scored as wrong). */
  readonly missing: number
  /** Wrong entries by BFCL error type. */
  readonly errors: Readonly<Record<string, number>>
}

/** The summary of a scoring run. */
export interface Summary {
  readonly categories: Readonly<Record<string, CategorySummary>>
  readonly aggregates: ReturnType<typeof Checker.aggregates>
  /** Result lines whose id is in none of the scored categories. */
  readonly unmatchedResults: number
}

/** Scores every category against one result map. */
export const score = (
  categories: ReadonlyArray<Category>,
  results: ReadonlyMap<string, PyValue>,
  style: Decode.Style,
  options: Checker.CheckOptions
): { readonly summary: Summary; readonly verdicts: ReadonlyArray<Verdict> } => {
  const verdicts: Array<Verdict> = []
  const perCategory: Record<string, CategorySummary> = {}
  const scores = new Map<string, Checker.CategoryScore>()
  const scoredIds = new Set<string>()
  for (const cat of categories) {
    let correct = 0
    let missing = 0
    const errors: Record<string, number> = {}
    for (const entry of cat.entries) {
      scoredIds.add(entry.id)
      const result = results.get(entry.id)
      const check: Checker.Check = result === undefined
        ? { valid: false, error: ["No result line for this entry."], errorType: "result:missing" }
        : Checker.scoreEntry(cat.kind, entry, cat.answers?.get(entry.id), result, style, options)
      if (result === undefined) missing++
      if (check.valid) correct++
      else errors[check.errorType ?? "unknown"] = (errors[check.errorType ?? "unknown"] ?? 0) + 1
      verdicts.push(check.valid
        ? { id: entry.id, category: cat.name, valid: true }
        : { id: entry.id, category: cat.name, valid: false, ...(check.errorType !== undefined ? { error_type: check.errorType } : {}), error: check.error })
    }
    const total = cat.entries.length
    const accuracy = total === 0 ? 0 : correct / total
    perCategory[cat.name] = { accuracy, correct, total, missing, errors }
    scores.set(cat.name, { accuracy, total })
  }
  const unmatchedResults = [...results.keys()].filter((id) => !scoredIds.has(id)).length
  return { summary: { categories: perCategory, aggregates: Checker.aggregates(scores), unmatchedResults }, verdicts }
}

/** A call as a result line holds it: the function's BFCL name and its arguments. */
export interface GoldCall {
  readonly name: string
  readonly arguments: PyDict
}

const firstOption = (options: PyValue): PyValue | undefined => (Py.sequence(options) ?? []).find((o) => !(o.t === "str" && o.v === ""))

/** A dict of option lists (`{key: [values]}`) reduced to one value per key (an only-optional key left out). */
const pickDict = (candidate: PyValue): PyValue => {
  if (candidate.t !== "dict") return candidate
  return Py.dict(candidate.entries.flatMap(([k, options]) => {
    const v = firstOption(options)
    return v === undefined ? [] : [[k, v] as const]
  }))
}

/**
 * The first possible answer of an entry as calls: per parameter the first value that is not the optional marker `""`
 * (parameters with only `""` left out); dict parameters and lists of dicts reduced key by key.
 */
export const goldCalls = (entry: Checker.Entry, answers: ReadonlyArray<PyDict>): ReadonlyArray<GoldCall> =>
  answers.map((answer) => {
    const [nameKey, params] = answer.entries[0] as readonly [PyValue, PyValue]
    const name = nameKey.t === "str" ? nameKey.v : Py.repr(nameKey)
    const doc = entry.functions.find((f) => f.t === "dict" && Py.get(f, "name")?.t === "str" && (Py.get(f, "name") as { v: string }).v === name)
    const properties = doc?.t === "dict" ? Py.get(Py.get(doc, "parameters") as PyDict ?? Py.dict([]), "properties") : undefined
    const typeOf = (param: PyValue): { readonly type: string; readonly items: string } => {
      const detail = properties?.t === "dict" ? Py.lookup(properties, param) : undefined
      const t = detail?.t === "dict" ? Py.get(detail, "type") : undefined
      const items = detail?.t === "dict" ? Py.get(detail, "items") : undefined
      const it = items?.t === "dict" ? Py.get(items, "type") : undefined
      return { type: t?.t === "str" ? t.v : "", items: it?.t === "str" ? it.v : "" }
    }
    const required = doc?.t === "dict" ? Py.sequence(Py.get(Py.get(doc, "parameters") as PyDict ?? Py.dict([]), "required") ?? Py.list([])) ?? [] : []
    const args = params.t !== "dict" ? [] : params.entries.flatMap(([param, options]) => {
      const v = firstOption(options)
      // a required parameter whose only possible answer is "" is satisfied by the empty string (string_checker)
      if (v === undefined) return required.some((r) => Py.eq(r, param)) && Py.contains(options, Py.str("")) === true ? [[param, Py.str("")] as const] : []
      const { type, items } = typeOf(param)
      const value = type === "dict" ? pickDict(v) : type === "array" && items === "dict" ? Py.list((Py.sequence(v) ?? []).map(pickDict)) : v
      return [[param, value] as const]
    })
    return { name, arguments: Py.dict(args) }
  })

/** BFCL's FC-style result of some calls: `[{"<name>": "<json arguments>"}]`. */
export const fcResult = (calls: ReadonlyArray<GoldCall>): PyValue => Py.list(calls.map((c) => Py.record([[c.name, Py.str(Py.jsonText(c.arguments))]])))

/** One result line (JSON text) in BFCL's format. */
export const resultLine = (id: string, result: PyValue): string => `{"id": ${JSON.stringify(id)}, "result": ${Py.jsonText(result)}}`
