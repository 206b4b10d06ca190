/**
 * A client for OpenAI-compatible chat completions (vLLM, SGLang, Ollama, llama.cpp server, OpenAI) over `effect/http`:
 * schema-checked request and response bodies, a timeout on the whole request (attempts and the waits between them),
 * retries as a `Schedule` (jittered exponential backoff that honours `Retry-After` up to a cap; beyond it the request
 * fails at once), URL credentials sent as Basic auth, the key, URL credentials and the base URL's query values
 * scrubbed from every message and every model output before anything is cut, and a cap on the bytes read from every
 * response (after fetch's gzip/deflate/br decoding, so a decompression bomb is bounded too).
 */
import { Clock, Config, Context, Duration, Effect, Layer, Option, Redacted, Ref, Schedule, Schema, Stream } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import type { HttpClientError, HttpClientResponse } from "effect/http"
import { ConfigError } from "../../src/domain/Errors.ts"
import * as Telemetry from "../../src/io/Telemetry.ts"
import * as OpenAiFormat from "../../src/protocol/OpenAiFormat.ts"

// ---------------------------------------------------------------------------------------------------------------
// Wire format (the subset of the chat-completions API that ParaAgent uses)
// ---------------------------------------------------------------------------------------------------------------

// The message and tool shapes are the protocol module's (src/OpenAiFormat.ts), so there is one definition of them.

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

const decodeResponse = Schema.decodeUnknownEffect(Schema.fromJsonString(ChatCompletionResponse))
const checkBody = Schema.decodeUnknownEffect(ChatCompletionBody)

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

// ---------------------------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------------------------

/** Everything the client needs to reach an endpoint. */
export interface OpenAiConfig {
  /**
   * The API root including its version segment, e.g. `http://127.0.0.1:8000/v1`; `/chat/completions` is appended to
   * its path (a query, `?api-version=…&api-key=…`, stays a query). Never holds credentials: a `user:password@` given in
   * the URL is moved to {@link OpenAiConfig.urlCredentials}. Its query values count as secrets in every message.
   */
  readonly baseUrl: string
  readonly model: string
  /** Sent as `Authorization: Bearer …` when set; local servers usually need none. */
  readonly apiKey: Redacted.Redacted | undefined
  /** The base URL's userinfo, sent as `Authorization: Basic …` when no API key is set (fetch refuses URLs holding it). */
  readonly urlCredentials: UrlCredentials | undefined
  /** The whole request — every attempt and every wait between them — ms (`--timeout-ms`). */
  readonly timeoutMs: number
  /** One HTTP attempt (connect + generation + body), ms; at most `timeoutMs`. */
  readonly attemptTimeoutMs: number
  /** Retries after the first attempt, on transport errors, timeouts, 408/409/429 and 5xx (never 400/401/403/404). */
  readonly maxRetries: number
  /** Backoff before retry n (1-based) is `min(backoffMaxMs, backoffBaseMs·2^(n-1))`, jittered to 80–120 % (Schedule.jittered). */
  readonly backoffBaseMs: number
  readonly backoffMaxMs: number
  /** A server's `Retry-After` is obeyed up to this many ms; a longer one fails the request at once (never a long sleep). */
  readonly maxRetryAfterMs: number
  /** The most bytes read from one response body (after content decoding); more is a `too_large` error. */
  readonly maxResponseBytes: number
  /** Defaults for requests that set none (spec Table 6). */
  readonly temperature: number
  readonly maxTokens: number
}

/** The defaults of every field but `baseUrl`, `model` and `apiKey`. */
export const defaults = {
  timeoutMs: 120_000,
  maxRetries: 3,
  backoffBaseMs: 500,
  backoffMaxMs: 20_000,
  maxRetryAfterMs: 60_000,
  maxResponseBytes: 16 * 1024 * 1024,
  temperature: 0.7,
  maxTokens: 2048
} as const

