/**
 * The LLM multi-agent teacher: the planner, searcher, executor and answerer of src/Teacher.ts as separate chat calls
 * over an OpenAI-compatible endpoint, each with its own prompt and a JSON reply decoded with Schema. A reply that
 * cannot be used gets one repair request, then the scripted role acts for that round (counted and logged).
 */
import { Context, Effect, Layer, Ref, Result, Schema } from "effect"
import type { Redacted } from "effect"
import { ConfigError } from "../src/domain/Errors.ts"
import type { CallId, ToolName } from "../src/domain/Ids.ts"
import type { Plan, PlanNode } from "../src/domain/Plan.ts"
import type { Task } from "../src/domain/Task.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import type { Observation } from "../src/domain/Call.ts"
import type { Step } from "../src/domain/Trajectory.ts"
import type { SearchQuery } from "../src/domain/Turn.ts"
import { extractJsonObject } from "../src/judge/Prompt.ts"
import * as PlanMath from "../src/math/PlanDag.ts"
import { hashParts } from "../src/math/Random.ts"
import { Policy, type PolicyContext, PolicyError } from "../src/agent/Policy.ts"
import * as Refs from "../src/protocol/Refs.ts"
import * as Teacher from "../src/agent/Teacher.ts"
import type { BoundNode, NodeCall, Piece, RoleInput, RoleName } from "../src/agent/Teacher.ts"
import { ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import type { Library } from "../src/toolenv/ToolLibrary.ts"
import {
  type ChatResult,
  checkMaxTokens,
  checkTemperature,
  configFromEnv,
  layer as clientLayer,
  OpenAiClient,
  type OpenAiConfigInput,
  scrubSecret,
  type WireMessage
} from "./OpenAiClient.ts"
import { clip, toolDoc } from "./PolicyOpenAi.ts"

// ---------------------------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------------------------

/** How much of the documentation and of the tool outputs each role is shown, in characters. */
export interface Budgets {
  /** Per tool description. */
  readonly description: number
  /** Per call output shown to the planner and the executor. */
  readonly payload: number
  /** Per call output in the answerer's evidence (it must quote values, so it sees more). */
  readonly evidence: number
  /** Per list section (tool docs, earlier outputs, evidence); what does not fit is counted as omitted. */
  readonly section: number
}

/** The default budgets: 400 per description, 1,500 per output (3,000 for the answerer), 16,000 per section. */
export const defaultBudgets: Budgets = { description: 400, payload: 1_500, evidence: 3_000, section: 16_000 }

/** Options of the LLM teacher. */
export interface TeacherLlmOptions {
  /** A model per role; a role without one uses the client's model. */
  readonly models?: Partial<Record<RoleName, string>>
  /** Sampling temperature and completion budget of every role call; default the client's (0.7 and 2048, spec Table 6). */
  readonly temperature?: number
  readonly maxTokens?: number
  /**
   * The roles that see the task's privileged hints (default `["plan", "search"]`): the planner the gold tools' names
   * and descriptions and the keys of the facts the answer must state; the searcher the descriptions of the gold tools
   * not found yet; the executor the literal argument values of the gold calls of its tools; the answerer the fact
   * keys. No role ever sees a gold fact's value.
   */
  readonly hints?: ReadonlyArray<RoleName>
  /** Also send `response_format: {"type": "json_object"}` (most servers support it). Default false. */
  readonly jsonMode?: boolean
  /** Send a per-call seed derived from the rollout's seed, round and role. Default true. */
  readonly seeded?: boolean
  /**
   * The orchestrator's search and call attempts, and the mistake rate of the scripted roles that stand in for a
   * role whose reply could not be used (default 0: a stand-in makes no deliberate mistakes).
   */
  readonly teacher?: Partial<Teacher.TeacherOptions>
  readonly budgets?: Partial<Budgets>
  /** A label for reports; default `teacher-llm:<model>` (plus the per-role models). */
  readonly name?: string
  /** The endpoint's key, only to scrub it from logs and errors should a server echo it (the client sends it). */
  readonly apiKey?: Redacted.Redacted
}

/** The roles that see hints by default. */
export const defaultHints: ReadonlyArray<RoleName> = ["plan", "search"]

/** The defaults of the orchestrator and of the stand-in scripted roles. */
export const defaultTeacherOptions: Teacher.TeacherOptions = { ...Teacher.defaultOptions, mistakeRate: 0 }

// ---------------------------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------------------------

/** What one role did across all rounds. */
export interface RoleCounts {
  /** Chat requests made (repairs included). */
  readonly calls: number
  /** Replies that could not be used on the first try (a repair request followed). */
  readonly repairs: number
  /** Rounds in which the repaired reply could not be used either, so the scripted role acted. */
  readonly fallbacks: number
  readonly promptTokens: number
  readonly completionTokens: number
}

/** The teacher's counters since the layer was built. */
export interface Stats {
  /** Turns produced. */
  readonly turns: number
  readonly roles: Readonly<Record<RoleName, RoleCounts>>
}

const zeroCounts: RoleCounts = { calls: 0, repairs: 0, fallbacks: 0, promptTokens: 0, completionTokens: 0 }

/** Counters at zero. */
export const emptyStats: Stats = { turns: 0, roles: { plan: zeroCounts, search: zeroCounts, execute: zeroCounts, answer: zeroCounts } }

/** The LLM teacher's counters (role calls, repairs, scripted fallbacks, tokens). */
export class TeacherLlmStats extends Context.Service<TeacherLlmStats, {
  readonly snapshot: Effect.Effect<Stats>
}>()("paraagent/TeacherLlmStats") {}

// ---------------------------------------------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------------------------------------------

const team = "You are the {role} in a team of agents (planner, searcher, executor, answerer) that serves a user's request " +
  "with tools: web APIs found by searching a library of tens of thousands of them."

/** The system prompt of each role. */
export const systemPrompts: Readonly<Record<RoleName, string>> = {
  plan: `${team.replace("{role}", "planner")} You write the plan the team follows: the dependency graph of the tool calls the request needs.

Each node is one tool call:
- "id": c1, c2, ... (a letter or _ followed by letters, digits or _; at most 32 characters; not ending in _r and digits).
- "slot": the capability the call needs, in a few plain words, as a search for such a tool would ask (e.g. "weather forecast for a city").
- "tool": the exact name of a listed tool that serves the slot; leave it out while no listed tool does.
- "deps": the ids of the nodes whose output this call needs as an input value. Calls without a dependency between them run at the same time, so add a dep only when a call truly needs another call's output.

Make one node per distinct call (two cities need two forecast nodes). When a current plan is shown, revise it: keep the id and tool of every node that already ran, bind open slots to tools found since, and replace a node whose tool kept failing by another tool or capability (with a new id). Never name a tool that is not listed.

Reply with one JSON object and nothing else:
{"reason": "<one or two sentences on the plan>", "nodes": [{"id": "c1", "slot": "...", "tool": "...", "deps": []}]}`,

  search: `${team.replace("{role}", "searcher")} The retriever matches each query against the tools' names and descriptions, so a good query says what the tool does: the action, the object and the key input, in 3 to 12 plain words (e.g. "current weather forecast for a city").

For each slot listed, write exactly one query. When a slot was searched before, the earlier queries and the tools they found are shown: those tools did not fit, so phrase the query differently (other words, more specific or more general).

Reply with one JSON object and nothing else:
{"reason": "<one sentence>", "queries": [{"slot": "<slot id>", "query": "..."}]}`,

  execute: `${team.replace("{role}", "executor")} The plan nodes listed are ready: their tool is known and the calls they depend on have finished. For each one, write the arguments of its tool call:
- match the tool's parameters (a JSON Schema): every required argument, the right types, allowed enum values;
- take values from the request, or from the outputs of earlier calls;
- to pass a value from an earlier call's output, write {"$ref": "<call id>.<field>.<index>..."} as the argument value, e.g. {"$ref": "c1.results.0.id"}; the runtime substitutes it;
- when an earlier attempt of a node failed, read the error and fix the arguments (a rate limit, server error or timeout may simply be retried).
Give a call for every ready node whose arguments you can fill; leave a node out only when no value for a required argument can be found.

Reply with one JSON object and nothing else:
{"reason": "<one sentence>", "calls": [{"node": "<node id>", "arguments": {...}}]}`,

  answer: `${team.replace("{role}", "answerer")} Write the final answer to the user from the evidence shown and nothing else:
- state the values the tools returned that answer the request, with names and units as the tools gave them;
- never add a fact, number, name or date that the evidence does not contain, even one you believe true;
- when a call failed or no tool was found for part of the request, say plainly which part could not be answered and why (e.g. "the roster service answered with a server error (500)");
- be concise: plain sentences, no headings.

Reply with one JSON object and nothing else:
{"answer": "..."}`
}

/** The reply shape of each role, quoted in a repair request. */
export const replyShapes: Readonly<Record<RoleName, string>> = {
  plan: `{"reason": "...", "nodes": [{"id": "c1", "slot": "...", "tool": "<listed tool name, optional>", "deps": ["<node id>"]}]}`,
  search: `{"reason": "...", "queries": [{"slot": "<slot id>", "query": "..."}]}`,
  execute: `{"reason": "...", "calls": [{"node": "<ready node id>", "arguments": {}}]}`,
  answer: `{"answer": "..."}`
}

/** The message sent after a reply that could not be used, quoting the problem. */
export const repairPrompt = (role: RoleName, problem: string): string =>
  `Your reply could not be used: ${problem}\nReply again with only the JSON object, in exactly this shape:\n${replyShapes[role]}`

/** Lines joined until the section budget is spent; the rest are counted. */
const section = (lines: ReadonlyArray<string>, budget: number, what: string): string => {
  const kept: Array<string> = []
  let used = 0
  for (const line of lines) {
    if (used + line.length > budget && kept.length > 0) break
    kept.push(line)
    used += line.length + 1
  }
  const left = lines.length - kept.length
  return left === 0 ? kept.join("\n") : `${kept.join("\n")}\n(${left} more ${what} omitted)`
}

/** One call as a line of evidence: `- c1 tool({args}) -> ok: {payload}` or `-> error 404 not_found: message`. */
export const callLine = (o: Observation, payloadBudget: number): string => {
  const head = `- ${o.callId} ${o.tool}(${JSON.stringify(o.arguments)})`
  if (o.outcome._tag === "ok") return `${head} -> ok: ${clip(JSON.stringify(o.outcome.payload), payloadBudget)}`
  const e = o.outcome.error
  return o.attempts === 0
    ? `${head} -> not run (${e.kind}): ${e.message}`
    : `${head} -> error ${e.status} ${e.kind}: ${e.message}`
}

const request = (context: PolicyContext): string => `## Request\n${context.request}`

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/** Where each plan node stands (or each of `only`), one line per node. */
export const progressLines = (input: RoleInput, options: Teacher.TeacherOptions, only?: ReadonlyArray<PlanNode>): ReadonlyArray<string> => {
  const { board } = input
  return (only ?? board.nodes).map((n) => {
    const label = n.tool ?? (n.slot === undefined ? "no tool yet" : JSON.stringify(n.slot))
    const done = board.done.get(n.id)
    if (done !== undefined) return `- ${n.id} (${label}): done by call ${done.callId}`
    const attempts = board.attempts.get(n.id) ?? 0
    if (attempts > 0) {
      const gaveUp = attempts >= options.callAttempts ? "; out of attempts" : ""
      return `- ${n.id} (${label}): failed ${plural(attempts, "time")}, last error ${board.lastError.get(n.id) ?? "unknown"}${gaveUp}`
    }
    if (n.tool === undefined || !board.seen.has(n.tool)) {
      const searched = board.searched.get(Teacher.slotOf(board.nodes, n)) ?? 0
      return `- ${n.id} (${label}): no tool found yet (searched ${plural(searched, "time")})`
    }
    return `- ${n.id} (${label}): not run yet`
  })
}

const uniqueGoldTools = (task: Task, library: Library): ReadonlyArray<ToolSpec> => {
  const out: Array<ToolSpec> = []
  for (const g of task.gold) {
    const spec = library.get(g.tool)
    if (spec !== undefined && !out.includes(spec)) out.push(spec)
  }
  return out
}

const factKeys = (task: Task): string => [...new Set(task.facts.map((f) => f.key))].join(", ")

const planJson = (nodes: ReadonlyArray<PlanNode>): string =>
  JSON.stringify({ nodes: nodes.map((n) => ({ id: n.id, ...(n.slot === undefined ? {} : { slot: n.slot }), ...(n.tool === undefined ? {} : { tool: n.tool }), deps: n.deps })) })

/** What a role's prompt builder needs besides the round's input. */
export interface View {
  readonly library: Library
  readonly hints: ReadonlySet<RoleName>
  readonly budgets: Budgets
  readonly options: Teacher.TeacherOptions
}

/** The planner's user message: request, tools found, the plan in force and its progress, and (hint) the gold tools. */
export const plannerMessage = (input: RoleInput, view: View): string => {
  const { context, board, task } = input
  const parts = [
    request(context),
    `## Tools found so far\n${
      context.tools.length === 0 ? "None yet." : section(context.tools.map((t) => toolDoc(t, view.budgets.description)), view.budgets.section, "tools")
    }`
  ]
  if (board.nodes.length > 0) {
    parts.push(`## Current plan\n${planJson(board.nodes)}`, `## Progress\n${progressLines(input, view.options).join("\n")}`)
  }
  if (view.hints.has("plan")) {
    const tools = uniqueGoldTools(task, view.library)
    const keys = factKeys(task)
    parts.push(
      `## Hint (privileged): tools that serve this request (they must be searched for before they can be called)\n${
        tools.map((t) => `- ${t.name}: ${clip(t.description, view.budgets.description)}`).join("\n")
      }${keys === "" ? "" : `\nThe answer must state: ${keys}.`}`
    )
  }
  return parts.join("\n\n")
}

const searchesFor = (slot: string, steps: ReadonlyArray<Step>): ReadonlyArray<string> =>
  steps.flatMap((s) => s.searches.filter((r) => r.slot === slot)).map((r) =>
    `${JSON.stringify(r.query)} found ${r.hits.length === 0 ? "nothing" : r.hits.map((h) => h.tool).join(", ")}`
  )

/** The searcher's user message: request, the slots with their earlier searches, and (hint) what the gold tools do. */
export const searcherMessage = (input: RoleInput, slots: ReadonlyArray<PlanNode>, view: View): string => {
  const { context, board, task } = input
  const steps = [...context.history, ...(context.abandoned ?? [])]
  const lines = slots.map((n) => {
    const head = `- ${n.id}: ${n.slot ?? "(no description)"}${n.tool === undefined ? "" : `; planned tool: ${n.tool}`}`
    const earlier = searchesFor(n.id, steps)
    return earlier.length === 0 ? head : `${head}\n  earlier searches: ${earlier.join("; ")}`
  })
  const parts = [request(context), `## Slots to find a tool for\n${lines.join("\n")}`]
  if (view.hints.has("search")) {
    const missing = uniqueGoldTools(task, view.library).filter((t) => !board.seen.has(t.name))
    if (missing.length > 0) {
      parts.push(`## Hint (privileged): what the tools that serve this request do (not found yet)\n${
        missing.map((t) => `- ${clip(t.description, view.budgets.description)}`).join("\n")
      }`)
    }
  }
  return parts.join("\n\n")
}

const attemptsOf = (node: BoundNode, steps: ReadonlyArray<Step>): ReadonlyArray<Observation> =>
  steps.flatMap((s) => s.observations.filter((o) => Teacher.nodeIdOf(o.callId) === node.id && o.tool === node.tool))

/** The executor's user message: request, the ready nodes with their tools and failed attempts, earlier outputs, (hint) gold literals. */
export const executorMessage = (input: RoleInput, ready: ReadonlyArray<BoundNode>, view: View): string => {
  const { context, task } = input
  const steps = [...context.history, ...(context.abandoned ?? [])]
  const nodes = ready.map((n) => {
    const spec = view.library.get(n.tool)
    const doc = spec === undefined ? `tool: ${n.tool}` : `tool: ${toolDoc(spec, view.budgets.description).replace(/^### /, "")}`
    const tries = attemptsOf(n, steps).filter((o) => o.outcome._tag === "error")
    return [
      `### ${n.id}: ${n.slot ?? n.tool}${n.deps.length === 0 ? "" : ` (needs ${n.deps.join(", ")})`}`,
      doc,
      ...(tries.length === 0 ? [] : ["earlier attempts:", ...tries.map((o) => callLine(o, view.budgets.payload))])
    ].join("\n")
  })
  const outputs = context.history.flatMap((s) => s.observations.filter((o) => o.outcome._tag === "ok"))
  const parts = [
    request(context),
    `## Ready nodes\n${nodes.join("\n\n")}`,
    `## Earlier outputs\n${
      outputs.length === 0 ? "None yet." : section(outputs.map((o) => callLine(o, view.budgets.payload)), view.budgets.section, "outputs")
    }`
  ]
  if (view.hints.has("execute")) {
    const lines = ready.flatMap((n) =>
      task.gold.filter((g) => g.tool === n.tool).map((g) => `- ${n.id} (${n.tool}): ${JSON.stringify(Teacher.literalArguments(g.arguments))}`)
    )
    if (lines.length > 0) parts.push(`## Hint (privileged): literal values a reference solution passed to these tools\n${lines.join("\n")}`)
  }
  return parts.join("\n\n")
}

/** The answerer's user message: request, every call on the path with its result, what has no result, (hint) fact keys. */
export const answererMessage = (input: RoleInput, view: View): string => {
  const { context, board, task } = input
  const calls = context.history.flatMap((s) => s.observations)
  const open = board.nodes.filter((n) => !board.done.has(n.id))
  const parts = [
    request(context),
    `## Evidence: tool calls and their results\n${
      calls.length === 0 ? "No tool call was made." : section(calls.map((o) => callLine(o, view.budgets.evidence)), view.budgets.section, "calls")
    }`
  ]
  if (open.length > 0) {
    const lines = progressLines(input, view.options, open)
    parts.push(`## Parts of the plan without a result\n${lines.join("\n")}`)
  }
  if (view.hints.has("answer") && task.facts.length > 0) {
    parts.push(`## Hint (privileged): the answer should cover\n${factKeys(task)}`)
  }
  return parts.join("\n\n")
}

// ---------------------------------------------------------------------------------------------------------------
// Replies
// ---------------------------------------------------------------------------------------------------------------

const Reason = Schema.optionalKey(Schema.NullOr(Schema.String))

/** The planner's reply. */
export const PlannerReply = Schema.Struct({
  reason: Reason,
  nodes: Schema.Array(Schema.Struct({
    id: Schema.String,
    slot: Schema.optionalKey(Schema.NullOr(Schema.String)),
    tool: Schema.optionalKey(Schema.NullOr(Schema.String)),
    deps: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
  }))
})

/** The searcher's reply. */
export const SearcherReply = Schema.Struct({
  reason: Reason,
  queries: Schema.Array(Schema.Struct({ slot: Schema.String, query: Schema.String }))
})

/** The executor's reply. */
export const ExecutorReply = Schema.Struct({
  reason: Reason,
  calls: Schema.Array(Schema.Struct({ node: Schema.String, arguments: Schema.JsonObject }))
})

/** The answerer's reply. */
export const AnswererReply = Schema.Struct({ reason: Reason, answer: Schema.String })

/** Reads a reply's content into a role's piece, or says what is wrong with it. */
export type Reader<A> = (content: string) => Result.Result<Piece<A>, string>

const decodeWith = <S extends Schema.Decoder<unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownResult(Schema.fromJsonString(schema))
  return (content: string): Result.Result<S["Type"], string> =>
    content.trim() === ""
      ? Result.fail("the reply is empty")
      : Result.mapError(decode(extractJsonObject(content)), (error) => error.message)
}

