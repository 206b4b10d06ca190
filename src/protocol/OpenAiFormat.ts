/**
 * The mapping between ParaAct turns and OpenAI-style chat messages, in both policy modes: native tool calling
 * (searches and calls as `tool_calls`) and the text protocol (the turn as text, observations as one message).
 */
import { Result, Schema } from "effect"
import type { Observation } from "../domain/Call.ts"
import type { ProtocolError } from "../domain/Errors.ts"
import type { CallId, ToolName } from "../domain/Ids.ts"
import type { Json, JsonObject, JsonSchema } from "../domain/Json.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import type { ProtocolIssue, SearchResult, Step } from "../domain/Trajectory.ts"
import type { SearchQuery, Turn } from "../domain/Turn.ts"
import { canonicalJson } from "../math/CanonicalJson.ts"
import {
  assignSlots,
  checkActions,
  type DraftCall,
  lastTagOf,
  parseTags,
  partsToTurn,
  type TagParts
} from "./ParaActParser.ts"
import { printTurn } from "./ParaActPrinter.ts"
import { closeTag, fail, hasTags, type TagName } from "./ParaActScanner.ts"
import { decodeItem, formatPath, WireSearch } from "./ParaActWire.ts"
import { type JsonSpan, locate, readJson } from "./ParaActJson.ts"
import { callIdPattern, collectRefs } from "./Refs.ts"

// ---------------------------------------------------------------------------------------------------------------
// Wire schemas (the exact OpenAI chat-completions shapes)

/** A function call in an assistant message; `arguments` is a JSON string. */
export const ToolCallMessage = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})
/** A function call in an assistant message. */
export type ToolCallMessage = typeof ToolCallMessage.Type

/** A system message. */
export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system"),
  content: Schema.String,
  name: Schema.optionalKey(Schema.String)
})
/** A system message. */
export type SystemMessage = typeof SystemMessage.Type

/** A user message. */
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.String,
  name: Schema.optionalKey(Schema.String)
})
/** A user message. */
export type UserMessage = typeof UserMessage.Type

/** An assistant message: text content (or null) and the function calls it made. */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.NullOr(Schema.String),
  tool_calls: Schema.optionalKey(Schema.Array(ToolCallMessage)),
  name: Schema.optionalKey(Schema.String)
})
/** An assistant message. */
export type AssistantMessage = typeof AssistantMessage.Type

/** A tool message: the result of one function call, with the id of that call. */
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  tool_call_id: Schema.String,
  content: Schema.String,
  name: Schema.optionalKey(Schema.String)
})
/** A tool message. */
export type ToolMessage = typeof ToolMessage.Type

/** One message of a chat conversation. */
export const ChatMessage = Schema.Union([SystemMessage, UserMessage, AssistantMessage, ToolMessage])
/** One message of a chat conversation. */
export type ChatMessage = typeof ChatMessage.Type

/** A function the model may call: an entry of the request's `tools`. */
export const OpenAiTool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String,
    description: Schema.optionalKey(Schema.String),
    parameters: Schema.JsonObject
  })
})
/** A function the model may call. */
export type OpenAiTool = typeof OpenAiTool.Type

// ---------------------------------------------------------------------------------------------------------------
// Tool definitions

/** A JSON Schema without our `x-` extensions (`x-entity`), at every depth: what an OpenAI endpoint is given. */
export const stripExtensions = (schema: JsonSchema): JsonObject => {
  const out: Array<[string, Json]> = []
  for (const key of Object.keys(schema)) {
    if (key.startsWith("x-")) continue
    const value = (schema as Record<string, unknown>)[key]
    if (value === undefined) continue
    if (key === "items") out.push([key, stripExtensions(value as JsonSchema)])
    else if (key === "properties") {
      const props = value as Record<string, JsonSchema>
      out.push([key, Object.fromEntries(Object.keys(props).flatMap((p) => {
        const prop = props[p]
        return prop === undefined ? [] : [[p, stripExtensions(prop)]]
      }))])
    } else out.push([key, value as Json])
  }
  return Object.fromEntries(out)
}

/**
 * The entity marks of a tool (`x-entity`) as a line of text: which entity attribute each parameter takes and which
 * ids the response returns (`Entities: team_id takes team.id; returns team.id, player.id.`), or "" when it has none.
 * The schemas an LLM is shown drop `x-` keys (strict function schemas refuse them); this line carries the same
 * information, so an LLM policy sees everything the learned policy reads of a tool (docs/training.md §1).
 */
