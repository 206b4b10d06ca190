/**
 * The OpenAI-compatible client's configuration: the settings, their defaults, their checks (one ConfigError naming the
 * field and the value) and their reading from the environment (`PARAAGENT_*`) under command-line overrides.
 */
import { Config, Effect, Option, Redacted } from "effect"
import { ConfigError } from "../../src/domain/Errors.ts"
import * as Telemetry from "../../src/io/Telemetry.ts"

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
    return yield* new ConfigError({ field: "baseUrl", value: Telemetry.redactUrl(input.baseUrl), message: "baseUrl must be an http(s) URL such as http://127.0.0.1:8000/v1" })
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
