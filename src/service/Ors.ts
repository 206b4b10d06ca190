/**
 * The Open Reward Standard (ORS) face of ToolEnv, as data and pure functions: the ORS bodies, the environment's tools
 * (one round of the episode per tool call, `describe_tool` aside), how a tool call becomes a step request, how a step
 * becomes an ORS `ToolOutput` with `reward` and `finished` inline, task ids for reconnection, and the SSE framing of
 * tool results. The routes are in OrsRoutes.ts; the mapping is documented in docs/service.md.
 *
 * Checked against the ORS specification as published at openrewardstandard.io (pages specification/http-api,
 * specification/sse, specification/overview; the pages carry no version number) and its reference Python SDK,
 * openrewardstandard/python-sdk 0.1.0 (`ors/server.py`, `ors/types.py`, `ors/_reconnect.py`, `ors/client/*`) at
 * commit 34b9c21b298cc525179db3231fbafe6a9e54ccf7.
 */
import { Schema } from "effect"
import { oneLine } from "../domain/Errors.ts"
import { callId, toolName } from "../domain/Ids.ts"
import { JsonObject } from "../domain/Json.ts"
import type { Step, StepReward } from "../domain/Trajectory.ts"
import type { Turn } from "../domain/Turn.ts"
import * as OpenAiFormat from "../protocol/OpenAiFormat.ts"
import * as ParaAct from "../protocol/ParaAct.ts"
import type { Score, StepRequest, StepResponse } from "./Api.ts"
import { AnswerInput, CallsInput, DescribeInput, SearchInput } from "./McpEpisodes.ts"
import { inputJsonSchema } from "./McpTools.ts"

/** The one environment this server hosts, as ORS names it in paths (`/toolenv/tools`, `/toolenv/call`). */
export const envName = "toolenv"

/** An idle ORS session expires after this long (the specification's 15 minutes); `/ping` keeps it alive. */
export const idleTimeoutSeconds = 900

/** Tool results longer than this are sent as `chunk` events before the `end` event (the SDK's `CHUNK_SIZE`). */
export const chunkSize = 4096

// ---- bodies (ors/types.py) ----

/** `POST /create`: the task as a spec, or a split and an index of it; `env_name` and `secrets` as ORS has them. */
export const CreateRequest = Schema.Struct({
  env_name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  task_spec: Schema.optionalKey(Schema.NullOr(JsonObject)),
  split: Schema.optionalKey(Schema.NullOr(Schema.String)),
  index: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  secrets: Schema.optionalKey(Schema.NullOr(Schema.Record(Schema.String, Schema.String)))
})
/** `POST /create`. */
export type CreateRequest = typeof CreateRequest.Type

/** `POST /{env}/call`: a tool by name, its input, and the task id of an earlier attempt of the same call. */
export const ToolCallRequest = Schema.Struct({
  name: Schema.String,
  input: JsonObject,
  task_id: Schema.optionalKey(Schema.NullOr(Schema.String))
})
/** `POST /{env}/call`. */
export type ToolCallRequest = typeof ToolCallRequest.Type

/** `POST /{env}/tasks`, `/num_tasks`. */
export const SplitRequest = Schema.Struct({ split: Schema.String })

/** `POST /{env}/task`. */
export const TaskRequest = Schema.Struct({ split: Schema.String, index: Schema.Int })

/** `POST /{env}/task_range`: `[start, stop)` as Python slices read it (negative from the end). */
export const TaskRangeRequest = Schema.Struct({
  split: Schema.String,
  start: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  stop: Schema.optionalKey(Schema.NullOr(Schema.Int))
})

/** A text block of a prompt or a tool output. */
export interface TextBlock {
  readonly type: "text"
  readonly text: string
  readonly detail: JsonObject | null
}

/** ORS `ToolOutput`: the blocks the agent reads, metadata, the reward and whether the episode finished. */
export interface ToolOutput {
  readonly blocks: ReadonlyArray<TextBlock>
  readonly metadata: JsonObject | null
  readonly reward: number | null
  readonly finished: boolean
}

/** ORS `RunToolOutput`: what the `end` event of a call carries. */
export type RunToolOutput = { readonly ok: true; readonly output: ToolOutput } | { readonly ok: false; readonly error: string }

/** ORS `ToolSpec`. */
export interface OrsToolSpec {
  readonly name: string
  readonly description: string
  readonly input_schema: object | null
}

/** The splits the generated world's task catalogue has, each of its own type. */
export const splits = [
  { name: "train", type: "train" },
  { name: "validation", type: "validation" },
  { name: "test", type: "test" }
] as const

/** Tasks a split serves by index (the draw is capped at this many, as `POST /sessions` caps `index`). */
export const tasksPerSplit = 10_000

/** The most tasks one `task_range` returns (each is drawn on request). */
export const maxRange = 100

// ---- tools ----