/** Configuration values before validation (from the environment, flags or code). */
export interface OpenAiConfigInput {
  readonly baseUrl: string
  readonly model: string
  readonly apiKey?: Redacted.Redacted | string | undefined
  /**
   * Credentials already taken out of `baseUrl` (a validated config passed on): kept when `baseUrl` holds none, so a
   * configuration validated twice still sends them.
   */
  readonly urlCredentials?: UrlCredentials | undefined
  readonly timeoutMs?: number
  readonly attemptTimeoutMs?: number
  readonly maxRetries?: number
  readonly backoffBaseMs?: number
  readonly backoffMaxMs?: number
  readonly maxRetryAfterMs?: number
  readonly maxResponseBytes?: number
  readonly temperature?: number
  readonly maxTokens?: number
}

/** A user name and password taken out of a base URL (`http://user:password@host/v1`). */
export interface UrlCredentials {
  readonly username: string
  readonly password: Redacted.Redacted
}

const checkNumber = (
  field: string,
  value: number,
  ok: (n: number) => boolean,
  expected: string
): Effect.Effect<number, ConfigError> =>
  ok(value) ? Effect.succeed(value) : Effect.fail(new ConfigError({ field, value: String(value), message: `${field} must be ${expected}` }))

const isNonNegativeInt = (n: number): boolean => Number.isInteger(n) && n >= 0
const isPositive = (n: number): boolean => Number.isFinite(n) && n > 0
const isNonNegative = (n: number): boolean => Number.isFinite(n) && n >= 0

/** Checks a sampling temperature (0 to 2); a bad value is a ConfigError on the field `temperature`. */
export const checkTemperature = (value: number): Effect.Effect<number, ConfigError> =>
  checkNumber("temperature", value, (n) => n >= 0 && n <= 2, "between 0 and 2")

/** Checks a completion budget (a positive integer); a bad value is a ConfigError on the field `maxTokens`. */
export const checkMaxTokens = (value: number): Effect.Effect<number, ConfigError> =>
  checkNumber("maxTokens", value, (n) => Number.isInteger(n) && n > 0, "a positive integer")

/** Validates a configuration: an http(s) base URL, a model name, positive timeouts, sane sampling defaults. */
export const validateConfig = Effect.fn("OpenAiClient.validateConfig")(function*(input: OpenAiConfigInput) {
  const url = URL.canParse(input.baseUrl) ? new URL(input.baseUrl) : undefined
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
    return yield* new ConfigError({ field: "baseUrl", value: redactUrl(input.baseUrl), message: "baseUrl must be an http(s) URL such as http://127.0.0.1:8000/v1" })
  }
  const hadUserinfo = url.username !== "" || url.password !== ""
  const urlCredentials: UrlCredentials | undefined = hadUserinfo
    ? { username: decodeURIComponent(url.username), password: Redacted.make(decodeURIComponent(url.password)) }
    : input.urlCredentials
  url.username = ""
  url.password = ""
  if (input.model.trim().length === 0) {
    return yield* new ConfigError({ field: "model", value: input.model, message: "model must not be empty" })
  }
  const apiKey = input.apiKey === undefined
    ? undefined
    : Redacted.isRedacted(input.apiKey)
    ? input.apiKey
    : input.apiKey.length === 0
    ? undefined
    : Redacted.make(input.apiKey)
  const timeoutMs = yield* checkNumber("timeoutMs", input.timeoutMs ?? defaults.timeoutMs, isPositive, "a positive number of ms")
  const config: OpenAiConfig = {
    // Only a URL that held userinfo is re-serialised, so every other base URL is kept byte for byte.
    baseUrl: (hadUserinfo ? url.href : input.baseUrl).replace(/\/+$/, ""),
    model: input.model.trim(),
    apiKey,
    urlCredentials,
    timeoutMs,
    attemptTimeoutMs: Math.min(timeoutMs, yield* checkNumber("attemptTimeoutMs", input.attemptTimeoutMs ?? timeoutMs, isPositive, "a positive number of ms")),
    maxRetries: yield* checkNumber("maxRetries", input.maxRetries ?? defaults.maxRetries, isNonNegativeInt, "a non-negative integer"),
    backoffBaseMs: yield* checkNumber("backoffBaseMs", input.backoffBaseMs ?? defaults.backoffBaseMs, isNonNegative, "a non-negative number of ms"),
    backoffMaxMs: yield* checkNumber("backoffMaxMs", input.backoffMaxMs ?? defaults.backoffMaxMs, isNonNegative, "a non-negative number of ms"),
    maxRetryAfterMs: yield* checkNumber("maxRetryAfterMs", input.maxRetryAfterMs ?? defaults.maxRetryAfterMs, isNonNegative, "a non-negative number of ms"),
    maxResponseBytes: yield* checkNumber("maxResponseBytes", input.maxResponseBytes ?? defaults.maxResponseBytes, (n) => Number.isInteger(n) && n > 0, "a positive integer number of bytes"),
    temperature: yield* checkTemperature(input.temperature ?? defaults.temperature),
    maxTokens: yield* checkMaxTokens(input.maxTokens ?? defaults.maxTokens)
  }
  return config
})

