/**
 * The ParaAct turn protocol: the one text format of a model turn, its total parser, its canonical printer and
 * the instructions a model is given. docs/protocol.md explains the grammar, the error offsets and the examples.
 */
import { Result, Schema, SchemaAST, SchemaIssue } from "effect"
import type { ToolCall } from "../domain/Call.ts"
import { ProtocolError } from "../domain/Errors.ts"
import { type CallId, ToolName } from "../domain/Ids.ts"
import { type Json, JsonObject } from "../domain/Json.ts"
import type { Plan, PlanNode } from "../domain/Plan.ts"
import type { SearchQuery, Turn } from "../domain/Turn.ts"
import { canonicalJson } from "../math/CanonicalJson.ts"
import { describeAt, type JsonRead, type JsonSpan, locate, readJson, readJsonAt } from "./ParaActJson.ts"
import { callIdPattern, collectRefs } from "./Refs.ts"

/** The tags of a turn, in the only order they may appear. */
export const tagNames = ["think", "plan", "search", "call", "answer"] as const
/** A tag of a turn. */
export type TagName = (typeof tagNames)[number]
/** Tags whose content is free text (everything up to the closing tag); the others hold one JSON value. */
export const textTags: ReadonlySet<TagName> = new Set(["think", "answer"])
/** Whether a string is one of {@link tagNames}. */
export const isTagName = (s: string): s is TagName => (tagNames as ReadonlyArray<string>).includes(s)
/** `<tag>` */
export const openTag = (tag: TagName): string => `<${tag}>`
/** `</tag>` */
export const closeTag = (tag: TagName): string => `</${tag}>`

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

// ---------------------------------------------------------------------------------------------------------------
// Wire schemas: the JSON inside <plan>, <search> and <call>. Built on the domain schemas, plus the id grammar.

const idMessage = "an id is a letter or _ followed by up to 63 letters, digits or _ (like c1)"
/** A call or plan-node id as written in a turn: {@link callIdPattern}. */
export const WireCallId = Schema.String.check(Schema.isPattern(callIdPattern, { message: idMessage })).pipe(
  Schema.brand("CallId")
)

/** One element of the `<call>` list: `name` is the tool's callable name; `id` and `arguments` ({}) may be omitted. */
export const WireCall = Schema.Struct({
  id: Schema.optionalKey(WireCallId),
  name: ToolName,
  arguments: Schema.optionalKey(JsonObject)
})

/** One node of a `<plan>`; `deps` ([]) may be omitted. */
export const WirePlanNode = Schema.Struct({
  id: WireCallId,
  tool: Schema.optionalKey(ToolName),
  slot: Schema.optionalKey(Schema.String),
  deps: Schema.optionalKey(Schema.Array(WireCallId))
})

/** The `<plan>` object form: `{"nodes": [...]}`. */
export const WirePlan = Schema.Struct({ nodes: Schema.Array(WirePlanNode) })

/** One element of the `<search>` list in object form; a plain string is also accepted. */
export const WireSearch = Schema.Struct({
  slot: Schema.optionalKey(Schema.NonEmptyString),
  query: Schema.String.check(Schema.isPattern(/\S/, { message: "a query has at least one non-space character" }))
})

const isJsonObject = Schema.is(JsonObject)

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** A failed parse: a ProtocolError naming the tag and the character offset. */
export const fail = (tag: TagName, offset: number, message: string): Result.Result<never, ProtocolError> =>
  Result.fail(new ProtocolError({ tag, offset, message }))

/** A path like `[1].arguments.city` for messages. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((s) =>
    typeof s === "number"
      ? `[${s}]`
      : typeof s === "string" && /^[A-Za-z_$][\w$]*$/.test(s)
      ? `.${s}`
      : `[${JSON.stringify(String(s))}]`
  ).join("").replace(/^\./, "")

const preview = (value: unknown): string => {
  const s = typeof value === "number" ? String(value) : JSON.stringify(value) ?? String(value)
  return s.length > 40 ? `${s.slice(0, 37)}...` : s
}

/** The first failing leaf of a schema issue and the path to it. */
const firstLeaf = (issue: SchemaIssue.Issue): { readonly path: ReadonlyArray<PropertyKey>; readonly leaf: SchemaIssue.Issue } => {
  const path: Array<PropertyKey> = []
  let current = issue
  for (;;) {
    if (current._tag === "Pointer") {
      path.push(...current.path)
      current = current.issue
    } else if (current._tag === "Composite") {
      current = current.issues[0]
    } else if (current._tag === "Filter" || current._tag === "Encoding") {
      current = current.issue
    } else return { path, leaf: current }
  }
}