/** `paraact`: one round as the model wrote it, in the ParaAct text protocol (docs/protocol.md). */
export const ParaActInput = Schema.Struct({
  text: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(65_536)).annotate({ description: "the whole turn: <think>, <plan>, then one of <search>, <call>, <answer>" })
})

/** The ORS tools, in the order they are listed; every one but `describe_tool` takes one round. */
export const tools = [
  {
    name: "search_tools",
    description:
      "One exploration round: retrieve tools for up to 16 capability queries at once (they run concurrently). Returns the hits per query (tool name, score, description). Only tools the episode has retrieved can be called.",
    input: SearchInput as Schema.Top
  },
  {
    name: "call_tools",
    description:
      "One parallel execution round: up to 32 calls of retrieved tools, executed concurrently. An argument may use an earlier round's output with {\"$ref\": \"<call id>.path.to.field\"}. Returns one result per call.",
    input: CallsInput as Schema.Top
  },
  {
    name: "answer",
    description: "The final round: answer the user's request. Ends the episode (finished); its reward adds R_ans, the judged answer reward.",
    input: AnswerInput as Schema.Top
  },
  {
    name: "paraact",
    description: "One round written in the ParaAct text protocol (<think>, <plan>, then <search>, <call> or <answer>), as a model trained on the protocol writes it.",
    input: ParaActInput as Schema.Top
  },
  {
    name: "describe_tool",
    description: "The documentation of a tool the episode has retrieved (parameters, response). Not a round: no reward.",
    input: DescribeInput as Schema.Top
  }
] as const

/** The name of an ORS tool. */
export type OrsToolName = typeof tools[number]["name"]

/** The tools as `GET /{env}/tools` lists them. */
export const toolSpecs = (): ReadonlyArray<OrsToolSpec> =>
  tools.map((t) => ({ name: t.name, description: t.description, input_schema: inputJsonSchema(t.input) }))

/** The round a tool call asks for, or the reason it cannot be one (a tool error, `ok: false`). */
export type RoundInput =
  | { readonly _tag: "round"; readonly request: StepRequest }
  | { readonly _tag: "describe"; readonly name: string }
  | { readonly _tag: "error"; readonly error: string }

const decodeInput = <A>(schema: Schema.Codec<A, unknown>, input: unknown): { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string } => {
  const result = Schema.decodeUnknownExit(schema)(input, { onExcessProperty: "error", errors: "all" })
  return result._tag === "Success"
    ? { ok: true, value: result.value }
    : { ok: false, error: `Tool input validation error: ${oneLine(String(result.cause))}` }
}

const thinkOf = (think: string | undefined): Partial<Pick<Turn, "think">> => (think !== undefined ? { think: think.trim() } : {})

/** A structured turn as a step request, with its canonical ParaAct text as the raw turn (what a trajectory records). */
const roundOf = (turn: Turn): RoundInput => ({ _tag: "round", request: { text: ParaAct.printTurn(turn), turn } })

/**
 * What an ORS tool call asks for. `usedCallIds` are the ids the episode's calls took so far: a call without an id gets
 * the first free `c<n>`, as the text protocol numbers them.
 */
export const roundInput = (name: string, input: unknown, usedCallIds: ReadonlyArray<string>): RoundInput => {
  switch (name) {
    case "search_tools": {
      const d = decodeInput(SearchInput as Schema.Codec<typeof SearchInput.Type, unknown>, input)
      if (!d.ok) return { _tag: "error", error: d.error }
      const taken = new Set(d.value.queries.flatMap((q) => (q.slot !== undefined ? [q.slot] : [])))
      let k = 0
      const fresh = (): string => {
        let slot: string
        do slot = `s${++k}`
        while (taken.has(slot))
        taken.add(slot)
        return slot
      }
      return roundOf({ ...thinkOf(d.value.think), searches: d.value.queries.map((q) => ({ slot: q.slot ?? fresh(), query: q.query })), calls: [] })
    }
    case "call_tools": {
      const d = decodeInput(CallsInput as Schema.Codec<typeof CallsInput.Type, unknown>, input)
      if (!d.ok) return { _tag: "error", error: d.error }
      const taken = new Set([...usedCallIds, ...d.value.calls.flatMap((c) => (c.id !== undefined ? [c.id] : []))])
      let k = 0
      const fresh = (): string => {
        let id: string
        do id = `c${++k}`
        while (taken.has(id))
        taken.add(id)
        return id
      }
      return roundOf({
        ...thinkOf(d.value.think),
        ...(d.value.plan !== undefined ? { plan: d.value.plan } : {}),
        searches: [],
        calls: d.value.calls.map((c) => ({ id: callId(c.id ?? fresh()), tool: toolName(c.tool), arguments: c.arguments ?? {} }))
      })
    }
    case "answer": {
      const d = decodeInput(AnswerInput as Schema.Codec<typeof AnswerInput.Type, unknown>, input)
      if (!d.ok) return { _tag: "error", error: d.error }
      return roundOf({ ...thinkOf(d.value.think), searches: [], calls: [], answer: d.value.answer.trim() })
    }
    case "paraact": {
      const d = decodeInput(ParaActInput as Schema.Codec<typeof ParaActInput.Type, unknown>, input)
      return d.ok ? { _tag: "round", request: { text: d.value.text } } : { _tag: "error", error: d.error }
    }
    case "describe_tool": {
      const d = decodeInput(DescribeInput as Schema.Codec<typeof DescribeInput.Type, unknown>, input)
      return d.ok ? { _tag: "describe", name: d.value.name } : { _tag: "error", error: d.error }
    }
    default:
      return { _tag: "error", error: `${JSON.stringify(name)} is not a valid tool (tools: ${tools.map((t) => t.name).join(", ")})` }
  }
}