export const entityLine = (spec: ToolSpec): string => {
  const takes = Object.entries(spec.parameters.properties).flatMap(([name, schema]) => (schema["x-entity"] === undefined ? [] : [`${name} takes ${schema["x-entity"]}`]))
  const returns: Array<string> = []
  const walk = (schema: JsonSchema | undefined, depth: number): void => {
    if (schema === undefined || depth > 6) return
    const e = schema["x-entity"]
    if (e !== undefined && !returns.includes(e)) returns.push(e)
    walk(schema.items, depth + 1)
    for (const v of Object.values(schema.properties ?? {})) walk(v, depth + 1)
  }
  walk(spec.response, 0)
  if (takes.length === 0 && returns.length === 0) return ""
  return `Entities: ${[...takes, ...(returns.length > 0 ? [`returns ${returns.join(", ")}`] : [])].join("; ")}.`
}

/** A tool's description with its entity line (what an LLM is shown of a tool). */
export const describeTool = (spec: ToolSpec): string => {
  const line = entityLine(spec)
  return line.length === 0 ? spec.description : `${spec.description}\n${line}`
}

/** The `tools` entry of a tool interface: its callable name, description (with its entity line) and parameter schema. */
export const toolDefinition = (spec: ToolSpec): OpenAiTool => ({
  type: "function",
  function: {
    name: spec.name,
    description: describeTool(spec),
    parameters: stripExtensions(spec.parameters)
  }
})

/** The function name that stands for a search in native tool calling. A library tool of that name is shadowed. */
export const searchToolName = "search_tools"

/** The `search_tools` function: one retrieval query for one capability slot; call it several times to search in parallel. */
export const searchToolDefinition: OpenAiTool = {
  type: "function",
  function: {
    name: searchToolName,
    description: "Find tools for one capability the request needs. Returns the best-matching tools with their " +
      "descriptions and parameters. Call it once per capability slot; several calls in one turn run in parallel. " +
      "The same query searched again returns its next tools (\"page\": 2, 3, ...).",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What the tool must do, in words." },
        slot: { type: "string", description: "The capability slot this query serves, e.g. the id of the plan node (c1)." }
      },
      required: ["query"]
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Turn <-> assistant message (native tool calling)

/** The tool_call id a search gets in native mode: `search-<n>` (a `-` keeps it apart from every call id). */
export const searchCallId = (index: number): string => `search-${index + 1}`

/** The `content` of the assistant message of a turn: think, plan and answer tags (null when there are none). */
export const turnContent = (turn: Turn): string | null => {
  const text = printTurn({ ...turn, searches: [], calls: [] })
  return text === "" ? null : text
}

/** A turn as the assistant message of native tool calling: searches and calls become `tool_calls`, in that order. */
export const turnToMessage = (turn: Turn): AssistantMessage => {
  const toolCalls: Array<ToolCallMessage> = [
    ...turn.searches.map((s, i): ToolCallMessage => ({
      id: searchCallId(i),
      type: "function",
      function: { name: searchToolName, arguments: JSON.stringify({ slot: s.slot, query: s.query }) }
    })),
    ...turn.calls.map((c): ToolCallMessage => ({
      id: c.id,
      type: "function",
      function: { name: c.tool, arguments: canonicalJson(c.arguments) }
    }))
  ]
  return {
    role: "assistant",
    content: turnContent(turn),
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {})
  }
}

/** How to read an assistant message. */
export interface MessageOptions {
  /** Lenient tag parsing of `content` (text outside tags ignored, ...), as in `ParaAct.parseTurn`. */
  readonly lenient?: boolean
  /** Ids of the calls of earlier turns: a tool_call id that reuses one is replaced by a fresh `c<n>`. */
  readonly usedCallIds?: Iterable<string>
  /** The first n tried for a generated id `c<n>` (default 1). */
  readonly nextCallIndex?: number
  /**
   * Reasoning text the server returned apart from the content (`reasoning_content`): the think when content has
   * none (unless it contains `</think>`, which no think can hold).
   */
  readonly reasoning?: string
}

