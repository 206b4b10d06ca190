/**
 * The ParaAct parser: decodes the tags the scanner found into a Turn, applies the turn-level rules (which actions
 * may come together) and generates missing call ids and slots; `validateTurn` holds a turn built in code to the same rules.
 */
import { Result, Schema } from "effect"
import type { ToolCall } from "../domain/Call.ts"
import type { ProtocolError } from "../domain/Errors.ts"
import type { CallId } from "../domain/Ids.ts"
import { JsonObject } from "../domain/Json.ts"
import type { Plan, PlanNode } from "../domain/Plan.ts"
import type { SearchQuery, Turn } from "../domain/Turn.ts"
import { type JsonRead, type JsonSpan, locate, readJson } from "./ParaActJson.ts"
import { closeTag, fail, scan, type TagName, tagNames } from "./ParaActScanner.ts"
import {
  callIdMessage,
  decodeItem,
  formatPath,
  type Located,
  preview,
  valueAt,
  WireCall,
  WirePlan,
  WirePlanNode,
  WireSearch
} from "./ParaActWire.ts"
import { callIdPattern, collectRefs } from "./Refs.ts"

/** How to parse a turn. */
export interface ParseOptions {
  /**
   * Accept the slips LLMs make (default false: the format is rewarded, so it is strict): text outside tags is
   * ignored; JSON may sit in a markdown code fence; a single call object or search string may stand for a list;
   * call `arguments` may be a JSON string; unknown keys are ignored; the last tag may miss its closing tag.
   */
  readonly lenient?: boolean
  /** Ids of the calls of earlier turns: reusing one is an error (ids are unique in a trajectory), generated ids skip them. */
  readonly usedCallIds?: Iterable<string>
  /** The first n tried for a generated call id `c<n>` (default 1); the runtime may pass 1 + the calls made so far. */
  readonly nextCallIndex?: number
}

/** A call as decoded from `<call>` (or a native tool call), before a missing id is generated. */
export interface DraftCall {
  readonly id?: CallId
  readonly tool: ToolCall["tool"]
  readonly arguments: JsonObject
}

/** The decoded content of each tag of a turn, where each tag opened, and the length of the text. */
export interface TagParts {
  readonly think?: string
  readonly plan?: Plan
  readonly searches: ReadonlyArray<SearchQuery>
  readonly calls: ReadonlyArray<DraftCall>
  readonly answer?: string
  /** The offset of each tag's `<` in the text. */
  readonly at: Readonly<Partial<Record<TagName, number>>>
  readonly length: number
}

const isJsonObject = Schema.is(JsonObject)

const expectList = (tag: TagName, read: JsonRead, lenient: boolean, what: string): Result.Result<ReadonlyArray<Located>, ProtocolError> => {
  const v = read.value
  const single = lenient && v !== null && (typeof v === "object" || (tag === "search" && typeof v === "string"))
  if (!Array.isArray(v) && !single) {
    return fail(tag, read.span.start, `<${tag}> holds a JSON list of ${what}, got ${preview(v)}`)
  }
  const items: ReadonlyArray<Located> = Array.isArray(v) ? v.map((value, i) => ({ value, path: [i] })) : [{ value: v, path: [] }]
  if (items.length === 0) return fail(tag, read.span.start, `<${tag}> holds an empty list: give at least one of ${what} or leave the tag out`)
  return Result.succeed(items)
}

const WirePlanNodes = Schema.Array(WirePlanNode)

/** `<plan>`: `{"nodes":[...]}`, or the bare list of nodes. */
const decodePlan = (read: JsonRead, lenient: boolean): Result.Result<Plan, ProtocolError> => {
  const root: Located = { value: read.value, path: [] }
  const decoded = Array.isArray(read.value)
    ? decodeItem(WirePlanNodes, "plan", read.span, root, lenient)
    : Result.map(decodeItem(WirePlan, "plan", read.span, root, lenient), (p) => p.nodes)
  if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
  if (decoded.success.length === 0) return fail("plan", read.span.start, "<plan> has no nodes: give at least one node or leave the tag out")
  const nodes: ReadonlyArray<PlanNode> = decoded.success.map(({ deps, ...rest }) => ({ ...rest, deps: deps ?? [] }))
  return Result.succeed({ nodes })
}