/** The observation block of a step, as the text protocol shows it to a model (docs/protocol.md). */
export const observationText = (step: Step): string =>
  OpenAiFormat.renderObservation(step) ?? (step.turn?.answer !== undefined ? "<observation>\nanswered\n</observation>" : "<observation>\n</observation>")

/**
 * A step as an ORS tool output. `reward` is the step's r_step; on the round that ends the episode it is r_step + R_ans
 * (the judged answer reward), so the sum of an episode's rewards is Σ r_step + R_ans. `metadata` keeps each part:
 * the step's rewards (`stepReward`), and at the end the whole score (`score`, as `POST /sessions/{id}/score` answers
 * it) or why scoring failed (`scoreError`).
 */
export const toolOutput = (result: StepResponse, score: Score | undefined, scoreError: string | undefined): ToolOutput => {
  const reward: StepReward = result.reward
  const total = result.done && score !== undefined ? reward.rStep + score.answer.rAns : reward.rStep
  const metadata = {
    sessionId: result.sessionId,
    round: result.step.index,
    stepReward: reward,
    step: result.step,
    ...(result.next !== undefined ? { next: result.next } : {}),
    ...(result.stop !== undefined ? { stop: result.stop } : {}),
    ...(score !== undefined ? { score } : {}),
    ...(scoreError !== undefined ? { scoreError } : {})
  }
  return {
    blocks: [{ type: "text", text: observationText(result.step), detail: null }],
    metadata: JSON.parse(JSON.stringify(metadata)) as JsonObject,
    reward: total,
    finished: result.done
  }
}

/** A text output that takes no round (`describe_tool`): no reward. */
export const textOutput = (text: string, metadata: JsonObject | null = null): ToolOutput => ({
  blocks: [{ type: "text", text, detail: null }],
  metadata,
  reward: null,
  finished: false
})

/** The task id of a round: the session and the round index, so a reconnect on any replica finds it in the log. */
export const taskIdOf = (sessionId: string, round: number): string => `${round}@${sessionId}`

/** The round a task id names, when it names one of this session. */
export const roundOfTaskId = (taskId: string, sessionId: string): number | undefined => {
  const m = /^(\d{1,6})@(.+)$/.exec(taskId)
  return m !== null && m[2] === sessionId ? Number(m[1]) : undefined
}

/** One SSE event (`data` split over lines as the format requires). */
export const sseEvent = (event: string, data: string): string =>
  `event: ${event}\n${data.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join("\n")}\n\n`

/** A tool result as ORS sends it: `chunk` events of at most {@link chunkSize} characters, then `end` with the rest. */
export const resultEvents = (json: string): string => {
  if (json.length <= chunkSize) return sseEvent("end", json)
  const out: Array<string> = []
  for (let i = 0; i < json.length; i += chunkSize) out.push(sseEvent(i + chunkSize >= json.length ? "end" : "chunk", json.slice(i, i + chunkSize)))
  return out.join("")
}

/** The prompt of an episode: how the environment works, then the user's request. */
export const promptBlocks = (info: { readonly request: string; readonly taskId: string; readonly paradigm: string; readonly next?: { readonly maxRounds: number } | undefined }): ReadonlyArray<TextBlock> => [
  {
    type: "text",
    text: [
      "You act in ToolEnv, an open world of tools, one round per tool call: search_tools retrieves tools (only retrieved tools can be called),",
      "call_tools runs independent calls of retrieved tools in parallel, answer ends the episode with your final answer;",
      "paraact takes a whole round in the ParaAct text protocol instead. A call's argument may use an earlier call's output with",
      `{"$ref": "<call id>.path.to.field"}. Each round's output carries its reward; the episode ends at the answer or after ${info.next?.maxRounds ?? "T_max"} rounds.`
    ].join(" "),
    detail: { kind: "instructions", paradigm: info.paradigm }
  },
  { type: "text", text: info.request, detail: { kind: "request", taskId: info.taskId } }
]
