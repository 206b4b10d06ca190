/**
 * The Policy service over an OpenAI-compatible chat endpoint, in two modes: the ParaAct text protocol (the model
 * writes tags) or native tool calling (searches and calls as function calls). Records token usage and logprobs.
 */
import { Effect, Layer, Result, Schema } from "effect"
import type { ToolSpec } from "../src/domain/Tool.ts"
import type { Paradigm, Step } from "../src/domain/Trajectory.ts"
import * as History from "../src/math/History.ts"
import { hashParts } from "../src/math/Random.ts"
import * as OpenAiFormat from "../src/protocol/OpenAiFormat.ts"
import * as ParaAct from "../src/protocol/ParaAct.ts"
import * as Paradigms from "../src/protocol/Paradigm.ts"
import { Policy, type PolicyContext, PolicyError, type PolicyOutput } from "../src/agent/Policy.ts"
import {
  type ChatResult,
  OpenAiClient,
  type OpenAiConfigInput,
  layerConfig as clientLayerConfig,
  type WireMessage,
  type WireToolDefinition
} from "./OpenAiClient.ts"

/** How the model expresses a turn. */
export type Mode = OpenAiFormat.Mode

/** Options of the OpenAI policy. */
export interface PolicyOpenAiOptions {
  /** `text` (default): the model writes ParaAct tags. `native`: searches and calls are function calls. */
  readonly mode?: Mode
  /** Ask for token logprobs (needed for RL export; vLLM, SGLang, OpenAI and llama.cpp return them). Default false. */
  readonly logprobs?: boolean
  /** Sampling temperature and completion budget; default the client's (0.7 and 2048, spec Table 6). */
  readonly temperature?: number
  readonly maxTokens?: number
  /** Send a per-round seed derived from the rollout's seed, so group rollouts differ and reruns repeat. Default true. */
  readonly seeded?: boolean
  /** Read native tool calls leniently (see `ParaAct.ParseOptions.lenient`). Default false. */
  readonly lenient?: boolean
  /** Observation truncation budgets, in characters per rendered payload. */
  readonly budgets?: Partial<HistoryBudgets>
  /** A label for reports; default `openai:<model>`. */
  readonly name?: string
}

/** How much of each observation the model sees again. */
export interface HistoryBudgets {
  /** Per payload of the most recent round (what the model must act on now). */
  readonly latest: number
  /** Per payload of earlier rounds: values the agent still needs are reachable through `$ref` without reading them. */
  readonly older: number
  /** Per tool description in the tool documentation. */
  readonly description: number
}

/** The default budgets: 4,000 characters for the latest round's payloads, 800 for older ones, 600 per description. */
export const defaultBudgets: HistoryBudgets = { latest: 4_000, older: 800, description: 600 }

/** What each paradigm asks of the model, appended to the protocol instructions. */
export const paradigmGuidance: Readonly<Record<Paradigm, string>> = {
  ParaAct:
    "Act in parallel. When exploring, search for every capability slot of your plan in the same turn. When executing, " +
    "call every tool whose inputs are ready in the same turn; only calls that need another call's output wait for it. " +
    "Go back to searching whenever an observation shows your plan is wrong.",
  ReAct:
    "Take exactly one action per round: a single search query or a single tool call, then wait for its observation " +
    "before deciding the next one. Extra searches or calls in a turn are ignored.",
  ExploreThenExecute:
    "Work in two phases. First explore: search until you have found a tool for every capability slot of your plan. " +
    "Your first tool call starts the execution phase, and from then on you cannot search again: plan your searches completely first.",
  DFSDT:
    "Follow one path at a time, taking one action per round. When a call fails or leads nowhere, give it up and try " +
    "the next most promising alternative instead of repeating it."
}

/** A text cut to `limit` characters, saying how many more there were. */
export const clip = (text: string, limit: number): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}... [${text.length - limit} more characters]`

/** One tool's documentation for a prompt: name, description (clipped), parameter schema (without `x-` extensions). */
export const toolDoc = (spec: ToolSpec, descriptionBudget: number): string =>
  `### ${spec.name}\n${clip(spec.description, descriptionBudget)}\nparameters: ${JSON.stringify(OpenAiFormat.stripExtensions(spec.parameters))}`

