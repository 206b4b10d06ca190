/**
 * The OpenAI-compatible chat-completions wire format ParaAgent uses (request and response bodies as schemas), and the
 * client's request, result and error types.
 */
import { Schema } from "effect"
import * as OpenAiFormat from "../../src/protocol/OpenAiFormat.ts"

// ---------------------------------------------------------------------------------------------------------------
// Wire format (the subset of the chat-completions API that ParaAgent uses)
// ---------------------------------------------------------------------------------------------------------------

// The message and tool shapes are the protocol module's (src/protocol/OpenAiFormat.ts), so there is one definition of them.

/** A function call the assistant made, as the API carries it (`arguments` is a JSON string). */
export const WireToolCall = OpenAiFormat.ToolCallMessage
/** A function call the assistant made, as the API carries it. */
export type WireToolCall = OpenAiFormat.ToolCallMessage

/** One message of a chat request. */
export const WireMessage = OpenAiFormat.ChatMessage
/** One message of a chat request. */
export type WireMessage = OpenAiFormat.ChatMessage

/** A function the model may call (`parameters` is a JSON Schema object). */
export const WireToolDefinition = OpenAiFormat.OpenAiTool
/** A function the model may call. */
export type WireToolDefinition = OpenAiFormat.OpenAiTool

/** Which tool the model must (or may) call. */
export const WireToolChoice = Schema.Union([
  Schema.Literals(["auto", "none", "required"]),
  Schema.Struct({ type: Schema.Literal("function"), function: Schema.Struct({ name: Schema.String }) })
])
/** Which tool the model must (or may) call. */
export type WireToolChoice = typeof WireToolChoice.Type

/** Constrained output: any JSON object, or JSON matching a schema (vLLM, SGLang, OpenAI, llama.cpp support both). */
export const WireResponseFormat = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text") }),
  Schema.Struct({ type: Schema.Literal("json_object") }),
  Schema.Struct({
    type: Schema.Literal("json_schema"),
    json_schema: Schema.Struct({ name: Schema.String, schema: Schema.JsonObject, strict: Schema.optionalKey(Schema.Boolean) })
  })
])
/** Constrained output. */
export type WireResponseFormat = typeof WireResponseFormat.Type

const Temperature = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 2 }))
const PositiveInt = Schema.Number.check(Schema.isInt(), Schema.isGreaterThan(0))

/** The body of `POST {baseUrl}/chat/completions`, checked before it is sent. */
export const ChatCompletionBody = Schema.Struct({
  model: Schema.NonEmptyString,
  messages: Schema.Array(WireMessage).check(Schema.isMinLength(1)),
  temperature: Temperature,
  max_tokens: PositiveInt,
  tools: Schema.optionalKey(Schema.Array(WireToolDefinition)),
  tool_choice: Schema.optionalKey(WireToolChoice),
  parallel_tool_calls: Schema.optionalKey(Schema.Boolean),
  logprobs: Schema.optionalKey(Schema.Boolean),
  top_logprobs: Schema.optionalKey(Schema.Number.check(Schema.isInt(), Schema.isBetween({ minimum: 0, maximum: 20 }))),
  response_format: Schema.optionalKey(WireResponseFormat),
  seed: Schema.optionalKey(Schema.Number.check(Schema.isInt())),
  stop: Schema.optionalKey(Schema.Array(Schema.String))
})
/** The body of a chat-completions request. */
export type ChatCompletionBody = typeof ChatCompletionBody.Type

/** A tool call in a response; some servers (older Ollama) send `arguments` as an object rather than a string. */
const ResponseToolCall = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  type: Schema.optionalKey(Schema.String),
  function: Schema.Struct({
    name: Schema.String,
    arguments: Schema.Union([Schema.String, Schema.JsonObject])
  })
})

const TokenLogprob = Schema.Struct({ token: Schema.String, logprob: Schema.Number })

