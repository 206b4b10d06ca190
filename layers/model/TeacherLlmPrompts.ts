/**
 * The LLM teacher's prompts: one system prompt and reply shape per role, and the user message each role is sent,
 * built from the board within character budgets (what does not fit is counted as omitted, never silently cut).
 */
import type { PlanNode } from "../../src/domain/Plan.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import type { Observation } from "../../src/domain/Call.ts"
import type { Step } from "../../src/domain/Trajectory.ts"
import { type PolicyContext } from "../../src/agent/Policy.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { BoundNode, RoleInput, RoleName } from "../../src/agent/Teacher.ts"
import type { Library } from "../../src/toolenv/ToolLibrary.ts"
import { clip, toolDoc } from "./PolicyOpenAi.ts"

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