/**
 * The configuration from the environment: `PARAAGENT_BASE_URL`, `PARAAGENT_MODEL` (required),
 * `PARAAGENT_API_KEY` (else `OPENAI_API_KEY`), `PARAAGENT_TIMEOUT_MS`, `PARAAGENT_MAX_RETRIES`,
 * `PARAAGENT_TEMPERATURE`, `PARAAGENT_MAX_TOKENS`. Fields in `overrides` (e.g. from CLI flags) win.
 */
export const configFromEnv = (overrides: Partial<OpenAiConfigInput> = {}) =>
  Effect.gen(function*() {
    const env = yield* Config.all({
      baseUrl: Config.option(Config.String("PARAAGENT_BASE_URL")),
      model: Config.option(Config.String("PARAAGENT_MODEL")),
      apiKey: Config.option(Config.Redacted("PARAAGENT_API_KEY").pipe(Config.orElse(() => Config.Redacted("OPENAI_API_KEY")))),
      timeoutMs: Config.option(Config.Number("PARAAGENT_TIMEOUT_MS")),
      maxRetries: Config.option(Config.Int("PARAAGENT_MAX_RETRIES")),
      temperature: Config.option(Config.Number("PARAAGENT_TEMPERATURE")),
      maxTokens: Config.option(Config.Int("PARAAGENT_MAX_TOKENS"))
    }).pipe(
      Effect.mapError((error) => new ConfigError({ field: "environment", value: "", message: `bad PARAAGENT_* variable: ${error.message}` }))
    )
    const baseUrl = overrides.baseUrl ?? Option.getOrUndefined(env.baseUrl)
    const model = overrides.model ?? Option.getOrUndefined(env.model)
    if (baseUrl === undefined) {
      return yield* new ConfigError({ field: "PARAAGENT_BASE_URL", value: "", message: "no endpoint: set PARAAGENT_BASE_URL (or --base-url), e.g. http://127.0.0.1:8000/v1" })
    }
    if (model === undefined) {
      return yield* new ConfigError({ field: "PARAAGENT_MODEL", value: "", message: "no model: set PARAAGENT_MODEL (or --model)" })
    }
    const pick = <A>(override: A | undefined, fromEnv: Option.Option<A>): { readonly value?: A } => {
      const value = override ?? Option.getOrUndefined(fromEnv)
      return value === undefined ? {} : { value }
    }
    const input: OpenAiConfigInput = {
      ...overrides,
      baseUrl,
      model,
      ...withKey("apiKey", pick(overrides.apiKey, env.apiKey)),
      ...withKey("timeoutMs", pick(overrides.timeoutMs, env.timeoutMs)),
      ...withKey("maxRetries", pick(overrides.maxRetries, env.maxRetries)),
      ...withKey("temperature", pick(overrides.temperature, env.temperature)),
      ...withKey("maxTokens", pick(overrides.maxTokens, env.maxTokens))
    }
    return yield* validateConfig(input)
  })