/** The documentation of the tools the agent has seen, for the text-protocol system prompt. */
export const toolDocs = (tools: ReadonlyArray<ToolSpec>, budgets: HistoryBudgets = defaultBudgets): string =>
  tools.length === 0
    ? "## Tools you have found\nNone yet: search for the capabilities the request needs."
    : `## Tools you have found\n${tools.map((t) => toolDoc(t, budgets.description)).join("\n\n")}`

/** The system prompt: the protocol, the paradigm's guidance, the round limit and (text mode) the tools' documentation. */
export const systemPrompt = (context: PolicyContext, mode: Mode, budgets: HistoryBudgets = defaultBudgets): string =>
  [
    mode === "text" ? ParaAct.instructions : OpenAiFormat.nativeInstructions,
    `## How to act (${context.paradigm})\n${paradigmGuidance[context.paradigm]}`,
    `You have at most ${context.maxRounds} rounds; give your final answer by the last one.`,
    ...(mode === "text" ? [toolDocs(context.tools, budgets)] : [])
  ].join("\n\n")

const lastRoundNote = (mode: Mode): string =>
  mode === "text"
    ? "This is your last round: write your final answer now, in <answer>...</answer>."
    : "This is your last round: give your final answer now, in <answer>...</answer>, with no tool calls."

/** DFSDT: the turns already tried (and given up) from this point, so the model tries something else. */
export const abandonedNote = (abandoned: ReadonlyArray<Step>, budgets: HistoryBudgets = defaultBudgets): string =>
  `These turns were already tried from this point and abandoned (they failed or led nowhere). Do something different:\n${
    abandoned.map((step, i) => `[${i + 1}]\n${clip(step.raw, budgets.older)}`).join("\n")
  }`

/**
 * The conversation for one round: the system prompt, the request, then every earlier step as the messages of the
 * mode (observations cut to the latest / older budgets), then (DFSDT) the abandoned alternatives, then a note on the
 * last round.
 */
export const buildMessages = (context: PolicyContext, mode: Mode, budgets: HistoryBudgets = defaultBudgets): ReadonlyArray<WireMessage> => {
  const history = context.history.flatMap((step, i) =>
    OpenAiFormat.stepToMessages(step, mode, {
      maxPayloadChars: i === context.history.length - 1 ? budgets.latest : budgets.older
    })
  )
  const abandoned = context.abandoned ?? []
  const retry = abandoned.length === 0 ? [] : [{ role: "user" as const, content: abandonedNote(abandoned, budgets) }]
  const last = context.round >= context.maxRounds - 1 ? [{ role: "user" as const, content: lastRoundNote(mode) }] : []
  return [
    { role: "system", content: systemPrompt(context, mode, budgets) },
    { role: "user", content: context.request },
    ...history,
    ...retry,
    ...last
  ]
}

/** The `tools` of a native-mode request: `search_tools` and the tools the agent has seen. */
export const nativeTools = (tools: ReadonlyArray<ToolSpec>): ReadonlyArray<WireToolDefinition> => [
  OpenAiFormat.searchToolDefinition,
  ...tools.filter((t) => t.name !== OpenAiFormat.searchToolName).map(OpenAiFormat.toolDefinition)
]

const decodeJson = Schema.decodeUnknownOption(Schema.fromJsonString(Schema.Json))

/**
 * A native assistant message that could not be read as a turn, written in the text protocol as faithfully as it
 * goes (content, then its searches and calls with their raw arguments), so the runtime's parser reports the problem.
 */
