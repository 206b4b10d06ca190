/**
 * A client for OpenAI-compatible chat completions (vLLM, SGLang, Ollama, llama.cpp server, OpenAI) over `effect/http`:
 * schema-checked request and response bodies, a timeout on the whole request (attempts and the waits between them),
 * retries as a `Schedule` (jittered exponential backoff that honours `Retry-After` up to a cap; beyond it the request
 * fails at once), URL credentials sent as Basic auth, the key, URL credentials and the base URL's query values
 * scrubbed from every message and every model output before anything is cut, and a cap on the bytes read from every
 * response (after fetch's gzip/deflate/br decoding, so a decompression bomb is bounded too).
 */
import { Clock, Context, Duration, Effect, Layer, Redacted, Ref, Schedule } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import type { HttpClientError, HttpClientResponse } from "effect/http"
import { ConfigError } from "../../src/domain/Errors.ts"
import { ChatCompletionBody, ChatCompletionResponse, OpenAiError, checkBody, decodeResponse, type ChatRequest, type ChatResult, type ToolCallOut } from "./OpenAiWire.ts"
import { configFromEnv, validateConfig, type OpenAiConfig, type OpenAiConfigInput, type UrlCredentials } from "./OpenAiConfig.ts"
import { declaredLength, isRetryable, parseRetryAfter, readCapped, redactUrl, retrySchedule, scrubSecret, scrubValues, waitAllowed, type AttemptFailure } from "./OpenAiRetry.ts"
export { ChatCompletionBody, ChatCompletionResponse, OpenAiError, OpenAiErrorKind, WireMessage, WireResponseFormat, WireToolCall, WireToolChoice, WireToolDefinition, type ChatRequest, type ChatResult, type TokenUsage, type ToolCallOut } from "./OpenAiWire.ts"
export { checkMaxTokens, checkTemperature, configFromEnv, defaults, validateConfig, type OpenAiConfig, type OpenAiConfigInput, type UrlCredentials } from "./OpenAiConfig.ts"
export { isRetryable, isRetryableStatus, parseRetryAfter, redactUrl, redactUrlCredentials, retrySchedule, scrubSecret, scrubValues, type AttemptFailure } from "./OpenAiRetry.ts"

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
