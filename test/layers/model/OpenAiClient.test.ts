import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Exit, Logger, Redacted, Schedule } from "effect"
import * as zlib from "node:zlib"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import { LoopbackServer, Reply } from "../../support/LoopbackServer.ts"

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
      // far beyond any test's life (the server's timers are cleared when it closes): the client must hang up first
      const serverDelayMs = 600_000
      const server = yield* LoopbackServer.make({ replies: [Reply.json(completion("late"), { delayMs: serverDelayMs })] })
      const client = yield* clientFor(server, { timeoutMs, maxRetries: 0 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.kind, "timeout")
      assert.include(error.message, `${timeoutMs} ms`)
      assert.strictEqual(error.attempts, 1)
      // The server saw the client go away before its reply was due, and not before the timeout (its own clock).
      const request = yield* server.settled(0)
      assert.isUndefined(request.repliedAt)
      assert.isDefined(request.abortedAt)
      const waited = (request.abortedAt ?? 0) - request.receivedAt
      assert.isAtLeast(waited, timeoutMs * 0.5)
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
      const client = yield* clientFor(server, { timeoutMs: 5_000, attemptTimeoutMs: 200 })
      const result = yield* client.chat({ messages: user })
      assert.strictEqual(result.content, "third time")
      assert.strictEqual(result.attempts, 3)
    }))

  it.live("a Retry-After beyond the cap fails at once with a typed error: one request, no wait", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.status(429, { retryAfter: 600 }) })
      const client = yield* clientFor(server, { maxRetries: 5, maxRetryAfterMs: 60_000 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.deepStrictEqual([error.kind, error.status, error.attempts, error.retryAfterMs], ["status", 429, 1, 600_000])
      assert.include(error.message, "asked to wait 600 s")
      assert.strictEqual((yield* server.requests).length, 1)
    }))

  it.live("--timeout-ms bounds the whole request: no retry whose wait would end past it", () =>
    Effect.gen(function*() {
      // every answer a 503 asking for 1 s: within the cap, so only the request's own budget stops the retries
      const server = yield* LoopbackServer.make({ fallback: Reply.status(503, { retryAfter: 1 }) })
      const client = yield* clientFor(server, { maxRetries: 10, timeoutMs: 1_500 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.status, 503)
      assert.isAtMost(error.attempts, 2)
      assert.include(error.message, "past the 1500 ms")
      assert.isAtMost((yield* server.requests).length, 2)
      // and a server slower than the budget: the request ends at the budget, not after maxRetries full attempts
      const slow = yield* LoopbackServer.make({ fallback: Reply.json(completion("late"), { delayMs: 3_000 }) })
      const bounded = yield* clientFor(slow, { maxRetries: 10, timeoutMs: 400, attemptTimeoutMs: 300 })
      const timedOut = yield* Effect.flip(bounded.chat({ messages: user }))
      assert.strictEqual(timedOut.kind, "timeout")
      assert.isAtMost((yield* slow.requests).length, 2)
    }))

  it.live("a base URL with a query: the path is joined before it, and its values never appear in a message", () =>
    Effect.gen(function*() {
      const key = "azure-key-7f3a9c1e5b2d4068"
      const server = yield* LoopbackServer.make({ fallback: (request) => Reply.json({ error: { message: `echo ${request.url}` } }, { status: 400 }) })
      const baseUrl = `${server.url}/openai/deployments/d1?api-version=2024-06-01&api-key=${key}`
      const config = yield* OpenAiClient.validateConfig({ baseUrl, model: "m", maxRetries: 0 })
      const client = yield* Effect.provide(Effect.service(OpenAiClient.OpenAiClient), OpenAiClient.layer(config))
      const error = yield* Effect.flip(client.chat({ messages: user }))
      const [request] = yield* server.requests
      assert.strictEqual(request?.url, `/openai/deployments/d1/chat/completions?api-version=2024-06-01&api-key=${key}`)
      assert.notInclude(error.message, key)
      assert.include(error.message, "<redacted>")
      assert.strictEqual(client.baseUrl, `${server.url}/openai/deployments/d1?api-version=<redacted>&api-key=<redacted>`)
    }))

  it.live("an echoed key is scrubbed before the message is cut (never a part of it), and out of what the model said", () =>
    Effect.gen(function*() {
      // the key straddles the 300-character snippet the message keeps
      const server = yield* LoopbackServer.make({
        replies: [
          Reply.json({ error: { message: `${"x".repeat(270)} ${SECRET} and more` } }, { status: 400 }),
          Reply.json(completion(`Your key is ${SECRET}; keep it safe.`))
        ]
      })
      const client = yield* clientFor(server, { maxRetries: 0 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      for (let n = 6; n <= SECRET.length; n++) assert.notInclude(error.message, SECRET.slice(0, n))
      const answered = yield* client.chat({ messages: user })
      assert.strictEqual(answered.content, "Your key is <redacted>; keep it safe.")
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

describe("OpenAiClient against a hostile server", () => {
  it.live("credentials in the base URL: sent as Basic auth, never shown, a 401 is answered after exactly one request", () =>
    Effect.gen(function*() {
      const password = "s3cret/p@ss"
      const lines: Array<string> = []
      const capture = Logger.map(Logger.formatJson, (line) => {
        lines.push(line)
      })
      // The server echoes what it was sent, decoded, and a URL holding it: the worst a server can do.
      const server = yield* LoopbackServer.make({
        fallback: (request) => {
          const basic = (request.headers["authorization"] ?? "").replace(/^Basic /, "")
          const decoded = Buffer.from(basic, "base64").toString("utf8")
          return Reply.json({ error: { message: `bad credentials ${decoded} for http://${decoded}@127.0.0.1/v1 (${request.headers["authorization"]})` } }, { status: 401 })
        }
      })
      const baseUrl = `http://alice:${encodeURIComponent(password)}@127.0.0.1:${server.port}/v1`
      const config = yield* OpenAiClient.validateConfig({ baseUrl, model: "test-model", maxRetries: 3, backoffBaseMs: 5, backoffMaxMs: 20 })
      assert.strictEqual(config.baseUrl, `${server.url}/v1`)
      const client = yield* Effect.provide(Effect.service(OpenAiClient.OpenAiClient), OpenAiClient.layer(config))
      const error = yield* Effect.flip(client.chat({ messages: user })).pipe(Effect.provide(Logger.layer([capture])))
      assert.strictEqual(error.kind, "status")
      assert.strictEqual(error.status, 401)
      assert.strictEqual(error.attempts, 1)
      assert.include(error.message, "bad credentials")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 1)
      assert.strictEqual(requests[0]?.headers["authorization"], `Basic ${Buffer.from(`alice:${password}`).toString("base64")}`)
      const everything = [error.message, JSON.stringify(error), String(error), JSON.stringify(config), client.baseUrl, ...lines].join("\n")
      assert.notInclude(everything, "s3cret")
      assert.notInclude(everything, encodeURIComponent(password))
    }))

  it.live("a 403 is not retried either", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ fallback: Reply.status(403) })
      const client = yield* clientFor(server, { maxRetries: 3 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.status, 403)
      assert.strictEqual((yield* server.requests).length, 1)
    }))

  it.live("a bad base URL's credentials are redacted in the ConfigError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(OpenAiClient.validateConfig({ baseUrl: "ftp://u:hunter22@host/v1", model: "m" }))
      assert.strictEqual(error.field, "baseUrl")
      assert.notInclude(JSON.stringify(error), "hunter22")
    }))

  it.live("a 50 MB junk body (chunked, or declared) ends with a too_large error naming the cap, with bounded memory", () =>
    Effect.gen(function*() {
      const junk = Buffer.alloc(1 << 20, "x")
      const fiftyMb = function*() {
        for (let i = 0; i < 50; i++) yield junk
      }
      const server = yield* LoopbackServer.make({
        replies: [Reply.bytes(fiftyMb), Reply.bytes(fiftyMb, { headers: { "content-length": String(50 << 20) } })]
      })
      const client = yield* clientFor(server, { maxRetries: 3 })
      const peak = yield* rssSampler
      const chunked = yield* Effect.flip(client.chat({ messages: user }))
      const declared = yield* Effect.flip(client.chat({ messages: user }))
      const growthMb = (yield* peak) / (1 << 20)
      for (const error of [chunked, declared]) {
        assert.strictEqual(error.kind, "too_large")
        assert.strictEqual(error.limitBytes, OpenAiClient.defaults.maxResponseBytes)
        assert.include(error.message, `maxResponseBytes = ${16 * 1024 * 1024} bytes`)
        assert.strictEqual(error.attempts, 1)
      }
      assert.include(chunked.message, "exceeds")
      assert.include(declared.message, `declares ${50 << 20} bytes`)
      assert.strictEqual((yield* server.requests).length, 2)
      assert.isBelow(growthMb, 200)
    }))

  // gzip and br inflate to 400 MiB; deflate to 160 MiB (10× the cap), as compressing more costs seconds of CPU.
  for (const [encoding, inflatedMb] of [["gzip", 400], ["deflate", 160], ["br", 400]] as const) {
    it.live(`a ${encoding} bomb inflating to ${inflatedMb} MiB ends with a too_large error, with bounded memory`, () =>
      Effect.gen(function*() {
        const bomb = yield* Effect.promise(() => compressZeros(encoding, inflatedMb))
        assert.isBelow(bomb.byteLength, 2 << 20)
        const server = yield* LoopbackServer.make({
          fallback: Reply.bytes(() => [bomb], { headers: { "content-encoding": encoding, "content-length": String(bomb.byteLength) } })
        })
        const client = yield* clientFor(server, { maxRetries: 3 })
        const peak = yield* rssSampler
        const error = yield* Effect.flip(client.chat({ messages: user }))
        const growthMb = (yield* peak) / (1 << 20)
        assert.strictEqual(error.kind, "too_large")
        assert.include(error.message, "maxResponseBytes")
        assert.strictEqual((yield* server.requests).length, 1)
        assert.isBelow(growthMb, 200)
      }))
  }

  it.live("a gzip body under the cap is decoded as usual", () =>
    Effect.gen(function*() {
      const body = zlib.gzipSync(Buffer.from(JSON.stringify(completion("zipped"))))
      const server = yield* LoopbackServer.make({
        replies: [Reply.bytes(() => [body], { headers: { "content-encoding": "gzip", "content-length": String(body.byteLength) } })]
      })
      const client = yield* clientFor(server)
      assert.strictEqual((yield* client.chat({ messages: user })).content, "zipped")
    }))

  it.live("maxResponseBytes is configurable and checked", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({ replies: [Reply.json(completion("x".repeat(2_000)))] })
      const client = yield* clientFor(server, { maxResponseBytes: 1_000 })
      const error = yield* Effect.flip(client.chat({ messages: user }))
      assert.strictEqual(error.kind, "too_large")
      assert.strictEqual(error.limitBytes, 1_000)
      const bad = yield* Effect.flip(OpenAiClient.validateConfig({ baseUrl: "http://x/v1", model: "m", maxResponseBytes: 0 }))
      assert.strictEqual(bad.field, "maxResponseBytes")
    }))
})

