/**
 * The Policy service over an OpenAI-compatible chat endpoint, in two modes: the ParaAct text protocol (the model
 * writes tags) or native tool calling (searches and calls as function calls). Records token usage and logprobs.
 */
import { Effect, Layer, Result, Schema } from "effect"
import * as History from "../../src/math/History.ts"
import { hashParts } from "../../src/math/Random.ts"
import * as OpenAiFormat from "../../src/protocol/OpenAiFormat.ts"
import * as ParaAct from "../../src/protocol/ParaAct.ts"
import * as Paradigms from "../../src/protocol/Paradigm.ts"
import { Policy, type PolicyContext, PolicyError, type PolicyOutput } from "../../src/agent/Policy.ts"
import { buildMessages, defaultBudgets, type HistoryBudgets, type Mode, nativeTools } from "../../src/agent/PolicyPrompt.ts"
import { type ChatResult, OpenAiClient, type OpenAiConfigInput, layerConfig as clientLayerConfig } from "./OpenAiClient.ts"

// the conversation the policy sends is built in src/agent/PolicyPrompt.ts (pure, so exporters write the same one)
export {
  abandonedNote,
  buildMessages,
  clip,
  defaultBudgets,
  type HistoryBudgets,
  type Mode,
  nativeTools,
  paradigmGuidance,
  systemPrompt,
  toolDoc,
  toolDocs
} from "../../src/agent/PolicyPrompt.ts"

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
    const messages = buildMessages(context, mode, budgets)
    const result = yield* client.chat({
      messages,
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
    const output = toOutput(result, mode, context, options.lenient === true)
    // with log-probs asked for (training), the exact prompt goes on the step too, so a trainer re-scores the same tokens
    return options.logprobs === true ? { ...output, prompt: JSON.stringify(messages) } : output
  })

  return Policy.of({ name, privileged: false, act })
})

/** The policy over an OpenAiClient provided elsewhere. */
export const layer = (options: PolicyOpenAiOptions = {}): Layer.Layer<Policy, never, OpenAiClient> => Layer.effect(Policy, make(options))

/** The policy with its client configured from the environment (and flag overrides). */
export const layerConfig = (options: PolicyOpenAiOptions = {}, overrides: Partial<OpenAiConfigInput> = {}) =>
  layer(options).pipe(Layer.provide(clientLayerConfig(overrides)))
