/**
 * API-Bank level-1 / level-2 scoring, pure: the dialogue records of `lv1-lv2-samples`, the evaluation steps cut from
 * them (one per API event, as API-Bank's `Sample.from_chat_history`), its `[ApiName(key='value', ...)]` parser, and
 * exact-match scoring of API name and normalised arguments with per-dialogue success.
 */
import { Result, Schema } from "effect"
import type { Json, JsonObject } from "../../domain/Json.ts"
import * as PyLiteral from "../../toolenv/importers/PyLiteral.ts"

// ---------------------------------------------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------------------------------------------

/** A User or AI utterance of a dialogue file. */
export const TextEvent = Schema.Struct({
  role: Schema.Literals(["User", "AI"]),
  text: Schema.String
})
/** A User or AI utterance. */
export type TextEvent = typeof TextEvent.Type

/** What an API event returned (API-Bank's `{api_name, input, output, exception}`). */
export const ApiResult = Schema.Struct({
  api_name: Schema.optionalKey(Schema.String),
  input: Schema.optionalKey(Schema.Json),
  output: Schema.optionalKey(Schema.Json),
  exception: Schema.optionalKey(Schema.NullOr(Schema.String))
})

/** An API call of a dialogue file, with the arguments and result the annotators recorded. */
export const ApiEvent = Schema.Struct({
  role: Schema.Literal("API"),
  api_name: Schema.String,
  param_dict: Schema.JsonObject,
  result: ApiResult
})
/** An API call of a dialogue file. */
export type ApiEvent = typeof ApiEvent.Type

/** One line of a dialogue file. */
export const Event = Schema.Union([TextEvent, ApiEvent])
/** One line of a dialogue file. */
export type Event = typeof Event.Type

const decodeLine = Schema.decodeUnknownResult(Schema.fromJsonString(Event))

/** The two levels of `lv1-lv2-samples`: 1 = the dialogue's APIs are given, 2 = they are found through ToolSearcher. */
export type Level = 1 | 2

/** The folder of each level under `lv1-lv2-samples`. */
export const levelFolder: Readonly<Record<Level, string>> = { 1: "level-1-given-desc", 2: "level-2-toolsearcher" }

/** The meta-API of level 2. */
export const toolSearcher = "ToolSearcher"

/** A dialogue file, decoded. */
export interface Dialogue {
  readonly file: string
  readonly level: Level
  readonly events: ReadonlyArray<Event>
}

/** A record (a dialogue, a line, or an API event) left out of the evaluation, and why. */
export interface Unresolved {
  readonly file: string
  /** 1-based line, when the record is one line. */
  readonly line?: number
  readonly reason: UnresolvedReason
  readonly detail: string
}

/** Why a record was left out. */
export type UnresolvedReason =
  | "malformed_line"
  | "no_api_call"
  | "unknown_api"
  | "search_result_unreadable"
  | "search_result_unknown_api"

/** Decodes one dialogue file (JSON Lines); a line that does not decode is reported and the rest kept. */
export const decodeDialogue = (file: string, level: Level, text: string): { readonly dialogue: Dialogue; readonly unresolved: ReadonlyArray<Unresolved> } => {
  const events: Array<Event> = []
  const unresolved: Array<Unresolved> = []
  text.split("\n").forEach((raw, i) => {
    if (raw.trim().length === 0) return
    const decoded = decodeLine(raw)
    if (Result.isSuccess(decoded)) events.push(decoded.success)
    else unresolved.push({ file, line: i + 1, reason: "malformed_line", detail: oneLine(decoded.failure.message) })
  })
  return { dialogue: { file, level, events }, unresolved }
}

const oneLine = (text: string): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > 200 ? `${flat.slice(0, 197)}...` : flat
}

// ---------------------------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------------------------

/** The expected call of a step: API name and arguments, as the dialogue recorded them. */
export interface GoldCall {
  readonly name: string
  readonly arguments: JsonObject
}

/** One evaluation step: the dialogue before an API event, and that event as the call to predict. */
export interface Step {
  readonly file: string
  readonly level: Level
  /** 0-based position of the event among the dialogue's API events. */
  readonly index: number
  /** The events before it (User, AI and earlier API events with their results). */
  readonly history: ReadonlyArray<Event>
  readonly gold: GoldCall
  /** The API names the step's prompt describes at level 1: every API the dialogue calls (API-Bank's `sample.apis`). */
  readonly apis: ReadonlyArray<string>
  /** ToolSearcher steps: the API the recorded search found (the last of `[GetUserToken, X]`, or the one record). */
  readonly found?: string
}