const decodeSearches = (read: JsonRead, lenient: boolean): Result.Result<ReadonlyArray<SearchQuery>, ProtocolError> => {
  const items = expectList("search", read, lenient, "queries")
  if (Result.isFailure(items)) return Result.fail(items.failure)
  const drafts: Array<{ readonly slot?: string; readonly query: string; readonly path: ReadonlyArray<PropertyKey> }> = []
  for (const item of items.success) {
    if (typeof item.value === "string") {
      if (item.value.trim() === "") {
        return fail("search", locate(read.span, item.path).offset, `<search> ${formatPath(item.path)}: a query has at least one non-space character`)
      }
      drafts.push({ query: item.value, path: item.path })
      continue
    }
    const decoded = decodeItem(WireSearch, "search", read.span, item, lenient)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    drafts.push({ ...decoded.success, path: item.path })
  }
  const slots = new Set<string>()
  for (const d of drafts) {
    if (d.slot === undefined) continue
    if (slots.has(d.slot)) {
      const offset = locate(read.span, [...d.path, "slot"]).offset
      return fail("search", offset, `<search> ${formatPath([...d.path, "slot"])}: slot ${JSON.stringify(d.slot)} appears twice; one query per slot`)
    }
    slots.add(d.slot)
  }
  return Result.succeed(assignSlots(drafts))
}

/** Gives every query without a slot the first free `s<n>`, skipping the slots the other queries name. */
export const assignSlots = (drafts: ReadonlyArray<{ readonly slot?: string; readonly query: string }>): ReadonlyArray<SearchQuery> => {
  const used = new Set<string>()
  for (const d of drafts) if (d.slot !== undefined) used.add(d.slot)
  let n = 1
  return drafts.map((d) => {
    if (d.slot !== undefined) return { slot: d.slot, query: d.query }
    while (used.has(`s${n}`)) n++
    const slot = `s${n}`
    used.add(slot)
    return { slot, query: d.query }
  })
}

/** In lenient mode, call `arguments` given as a JSON string are read as JSON. */
const unwrapArguments = (item: Located, root: JsonSpan): Result.Result<Located, ProtocolError> => {
  const args = valueAt(item.value, ["arguments"])
  if (!args.found || typeof args.value !== "string" || item.value === null || typeof item.value !== "object") return Result.succeed(item)
  const inner = args.value.trim() === "" ? { ok: true as const, read: { value: {} } } : readJson(args.value)
  if (!inner.ok) {
    const offset = locate(root, [...item.path, "arguments"]).offset
    return fail("call", offset, `<call> ${formatPath([...item.path, "arguments"])}: the arguments string is not JSON: ${inner.error.message} at character ${inner.error.offset}`)
  }
  return Result.succeed({ value: { ...(item.value as JsonObject), arguments: inner.read.value }, path: item.path })
}

const decodeCalls = (read: JsonRead, lenient: boolean, used: ReadonlySet<string>): Result.Result<ReadonlyArray<DraftCall>, ProtocolError> => {
  const items = expectList("call", read, lenient, "calls")
  if (Result.isFailure(items)) return Result.fail(items.failure)
  const calls: Array<DraftCall> = []
  const ids = new Set<string>()
  for (const raw of items.success) {
    const item = lenient ? unwrapArguments(raw, read.span) : Result.succeed(raw)
    if (Result.isFailure(item)) return Result.fail(item.failure)
    const decoded = decodeItem(WireCall, "call", read.span, item.success, lenient)
    if (Result.isFailure(decoded)) return Result.fail(decoded.failure)
    const { id, name, arguments: args = {} } = decoded.success
    if (id !== undefined) {
      const where = () => locate(read.span, [...raw.path, "id"]).offset
      const label = `<call> ${formatPath([...raw.path, "id"])}`
      if (ids.has(id)) return fail("call", where(), `${label}: call id ${id} appears twice in this turn`)
      if (used.has(id)) return fail("call", where(), `${label}: call id ${id} was used by an earlier call; ids are unique in a trajectory`)
      ids.add(id)
    }
    for (const site of collectRefs(args)) {
      if (site._tag !== "Malformed") continue
      const path = [...raw.path, "arguments", ...site.path]
      return fail("call", locate(read.span, path).offset, `<call> ${formatPath(path)}: malformed $ref ${JSON.stringify(site.ref)}: ${site.message}`)
    }
    calls.push(id === undefined ? { tool: name, arguments: args } : { id, tool: name, arguments: args })
  }
  return Result.succeed(calls)
}