/** The body of a chat-completions response (unknown fields are ignored). */
export const ChatCompletionResponse = Schema.Struct({
  id: Schema.optionalKey(Schema.String),
  model: Schema.optionalKey(Schema.String),
  choices: Schema.Array(
    Schema.Struct({
      message: Schema.Struct({
        role: Schema.optionalKey(Schema.String),
        content: Schema.optionalKey(Schema.NullOr(Schema.String)),
        /** Reasoning text that vLLM / SGLang / DeepSeek-style servers keep apart from the content. */
        reasoning_content: Schema.optionalKey(Schema.NullOr(Schema.String)),
        tool_calls: Schema.optionalKey(Schema.NullOr(Schema.Array(ResponseToolCall)))
      }),
      finish_reason: Schema.optionalKey(Schema.NullOr(Schema.String)),
      logprobs: Schema.optionalKey(Schema.NullOr(Schema.Struct({
        content: Schema.optionalKey(Schema.NullOr(Schema.Array(TokenLogprob)))
      })))
    })
  ).check(Schema.isMinLength(1)),
  usage: Schema.optionalKey(Schema.NullOr(Schema.Struct({
    prompt_tokens: Schema.Number,
    completion_tokens: Schema.Number
  })))
})
/** The body of a chat-completions response. */
export type ChatCompletionResponse = typeof ChatCompletionResponse.Type

export const decodeResponse = Schema.decodeUnknownEffect(Schema.fromJsonString(ChatCompletionResponse))
export const checkBody = Schema.decodeUnknownEffect(ChatCompletionBody)

// ---------------------------------------------------------------------------------------------------------------
// Requests, results, errors
// ---------------------------------------------------------------------------------------------------------------

/** One chat request; unset fields take the client's defaults (temperature 0.7, max_tokens 2048: spec Table 6). */
export interface ChatRequest {
  readonly messages: ReadonlyArray<WireMessage>
  /** Overrides the configured model for this request. */
  readonly model?: string
  readonly temperature?: number
  readonly maxTokens?: number
  readonly tools?: ReadonlyArray<WireToolDefinition>
  readonly toolChoice?: WireToolChoice
  readonly parallelToolCalls?: boolean
  /** Ask for the sampled tokens' log-probabilities. */
  readonly logprobs?: boolean
  /** How many alternatives per token to return with `logprobs` (0–20). */
  readonly topLogprobs?: number
  readonly responseFormat?: WireResponseFormat
  readonly seed?: number
  readonly stop?: ReadonlyArray<string>
}

/** A function call the model made, with `arguments` as a JSON string. */
export interface ToolCallOut {
  readonly id: string
  readonly name: string
  readonly arguments: string
}

/** Token usage reported by the server. */
export interface TokenUsage {
  readonly promptTokens: number
  readonly completionTokens: number
}

/** What one chat request produced. */
export interface ChatResult {
  /** The model that answered (as the server names it, else the requested one). */
  readonly model: string
  /** The assistant's text; empty when the server sent `null` (e.g. tool calls only). */
  readonly content: string
  /** Separate reasoning text, when the server returns one. */
  readonly reasoning: string | undefined
  readonly toolCalls: ReadonlyArray<ToolCallOut>
  readonly finishReason: string | undefined
  /** Absent when the server reported no usage. */
  readonly usage: TokenUsage | undefined
  /** Per-token log-probabilities of the sampled tokens, when requested and returned. */
  readonly tokenLogprobs: ReadonlyArray<number> | undefined
  /** How many HTTP attempts it took (1 = no retry). */
  readonly attempts: number
  /** Wall time of the whole request including retries, ms. */
  readonly latencyMs: number
}

/** Why a chat request failed after its retries. */
export const OpenAiErrorKind = Schema.Literals(["request", "transport", "timeout", "status", "decode", "too_large"])
/** Why a chat request failed: bad request body, network, timeout, non-2xx status, malformed or over-cap response body. */
export type OpenAiErrorKind = typeof OpenAiErrorKind.Type

/** A chat request that failed; the message never contains the API key. */
export class OpenAiError extends Schema.TaggedError<OpenAiError>()("OpenAiError", {
  kind: OpenAiErrorKind,
  message: Schema.String,
  /** HTTP status, for `status` errors. */
  status: Schema.optionalKey(Schema.Number),
  /** HTTP attempts made (0 when the request was invalid and nothing was sent). */
  attempts: Schema.Number,
  /** The wait the server asked for (`Retry-After`), ms, when it was beyond what the client waits (not retried). */
  retryAfterMs: Schema.optionalKey(Schema.Number),
  /** The cap that was exceeded (`maxResponseBytes`), for `too_large` errors. */
  limitBytes: Schema.optionalKey(Schema.Number)
}) {}
