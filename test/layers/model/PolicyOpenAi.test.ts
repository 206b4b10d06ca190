import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, Result } from "effect"
import { callId, toolId, toolName } from "../../../src/domain/Ids.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import type { Step } from "../../../src/domain/Trajectory.ts"
import { validStep } from "../../../src/domain/Trajectory.ts"
import * as ParaAct from "../../../src/protocol/ParaAct.ts"
import { Policy, type PolicyContext } from "../../../src/agent/Policy.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as PolicyOpenAi from "../../../layers/model/PolicyOpenAi.ts"
import { type LoopbackServer, LoopbackServer as Loopback, Reply } from "../../support/LoopbackServer.ts"

const SECRET = "sk-policy-secret-42"

const roster: ToolSpec = {
  id: toolId("generated:sports/team_roster"),
  name: toolName("team_roster"),
  group: "Team Roster",
  apiName: "team_roster",
  category: "Sports",
  description: "Lists the players of a team.",
  parameters: { type: "object", properties: { team_id: { type: "string", "x-entity": "team.id" } }, required: ["team_id"] },
  source: { kind: "generated", ref: "test" }
}

const context = (overrides: Partial<PolicyContext> = {}): PolicyContext => ({
  request: "Who plays for team T-42?",
  paradigm: "ParaAct",
  round: 0,
  maxRounds: 12,
  controller: "Need",
  history: [],
  tools: [],
  seed: 7,
  ...overrides
})

const completion = (message: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  model: "policy-model",
  choices: [{ message: { role: "assistant", ...message }, finish_reason: "stop", ...extra }],
  usage: { prompt_tokens: 321, completion_tokens: 45 }
})

const policyFor = (server: LoopbackServer, options: PolicyOpenAi.PolicyOpenAiOptions = {}, client: Partial<OpenAiClient.OpenAiConfigInput> = {}) =>
  Effect.service(Policy).pipe(Effect.provide(PolicyOpenAi.layer(options).pipe(Layer.provide(OpenAiClient.layerFrom({
    baseUrl: `${server.url}/v1`,
    model: "policy-model",
    apiKey: SECRET,
    maxRetries: 2,
    backoffBaseMs: 5,
    backoffMaxMs: 20,
    ...client
  })))))

const bodyOf = (body: unknown) =>
  body as {
    readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string | null; readonly tool_calls?: ReadonlyArray<unknown>; readonly tool_call_id?: string }>
    readonly temperature: number
    readonly max_tokens: number
    readonly seed?: number
    readonly logprobs?: boolean
    readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string; readonly parameters: unknown } }>
    readonly tool_choice?: unknown
    readonly parallel_tool_calls?: boolean
  }

const turnText = "<think>\nfind the roster\n</think>\n<call>\n[{\"id\":\"c1\",\"name\":\"team_roster\",\"arguments\":{\"team_id\":\"T-42\"}}]\n</call>"

/** A recorded step that called team_roster and got a big payload. */
const calledStep = (index: number, payloadChars: number): Step => {
  const parsed = ParaAct.parseTurn(turnText.replace(/c1/g, `c${index + 1}`))
  assert.isTrue(Result.isSuccess(parsed))
  const turn = Result.getOrThrow(parsed)
  return {
    index,
    raw: turnText.replace(/c1/g, `c${index + 1}`),
    turn,
    validation: validStep,
    controller: "May",
    phase: "execute",
    searches: [],
    observations: [{
      callId: callId(`c${index + 1}`),
      tool: toolName("team_roster"),
      arguments: { team_id: "T-42" },
      outcome: { _tag: "ok", payload: { players: "x".repeat(payloadChars) } },
      refs: [],
      attempts: 1,
      startMs: 0,
      endMs: 3
    }],
    startMs: 0,
    policyMs: 1,
    endMs: 4,
    usage: { promptTokens: 1, completionTokens: 1 }
  }
}