const note = (reason: string | null | undefined): { readonly note?: string } =>
  reason === undefined || reason === null || reason.trim() === "" ? {} : { note: reason.trim() }

const nodeIdPattern = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/

const decodePlanner = decodeWith(PlannerReply)

/**
 * The planner's reply as a plan: 1–32 nodes with well-formed ids, a valid DAG, tools that exist in the library (a
 * name that does not is dropped, leaving the slot open), and no id reused for a tool other than the one it ran.
 */
export const readPlan = (library: Library, history: ReadonlyArray<Step>): Reader<Plan> => (content) =>
  Result.flatMap(decodePlanner(content), (reply) => {
    if (reply.nodes.length === 0 || reply.nodes.length > 32) return Result.fail(`"nodes" must hold 1 to 32 nodes, got ${reply.nodes.length}`)
    const ran = new Map<string, string>()
    for (const step of history) for (const o of step.observations) if (o.attempts > 0) ran.set(Teacher.nodeIdOf(o.callId), o.tool)
    const nodes: Array<PlanNode> = []
    for (const [i, raw] of reply.nodes.entries()) {
      for (const id of [raw.id, ...(raw.deps ?? [])]) {
        if (!nodeIdPattern.test(id) || /_r\d+$/.test(id)) {
          return Result.fail(`nodes[${i}]: id ${JSON.stringify(id)} must be a letter or _ followed by at most 31 letters, digits or _, not ending in _r and digits`)
        }
      }
      const named = raw.tool === undefined || raw.tool === null || raw.tool.trim() === "" ? undefined : raw.tool.trim()
      const tool = named !== undefined && library.get(named) !== undefined ? named : undefined
      const before = ran.get(raw.id)
      if (before !== undefined && tool !== before) {
        return Result.fail(`nodes[${i}]: node ${raw.id} already ran tool ${before}; keep that tool for it, or give the new capability a new id`)
      }
      const slot = raw.slot === undefined || raw.slot === null || raw.slot.trim() === "" ? undefined : raw.slot.trim()
      nodes.push({
        id: raw.id as CallId,
        ...(tool === undefined ? {} : { tool: tool as ToolName }),
        ...(slot === undefined ? {} : { slot }),
        deps: [...new Set(raw.deps ?? [])] as Array<CallId>
      })
    }
    const plan: Plan = { nodes }
    const checked = PlanMath.validate(plan)
    if (checked._tag === "Invalid") return Result.fail(`the plan is not a DAG: ${PlanMath.describeIssues(checked.issues)}`)
    return Result.succeed({ value: plan, ...note(reply.reason) })
  })