/** The API records a ToolSearcher output holds (one record, or `[GetUserToken, best match]`). */
export const searchOutputNames = (output: Json | undefined): ReadonlyArray<string> | undefined => {
  const items = Array.isArray(output) ? output : output === undefined || output === null ? [] : [output]
  const names = items.map((item) =>
    typeof item === "object" && item !== null && !Array.isArray(item) && typeof item["name"] === "string" ? item["name"] : undefined
  )
  return names.length === 0 || names.some((n) => n === undefined) ? undefined : (names as ReadonlyArray<string>)
}

/**
 * The steps of a dialogue, one per API event (API-Bank's `Sample.from_chat_history`). An API event naming an API
 * the library does not describe (`known`), or a ToolSearcher event whose output names none, is left out and reported;
 * a dialogue with no API event at all is reported too.
 */
export const stepsOf = (dialogue: Dialogue, known: (name: string) => boolean): { readonly steps: ReadonlyArray<Step>; readonly unresolved: ReadonlyArray<Unresolved> } => {
  const steps: Array<Step> = []
  const unresolved: Array<Unresolved> = []
  const apiEvents = dialogue.events.flatMap((e, at) => (e.role === "API" ? [{ event: e, at }] : []))
  if (apiEvents.length === 0) {
    return { steps, unresolved: [{ file: dialogue.file, reason: "no_api_call", detail: "the dialogue calls no API" }] }
  }
  const apis = [...new Set(apiEvents.map((a) => a.event.api_name))]
  apiEvents.forEach(({ event, at }, index) => {
    const where = { file: dialogue.file, line: at + 1 }
    const base = { file: dialogue.file, level: dialogue.level, index, history: dialogue.events.slice(0, at), apis }
    const gold: GoldCall = { name: event.api_name, arguments: event.param_dict }
    if (event.api_name === toolSearcher) {
      const names = searchOutputNames(event.result.output)
      if (names === undefined) {
        unresolved.push({ ...where, reason: "search_result_unreadable", detail: "the recorded ToolSearcher output names no API" })
        return
      }
      const found = names[names.length - 1] as string
      const missing = names.find((n) => !known(n))
      if (missing !== undefined) {
        unresolved.push({ ...where, reason: "search_result_unknown_api", detail: `the recorded ToolSearcher output names ${missing}, which the library does not describe` })
        return
      }
      steps.push({ ...base, gold, found })
      return
    }
    if (!known(event.api_name)) {
      unresolved.push({ ...where, reason: "unknown_api", detail: `${event.api_name} is not described in the library` })
      return
    }
    steps.push({ ...base, gold })
  })
  return { steps, unresolved }
}

// ---------------------------------------------------------------------------------------------------------------
// API-Bank's output format
// ---------------------------------------------------------------------------------------------------------------

/** A call read from a model's text. Values are the strings API-Bank's regular expressions capture. */
export interface ParsedCall {
  readonly name: string
  readonly arguments: Readonly<Record<string, string>>
}

// API-Bank's api_call_extraction.py: `\[(\w+)\((.*)\)\]`, searched anywhere; `.` stops at a line end (no DOTALL) and
// `.*` is greedy. Python 3's `\w` is Unicode-aware, so the word class is letters, digits and `_` of any script.
const word = String.raw`[\p{L}\p{N}_]`
const callPattern = new RegExp(String.raw`\[(${word}+)\((.*)\)\]`, "u")
// Its parameter alternatives, in order: a quoted value (lazy, up to the first quote of either kind), a bracketed list
// (greedy), a bare word.
const paramPattern = new RegExp(
  String.raw`(${word}+)\s*=\s*['"](.+?)['"]|(${word}+)\s*=\s*(\[.*\])|(${word}+)\s*=\s*(${word}+)`,
  "gu"
)

/**
 * Reads `[ApiName(key='value', ...)]` from a model's output the way API-Bank's evaluator does (`get_api_call`, then
 * `parse_api_call`): the first bracketed call anywhere in the text, its parameters by three alternatives, every value
 * a string; a later duplicate key overwrites an earlier one. Undefined when the text holds no such call.
 */