describe("OpenAI policy, text protocol", () => {
  it.live("a valid reply gives the text, the usage and the summed logprob; the request carries the defaults", () =>
    Effect.gen(function*() {
      const reply = "<search>\n[{\"slot\":\"c1\",\"query\":\"team roster\"}]\n</search>"
      const server = yield* Loopback.make({
        replies: [Reply.json(completion({ content: reply }, {
          logprobs: { content: [{ token: "<search>", logprob: -0.5 }, { token: "[", logprob: -0.25 }, { token: "]", logprob: -1 }] }
        }))]
      })
      const policy = yield* policyFor(server, { logprobs: true })
      assert.strictEqual(policy.name, "openai:policy-model")
      assert.isFalse(policy.privileged)
      const output = yield* policy.act(context({ tools: [roster] }))
      assert.strictEqual(output.text, reply)
      assert.isUndefined(output.turn)
      assert.deepStrictEqual(output.usage, { promptTokens: 321, completionTokens: 45 })
      assert.strictEqual(output.logprob, -1.75)
      assert.deepStrictEqual(output.tokenLogprobs, [-0.5, -0.25, -1])
      const [request] = yield* server.requests
      assert.strictEqual(request?.headers["authorization"], `Bearer ${SECRET}`)
      const body = bodyOf(request?.body)
      assert.strictEqual(body.temperature, 0.7)
      assert.strictEqual(body.max_tokens, 2048)
      assert.strictEqual(body.logprobs, true)
      assert.strictEqual(body.seed, PolicyOpenAi.roundSeed(7, 0))
      assert.isUndefined(body.tools)
      // with log-probs asked for, the exact prompt sent is on the output (what a trainer re-scores)
      assert.deepStrictEqual(JSON.parse(output.prompt ?? "null"), body.messages)
      const [system, user] = body.messages
      assert.strictEqual(system?.role, "system")
      assert.include(system?.content ?? "", ParaAct.instructions)
      assert.include(system?.content ?? "", PolicyOpenAi.paradigmGuidance.ParaAct)
      assert.include(system?.content ?? "", "### team_roster\nLists the players of a team.")
      assert.notInclude(system?.content ?? "", "x-entity")
      assert.include(system?.content ?? "", "at most 12 rounds")
      assert.deepStrictEqual(user, { role: "user", content: "Who plays for team T-42?" })
      assert.strictEqual(body.messages.length, 2)
    }))

  it.live("history becomes assistant turns and observation messages, older payloads cut harder than the latest", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion({ content: "<answer>\ndone\n</answer>" }))] })
      const policy = yield* policyFor(server)
      yield* policy.act(context({ round: 2, history: [calledStep(0, 10_000), calledStep(1, 10_000)], tools: [roster] }))
      const [request] = yield* server.requests
      const messages = bodyOf(request?.body).messages
      assert.deepStrictEqual(messages.map((m) => m.role), ["system", "user", "assistant", "user", "assistant", "user"])
      assert.strictEqual(messages[2]?.content, turnText)
      const older = messages[3]?.content ?? ""
      const latest = messages[5]?.content ?? ""
      assert.include(older, "<observation>")
      assert.include(older, `[${10_000 + 14 - 800} more characters]`)
      assert.include(latest, `[${10_000 + 14 - 4_000} more characters]`)
    }))

  it.live("the last round tells the model to answer", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion({ content: "<answer>\nok\n</answer>" }))] })
      const policy = yield* policyFor(server)
      yield* policy.act(context({ round: 11 }))
      const messages = bodyOf((yield* server.requests)[0]?.body).messages
      assert.include(messages.at(-1)?.content ?? "", "This is your last round")
    }))

  it.live("each paradigm brings its own guidance; ReAct is told to take one action", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ fallback: Reply.json(completion({ content: "<answer>\nok\n</answer>" })) })
      const policy = yield* policyFor(server)
      for (const paradigm of ["ReAct", "ExploreThenExecute", "DFSDT"] as const) yield* policy.act(context({ paradigm }))
      const systems = (yield* server.requests).map((r) => bodyOf(r.body).messages[0]?.content ?? "")
      assert.include(systems[0] ?? "", "exactly one action per round")
      assert.include(systems[1] ?? "", "cannot search again")
      assert.include(systems[2] ?? "", "give it up and try")
    }))

  it.live("DFSDT: abandoned alternatives are shown so the model tries something else", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion({ content: "<answer>\nok\n</answer>" }))] })
      const policy = yield* policyFor(server)
      yield* policy.act(context({ paradigm: "DFSDT", round: 1, history: [calledStep(0, 10)], abandoned: [calledStep(1, 10)] }))
      const messages = bodyOf((yield* server.requests)[0]?.body).messages
      assert.deepStrictEqual(messages.map((m) => m.role), ["system", "user", "assistant", "user", "user"])
      assert.include(messages[4]?.content ?? "", "already tried from this point and abandoned")
      assert.include(messages[4]?.content ?? "", "[1]\n<think>\nfind the roster")
      assert.include(messages[4]?.content ?? "", "\"id\":\"c2\"")
    }))
})