const withKey = <K extends string, A>(key: K, picked: { readonly value?: A }): { readonly [P in K]?: A } =>
  (picked.value === undefined ? {} : { [key]: picked.value }) as { readonly [P in K]?: A }

// ---------------------------------------------------------------------------------------------------------------
// Retry policy and redaction
// ---------------------------------------------------------------------------------------------------------------

/**
 * The statuses worth retrying: request timeout, conflict, rate limit, and every server error. Never 400/401/403/404:
 * a bad request, bad credentials or a missing route cannot succeed by asking again.
 */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 409 || status === 429 || status >= 500

/**
 * Parses `retry-after-ms` (ms) or `Retry-After` (seconds, or an HTTP date) into a wait in ms;
 * undefined when neither is present or parseable. `nowMs` is the current epoch time, for dates.
 */
export const parseRetryAfter = (headers: { readonly [name: string]: string | undefined }, nowMs: number): number | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms)
  const value = headers["retry-after"]
  if (value === undefined) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs)
}

/** A failed attempt, before the retry decision (the input of {@link retrySchedule}). */
export interface AttemptFailure {
  readonly kind: OpenAiErrorKind
  readonly message: string
  readonly status?: number
  /** The server's `Retry-After`, ms. */
  readonly retryAfterMs?: number
  /** False for a failure that cannot go away by asking again (a URL fetch refuses, a body over the cap). */
  readonly transient?: boolean
  readonly limitBytes?: number
}

/** Whether an attempt's failure is worth another attempt: transport errors, timeouts and {@link isRetryableStatus}. */
export const isRetryable = (failure: AttemptFailure): boolean =>
  failure.transient !== false &&
  (failure.kind === "transport" || failure.kind === "timeout" ||
    (failure.kind === "status" && failure.status !== undefined && isRetryableStatus(failure.status)))

/**
 * When to try again: at most `maxRetries` times, only after a {@link isRetryable} failure, waiting
 * `min(backoffMaxMs, backoffBaseMs·2^(n-1))` jittered to 80–120 % before retry n — or, when the server sent
 * `Retry-After` (429, 503, …), exactly that. A `Retry-After` over `maxRetryAfterMs`, or one that would end past
 * `deadline` (epoch ms: the request's timeout), stops the retries at once: the request fails now rather than sleep.
 */
export const retrySchedule = (config: Pick<OpenAiConfig, "maxRetries" | "backoffBaseMs" | "backoffMaxMs" | "maxRetryAfterMs">, deadline?: number) =>
  Schedule.min([Schedule.exponential(Duration.millis(config.backoffBaseMs)), Schedule.spaced(Duration.millis(config.backoffMaxMs))]).pipe(
    Schedule.jittered,
    Schedule.upTo({ times: config.maxRetries }),
    Schedule.setInputType<AttemptFailure>(),
    Schedule.while(({ input, now }) => isRetryable(input) && waitAllowed(config, input, now, deadline)),
    Schedule.modifyDelay(({ input, duration }) => Effect.succeed(input.retryAfterMs === undefined ? duration : Duration.millis(input.retryAfterMs)))
  )

/** Whether the server's `Retry-After` (if any) is a wait the client takes: within the cap and before the deadline. */
const waitAllowed = (config: Pick<OpenAiConfig, "maxRetryAfterMs">, failure: AttemptFailure, now: number, deadline: number | undefined): boolean =>
  failure.retryAfterMs === undefined ||
  (failure.retryAfterMs <= config.maxRetryAfterMs && (deadline === undefined || now + failure.retryAfterMs < deadline))

const REDACTED = "<redacted>"

// `scheme://userinfo@` in any text: the userinfo is everything up to the `@` that is not a path, query or fragment.
const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi

/** Replaces the userinfo of every URL in a text (`http://u:pw@host` → `http://<redacted>@host`). */
export const redactUrlCredentials = (text: string): string => text.replace(urlUserinfo, `$1${REDACTED}@`)