/** Reads one `function.arguments` string: `""` is `{}`; anything else must be a JSON object. */
const readArguments = (
  call: ToolCallMessage,
  index: number,
  tag: TagName
): Result.Result<{ readonly value: JsonObject; readonly label: string; readonly span: JsonSpan }, ProtocolError> => {
  const label = `tool_calls[${index}] (${call.function.name}, id ${JSON.stringify(call.id)})`
  const text = call.function.arguments
  if (text.trim() === "") return Result.succeed({ value: {}, label, span: { start: 0, end: 0, keys: new Map() } })
  const read = readJson(text)
  if (!read.ok) return fail(tag, read.error.offset, `${label}: arguments are not valid JSON: ${read.error.message}`)
  const value = read.read.value
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail(tag, read.read.span.start, `${label}: arguments must be a JSON object, got ${JSON.stringify(value).slice(0, 40)}`)
  }
  return Result.succeed({ value: value as JsonObject, label, span: read.read.span })
}

/**
 * An assistant message as a turn. Content with tags is parsed as think/plan/answer; content without any tag (opening or closing) is the
 * answer when there are no tool calls, and the think otherwise. `search_tools` calls become searches, the other
 * calls become calls; a tool_call id is kept when it is a valid, unused call id, else replaced by a fresh `c<n>`.
 * Errors name the tag; the offset is into `content` for content problems, into that call's `arguments` string for
 * argument problems, and 0 for problems of the message as a whole.
 */
export const messageToTurn = (message: AssistantMessage, options: MessageOptions = {}): Result.Result<Turn, ProtocolError> => {
  const content = message.content ?? ""
  const toolCalls = message.tool_calls ?? []
  let parts: TagParts
  if (!hasTags(content)) {
    const text = content.trim()
    const base: TagParts = { searches: [], calls: [], at: {}, length: content.length }
    parts = text === "" ? base : toolCalls.length === 0 ? { ...base, answer: text, at: { answer: 0 } } : { ...base, think: text }
  } else {
    const parsed = parseTags(content, options.lenient === true ? { lenient: true } : {})
    if (Result.isFailure(parsed)) return Result.fail(parsed.failure)
    parts = parsed.success
    for (const tag of ["search", "call"] as const) {
      const at = parts.at[tag]
      if (at !== undefined) return fail(tag, at, `<${tag}> in the content: with native tool calling, searches and calls are tool_calls`)
    }
  }
  // Reasoning that holds its own closing tag cannot be a think (printing it would break the turn): it is left out.
  const reasoning = options.reasoning?.trim()
  if (parts.think === undefined && reasoning !== undefined && reasoning !== "" && !reasoning.includes(closeTag("think"))) {
    parts = { ...parts, think: reasoning }
  }

  const used = new Set(options.usedCallIds ?? [])
  const searches: Array<{ readonly slot?: string; readonly query: string; readonly index: number }> = []
  const calls: Array<DraftCall> = []
  const kept = new Set<string>()
  for (const [index, call] of toolCalls.entries()) {
    const isSearch = call.function.name === searchToolName
    const tag = isSearch ? "search" : "call"
    const args = readArguments(call, index, tag)
    if (Result.isFailure(args)) return Result.fail(args.failure)
    const { value, label, span } = args.success
    if (isSearch) {
      const decoded = decodeItem(WireSearch, "search", span, { value, path: [] }, options.lenient === true)
      if (Result.isFailure(decoded)) {
        return fail("search", decoded.failure.offset, `${label}: ${decoded.failure.message.replace(/^<search>:? ?/, "")}`)
      }
      searches.push({ ...decoded.success, index })
      continue
    }
    if (call.function.name === "") return fail("call", 0, `${label}: empty function name`)
    const malformed = collectRefs(value).find((site) => site._tag === "Malformed")
    if (malformed !== undefined) {
      return fail("call", locate(span, malformed.path).offset, `${label}: ${formatPath(malformed.path)}: malformed $ref ${JSON.stringify(malformed.ref)}`)
    }
    const keep = callIdPattern.test(call.id) && !used.has(call.id) && !kept.has(call.id)
    if (keep) kept.add(call.id)
    calls.push({ ...(keep ? { id: call.id as CallId } : {}), tool: call.function.name as ToolName, arguments: value })
  }

  const slots = new Set<string>()
  for (const s of searches) {
    if (s.slot === undefined) continue
    if (slots.has(s.slot)) return fail("search", 0, `tool_calls[${s.index}]: slot ${JSON.stringify(s.slot)} appears twice; one query per slot`)
    slots.add(s.slot)
  }

  const actions = { ...parts, searches: assignSlots(searches), calls }
  const checked = checkActions(actions, { answer: parts.at.answer ?? 0, call: 0, end: content.length }, lastTagOf(parts.at))
  if (Result.isFailure(checked)) return Result.fail(checked.failure)
  // the kept ids are the calls' own, which assignCallIds skips anyway
  const ids = { usedCallIds: used, ...(options.nextCallIndex !== undefined ? { nextCallIndex: options.nextCallIndex } : {}) }
  return Result.succeed(partsToTurn(actions, ids))
}