const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): { readonly found: boolean; readonly value: unknown } => {
  let current = value
  for (const segment of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment)) return { found: false, value: undefined }
    current = (current as Record<PropertyKey, unknown>)[segment]
  }
  return { found: true, value: current }
}

/** An element to decode: its value and its path from the root of the tag's JSON (which locates its span). */
export interface Located {
  readonly value: Json
  readonly path: ReadonlyArray<PropertyKey>
}

/**
 * Decodes `item` with `schema`; on failure, names the field and points at its offset in the text.
 * `root` is the span of the tag's whole JSON value; `item.path` locates the item inside it.
 * Unknown keys are errors unless `lenient`.
 */
export const decodeItem = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  tag: TagName,
  root: JsonSpan,
  item: Located,
  lenient: boolean
): Result.Result<S["Type"], ProtocolError> => {
  const decoded = Schema.decodeUnknownResult(schema)(item.value, { onExcessProperty: lenient ? "ignore" : "error" })
  if (Result.isSuccess(decoded)) return Result.succeed(decoded.success)
  const { leaf, path: inner } = firstLeaf(decoded.failure.issue)
  const path = [...item.path, ...inner]
  const where = locate(root, path)
  const field = formatPath(path)
  const label = field === "" ? `<${tag}>` : `<${tag}> ${field}`
  if (leaf._tag === "MissingKey") {
    const parent = formatPath(path.slice(0, -1))
    const key = JSON.stringify(String(path.at(-1) ?? ""))
    return fail(tag, where.offset, `${parent === "" ? `<${tag}>` : `<${tag}> ${parent}`}: missing required field ${key}`)
  }
  if (leaf._tag === "UnexpectedKey") {
    const allowed = SchemaAST.isObjects(leaf.ast) ? leaf.ast.propertySignatures.map((p) => String(p.name)).join(", ") : ""
    return fail(tag, where.keyOffset, `${label}: unknown field${allowed === "" ? "" : ` (allowed: ${allowed})`}`)
  }
  const got = valueAt(item.value, inner)
  const message = decoded.failure.message.split("\n")[0] ?? "invalid value"
  return fail(tag, where.offset, `${label}: ${message}${got.found ? `, got ${preview(got.value)}` : ""}`)
}

// ---------------------------------------------------------------------------------------------------------------
// Scanning: find the tags, their order, and the extent of their content.

/** A tag as found in the text: free text, or one JSON value with its span. */
type Segment =
  | { readonly kind: "text"; readonly tag: TagName; readonly open: number; readonly text: string }
  | { readonly kind: "json"; readonly tag: TagName; readonly open: number; readonly read: JsonRead }

/** Whitespace between tags and around free text: what `String.prototype.trim` removes. */
const isSpace = (c: string | undefined): boolean => c !== undefined && c.trim() === "" && c !== ""

const skipSpace = (text: string, from: number): number => {
  let i = from
  while (i < text.length && isSpace(text[i])) i++
  return i
}

const tagAt = (text: string, pos: number): TagName | undefined =>
  text.charCodeAt(pos) === 0x3c ? tagNames.find((t) => text.startsWith(openTag(t), pos)) : undefined

/** The offset of the first opening tag (`<think>`, `<plan>`, ...) at or after `from`, or -1. */
export const findTag = (text: string, from = 0): number => {
  let best = -1
  for (const t of tagNames) {
    const i = text.indexOf(openTag(t), from)
    if (i >= 0 && (best < 0 || i < best)) best = i
  }
  return best
}

/** Whether a text holds any opening or closing tag of the protocol. */
export const hasTags = (text: string): boolean => tagNames.some((t) => text.includes(openTag(t)) || text.includes(closeTag(t)))

const strayMessage = (text: string, pos: number): string => {
  const m = /^<(\/?)([A-Za-z_][\w-]*)[^<>]{0,60}>/.exec(text.slice(pos, pos + 80))
  const list = tagNames.map((t) => `<${t}>`).join(", ")
  if (m !== null) {
    const name = m[2] ?? ""
    if (m[1] === "/" && isTagName(name)) return `closing tag ${m[0]} without a matching <${name}>`
    if (isTagName(name.toLowerCase())) return `unknown tag ${m[0]}: tags are lowercase and take no attributes`
    return `unknown tag ${m[0]}: the tags are ${list}`
  }
  const snippet = text.slice(pos, pos + 30)
  return `text outside tags (${JSON.stringify(snippet)}${text.length > pos + 30 ? "..." : ""}): write reasoning inside <think>`
}