/**
 * Scans a turn and decodes each tag, without the turn-level rules (which actions may combine) and without
 * generating missing call ids. The building block of {@link parseTurn}; the OpenAI mapping reuses it for `content`.
 */
export const parseTags = (text: string, options: ParseOptions = {}): Result.Result<TagParts, ProtocolError> => {
  const lenient = options.lenient === true
  const used = new Set(options.usedCallIds ?? [])
  const scanned = scan(text, lenient)
  if (Result.isFailure(scanned)) return Result.fail(scanned.failure)
  const at: Partial<Record<TagName, number>> = {}
  let parts: TagParts = { searches: [], calls: [], at, length: text.length }
  for (const segment of scanned.success) {
    at[segment.tag] = segment.open
    if (segment.kind === "text") {
      if (segment.tag === "answer" && segment.text === "") return fail("answer", segment.open, "<answer> is empty")
      parts = segment.tag === "think" ? { ...parts, think: segment.text } : { ...parts, answer: segment.text }
    } else if (segment.tag === "plan") {
      const plan = decodePlan(segment.read, lenient)
      if (Result.isFailure(plan)) return Result.fail(plan.failure)
      parts = { ...parts, plan: plan.success }
    } else if (segment.tag === "search") {
      const searches = decodeSearches(segment.read, lenient)
      if (Result.isFailure(searches)) return Result.fail(searches.failure)
      parts = { ...parts, searches: searches.success }
    } else {
      const calls = decodeCalls(segment.read, lenient, used)
      if (Result.isFailure(calls)) return Result.fail(calls.failure)
      parts = { ...parts, calls: calls.success }
    }
  }
  return Result.succeed(parts)
}

/** Gives every call without an id the first free `c<n>`, n from `next`, skipping every id in `taken`. */
export const assignCallIds = (
  calls: ReadonlyArray<DraftCall>,
  taken: ReadonlySet<string>,
  next = 1
): ReadonlyArray<ToolCall> => {
  const used = new Set(taken)
  for (const c of calls) if (c.id !== undefined) used.add(c.id)
  let n = Number.isSafeInteger(next) && next >= 0 ? next : 1
  return calls.map((c) => {
    if (c.id !== undefined) return { id: c.id, tool: c.tool, arguments: c.arguments }
    while (used.has(`c${n}`)) n++
    const id = `c${n}` as CallId
    used.add(id)
    return { id, tool: c.tool, arguments: c.arguments }
  })
}

/** Where the turn-level errors of {@link checkActions} are reported. */
export interface ActionOffsets {
  /** Where `<answer>` opens (an answer that comes with actions is reported there). */
  readonly answer: number
  /** Where `<call>` opens (calls that come with searches are reported there). */
  readonly call: number
  /** The end of the turn (a turn without an action is reported there). */
  readonly end: number
}

/**
 * The turn-level rules, shared by the text and the native forms: an answer comes without searches or calls (a
 * think and a plan may accompany it), a turn searches or calls but not both, and a turn has an action.
 * `lastTag` names the error of a turn without action: the last tag read, or `think` when there is none.
 */
export const checkActions = (
  parts: Pick<TagParts, "searches" | "calls" | "answer">,
  offsets: ActionOffsets,
  lastTag: TagName
): Result.Result<void, ProtocolError> => {
  const searches = parts.searches.length > 0
  const calls = parts.calls.length > 0
  if (parts.answer !== undefined && (searches || calls)) {
    return fail("answer", offsets.answer, `<answer> ends the episode, so it cannot come with <${searches ? "search" : "call"}>`)
  }
  if (searches && calls) {
    return fail("call", offsets.call, "a turn either searches or calls, not both: make the calls in the next turn")
  }
  if (parts.answer === undefined && !searches && !calls) {
    return fail(lastTag, offsets.end, "the turn has no action: it needs <search>, <call> or <answer>")
  }
  return Result.succeed(undefined)
}

/** The last tag present in the parts, or `think` when there is none. */
export const lastTagOf = (at: Readonly<Partial<Record<TagName, number>>>): TagName =>
  tagNames.filter((t) => at[t] !== undefined).at(-1) ?? "think"

/**
 * Parses one model turn. Total: any string gives a Turn or a ProtocolError naming the tag and the character
 * offset of the problem in `text` (for JSON, the offending character or field). See docs/protocol.md.
 */