const decodeSearcher = decodeWith(SearcherReply)

/** The searcher's reply: exactly one non-blank query per requested slot, returned in the slots' order. */
export const readSearch = (slots: ReadonlyArray<PlanNode>): Reader<ReadonlyArray<SearchQuery>> => (content) =>
  Result.flatMap(decodeSearcher(content), (reply) => {
    const wanted = slots.map((s) => s.id as string)
    const byslot = new Map<string, string>()
    for (const [i, q] of reply.queries.entries()) {
      if (!wanted.includes(q.slot)) return Result.fail(`queries[${i}]: slot ${JSON.stringify(q.slot)} is not one of ${wanted.join(", ")}`)
      if (byslot.has(q.slot)) return Result.fail(`queries[${i}]: slot ${q.slot} has a query already; give one per slot`)
      if (q.query.trim() === "") return Result.fail(`queries[${i}]: the query for ${q.slot} is blank`)
      byslot.set(q.slot, q.query.replace(/\s+/g, " ").trim())
    }
    const missing = wanted.filter((s) => !byslot.has(s))
    if (missing.length > 0) return Result.fail(`no query for slot(s) ${missing.join(", ")}: give exactly one per slot`)
    return Result.succeed({ value: wanted.map((slot) => ({ slot, query: byslot.get(slot) as string })), ...note(reply.reason) })
  })