/** Samples RSS every 5 ms until the scope closes; the effect it returns reads the peak growth over the start, bytes. */
const rssSampler = Effect.gen(function*() {
  const start = process.memoryUsage().rss
  let peak = start
  yield* Effect.acquireRelease(
    Effect.sync(() => setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 5)),
    (t) => Effect.sync(() => clearInterval(t))
  )
  return Effect.sync(() => {
    peak = Math.max(peak, process.memoryUsage().rss)
    return peak - start
  })
})

/**
 * A decompression bomb: `mb` MiB of zeros as `encoding`, built without holding the plain text. gzip repeats one member
 * of 4 MiB (a gzip body may hold many; ~400 KB for 400 MiB, as in the issue); deflate and br stream at the fastest level.
 */
const compressZeros = async (encoding: "gzip" | "deflate" | "br", mb: number): Promise<Buffer> => {
  if (encoding === "gzip") {
    const member = zlib.gzipSync(Buffer.alloc(4 << 20), { level: 9 })
    return Buffer.concat(Array.from({ length: Math.ceil(mb / 4) }, () => member))
  }
  const z = encoding === "deflate"
    ? zlib.createDeflate({ level: 1 })
    : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } })
  const out: Array<Buffer> = []
  z.on("data", (chunk: Buffer) => out.push(chunk))
  const ended = new Promise<void>((resolve) => z.on("end", () => resolve()))
  const zeros = Buffer.alloc(1 << 20)
  for (let i = 0; i < mb; i++) {
    if (!z.write(zeros)) await new Promise<void>((resolve) => z.once("drain", () => resolve()))
  }
  z.end()
  await ended
  return Buffer.concat(out)
}

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

  const failure = (status: number, retryAfterMs?: number): OpenAiClient.AttemptFailure => ({
    kind: "status",
    status,
    message: `answered ${status}`,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs })
  })

  // Adapted when the hand loop became a Schedule: the jitter is Schedule.jittered's 80–120 % (was 50–100 %).
  it.effect("the schedule's backoff stays within 80–120 % of the capped exponential", () =>
    Effect.gen(function*() {
      const schedule = OpenAiClient.retrySchedule({ ...config, maxRetries: 30 })
      for (let run = 0; run < 50; run++) {
        const step = yield* Schedule.toStep(schedule)
        for (let retry = 1; retry <= 12; retry++) {
          const [, delay] = yield* step(0, failure(500))
          const cap = Math.min(config.backoffMaxMs, config.backoffBaseMs * 2 ** (retry - 1))
          const ms = Duration.toMillis(delay)
          assert.isAtLeast(ms, cap * 0.8)
          assert.isAtMost(ms, cap * 1.2)
        }
      }
    }))

  it.effect("Retry-After wins over backoff; one over maxRetryAfterMs, or ending past the deadline, stops the retries at once", () =>
    Effect.gen(function*() {
      const step = yield* Schedule.toStep(OpenAiClient.retrySchedule({ ...config, maxRetries: 3 }))
      assert.strictEqual(Duration.toMillis((yield* step(0, failure(429, 3_000)))[1]), 3_000)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(step(0, failure(503, 600_000)))))
      const bounded = yield* Schedule.toStep(OpenAiClient.retrySchedule({ ...config, maxRetries: 3 }, 2_000))
      assert.strictEqual(Duration.toMillis((yield* bounded(500, failure(429, 1_000)))[1]), 1_000)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(bounded(1_500, failure(429, 1_000)))))
    }))

  it.effect("the schedule stops after maxRetries, and at once on 400/401/403/404 or a body over the cap", () =>
    Effect.gen(function*() {
      const step = yield* Schedule.toStep(OpenAiClient.retrySchedule({ ...config, maxRetries: 2 }))
      yield* step(0, failure(500))
      yield* step(0, failure(502))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(step(0, failure(500)))))
      for (const status of [400, 401, 403, 404]) {
        const fresh = yield* Schedule.toStep(OpenAiClient.retrySchedule({ ...config, maxRetries: 2 }))
        assert.isTrue(Exit.isFailure(yield* Effect.exit(fresh(0, failure(status)))), `status ${status}`)
      }
      const fresh = yield* Schedule.toStep(OpenAiClient.retrySchedule({ ...config, maxRetries: 2 }))
      const tooLarge: OpenAiClient.AttemptFailure = { kind: "too_large", message: "big", transient: false, limitBytes: 1 }
      assert.isTrue(Exit.isFailure(yield* Effect.exit(fresh(0, tooLarge))))
    }))

  it("parses Retry-After as seconds, an HTTP date, or retry-after-ms", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after": "2" }, now), 2_000)
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }, now), 5_000)
    assert.strictEqual(OpenAiClient.parseRetryAfter({ "retry-after-ms": "250", "retry-after": "9" }, now), 250)
    assert.isUndefined(OpenAiClient.parseRetryAfter({ "retry-after": "soon" }, now))
    assert.isUndefined(OpenAiClient.parseRetryAfter({}, now))
  })

  it("retries exactly the transient statuses", () => {
    assert.deepStrictEqual([400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503].filter(OpenAiClient.isRetryableStatus), [408, 409, 429, 500, 502, 503])
  })

  it("scrubs the key and any bearer token from text", () => {
    const key = Redacted.make(SECRET)
    assert.strictEqual(OpenAiClient.scrubSecret(`a ${SECRET} b Bearer xyz`, key), "a <redacted> b Bearer <redacted>")
  })

  it("scrubs URL userinfo, basic tokens and a URL password in raw and percent-encoded form", () => {
    const password = Redacted.make("s3cret/p@ss")
    const text = "GET http://alice:s3cret%2Fp%40ss@host/v1 failed; https://bob:x@h2/ too; Basic YWxpY2U6eA== and s3cret/p@ss"
    const scrubbed = OpenAiClient.scrubSecret(text, undefined, password)
    assert.strictEqual(scrubbed, "GET http://<redacted>@host/v1 failed; https://<redacted>@h2/ too; Basic <redacted> and <redacted>")
  })
})