export const parseTurn = (text: string, options: ParseOptions = {}): Result.Result<Turn, ProtocolError> => {
  const parsed = parseTags(text, options)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
  const parts = parsed.success
  const offsets = { answer: parts.at.answer ?? text.length, call: parts.at.call ?? text.length, end: text.length }
  const checked = checkActions(parts, offsets, lastTagOf(parts.at))
  if (Result.isFailure(checked)) return Result.fail(checked.failure)
  return Result.succeed(partsToTurn(parts, options))
}

/**
 * The turn of checked parts: each call without an id gets a fresh `c<n>` (see {@link assignCallIds}) that is
 * neither one of `usedCallIds` nor a node id of the turn's plan.
 */
export const partsToTurn = (
  parts: Pick<TagParts, "think" | "plan" | "searches" | "calls" | "answer">,
  options: Pick<ParseOptions, "usedCallIds" | "nextCallIndex">
): Turn => {
  const taken = new Set(options.usedCallIds ?? [])
  for (const node of parts.plan?.nodes ?? []) taken.add(node.id)
  return {
    ...(parts.think !== undefined ? { think: parts.think } : {}),
    ...(parts.plan !== undefined ? { plan: parts.plan } : {}),
    searches: parts.searches,
    calls: assignCallIds(parts.calls, taken, options.nextCallIndex),
    ...(parts.answer !== undefined ? { answer: parts.answer } : {})
  }
}

/**
 * Checks that a turn built in code is one the parser can produce, so that printing it loses nothing: free text
 * trimmed and free of its closing tag, a non-empty answer, ids that follow the grammar and are unique, one query
 * per slot, arguments that are JSON (finite numbers) without a malformed `$ref`, and the action rules of {@link parseTurn}. The error's offset is 0: there is no text yet.
 */
export const validateTurn = (turn: Turn, options: Pick<ParseOptions, "usedCallIds"> = {}): Result.Result<Turn, ProtocolError> => {
  for (const tag of ["think", "answer"] as const) {
    const text = turn[tag]
    if (text === undefined) continue
    if (text !== text.trim()) return fail(tag, 0, `<${tag}> text has surrounding whitespace, which the parser trims`)
    if (text.includes(closeTag(tag))) return fail(tag, 0, `<${tag}> text contains ${closeTag(tag)}`)
  }
  if (turn.answer === "") return fail("answer", 0, "<answer> is empty")
  if (turn.plan !== undefined) {
    if (turn.plan.nodes.length === 0) return fail("plan", 0, "<plan> has no nodes")
    for (const node of turn.plan.nodes) {
      for (const id of [node.id, ...node.deps]) {
        if (!callIdPattern.test(id)) return fail("plan", 0, `<plan> id ${JSON.stringify(id)}: ${callIdMessage}`)
      }
      if (node.tool === "") return fail("plan", 0, `<plan> node ${node.id}: empty tool`)
    }
  }
  const slots = new Set<string>()
  for (const s of turn.searches) {
    if (s.slot === "" || s.query === "" || s.query.trim() === "") return fail("search", 0, "<search> slots and queries are non-empty")
    if (slots.has(s.slot)) return fail("search", 0, `<search> slot ${JSON.stringify(s.slot)} appears twice`)
    slots.add(s.slot)
  }
  const used = new Set(options.usedCallIds ?? [])
  const ids = new Set<string>()
  for (const c of turn.calls) {
    if (!callIdPattern.test(c.id)) return fail("call", 0, `<call> id ${JSON.stringify(c.id)}: ${callIdMessage}`)
    if (ids.has(c.id) || used.has(c.id)) return fail("call", 0, `<call> id ${c.id} is not unique`)
    if (c.tool === "") return fail("call", 0, "<call> empty tool name")
    if (!isJsonObject(c.arguments)) return fail("call", 0, `<call> ${c.id}: arguments are not JSON (a non-finite number?)`)
    ids.add(c.id)
    const malformed = collectRefs(c.arguments).find((s) => s._tag === "Malformed")
    if (malformed !== undefined) return fail("call", 0, `<call> ${c.id}: malformed $ref ${JSON.stringify(malformed.ref)}`)
  }
  const present = tagNames.filter((t) =>
    t === "search" ? turn.searches.length > 0 : t === "call" ? turn.calls.length > 0 : turn[t] !== undefined
  )
  const checked = checkActions(turn, { answer: 0, call: 0, end: 0 }, present.at(-1) ?? "think")
  return Result.isFailure(checked) ? Result.fail(checked.failure) : Result.succeed(turn)
}