const decodeExecutor = decodeWith(ExecutorReply)

/**
 * The executor's reply: at least one call, each for a distinct ready node, with well-formed `$ref`s; refs to a node id
 * are rewritten to the call that completed it.
 */
export const readExecute = (ready: ReadonlyArray<BoundNode>, done: Teacher.Board["done"]): Reader<ReadonlyArray<NodeCall>> => (content) =>
  Result.flatMap(decodeExecutor(content), (reply) => {
    if (reply.calls.length === 0) return Result.fail(`"calls" is empty: give a call for at least one of ${ready.map((n) => n.id).join(", ")}`)
    const out: Array<NodeCall> = []
    for (const [i, c] of reply.calls.entries()) {
      const node = ready.find((n) => n.id === c.node)
      if (node === undefined) return Result.fail(`calls[${i}]: node ${JSON.stringify(c.node)} is not ready; the ready nodes are ${ready.map((n) => n.id).join(", ")}`)
      if (out.some((o) => o.node.id === node.id)) return Result.fail(`calls[${i}]: node ${node.id} has a call already; give one per node`)
      const malformed = Refs.collectRefs(c.arguments).find((s) => s._tag === "Malformed")
      if (malformed !== undefined && malformed._tag === "Malformed") {
        return Result.fail(`calls[${i}].arguments: malformed $ref ${JSON.stringify(malformed.ref)}: ${malformed.message}`)
      }
      out.push({ node, arguments: Teacher.rewriteRefs(c.arguments, done) })
    }
    return Result.succeed({ value: out, ...note(reply.reason) })
  })

