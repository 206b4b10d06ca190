import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Logger, Redacted } from "effect"
import * as fc from "fast-check"
import * as OpenAiClient from "../../layers/OpenAiClient.ts"
import { LoopbackServer, Reply } from "../support/LoopbackServer.ts"

const SECRET = "sk-test-0123456789abcdef"

const completion = (content: string | null, extra: Record<string, unknown> = {}) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  model: "served-model",
  choices: [{ index: 0, message: { role: "assistant", content, ...extra }, finish_reason: "stop" }],
  usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 }
})

/** A client pointed at the loopback server, with small backoffs so retries stay fast. */
const clientFor = (server: LoopbackServer, overrides: Partial<OpenAiClient.OpenAiConfigInput> = {}) =>
  OpenAiClient.validateConfig({
    baseUrl: `${server.url}/v1`,
    model: "test-model",
    apiKey: SECRET,
    timeoutMs: 5_000,
    maxRetries: 2,
    backoffBaseMs: 5,
    backoffMaxMs: 20,
    ...overrides
  }).pipe(Effect.flatMap((config) => Effect.provide(Effect.service(OpenAiClient.OpenAiClient), OpenAiClient.layer(config))))

const user = [{ role: "user" as const, content: "hello" }]

describe("OpenAiClient against a loopback server", () => {
  it.live("sends the defaults, the bearer token and decodes content, usage and logprobs", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.json({
          ...completion("<answer>42</answer>"),
          choices: [{
            message: { role: "assistant", content: "<answer>42</answer>" },
            finish_reason: "stop",
            logprobs: { content: [{ token: "<answer>", logprob: -0.25 }, { token: "42", logprob: -1.5 }] }
          }]
        })]
      })
      const client = yield* clientFor(server)
      const result = yield* client.chat({ messages: user, logprobs: true, topLogprobs: 2 })
      assert.strictEqual(result.content, "<answer>42</answer>")
      assert.deepStrictEqual(result.usage, { promptTokens: 11, completionTokens: 7 })
      assert.deepStrictEqual(result.tokenLogprobs, [-0.25, -1.5])
      assert.strictEqual(result.model, "served-model")
      assert.strictEqual(result.attempts, 1)
      assert.strictEqual(result.finishReason, "stop")
      const [request] = yield* server.requests
      assert.strictEqual(request?.url, "/v1/chat/completions")
      assert.strictEqual(request?.headers["authorization"], `Bearer ${SECRET}`)
      assert.deepStrictEqual(request?.body, {
        model: "test-model",
        messages: user,
        temperature: 0.7,
        max_tokens: 2048,
        logprobs: true,
        top_logprobs: 2
      })
    }))

  it.live("sends no Authorization header when no key is configured, and per-request overrides", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ replies: [Reply.json(completion("ok"))] })
      const client = yield* clientFor(server, { apiKey: undefined })
      yield* client.chat({ messages: user, temperature: 0, maxTokens: 64, seed: 7, responseFormat: { type: "json_object" } })
      const [request] = yield* server.requests
      assert.isUndefined(request?.headers["authorization"])
      assert.deepStrictEqual(request?.body, {
        model: "test-model",
        messages: user,
        temperature: 0,
        max_tokens: 64,
        seed: 7,
        response_format: { type: "json_object" }
      })
    }))

  it.live("decodes native tool calls, including object-valued arguments", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.json(completion(null, {
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "team_roster", arguments: "{\"team_id\":\"t1\"}" } },
            { type: "function", function: { name: "weather", arguments: { city: "Oslo" } } }
          ]
        }))]
      })
      const client = yield* clientFor(server)
      const result = yield* client.chat({
        messages: user,
        tools: [{ type: "function", function: { name: "team_roster", parameters: { type: "object", properties: {} } } }],
        toolChoice: "auto"
      })
      assert.strictEqual(result.content, "")
      assert.deepStrictEqual(result.toolCalls, [
        { id: "call_a", name: "team_roster", arguments: "{\"team_id\":\"t1\"}" },
        { id: "call_1", name: "weather", arguments: "{\"city\":\"Oslo\"}" }
      ])
      const [request] = yield* server.requests
      const body = request?.body as { readonly tool_choice?: unknown; readonly tools?: ReadonlyArray<unknown> }
      assert.strictEqual(body.tool_choice, "auto")
      assert.strictEqual(body.tools?.length, 1)
    }))

  it.live("a malformed JSON body is a decode error that says so; a wrong shape names the path", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.text("{\"choices\": [ {\"mess"), Reply.json({ choices: [{ message: { content: 5 } }] }), Reply.json({ choices: [] })]
      })
      const client = yield* clientFor(server)
      const malformed = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(malformed.kind, "decode")
      assert.include(malformed.message, "Expected a valid JSON string")
      const wrongType = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(wrongType.kind, "decode")
      assert.include(wrongType.message, `["choices"][0]["message"]["content"]`)
      const empty = yield* Effect.flip(client.chat({ messages: user }))
      assert.include(empty.message, `["choices"]`)
      // decode errors are not retried: one request each
      assert.strictEqual((yield* server.requests).length, 3)
    }))

  it.live("a reply slower than the timeout fails with a timeout, and the client hung up at the bound", () =>
    Effect.gen(function*() {
      const timeoutMs = 250
      const serverDelayMs = 4_000
      const server = yield* LoopbackServer.make({ replies: [Reply.json(completion("late"), { delayMs: serverDelayMs })] })
      const client = yield* clientFor(server, { timeoutMs, maxRetries: 0 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.kind, "timeout")
      assert.include(error.message, `${timeoutMs} ms`)
      assert.strictEqual(error.attempts, 1)
      // The server's clock: the client went away after about the timeout, long before the reply was due.
      yield* Effect.sleep(50)
      const [request] = yield* server.requests
      assert.isUndefined(request?.repliedAt)
      assert.isDefined(request?.abortedAt)
      const waited = (request?.abortedAt ?? 0) - (request?.receivedAt ?? 0)
      assert.isAtLeast(waited, timeoutMs * 0.5)
      assert.isBelow(waited, serverDelayMs / 2)
    }))

  it.live("429 with Retry-After, then 200: succeeds on the second attempt after waiting what the server asked", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.status(429, { retryAfter: 1 }), Reply.json(completion("after the wait"))]
      })
      const client = yield* clientFor(server)
      const result = yield* client.chat({ messages: user })
      assert.strictEqual(result.content, "after the wait")
      assert.strictEqual(result.attempts, 2)
      const [first, second] = yield* server.requests
      const gap = (second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)
      assert.isAtLeast(gap, 1_000)
    }))

  it.live("retry-after-ms is honoured too", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.json({ error: { message: "busy" } }, { status: 503, headers: { "retry-after-ms": "300" } }), Reply.json(completion("ok"))]
      })
      const client = yield* clientFor(server)
      const result = yield* client.chat({ messages: user })
      assert.strictEqual(result.attempts, 2)
      const [first, second] = yield* server.requests
      assert.isAtLeast((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0), 300)
    }))

  it.live("500 on every attempt: fails with the status after 1 + maxRetries requests", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.status(500) })
      const client = yield* clientFor(server, { maxRetries: 3 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.kind, "status")
      assert.strictEqual(error.status, 500)
      assert.strictEqual(error.attempts, 4)
      assert.include(error.message, "after 4 attempts")
      assert.strictEqual((yield* server.requests).length, 4)
    }))

  it.live("every retry sends the same body and bearer token as the first attempt", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.status(500) })
      const client = yield* clientFor(server, { maxRetries: 2 })
      yield* Effect.flip(client.chat({ messages: user, seed: 3 }))
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 3)
      for (const request of requests) {
        assert.strictEqual(request.headers["authorization"], `Bearer ${SECRET}`)
        assert.deepStrictEqual(request.body, { model: "test-model", messages: user, temperature: 0.7, max_tokens: 2048, seed: 3 })
      }
    }))

  it.live("a reset connection and a timeout are retried", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        replies: [Reply.reset(), Reply.json(completion("slow"), { delayMs: 3_000 }), Reply.json(completion("third time"))]
      })
      const client = yield* clientFor(server, { timeoutMs: 200 })
      const result = yield* client.chat({ messages: user })
      assert.strictEqual(result.content, "third time")
      assert.strictEqual(result.attempts, 3)
    }))

  it.live("a 4xx other than 408/409/429 is not retried", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.status(400, { message: "bad model" }) })
      const client = yield* clientFor(server)
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.status, 400)
      assert.strictEqual(error.attempts, 1)
      assert.include(error.message, "bad model")
      assert.strictEqual((yield* server.requests).length, 1)
    }))

  it.live("the API key appears in no error message and no log line, even when the server echoes it", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.map(Logger.formatJson, (line) => {
        lines.push(line)
      })
      const echo = (request: { readonly headers: Readonly<Record<string, string>> }) =>
        Reply.json({ error: { message: `Incorrect API key provided: ${request.headers["authorization"] ?? ""}` } }, { status: 503 })
      const server = yield* LoopbackServer.make({ replies: [echo, echo, Reply.reset(), echo] })
      const client = yield* clientFor(server, { maxRetries: 3 })
      const error = yield* Effect.flip(client.chat({ messages: user })).pipe(Effect.provide(Logger.layer([capture])))
      assert.strictEqual(error.attempts, 4)
      assert.include(error.message, "Incorrect API key provided")
      const everything = [error.message, JSON.stringify(error), String(error), ...lines].join("\n")
      assert.notInclude(everything, SECRET)
      assert.isAtLeast(lines.length, 3)
      assert.include(lines.join("\n"), "retrying")
      // the key did reach the server, as a bearer token
      const requests = yield* server.requests
      assert.isTrue(requests.every((r) => r.headers["authorization"] === `Bearer ${SECRET}`))
    }))

  it.live("an invalid request (temperature out of range) fails before anything is sent", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.json(completion("x")) })
      const client = yield* clientFor(server)
      const error = yield* Effect.flip(client.chat({ messages: user, temperature: 3 }))
      assert.strictEqual(error.kind, "request")
      assert.include(error.message, "temperature")
      assert.strictEqual((yield* server.requests).length, 0)
    }))

  it.live("routes answer by matcher before the ordered script", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        routes: [{
          match: (r) => JSON.stringify(r.body).includes("route me"),
          reply: Reply.json(completion("routed")),
          times: 1
        }],
        replies: [Reply.json(completion("scripted"))]
      })
      const client = yield* clientFor(server)
      const routed = yield* client.chat({ messages: [{ role: "user", content: "route me" }] })
      const scripted = yield* client.chat({ messages: [{ role: "user", content: "route me" }] })
      assert.strictEqual(routed.content, "routed")
      assert.strictEqual(scripted.content, "scripted")
    }))
})