const scan = (text: string, lenient: boolean): Result.Result<ReadonlyArray<Segment>, ProtocolError> => {
  const segments: Array<Segment> = []
  let pos = 0
  for (;;) {
    pos = skipSpace(text, pos)
    if (pos >= text.length) return Result.succeed(segments)
    const tag = tagAt(text, pos)
    if (tag === undefined) {
      if (!lenient) return fail(segments.at(-1)?.tag ?? "think", pos, strayMessage(text, pos))
      const next = findTag(text, pos + 1)
      if (next < 0) return Result.succeed(segments)
      pos = next
      continue
    }
    const open = pos
    const earlier = segments.find((s) => s.tag === tag)
    if (earlier !== undefined) return fail(tag, open, `<${tag}> appears twice (first at offset ${earlier.open}); each tag appears at most once`)
    const later = segments.find((s) => tagNames.indexOf(s.tag) > tagNames.indexOf(tag))
    if (later !== undefined) return fail(tag, open, `<${tag}> must come before <${later.tag}> (order: ${tagNames.join(", ")})`)
    const contentStart = open + openTag(tag).length
    const close = closeTag(tag)
    if (textTags.has(tag)) {
      const end = text.indexOf(close, contentStart)
      if (end < 0 && !lenient) return fail(tag, open, `<${tag}> is never closed: expected ${close}`)
      const stop = end < 0 ? text.length : end
      segments.push({ kind: "text", tag, open, text: text.slice(contentStart, stop).trim() })
      pos = end < 0 ? text.length : end + close.length
      continue
    }
    let p = skipSpace(text, contentStart)
    const fenced = lenient && text.startsWith("```", p)
    if (fenced) {
      const newline = text.indexOf("\n", p)
      p = newline < 0 ? text.length : newline + 1
    }
    const json = readJsonAt(text, p)
    if (!json.ok) return fail(tag, json.error.offset, `invalid JSON in <${tag}>: ${json.error.message}`)
    p = skipSpace(text, json.read.end)
    if (fenced && text.startsWith("```", p)) p = skipSpace(text, p + 3)
    if (text.startsWith(close, p)) pos = p + close.length
    else if (lenient && p >= text.length) pos = p
    else return fail(tag, p, `expected ${close} after the JSON value, found ${describeAt(text, p)}`)
    segments.push({ kind: "json", tag, open, read: json.read })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Decoding the JSON tags

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

// ---------------------------------------------------------------------------------------------------------------
// Printing

const q = (s: string): string => JSON.stringify(s)

const printList = (items: ReadonlyArray<string>): string => `[\n${items.map((i) => `  ${i}`).join(",\n")}\n]`

const printNode = (node: PlanNode): string =>
  `{"id":${q(node.id)}${node.tool !== undefined ? `,"tool":${q(node.tool)}` : ""}${
    node.slot !== undefined ? `,"slot":${q(node.slot)}` : ""
  },"deps":[${node.deps.map(q).join(",")}]}`

/** The `<plan>` JSON of a plan, one node per line. */
export const printPlan = (plan: Plan): string =>
  `{"nodes":[\n${plan.nodes.map((n) => `  ${printNode(n)}`).join(",\n")}\n]}`

/** The `<search>` JSON of a list of queries, one per line. */
export const printSearches = (searches: ReadonlyArray<SearchQuery>): string =>
  printList(searches.map((s) => `{"slot":${q(s.slot)},"query":${q(s.query)}}`))

/** The `<call>` JSON of a list of calls, one per line; arguments with sorted keys. */
export const printCalls = (calls: ReadonlyArray<ToolCall>): string =>
  printList(calls.map((c) => `{"id":${q(c.id)},"name":${q(c.tool)},"arguments":${canonicalJson(c.arguments)}}`))

/**
 * Prints a turn in the canonical form: tags in order, each on its own lines, JSON lists one item per line,
 * object keys in a fixed order (arguments sorted). For every valid turn ({@link validateTurn}),
 * `parseTurn(printTurn(t))` gives `t` back.
 */
export const printTurn = (turn: Turn): string => {
  const blocks: Array<string> = []
  if (turn.think !== undefined) blocks.push(`<think>\n${turn.think}\n</think>`)
  if (turn.plan !== undefined) blocks.push(`<plan>\n${printPlan(turn.plan)}\n</plan>`)
  if (turn.searches.length > 0) blocks.push(`<search>\n${printSearches(turn.searches)}\n</search>`)
  if (turn.calls.length > 0) blocks.push(`<call>\n${printCalls(turn.calls)}\n</call>`)
  if (turn.answer !== undefined) blocks.push(`<answer>\n${turn.answer}\n</answer>`)
  return blocks.join("\n")
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
        if (!callIdPattern.test(id)) return fail("plan", 0, `<plan> id ${JSON.stringify(id)}: ${idMessage}`)
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
    if (!callIdPattern.test(c.id)) return fail("call", 0, `<call> id ${JSON.stringify(c.id)}: ${idMessage}`)
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

// ---------------------------------------------------------------------------------------------------------------
// Instructions for a model

const exampleExplore: Turn = {
  think: "I need the team's id before I can list its players, and a weather forecast for the match city.",
  plan: {
    nodes: [
      { id: "c1" as CallId, slot: "find a sports team by name", deps: [] },
      { id: "c2" as CallId, slot: "list the players of a team", deps: ["c1" as CallId] },
      { id: "c3" as CallId, slot: "weather forecast for a city", deps: [] }
    ]
  },
  searches: [
    { slot: "c1", query: "search sports team by name" },
    { slot: "c2", query: "team roster players list" },
    { slot: "c3", query: "weather forecast city" }
  ],
  calls: []
}

const exampleExecute: Turn = {
  think: "team_search and forecast are independent, so they run together; roster needs the team id from c1.",
  searches: [],
  calls: [
    { id: "c1" as CallId, tool: "team_search" as ToolName, arguments: { name: "Lakers" } },
    { id: "c3" as CallId, tool: "forecast" as ToolName, arguments: { city: "Los Angeles", days: 1 } }
  ]
}

const exampleRef: Turn = {
  searches: [],
  calls: [{ id: "c2" as CallId, tool: "team_roster" as ToolName, arguments: { team_id: { $ref: "c1.results.0.id" } } }]
}

const exampleAnswer: Turn = {
  think: "I have the roster and the forecast.",
  searches: [],
  calls: [],
  answer: "The Lakers' roster is ... Tomorrow in Los Angeles: sunny, 24 °C."
}

/** The example turns shown in {@link instructions} (each one parses). */
export const examples: ReadonlyArray<Turn> = [exampleExplore, exampleExecute, exampleRef, exampleAnswer]

/** The protocol as a model's system prompt gives it: the single source of truth the LLM policies put in their prompt. */
export const instructions = `You solve the user's request in rounds. In each round you write one turn made of tags, in this order, each at most once:

<think>...</think>    optional. Your reasoning, free text.
<plan>...</plan>      optional. The dependency graph of the request as JSON:
                      {"nodes":[{"id":"c1","tool":"<tool name, once known>","slot":"<capability in words>","deps":["<ids this node needs first>"]}]}
                      A node's id is the id of the call that will carry it out. Nodes whose deps are done can run together.
<search>...</search>  explore: a JSON list of tool-retrieval queries, one per capability slot:
                      [{"slot":"c1","query":"<what the tool must do>"}]
<call>...</call>      execute: a JSON list of tool calls; all calls of a turn run at the same time:
                      [{"id":"c1","name":"<tool name>","arguments":{...}}]
<answer>...</answer>  the final answer to the user, in plain text. It ends the episode.

Rules:
- Each turn has exactly one action: <search>, <call> or <answer>. Write a <plan> when you start and whenever an observation shows the plan must change; otherwise leave it out.
- Write nothing outside the tags. The content of <plan>, <search> and <call> is strict JSON (double quotes, no comments, no trailing commas).
- Call ids are unique in the whole episode: c1, c2, ... never reuse one. Call only tools that a search returned or that you already called, with arguments that match their parameters.
- To pass a value from the output of an earlier call, write {"$ref":"<call id>.<field>.<field>"} as the argument value; array items by index, e.g. {"$ref":"c1.results.0.id"}. A call cannot use the output of a call in the same turn.
- After each round you get an <observation>: the tools each search found (name, description, parameters), or each call's result (its output, or an error such as not_found or rate_limited; a rate-limited or failed call may be retried with a new id).

Example: a first turn that plans and explores
${printTurn(exampleExplore)}

Example: a turn that executes independent calls in parallel
${printTurn(exampleExecute)}

Example: a call that uses a field of an earlier call's output
${printTurn(exampleRef)}

Example: the final turn
${printTurn(exampleAnswer)}`