const decodeAnswerer = decodeWith(AnswererReply)

/** The answerer's reply: a non-blank answer. */
export const readAnswer: Reader<string> = (content) =>
  Result.flatMap(decodeAnswerer(content), (reply) =>
    Teacher.cleanText(reply.answer, "answer") === ""
      ? Result.fail(`"answer" is blank`)
      : Result.succeed({ value: reply.answer.trim(), ...note(reply.reason) }))

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

/** Token usage of one round, summed over its role calls. */
interface Tally {
  promptTokens: number
  completionTokens: number
}

/** The per-call sampling seed: a 31-bit hash of the rollout's seed, the round, the role and the attempt. */
export const roleSeed = (seed: number, round: number, role: RoleName, attempt: number): number =>
  hashParts(seed, "teacher", round, role, attempt) & 0x7fffffff

/** The policy's label: `teacher-llm:<model>`, plus `(role=model, ...)` for roles on another model. */
export const policyName = (model: string, models: Partial<Record<RoleName, string>> = {}): string => {
  const others = Teacher.roleNames.flatMap((r) => {
    const m = models[r]
    return m === undefined || m === model ? [] : [`${r}=${m}`]
  })
  return others.length === 0 ? `teacher-llm:${model}` : `teacher-llm:${model}(${others.join(",")})`
}