// ---------------------------------------------------------------------------------------------------------------
// Observations

/** How to render what a step observed. */
export interface RenderOptions {
  /** Looks a tool up by name, so search results show each tool's description and parameters (else name and score only). */
  readonly lookupTool?: (name: string) => ToolSpec | undefined
  /** Cut each rendered payload to this many characters (the cut is marked). Default: no cut. */
  readonly maxPayloadChars?: number
}

const cut = (text: string, max: number | undefined): string =>
  max === undefined || !(max >= 0) || text.length <= max ? text : `${text.slice(0, max)}... [${text.length - max} more characters]`

const round3 = (x: number): number => Math.round(x * 1000) / 1000

/** The JSON a search result is shown as: the slot, the query, the page of a repeated query (2 = its second top-k), and the tools found. */
export const searchResultJson = (result: SearchResult, options: RenderOptions = {}): JsonObject => ({
  slot: result.slot,
  query: result.query,
  ...(result.page !== undefined ? { page: result.page } : {}),
  tools: result.hits.map((hit) => {
    const spec = options.lookupTool?.(hit.tool)
    return spec === undefined
      ? { name: hit.tool, score: round3(hit.score) }
      : { name: hit.tool, score: round3(hit.score), description: describeTool(spec), parameters: stripExtensions(spec.parameters) }
  })
})

/** The JSON a call's outcome is shown as: the payload itself, or `{"error": {kind, status, message}}`. */
export const outcomeJson = (observation: Observation): Json =>
  observation.outcome._tag === "ok" ? observation.outcome.payload : { error: { ...observation.outcome.error } }

const notExecuted: Json = { error: { kind: "not_executed", message: "the runtime did not execute this call" } }
const notSearched: Json = { error: { kind: "not_executed", message: "the runtime did not run this search" } }

/** The search results of a step in the order of the turn's searches (matched by slot). */
const searchesInOrder = (turn: Turn | undefined, results: ReadonlyArray<SearchResult>): ReadonlyArray<readonly [SearchQuery, SearchResult | undefined]> => {
  const bySlot = new Map(results.map((r) => [r.slot, r] as const))
  const queries = turn?.searches ?? results.map((r) => ({ slot: r.slot, query: r.query }))
  return queries.map((q) => [q, bySlot.get(q.slot)] as const)
}

/** The observations of a step in the order of the turn's calls, then any the turn does not list. */
const observationsInOrder = (
  turn: Turn | undefined,
  observations: ReadonlyArray<Observation>
): ReadonlyArray<readonly [{ readonly id: CallId; readonly tool: string }, Observation | undefined]> => {
  const byId = new Map(observations.map((o) => [o.callId, o] as const))
  const listed = (turn?.calls ?? []).map((c) => [{ id: c.id, tool: c.tool }, byId.get(c.id)] as const)
  const listedIds = new Set(listed.map(([c]) => c.id))
  const extra = observations.filter((o) => !listedIds.has(o.callId)).map((o) => [{ id: o.callId, tool: o.tool }, o] as const)
  return [...listed, ...extra]
}

const attr = (value: string | number): string => typeof value === "number" ? `"${value}"` : JSON.stringify(value)

/** The feedback line of a malformed turn. */
const protocolErrorLine = (issue: ProtocolIssue): string =>
  `<protocol-error tag=${attr(issue.tag)} offset=${attr(issue.offset)}>${issue.message}</protocol-error>`

/**
 * What a step observed, as the one text message of the text protocol, or undefined when there is nothing to show
 * (an answer step). Format (attribute values are JSON strings):
 * ```
 * <observation>
 * <search slot="c1" query="team roster">
 * {"slot":"c1","query":"team roster","tools":[{"name":"team_roster","score":0.91,"description":"...","parameters":{...}}]}
 * </search>
 * <result id="c1" tool="team_search" status="ok">
 * {"results":[{"id":"t_17","name":"Lakers"}]}
 * </result>
 * <result id="c2" tool="team_roster" status="error">
 * {"error":{"kind":"not_found","status":404,"message":"no team t_99"}}
 * </result>
 * <protocol-error tag="call" offset="57">...</protocol-error>
 * </observation>
 * ```
 */