export const parseApiCall = (text: string): ParsedCall | undefined => {
  const match = callPattern.exec(text)
  if (match === null) return undefined
  const name = match[1] as string
  const params = match[2] as string
  const args: Record<string, string> = {}
  for (const m of params.matchAll(paramPattern)) {
    const key = m[1] ?? m[3] ?? m[5]
    const value = m[1] !== undefined ? m[2] : m[3] !== undefined ? m[4] : m[6]
    if (key !== undefined && value !== undefined) Object.defineProperty(args, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return { name, arguments: args }
}

/** A value as Python's `str` writes it (`True`, `None`, `['a', 1]`, `{'k': 'v'}`). */
export const pyStr = (value: Json, nested = false): string => {
  if (value === null) return "None"
  if (typeof value === "boolean") return value ? "True" : "False"
  if (typeof value === "number") return String(value)
  if (typeof value === "string") return nested ? `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` : value
  if (Array.isArray(value)) return `[${value.map((v) => pyStr(v, true)).join(", ")}]`
  return `{${Object.entries(value).map(([k, v]) => `'${k}': ${pyStr(v, true)}`).join(", ")}}`
}

/**
 * A call written in API-Bank's format as its evaluator writes an earlier API event into the chat history:
 * `[Name(key='value', ...)]`, every value as Python's `str` inside single quotes.
 */
export const formatApiCall = (name: string, args: JsonObject): string =>
  `[${name}(${Object.entries(args).map(([k, v]) => `${k}='${pyStr(v)}'`).join(", ")})]`

// ---------------------------------------------------------------------------------------------------------------
// Normalised exact match
// ---------------------------------------------------------------------------------------------------------------

const numberText = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/

/**
 * One argument value in canonical form, so a value the text format can only write as a string compares equal to
 * the typed value the dialogue recorded: strings are trimmed; a numeric string is its number; `True`/`true`,
 * `False`/`false`, `None`/`null` are the literal; a string holding a Python or JSON list or dict is that value;
 * arrays and objects are normalised element by element. Case and inner spacing are kept (exact match).
 */
export const normalise = (value: Json): Json => {
  if (typeof value === "string") {
    const s = value.trim()
    if (numberText.test(s)) return Number(s)
    if (s === "True" || s === "true") return true
    if (s === "False" || s === "false") return false
    if (s === "None" || s === "null") return null
    if ((s.startsWith("[") && s.endsWith("]")) || (s.startsWith("{") && s.endsWith("}"))) {
      const parsed = PyLiteral.parse(s)
      if (parsed.ok && parsed.end === s.length) return normalise(parsed.value)
    }
    return s
  }
  if (Array.isArray(value)) return value.map(normalise)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v)]))
  }
  return value
}

const equalJson = (a: Json, b: Json): boolean => {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equalJson(x, b[i] as Json))
  }
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const oa = a as JsonObject
    const ob = b as JsonObject
    const ka = Object.keys(oa)
    return ka.length === Object.keys(ob).length && ka.every((k) => Object.hasOwn(ob, k) && equalJson(oa[k] as Json, ob[k] as Json))
  }
  return false
}

/** The argument keys that differ (missing, extra, or another value after normalisation), sorted. */
export const argumentDiff = (gold: JsonObject, predicted: JsonObject): ReadonlyArray<string> => {
  const keys = [...new Set([...Object.keys(gold), ...Object.keys(predicted)])].sort()
  return keys.filter((k) => {
    if (!Object.hasOwn(gold, k) || !Object.hasOwn(predicted, k)) return true
    return !equalJson(normalise(gold[k] as Json), normalise(predicted[k] as Json))
  })
}

// ---------------------------------------------------------------------------------------------------------------
// Verdicts
// ---------------------------------------------------------------------------------------------------------------

/** What a policy's turn was read as for one step. */
export type Prediction =
  /** A call (from native structure, ParaAct tags or API-Bank's text format). */
  | { readonly _tag: "call"; readonly name: string; readonly arguments: JsonObject; readonly via: "structured" | "paraact" | "api-bank" }
  /** A search through the ToolSearcher (a `<search>` action, or a ToolSearcher call), with what it found. */
  | { readonly _tag: "search"; readonly keywords: string; readonly found: string | undefined; readonly via: "structured" | "paraact" | "api-bank" }
  /** Nothing callable: no call, or text that is neither format; `detail` says what was there. */
  | { readonly _tag: "none"; readonly detail: string }
  /** The policy failed (transport, bad response body). */
  | { readonly _tag: "policy_error"; readonly detail: string }

/** Why a step was scored wrong (or `correct`). */
export const Outcome = Schema.Literals([
  "correct",
  "no_call",
  "policy_error",
  "wrong_api",
  "wrong_arguments",
  "search_instead_of_call",
  "call_instead_of_search",
  "search_missed"
])
/** Why a step was scored wrong (or `correct`). */
export type Outcome = typeof Outcome.Type

/** One scored step. */
export interface Verdict {
  readonly file: string
  readonly level: Level
  readonly index: number
  readonly gold: GoldCall & { readonly found?: string }
  readonly prediction: Prediction
  readonly correct: boolean
  readonly outcome: Outcome
  /** The argument keys that differ, for `wrong_arguments`. */
  readonly diff?: ReadonlyArray<string>
}