const validate = (options: TeacherLlmOptions, teacher: Teacher.TeacherOptions) =>
  Effect.gen(function*() {
    const bad = (field: string, value: unknown, message: string) => new ConfigError({ field, value: String(value), message })
    // the same checks (and messages) as the client's own defaults
    if (options.temperature !== undefined) yield* checkTemperature(options.temperature)
    if (options.maxTokens !== undefined) yield* checkMaxTokens(options.maxTokens)
    for (const [role, model] of Object.entries(options.models ?? {})) {
      if (model.trim() === "") return yield* bad(`models.${role}`, model, "a role's model must not be empty")
    }
    const budgets: Budgets = { ...defaultBudgets, ...options.budgets }
    for (const [field, value] of Object.entries(budgets)) {
      if (!(Number.isInteger(value) && value > 0)) return yield* bad(`budgets.${field}`, value, "budgets are positive integers (characters)")
    }
    return { budgets, teacher: yield* Teacher.validateOptions(teacher) }
  })

/** Builds the teacher (Policy) and its counters over the OpenAiClient and ToolLibrary in context. */
export const make = Effect.fnUntraced(function*(options: TeacherLlmOptions = {}) {
  const client = yield* OpenAiClient
  const library = yield* ToolLibrary
  const { budgets, teacher } = yield* validate(options, { ...defaultTeacherOptions, ...options.teacher })
  const models = options.models ?? {}
  const name = options.name ?? policyName(client.model, models)
  const view: View = { library, hints: new Set(options.hints ?? defaultHints), budgets, options: teacher }
  const scripted = Teacher.scriptedRoles(library, teacher)
  const stats = yield* Ref.make(emptyStats)
  const scrub = (text: string): string => scrubSecret(text, options.apiKey)

  const count = (role: RoleName, f: (c: RoleCounts) => RoleCounts) =>
    Ref.update(stats, (s) => ({ ...s, roles: { ...s.roles, [role]: f(s.roles[role]) } }))

  const ask = (role: RoleName, messages: ReadonlyArray<WireMessage>, context: PolicyContext, attempt: number, tally: Tally) =>
    client.chat({
      messages,
      ...(models[role] === undefined ? {} : { model: models[role] }),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.jsonMode === true ? { responseFormat: { type: "json_object" as const } } : {}),
      ...(options.seeded === false ? {} : { seed: roleSeed(context.seed, context.round, role, attempt) })
    }).pipe(
      Effect.mapError((error) =>
        new PolicyError({ message: scrub(`${name} (${role}): ${error.message}`), ...(error.status === undefined ? {} : { status: error.status }) })
      ),
      Effect.tap((result: ChatResult) => {
        const usage = result.usage ?? { promptTokens: 0, completionTokens: 0 }
        tally.promptTokens += usage.promptTokens
        tally.completionTokens += usage.completionTokens
        return count(role, (c) => ({
          ...c,
          calls: c.calls + 1,
          promptTokens: c.promptTokens + usage.promptTokens,
          completionTokens: c.completionTokens + usage.completionTokens
        }))
      })
    )

  /** One role: a call, a repair call quoting the problem, then the scripted role. */
  const consult = <A>(
    role: RoleName,
    user: string,
    read: Reader<A>,
    input: RoleInput,
    tally: Tally,
    fallback: Effect.Effect<Piece<A>>
  ): Effect.Effect<Piece<A>, PolicyError> =>
    Effect.gen(function*() {
      const messages: ReadonlyArray<WireMessage> = [{ role: "system", content: systemPrompts[role] }, { role: "user", content: user }]
      const first = yield* ask(role, messages, input.context, 0, tally)
      const firstRead = read(first.content)
      if (Result.isSuccess(firstRead)) return firstRead.success
      yield* count(role, (c) => ({ ...c, repairs: c.repairs + 1 }))
      yield* Effect.logDebug(`TeacherLlm: the ${role} reply could not be used; asking for a repair`).pipe(
        Effect.annotateLogs({ role, round: input.context.round, problem: scrub(clip(firstRead.failure, 300)) })
      )
      const second = yield* ask(role, [
        ...messages,
        { role: "assistant", content: first.content },
        { role: "user", content: repairPrompt(role, firstRead.failure) }
      ], input.context, 1, tally)
      const secondRead = read(second.content)
      if (Result.isSuccess(secondRead)) return secondRead.success
      yield* count(role, (c) => ({ ...c, fallbacks: c.fallbacks + 1 }))
      yield* Effect.logWarning(`TeacherLlm: the ${role} reply could not be used after a repair; the scripted ${role} acts this round`).pipe(
        Effect.annotateLogs({ role, round: input.context.round, task: input.task.id, problem: scrub(clip(secondRead.failure, 300)) })
      )
      return yield* fallback
    })

  const plan = Effect.fn("TeacherLlm.plan")(function*(input: RoleInput, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, revising: input.board.nodes.length > 0 })
    return yield* consult("plan", plannerMessage(input, view), readPlan(library, input.context.history), input, tally, scripted.plan(input))
  })
  const search = Effect.fn("TeacherLlm.search")(function*(input: RoleInput, slots: ReadonlyArray<PlanNode>, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, slots: slots.length })
    return yield* consult("search", searcherMessage(input, slots, view), readSearch(slots), input, tally, scripted.search(input, slots))
  })
  const execute = Effect.fn("TeacherLlm.execute")(function*(input: RoleInput, ready: ReadonlyArray<BoundNode>, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round, ready: ready.length })
    return yield* consult("execute", executorMessage(input, ready, view), readExecute(ready, input.board.done), input, tally, scripted.execute(input, ready))
  })
  const answer = Effect.fn("TeacherLlm.answer")(function*(input: RoleInput, tally: Tally) {
    yield* Effect.annotateCurrentSpan({ round: input.context.round })
    return yield* consult("answer", answererMessage(input, view), readAnswer, input, tally, scripted.answer(input))
  })

  const act = Effect.fn("TeacherLlm.act")(function*(context: PolicyContext) {
    const task = context.task
    if (task === undefined) return yield* new PolicyError({ message: `${name} needs the task's gold DAG (privileged context)` })
    yield* Effect.annotateCurrentSpan({ round: context.round, paradigm: context.paradigm, task: task.id })
    const tally: Tally = { promptTokens: 0, completionTokens: 0 }
    const roles: Teacher.Roles<PolicyError> = {
      follows: "emitted",
      plan: (input) => plan(input, tally),
      search: (input, slots) => search(input, slots, tally),
      execute: (input, ready) => execute(input, ready, tally),
      answer: (input) => answer(input, tally)
    }
    const turn = yield* Teacher.nextTurn(context, task, roles, teacher)
    yield* Ref.update(stats, (s) => ({ ...s, turns: s.turns + 1 }))
    return Teacher.toOutput(turn, { promptTokens: tally.promptTokens, completionTokens: tally.completionTokens })
  })

  return {
    policy: Policy.of({ name, privileged: true, act }),
    stats: TeacherLlmStats.of({ snapshot: Ref.get(stats) })
  }
})

/** The LLM teacher (Policy) and its counters (TeacherLlmStats) over an OpenAiClient and a ToolLibrary provided elsewhere. */
export const layer = (options: TeacherLlmOptions = {}): Layer.Layer<Policy | TeacherLlmStats, ConfigError, OpenAiClient | ToolLibrary> =>
  Layer.effectContext(
    Effect.map(make(options), ({ policy, stats }) => Context.make(Policy, policy).pipe(Context.add(TeacherLlmStats, stats)))
  )

/** The LLM teacher with its client configured from the environment (`PARAAGENT_*`) and flag overrides. */
export const layerConfig = (
  options: TeacherLlmOptions = {},
  overrides: Partial<OpenAiConfigInput> = {}
): Layer.Layer<Policy | TeacherLlmStats, ConfigError, ToolLibrary> =>
  Layer.unwrap(
    Effect.map(configFromEnv(overrides), (config) =>
      layer({ ...options, ...(config.apiKey === undefined ? {} : { apiKey: config.apiKey }) }).pipe(Layer.provide(clientLayer(config))))
  )