describe("OpenAiClient configuration", () => {
  it.effect("rejects a base URL that is not http(s), naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(OpenAiClient.validateConfig({ baseUrl: "ftp://x", model: "m" }))
      assert.strictEqual(error.field, "baseUrl")
      assert.strictEqual(error.value, "ftp://x")
      const timeout = yield* Effect.flip(OpenAiClient.validateConfig({ baseUrl: "http://x/v1", model: "m", timeoutMs: 0 }))
      assert.strictEqual(timeout.field, "timeoutMs")
    }))

  it.effect("reads the environment; flags override it; the key stays redacted", () =>
    Effect.gen(function*() {
      const provider = ConfigProvider.fromUnknown({
        PARAAGENT_BASE_URL: "http://127.0.0.1:11434/v1/",
        PARAAGENT_MODEL: "qwen3:4b",
        PARAAGENT_API_KEY: SECRET,
        PARAAGENT_TIMEOUT_MS: "30000"
      })
      const config = yield* OpenAiClient.configFromEnv({ model: "override" }).pipe(
        Effect.provide(ConfigProvider.layer(provider))
      )
      assert.strictEqual(config.baseUrl, "http://127.0.0.1:11434/v1")
      assert.strictEqual(config.model, "override")
      assert.strictEqual(config.timeoutMs, 30_000)
      assert.strictEqual(config.temperature, 0.7)
      assert.strictEqual(config.maxTokens, 2048)
      assert.isDefined(config.apiKey)
      assert.strictEqual(config.apiKey === undefined ? "" : Redacted.value(config.apiKey), SECRET)
      assert.notInclude(JSON.stringify(config), SECRET)
      assert.notInclude(String(config.apiKey), SECRET)
    }))

  it.effect("a missing endpoint is a ConfigError naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        OpenAiClient.configFromEnv().pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
      )
      assert.strictEqual(error.field, "PARAAGENT_BASE_URL")
    }))
})

