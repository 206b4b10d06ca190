/**
 * The OpenAI-compatible client's failure handling: which failures are retried and when (`Retry-After` up to a cap,
 * jittered exponential backoff), secrets scrubbed from every message, and a response body read under a byte cap.
 */
import { Duration, Effect, Redacted, Schedule, Stream } from "effect"
import type { HttpClientError, HttpClientResponse } from "effect/http"
import * as Telemetry from "../../src/io/Telemetry.ts"
import { OpenAiErrorKind } from "./OpenAiWire.ts"
import type { OpenAiConfig } from "./OpenAiConfig.ts"

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
export const waitAllowed = (config: Pick<OpenAiConfig, "maxRetryAfterMs">, failure: AttemptFailure, now: number, deadline: number | undefined): boolean =>
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
export const readCapped = (response: HttpClientResponse.HttpClientResponse, cap: number): Effect.Effect<CappedBody, HttpClientError.HttpClientError> =>
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
export const declaredLength = (response: HttpClientResponse.HttpClientResponse): number | undefined => {
  const value = response.headers["content-length"]
  return value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : undefined
}