describe("OpenAI policy, native tool calls", () => {
  it.live("tool_calls become the turn (searches and calls), the text is the printed turn", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [
          Reply.json(completion({
            content: "<think>two slots</think>",
            tool_calls: [
              { id: "call_x", type: "function", function: { name: "search_tools", arguments: "{\"slot\":\"c1\",\"query\":\"find team\"}" } },
              { id: "call_y", type: "function", function: { name: "search_tools", arguments: "{\"slot\":\"c2\",\"query\":\"team roster\"}" } }
            ]
          })),
          Reply.json(completion({
            content: null,
            tool_calls: [{ id: "tc-1", type: "function", function: { name: "team_roster", arguments: "{\"team_id\":\"T-42\"}" } }]
          }))
        ]
      })
      const policy = yield* policyFor(server, { mode: "native" })
      const explore = yield* policy.act(context({ paradigm: "ReAct" }))
      assert.deepStrictEqual(explore.turn?.searches, [{ slot: "c1", query: "find team" }, { slot: "c2", query: "team roster" }])
      assert.strictEqual(explore.turn?.think, "two slots")
      assert.strictEqual(explore.text, ParaAct.printTurn(explore.turn!))
      // call ids: a tool_call id that is not a valid call id is replaced by the next free c<n>
      const execute = yield* policy.act(context({ history: [calledStep(0, 10)], tools: [roster], round: 1 }))
      assert.deepStrictEqual(execute.turn?.calls, [{ id: callId("c2"), tool: toolName("team_roster"), arguments: { team_id: "T-42" } }])
      const parsedBack = ParaAct.parseTurn(execute.text)
      assert.deepStrictEqual(Result.getOrThrow(parsedBack), execute.turn)

      const [first, second] = (yield* server.requests).map((r) => bodyOf(r.body))
      assert.deepStrictEqual(first?.tools?.map((t) => t.function.name), ["search_tools"])
      assert.strictEqual(first?.tool_choice, "auto")
      assert.strictEqual(first?.parallel_tool_calls, false)
      assert.include(first?.messages[0]?.content ?? "", OpenAiFormatNativeMarker)
      assert.deepStrictEqual(second?.tools?.map((t) => t.function.name), ["search_tools", "team_roster"])
      assert.isUndefined(second?.parallel_tool_calls)
      // the recorded step replays as an assistant tool_call and its tool result
      const roles = second?.messages.map((m) => m.role)
      assert.deepStrictEqual(roles, ["system", "user", "assistant", "tool"])
      assert.strictEqual(second?.messages[3]?.tool_call_id, "c1")
    }))

  it.live("unreadable tool-call arguments give no turn and a text the protocol parser rejects", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [Reply.json(completion({
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "team_roster", arguments: "{\"team_id\": T-42}" } }]
        }))]
      })
      const policy = yield* policyFor(server, { mode: "native" })
      const output = yield* policy.act(context({ tools: [roster] }))
      assert.isUndefined(output.turn)
      assert.include(output.text, "<call>")
      assert.include(output.text, "{\\\"team_id\\\": T-42}")
      assert.isTrue(Result.isFailure(ParaAct.parseTurn(output.text)))
      assert.deepStrictEqual(output.usage, { promptTokens: 321, completionTokens: 45 })
    }))
})

describe("OpenAI policy, failures", () => {
  it.live("a malformed body is a PolicyError saying what was wrong", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json({ choices: [{ message: { content: ["not", "text"] } }] })] })
      const policy = yield* policyFor(server)
      const error = yield* Effect.flip(policy.act(context()))
      assert.strictEqual(error._tag, "PolicyError")
      assert.include(error.message, "malformed response body")
      assert.include(error.message, `["choices"][0]["message"]["content"]`)
      assert.isUndefined(error.status)
    }))

  it.live("a reply slower than the timeout is a PolicyError; the client hung up at the bound", () =>
    Effect.gen(function*() {
      // the reply is due far beyond any test's life: the client must hang up first
      const server = yield* Loopback.make({ replies: [Reply.json(completion({ content: "late" }), { delayMs: 600_000 })] })
      const policy = yield* policyFor(server, {}, { timeoutMs: 300, maxRetries: 0 })
      const error = yield* Effect.flip(policy.act(context()))
      assert.include(error.message, "timed out after 300 ms")
      const request = yield* server.settled(0)
      assert.isUndefined(request.repliedAt)
      const waited = (request.abortedAt ?? Number.POSITIVE_INFINITY) - request.receivedAt
      assert.isAtLeast(waited, 150)
    }))

  it.live("429 with Retry-After then 200: the turn arrives after the wait", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [Reply.status(429, { retryAfter: 1 }), Reply.json(completion({ content: "<answer>\nok\n</answer>" }))]
      })
      const policy = yield* policyFor(server)
      const output = yield* policy.act(context())
      assert.strictEqual(output.text, "<answer>\nok\n</answer>")
      const [first, second] = yield* server.requests
      assert.isAtLeast((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0), 1_000)
    }))

  it.live("500 on every attempt: a PolicyError with the status after the configured retries, the key nowhere", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const server = yield* Loopback.make({
        fallback: (r) => Reply.json({ error: { message: `bad auth ${r.headers["authorization"] ?? ""}` } }, { status: 500 })
      })
      const policy = yield* policyFor(server, {}, { maxRetries: 3 })
      const error = yield* Effect.flip(policy.act(context())).pipe(
        Effect.provide(Logger.layer([Logger.map(Logger.formatJson, (line) => void lines.push(line))]))
      )
      assert.strictEqual(error.status, 500)
      assert.strictEqual((yield* server.requests).length, 4)
      assert.include(error.message, "after 4 attempts")
      assert.isAtLeast(lines.length, 3)
      assert.notInclude([error.message, JSON.stringify(error), ...lines].join("\n"), SECRET)
    }))
})

const OpenAiFormatNativeMarker = "search_tools once per capability slot"