export const renderObservation = (step: Step, options: RenderOptions = {}): string | undefined => {
  const lines: Array<string> = []
  if (step.protocolError !== undefined) lines.push(protocolErrorLine(step.protocolError))
  for (const [query, result] of searchesInOrder(step.turn, step.searches)) {
    const body = result === undefined ? notSearched : searchResultJson(result, options)
    lines.push(`<search slot=${attr(query.slot)} query=${attr(query.query)}>`, cut(JSON.stringify(body), options.maxPayloadChars), "</search>")
  }
  for (const [call, observation] of observationsInOrder(step.turn, step.observations)) {
    const status = observation === undefined ? "not_executed" : observation.outcome._tag
    const body = observation === undefined ? notExecuted : outcomeJson(observation)
    lines.push(`<result id=${attr(call.id)} tool=${attr(call.tool)} status=${attr(status)}>`, cut(JSON.stringify(body), options.maxPayloadChars), "</result>")
  }
  return lines.length === 0 ? undefined : `<observation>\n${lines.join("\n")}\n</observation>`
}

/** The policy mode: native tool calling, or the ParaAct text protocol. */
export type Mode = "native" | "text"

/**
 * A recorded step as chat messages, to rebuild the conversation for the next round.
 * Native: the assistant message of the turn, then one `tool` message per tool call (search results and call
 * outcomes, as JSON), answering every tool_call id. A malformed turn: its raw text, then a user message with the error.
 * Text: the raw turn text as the assistant message, then one user message with {@link renderObservation}.
 */
export const stepToMessages = (step: Step, mode: Mode, options: RenderOptions = {}): ReadonlyArray<ChatMessage> => {
  const turn = step.turn
  if (mode === "text" || turn === undefined) {
    const assistant: AssistantMessage = { role: "assistant", content: step.raw !== "" || turn === undefined ? step.raw : printTurn(turn) }
    const observation = renderObservation(step, options)
    return observation === undefined ? [assistant] : [assistant, { role: "user", content: observation }]
  }
  const tools: Array<ToolMessage> = [
    ...searchesInOrder(turn, step.searches).map(([, result], i): ToolMessage => ({
      role: "tool",
      tool_call_id: searchCallId(i),
      content: cut(JSON.stringify(result === undefined ? notSearched : searchResultJson(result, options)), options.maxPayloadChars)
    })),
    ...observationsInOrder(turn, step.observations)
      .filter(([call]) => turn.calls.some((c) => c.id === call.id))
      .map(([call, observation]): ToolMessage => ({
        role: "tool",
        tool_call_id: call.id,
        content: cut(JSON.stringify(observation === undefined ? notExecuted : outcomeJson(observation)), options.maxPayloadChars)
      }))
  ]
  return [turnToMessage(turn), ...tools]
}

/** The protocol for a model in native tool-calling mode: think/plan/answer tags in the content, actions as tool calls. */
export const nativeInstructions = `You solve the user's request in rounds. In each round you reply with one message:

- In the content, optionally <think>...</think> with your reasoning and <plan>...</plan> with the dependency graph of the request as JSON:
  {"nodes":[{"id":"c1","tool":"<tool name, once known>","slot":"<capability in words>","deps":["<ids this node needs first>"]}]}
  A node's id is the id of the call that will carry it out. Write a plan when you start and whenever an observation shows it must change.
- Then exactly one kind of action:
  explore: call ${searchToolName} once per capability slot ({"slot":"c1","query":"<what the tool must do>"}); the calls run in parallel; a query searched again shows its next tools ("page": 2, 3, ...);
  execute: call the tools you found; all calls of one message run in parallel;
  answer: no tool calls, and the final answer in <answer>...</answer> (or as the whole content). It ends the episode.
- Call only tools that a search returned or that you already called, with arguments that match their parameters.
- To pass a value from the output of an earlier call, write {"$ref":"<call id>.<field>.<field>"} as the argument value; array items by index, e.g. {"$ref":"c1.results.0.id"}. Call ids are the ids of your earlier tool calls. A call cannot use the output of a call in the same message.`