export const nativeAsText = (result: Pick<ChatResult, "content" | "toolCalls">): string => {
  const args = (raw: string) => {
    const parsed = decodeJson(raw)
    return parsed._tag === "Some" ? parsed.value : raw
  }
  const searches = result.toolCalls.filter((c) => c.name === OpenAiFormat.searchToolName).map((c) => args(c.arguments))
  const calls = result.toolCalls
    .filter((c) => c.name !== OpenAiFormat.searchToolName)
    .map((c) => ({ id: c.id, name: c.name, arguments: args(c.arguments) }))
  return [
    result.content.trim(),
    ...(searches.length > 0 ? [`<search>\n${JSON.stringify(searches)}\n</search>`] : []),
    ...(calls.length > 0 ? [`<call>\n${JSON.stringify(calls)}\n</call>`] : [])
  ].filter((block) => block.length > 0).join("\n")
}

/** Reads a chat result as the policy's output for the mode. */
export const toOutput = (result: ChatResult, mode: Mode, context: PolicyContext, lenient = false): PolicyOutput => {
  const usage = result.usage ?? { promptTokens: 0, completionTokens: 0 }
  const logprobs = result.tokenLogprobs === undefined
    ? {}
    : { tokenLogprobs: result.tokenLogprobs, logprob: result.tokenLogprobs.reduce((a, b) => a + b, 0) }
  if (mode === "text") return { text: result.content, usage, ...logprobs }
  const used = History.callIds(context.history)
  const message: OpenAiFormat.AssistantMessage = {
    role: "assistant",
    content: result.content.length === 0 ? null : result.content,
    ...(result.toolCalls.length === 0 ? {} : {
      tool_calls: result.toolCalls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.arguments } }))
    })
  }
  const turn = OpenAiFormat.messageToTurn(message, {
    lenient,
    usedCallIds: used,
    nextCallIndex: used.length + 1,
    ...(result.reasoning === undefined ? {} : { reasoning: result.reasoning })
  })
  return Result.isSuccess(turn)
    ? { text: ParaAct.printTurn(turn.success), turn: turn.success, usage, ...logprobs }
    : { text: nativeAsText(result), usage, ...logprobs }
}

/** The per-round sampling seed: a 31-bit hash of the rollout's seed and the round. */
export const roundSeed = (seed: number, round: number): number => hashParts(seed, "policy", round) & 0x7fffffff

/** Builds the policy over the OpenAiClient in context. */
export const make = Effect.fnUntraced(function*(options: PolicyOpenAiOptions = {}) {
  const client = yield* OpenAiClient
  const mode: Mode = options.mode ?? "text"
  const budgets: HistoryBudgets = { ...defaultBudgets, ...options.budgets }
  const name = options.name ?? `openai:${client.model}`

  const act = Effect.fn("PolicyOpenAi.act")(function*(context: PolicyContext) {
    yield* Effect.annotateCurrentSpan({ round: context.round, paradigm: context.paradigm, mode })
    const result = yield* client.chat({
      messages: buildMessages(context, mode, budgets),
      ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
      ...(options.logprobs === true ? { logprobs: true } : {}),
      ...(options.seeded === false ? {} : { seed: roundSeed(context.seed, context.round) }),
      ...(mode === "native"
        ? {
          tools: nativeTools(context.tools),
          toolChoice: "auto" as const,
          // a paradigm that runs one action per round (ReAct, DFSDT) asks for one tool call at a time
          ...(Paradigms.rules[context.paradigm].maxActions === 1 ? { parallelToolCalls: false } : {})
        }
        : {})
    }).pipe(
      Effect.mapError((error) =>
        new PolicyError({ message: `${name}: ${error.message}`, ...(error.status === undefined ? {} : { status: error.status }) })
      )
    )
    return toOutput(result, mode, context, options.lenient === true)
  })

  return Policy.of({ name, privileged: false, act })
})

/** The policy over an OpenAiClient provided elsewhere. */
export const layer = (options: PolicyOpenAiOptions = {}): Layer.Layer<Policy, never, OpenAiClient> => Layer.effect(Policy, make(options))

/** The policy with its client configured from the environment (and flag overrides). */
export const layerConfig = (options: PolicyOpenAiOptions = {}, overrides: Partial<OpenAiConfigInput> = {}) =>
  layer(options).pipe(Layer.provide(clientLayerConfig(overrides)))