/**
 * Scores one step. A call step is correct when the predicted API name equals the gold one and the arguments match
 * exactly after {@link normalise} (same keys, same values). A ToolSearcher step is correct when the policy searched
 * (or called ToolSearcher) and the search found the API the recorded ToolSearcher found — API-Bank's
 * `ToolSearcher.check_api_call_correctness` compares the search output, not the keywords.
 */
export const score = (step: Step, prediction: Prediction): Verdict => {
  const base = { file: step.file, level: step.level, index: step.index, gold: { ...step.gold, ...(step.found === undefined ? {} : { found: step.found }) }, prediction }
  const verdict = (outcome: Outcome, diff?: ReadonlyArray<string>): Verdict => ({ ...base, correct: outcome === "correct", outcome, ...(diff === undefined ? {} : { diff }) })
  if (prediction._tag === "none") return verdict("no_call")
  if (prediction._tag === "policy_error") return verdict("policy_error")
  if (step.found !== undefined) {
    if (prediction._tag === "call") return verdict("call_instead_of_search")
    return verdict(prediction.found === step.found ? "correct" : "search_missed")
  }
  if (prediction._tag === "search") return verdict("search_instead_of_call")
  if (prediction.name !== step.gold.name) return verdict("wrong_api")
  const diff = argumentDiff(step.gold.arguments, prediction.arguments)
  return diff.length === 0 ? verdict("correct") : verdict("wrong_arguments", diff)
}

/** The scores of one level. */
export interface LevelSummary {
  readonly level: Level
  /** API steps evaluated, and how many were correct. */
  readonly steps: number
  readonly correct: number
  /** API-call accuracy, percent (correct / steps). */
  readonly accuracy: number
  /** Dialogues with at least one evaluated step, and how many had every step correct. */
  readonly dialogues: number
  readonly successful: number
  /** Per-dialogue success, percent. */
  readonly success: number
  /** ToolSearcher steps among `steps`, and how many were correct. */
  readonly searchSteps: number
  readonly searchCorrect: number
  /** Steps by outcome. */
  readonly outcomes: Readonly<Partial<Record<Outcome, number>>>
  /** Dialogue files read, and the records left out by reason. */
  readonly files: number
  readonly unresolved: Readonly<Partial<Record<UnresolvedReason, number>>>
  /** Dialogues with a left-out record (an API event, or a line that did not decode): scored on their other steps, never successful. */
  readonly partialDialogues: number
}

const pct = (n: number, d: number): number => (d === 0 ? 0 : (100 * n) / d)

const count = <K extends string>(keys: ReadonlyArray<K>): Partial<Record<K, number>> => {
  const out: Partial<Record<K, number>> = {}
  for (const k of keys) out[k] = (out[k] ?? 0) + 1
  return out
}

/**
 * Sums a level's verdicts. A dialogue succeeds when every one of its API events was evaluated and correct: a
 * dialogue with an event left out (unknown API, unreadable search result) is never successful.
 */
export const summarise = (level: Level, files: number, verdicts: ReadonlyArray<Verdict>, unresolved: ReadonlyArray<Unresolved>): LevelSummary => {
  const mine = verdicts.filter((v) => v.level === level)
  const byFile = new Map<string, boolean>()
  for (const v of mine) byFile.set(v.file, (byFile.get(v.file) ?? true) && v.correct)
  const partial = new Set(unresolved.filter((u) => u.reason !== "no_api_call" && byFile.has(u.file)).map((u) => u.file))
  const successful = [...byFile].filter(([file, ok]) => ok && !partial.has(file)).length
  const correct = mine.filter((v) => v.correct).length
  const search = mine.filter((v) => v.gold.found !== undefined)
  return {
    level,
    steps: mine.length,
    correct,
    accuracy: pct(correct, mine.length),
    dialogues: byFile.size,
    successful,
    success: pct(successful, byFile.size),
    searchSteps: search.length,
    searchCorrect: search.filter((v) => v.correct).length,
    outcomes: count(mine.map((v) => v.outcome)),
    files,
    unresolved: count(unresolved.map((u) => u.reason)),
    partialDialogues: partial.size
  }
}

/**
 * Level-2 call steps whose API no earlier recorded ToolSearcher event found (the dialogue calls an API its search
 * did not return, e.g. "book meeting" found BookHotel and the dialogue then calls AddMeeting): the policy is not
 * shown that API, so only a new search or a guess of its name can get the step right.
 */
export const unfoundCallSteps = (steps: ReadonlyArray<Step>): ReadonlyArray<Step> =>
  steps.filter((s) => {
    if (s.level !== 2 || s.found !== undefined) return false
    const found = s.history.flatMap((e) => (e.role === "API" && e.api_name === toolSearcher ? searchOutputNames(e.result.output) ?? [] : []))
    return !found.includes(s.gold.name)
  })