/**
 * Replaces every occurrence of the secrets (the API key, a URL password, the base URL's query values — raw,
 * percent-encoded and JSON-escaped), any bearer or basic token and any URL userinfo in a text destined for an error or
 * a log. Scrub the whole text, then cut it: a secret cut in two is no longer found.
 */
export const scrubSecret = (text: string, ...secrets: ReadonlyArray<Redacted.Redacted | undefined>): string =>
  scrubValues(redactUrlCredentials(text).replace(/\b(Bearer|Basic)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`), ...secrets)

/**
 * Replaces only the secrets' own values (raw, percent-encoded, JSON-escaped) in a text: for a model's output, where
 * `Bearer …` may be legitimate text but an echoed key is not.
 */
export const scrubValues = (text: string, ...secrets: ReadonlyArray<Redacted.Redacted | undefined>): string => {
  let out = text
  for (const secret of secrets) {
    if (secret === undefined) continue
    const value = Redacted.value(secret)
    if (typeof value !== "string" || value.length === 0) continue
    for (const form of new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])) out = out.split(form).join(REDACTED)
  }
  return out
}

/** A URL as it may be shown or stored: userinfo and every query value redacted (`Telemetry.redactUrl`). */
export const redactUrl = Telemetry.redactUrl

// ---------------------------------------------------------------------------------------------------------------
// Reading a body under a cap
// ---------------------------------------------------------------------------------------------------------------

/** A body read up to a cap: its first bytes and whether anything was left unread. */
interface CappedBody {
  readonly text: string
  readonly complete: boolean
}

/**
 * Reads at most `cap` bytes of a response body as a stream and stops there (the rest is never buffered; stopping
 * cancels the body, which closes the connection). The bytes are those the HttpClient delivers: fetch decodes
 * gzip/deflate/br lazily as they are pulled, so the decompressed size is what is bounded.
 */
const readCapped = (response: HttpClientResponse.HttpClientResponse, cap: number): Effect.Effect<CappedBody, HttpClientError.HttpClientError> =>
  Effect.suspend(() => {
    const chunks: Array<Uint8Array> = []
    let total = 0
    let complete = true
    return Stream.runForEachWhile(response.stream, (chunk) =>
      Effect.sync(() => {
        const room = cap - total
        if (chunk.byteLength > room) {
          chunks.push(chunk.subarray(0, room))
          total = cap
          complete = false
          return false
        }
        chunks.push(chunk)
        total += chunk.byteLength
        return true
      })).pipe(Effect.map((): CappedBody => {
        const bytes = new Uint8Array(total)
        let offset = 0
        for (const chunk of chunks) {
          bytes.set(chunk, offset)
          offset += chunk.byteLength
        }
        return { text: new TextDecoder().decode(bytes), complete }
      }))
  })

/** The declared `content-length`, when it is a plain number. */
const declaredLength = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const value = response.headers["content-length"]
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------------------------

const SNIPPET = 300
// An error status's body is only shown as a snippet: reading more than this of it is waste.
const ERROR_BODY_BYTES = 64 * 1024

/** An OpenAI-compatible chat client. */
export class OpenAiClient extends Context.Service<OpenAiClient, {
  /** The configured model. */
  readonly model: string
  /** The configured API root as it may be shown (userinfo and query values redacted). */
  readonly baseUrl: string
  /** One chat completion, retried on transient failures. */
  readonly chat: (request: ChatRequest) => Effect.Effect<ChatResult, OpenAiError>
}>()("paraagent/OpenAiClient") {}

/** Builds the request body from a request and the configured defaults. */
export const buildBody = (config: OpenAiConfig, request: ChatRequest): ChatCompletionBody => ({
  model: request.model ?? config.model,
  messages: request.messages,
  temperature: request.temperature ?? config.temperature,
  max_tokens: request.maxTokens ?? config.maxTokens,
  ...(request.tools !== undefined && request.tools.length > 0 ? { tools: request.tools } : {}),
  ...(request.toolChoice !== undefined ? { tool_choice: request.toolChoice } : {}),
  ...(request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
  ...(request.logprobs === true ? { logprobs: true } : {}),
  ...(request.logprobs === true && request.topLogprobs !== undefined ? { top_logprobs: request.topLogprobs } : {}),
  ...(request.responseFormat !== undefined ? { response_format: request.responseFormat } : {}),
  ...(request.seed !== undefined ? { seed: request.seed } : {}),
  ...(request.stop !== undefined && request.stop.length > 0 ? { stop: request.stop } : {})
})

/** Turns a decoded response into a result. */
export const toResult = (
  response: ChatCompletionResponse,
  requestedModel: string,
  attempts: number,
  latencyMs: number
): ChatResult => {
  const choice = response.choices[0]
  const message = choice?.message
  const toolCalls = (message?.tool_calls ?? []).map((call, index): ToolCallOut => ({
    id: call.id ?? `call_${index}`,
    name: call.function.name,
    arguments: typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments)
  }))
  const logprobs = choice?.logprobs?.content
  return {
    model: response.model ?? requestedModel,
    content: message?.content ?? "",
    reasoning: message?.reasoning_content ?? undefined,
    toolCalls,
    finishReason: choice?.finish_reason ?? undefined,
    usage: response.usage === undefined || response.usage === null
      ? undefined
      : { promptTokens: response.usage.prompt_tokens, completionTokens: response.usage.completion_tokens },
    tokenLogprobs: logprobs === undefined || logprobs === null ? undefined : logprobs.map((t) => t.logprob),
    attempts,
    latencyMs
  }
}

/** A result with every secret value taken out of what the model said (an endpoint that echoes the key). */
const scrubResult = (result: ChatResult, secrets: ReadonlyArray<Redacted.Redacted | undefined>): ChatResult => {
  const clean = (text: string) => scrubValues(text, ...secrets)
  return {
    ...result,
    content: clean(result.content),
    reasoning: result.reasoning === undefined ? undefined : clean(result.reasoning),
    toolCalls: result.toolCalls.map((c) => ({ ...c, name: clean(c.name), arguments: clean(c.arguments) }))
  }
}

/** Builds the client over whatever `HttpClient` the context provides. */
export const make = Effect.fnUntraced(function*(config: OpenAiConfig) {
  const http = yield* HttpClient.HttpClient
  // `validateConfig` already took any userinfo out of the base URL; a hand-built config may still carry one.
  const endpointUrl = new URL(config.baseUrl)
  const credentials: UrlCredentials | undefined = config.urlCredentials ?? (endpointUrl.username === "" && endpointUrl.password === ""
    ? undefined
    : { username: decodeURIComponent(endpointUrl.username), password: Redacted.make(decodeURIComponent(endpointUrl.password)) })
  endpointUrl.username = ""
  endpointUrl.password = ""
  // the path joins the API root's path; a query (`?api-version=…&api-key=…`) stays after it
  endpointUrl.pathname = `${endpointUrl.pathname.replace(/\/+$/, "")}/chat/completions`
  const endpoint = endpointUrl.href
  // For messages: the endpoint without query or userinfo.
  const shownEndpoint = `${endpointUrl.origin}${endpointUrl.pathname}`
  // every query value of the base URL is treated as a secret (Azure-style `api-key=`, signed `sig=`, …)
  const querySecrets = [...endpointUrl.searchParams.values()].filter((v) => v.length > 0).map((v) => Redacted.make(v))
  const secrets = [config.apiKey, credentials?.password, ...querySecrets]
  const scrub = (text: string): string => scrubSecret(text, ...secrets)
  // The request without its body is the same for every chat: built once.
  const post = HttpClientRequest.post(endpoint).pipe(HttpClientRequest.acceptJson)
  const authed = config.apiKey !== undefined
    ? HttpClientRequest.bearerToken(post, config.apiKey)
    : credentials !== undefined
    ? HttpClientRequest.basicAuth(post, credentials.username, credentials.password)
    : post

  const transportFailure = (error: HttpClientError.HttpClientError): AttemptFailure => ({
    kind: "transport",
    message: scrub(`POST ${shownEndpoint} failed: ${error.reason._tag}${transportDetail(error.reason)}`),
    // Only a transport failure can pass; a URL or body the client cannot send fails the same way every time.
    transient: error.reason._tag === "TransportError"
  })

  const tooLarge = (what: string): AttemptFailure => ({
    kind: "too_large",
    message: `response body from ${shownEndpoint} ${what} maxResponseBytes = ${config.maxResponseBytes} bytes`,
    transient: false,
    limitBytes: config.maxResponseBytes
  })

  const readResponse = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<ChatCompletionResponse, AttemptFailure> => {
    const ok = response.status >= 200 && response.status < 300
    if (ok) {
      const declared = declaredLength(response)
      if (declared !== undefined && declared > config.maxResponseBytes) {
        return Effect.fail(tooLarge(`declares ${declared} bytes, over`))
      }
      return readCapped(response, config.maxResponseBytes).pipe(
        Effect.mapError(transportFailure),
        Effect.flatMap(({ text, complete }) =>
          complete
            ? decodeResponse(text).pipe(
              Effect.mapError((error): AttemptFailure => ({
                kind: "decode",
                // scrubbed whole, then cut: a secret cut in two would no longer be found
                message: `malformed response body from ${shownEndpoint}: ${scrub(error.message).slice(0, 2 * SNIPPET)} (body starts: ${JSON.stringify(scrub(text).slice(0, 120))})`
              }))
            )
            : Effect.fail(tooLarge("exceeds"))
        )
      )
    }
    return readCapped(response, Math.min(config.maxResponseBytes, ERROR_BODY_BYTES)).pipe(
      Effect.map(({ text }) => text),
      // The status is the news; a body that breaks off is only a worse snippet.
      Effect.catch(() => Effect.succeed("")),
      Effect.flatMap((text) =>
        Clock.currentTimeMillis.pipe(Effect.flatMap((now) => {
          const retryAfterMs = parseRetryAfter(response.headers, now)
          return Effect.fail<AttemptFailure>({
            kind: "status",
            status: response.status,
            // scrubbed whole, then cut: a secret cut in two would no longer be found
            message: `POST ${shownEndpoint} answered ${response.status}: ${scrub(text).slice(0, SNIPPET)}`,
            ...(retryAfterMs === undefined ? {} : { retryAfterMs })
          })
        }))
      )
    )
  }

  // One attempt: the request, its body under the cap, all within the per-attempt timeout.
  const once = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<ChatCompletionResponse, AttemptFailure> =>
    http.execute(request).pipe(
      Effect.mapError(transportFailure),
      Effect.flatMap(readResponse),
      Effect.timeoutOrElse({
        duration: config.attemptTimeoutMs,
        orElse: () =>
          Effect.fail<AttemptFailure>({ kind: "timeout", message: `POST ${shownEndpoint} timed out after ${config.attemptTimeoutMs} ms` })
      })
    )

  // The warning says what failed and how long the schedule waits; it goes through Effect's logger (stderr in programs).
  const scheduleUntil = (deadline: number) => retrySchedule(config, deadline).pipe(
    Schedule.tap(({ input, attempt, duration }) =>
      Effect.logWarning("OpenAiClient: retrying").pipe(
        Effect.annotateLogs({
          attempt,
          kind: input.kind,
          status: input.status ?? "none",
          delayMs: Math.round(Duration.toMillis(duration)),
          error: input.message
        })
      )
    )
  )

  const chat = Effect.fn("OpenAiClient.chat")(function*(request: ChatRequest) {
    const body = yield* checkBody(buildBody(config, request)).pipe(
      Effect.mapError((error) => new OpenAiError({ kind: "request", message: scrub(`invalid request: ${error.message}`), attempts: 0 }))
    )
    yield* Effect.annotateCurrentSpan({ model: body.model, messages: body.messages.length })
    // serialised once: every retry sends the same bytes
    const httpRequest = HttpClientRequest.bodyJsonUnsafe(authed, body)
    const started = yield* Clock.currentTimeMillis
    const attempts = yield* Ref.make(0)
    const attempt = Ref.update(attempts, (n) => n + 1).pipe(Effect.andThen(once(httpRequest)))
    const response = yield* attempt.pipe(
      Effect.retry(scheduleUntil(started + config.timeoutMs)),
      Effect.catch((failure) =>
        Effect.all([Ref.get(attempts), Clock.currentTimeMillis]).pipe(Effect.flatMap(([n, now]) => {
          const refusedWait = failure.retryAfterMs !== undefined && isRetryable(failure) &&
            !waitAllowed(config, failure, now, started + config.timeoutMs)
          const why = !refusedWait ? "" : failure.retryAfterMs! > config.maxRetryAfterMs
            ? ` (the server asked to wait ${(failure.retryAfterMs! / 1000).toFixed(0)} s — Retry-After — more than the ${(config.maxRetryAfterMs / 1000).toFixed(0)} s this client waits: not retried)`
            : ` (the server asked to wait ${(failure.retryAfterMs! / 1000).toFixed(0)} s — Retry-After — past the ${config.timeoutMs} ms the request may take: not retried)`
          return Effect.fail(
            new OpenAiError({
              kind: failure.kind,
              message: `${failure.message}${why}${n > 1 ? ` (after ${n} attempts)` : ""}`,
              ...(failure.status === undefined ? {} : { status: failure.status }),
              ...(failure.limitBytes === undefined ? {} : { limitBytes: failure.limitBytes }),
              ...(refusedWait ? { retryAfterMs: failure.retryAfterMs! } : {}),
              attempts: n
            })
          )
        }))
      ),
      // the whole request, attempts and waits, within --timeout-ms
      Effect.timeoutOrElse({
        duration: config.timeoutMs,
        orElse: () =>
          Effect.flatMap(Ref.get(attempts), (n) =>
            Effect.fail(new OpenAiError({ kind: "timeout", message: `POST ${shownEndpoint} gave up after ${config.timeoutMs} ms (the request's whole budget, --timeout-ms; ${n} attempt${n === 1 ? "" : "s"})`, attempts: n })))
      })
    )
    const now = yield* Clock.currentTimeMillis
    return scrubResult(toResult(response, body.model, yield* Ref.get(attempts), now - started), secrets)
  })

  return OpenAiClient.of({ model: config.model, baseUrl: redactUrl(config.baseUrl), chat })
})

const transportDetail = (reason: { readonly _tag: string; readonly description?: string | undefined; readonly cause?: unknown }): string => {
  const cause = reason.cause
  const causeText = cause instanceof Error
    ? `${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ""}`
    : undefined
  const parts = [reason.description, causeText].filter((p): p is string => p !== undefined && p.length > 0)
  return parts.length === 0 ? "" : ` (${parts.join("; ")})`
}

/** The client for a validated configuration, over `fetch`. */
export const layer = (config: OpenAiConfig): Layer.Layer<OpenAiClient> =>
  Layer.effect(OpenAiClient, make(config)).pipe(Layer.provide(FetchHttpClient.layer))

/** The client for a configuration given in code (validated first). */
export const layerFrom = (input: OpenAiConfigInput): Layer.Layer<OpenAiClient, ConfigError> =>
  Layer.unwrap(validateConfig(input).pipe(Effect.map(layer)))

/** The client configured from the environment (see {@link configFromEnv}), with optional overrides from flags. */
export const layerConfig = (overrides: Partial<OpenAiConfigInput> = {}): Layer.Layer<OpenAiClient, ConfigError> =>
  Layer.unwrap(configFromEnv(overrides).pipe(Effect.map(layer)))