describe("retry arithmetic", () => {
  const config = { backoffBaseMs: 500, backoffMaxMs: 20_000, maxRetryAfterMs: 60_000 }

  it("jittered backoff stays within [½, 1] of the capped exponential", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (retry, u) => {
      const delay = OpenAiClient.retryDelayMs(retry, undefined, config, u)
      const cap = Math.min(config.backoffMaxMs, config.backoffBaseMs * 2 ** (retry - 1))
      return delay >= cap / 2 && delay <= cap
    }))
  })

  it("Retry-After wins over backoff, capped at maxRetryAfterMs", () => {
    assert.strictEqual(OpenAiClient.retryDelayMs(1, 3_000, config, 0.9), 3_000)
    assert.strictEqual(OpenAiClient.retryDelayMs(1, 600_000, config, 0.9), 60_000)
  })

  it("parses Retry-After as seconds, an HTTP date, or retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after": "2" }, now), 2_000)
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }, now), 5_000)
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after-ms": "250", "retry-after": "9" }, now), 250)
    assert.isUndefined(OpenAiClient.parseRetryAfter({ "retry-after": "soon" }, now))
    assert.isUndefined(OpenAiClient.parseRetryAfter({}, now))
  })

  it("retries exactly the transient statuses", () => {
    assert.deepStrictEqual([400, 401, 404, 408, 409, 422, 429, 500, 502, 503].filter(OpenAiClient.isRetryableStatus), [408, 409, 429, 500, 502, 503])
  })

  it("scrubs the key and any bearer token from text", () => {
    const key = Redacted.make(SECRET)
    assert.strictEqual(OpenAiClient.scrubSecret(`a ${SECRET} b Bearer xyz`, key), "a <redacted> b Bearer <redacted>")
  })
})
