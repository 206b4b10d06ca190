import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Judge } from "../../../src/judge/Judge.ts"
import * as Prompt from "../../../src/judge/Prompt.ts"
import * as JudgeLlm from "../../../layers/model/JudgeLlm.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import { type LoopbackServer, LoopbackServer as Loopback, Reply } from "../../support/LoopbackServer.ts"
import { makeTrajectory, ok, patternCases, scorerTask } from "../../judge/fixtures.ts"

const completion = (content: string) => ({
  model: "judge-model",
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 100, completion_tokens: 20 }
})

const verdictJson = JSON.stringify({
  quality: { verdict: "YES", rationale: "names the player and the points" },
  faithfulness: { verdict: "partial", rationale: "the coach is not in the evidence" },
  utility: { verdict: "YES", rationale: "the roster call returned everything" }
})

const judgeFor = (server: LoopbackServer, options: JudgeLlm.JudgeLlmOptions = {}) =>
  Effect.service(Judge).pipe(
    Effect.provide(JudgeLlm.layer(options).pipe(
      Layer.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "judge-model", maxRetries: 1, backoffBaseMs: 5 }))
    ))
  )

const trajectory = patternCases()[2]!.trajectory

const messagesOf = (body: unknown): ReadonlyArray<{ readonly role: string; readonly content: string }> =>
  (body as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> }).messages

describe("LLM judge against a loopback server", () => {
  it.live("a valid verdict: one call at temperature 0, grades decoded case-insensitively", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion(verdictJson))] })
      const judge = yield* judgeFor(server)
      const verdict = yield* judge.judge(scorerTask, trajectory)
      assert.deepStrictEqual([verdict.quality, verdict.faithfulness, verdict.utility], ["YES", "PARTIAL", "YES"])
      assert.strictEqual(verdict.judge, "llm:judge-model")
      assert.strictEqual(judge.name, "llm:judge-model")
      assert.include(verdict.rationale ?? "", "F: the coach is not in the evidence")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 1)
      const body = requests[0]?.body as { readonly temperature: number }
      assert.strictEqual(body.temperature, 0)
      const [system, user] = messagesOf(requests[0]?.body)
      assert.strictEqual(system?.role, "system")
      assert.include(system?.content ?? "", "faithfulness")
      assert.include(user?.content ?? "", scorerTask.request)
      assert.include(user?.content ?? "", "top_scorer({\"team_id\":\"T-42\"}) -> ok:")
      assert.include(user?.content ?? "", "coach Steve Kerr")
      assert.notInclude(user?.content ?? "", "Reference facts")
    }))

  it.live("a fenced JSON reply with prose around it is read", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion(`Here is my grading:\n\`\`\`json\n${verdictJson}\n\`\`\`\nDone.`))] })
      const judge = yield* judgeFor(server)
      const verdict = yield* judge.judge(scorerTask, trajectory)
      assert.strictEqual(verdict.faithfulness, "PARTIAL")
    }))

  it.live("malformed, then valid: a second call that quotes the problem, and the verdict", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({
        replies: [Reply.json(completion("{\"quality\": {\"verdict\": \"maybe\"}}")), Reply.json(completion(verdictJson))]
      })
      const judge = yield* judgeFor(server)
      const verdict = yield* judge.judge(scorerTask, trajectory)
      assert.strictEqual(verdict.quality, "YES")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 2)
      const second = messagesOf(requests[1]?.body)
      assert.strictEqual(second.length, 4)
      assert.strictEqual(second[2]?.role, "assistant")
      assert.strictEqual(second[2]?.content, "{\"quality\": {\"verdict\": \"maybe\"}}")
      assert.strictEqual(second[3]?.role, "user")
      assert.include(second[3]?.content ?? "", "could not be read")
      assert.include(second[3]?.content ?? "", `["quality"]["verdict"]`)
    }))

  it.live("malformed twice: a JudgeError naming the trajectory, after exactly two calls", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion("I think it is fine.")), Reply.json(completion("{\"quality\": \"YES\"}"))] })
      const judge = yield* judgeFor(server)
      const error = yield* Effect.flip(judge.judge(scorerTask, trajectory))
      assert.strictEqual(error._tag, "JudgeError")
      assert.include(error.message, "malformed verdict twice")
      assert.include(error.message, String(trajectory.id))
      assert.strictEqual((yield* server.requests).length, 2)
    }))

  it.live("an endpoint that keeps failing: a JudgeError naming the status", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ fallback: Reply.status(503) })
      const judge = yield* judgeFor(server)
      const error = yield* Effect.flip(judge.judge(scorerTask, trajectory))
      assert.include(error.message, "answered 503")
      assert.strictEqual((yield* server.requests).length, 2)
    }))

  it.live("reference facts and JSON mode when asked for", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion(verdictJson))] })
      const judge = yield* judgeFor(server, { reference: true, jsonMode: true })
      yield* judge.judge(scorerTask, trajectory)
      const [request] = yield* server.requests
      assert.deepStrictEqual((request?.body as { readonly response_format: unknown }).response_format, { type: "json_object" })
      assert.include(messagesOf(request?.body)[1]?.content ?? "", "- player: Stephen Curry")
    }))
})

describe("judge prompt", () => {
  it("shows a missing answer as such, and failed calls with their status", () => {
    const text = Prompt.userPrompt(scorerTask, patternCases()[5]!.trajectory)
    assert.include(text, "error 500 server_error: upstream service unavailable")
    const none = Prompt.userPrompt(scorerTask, makeTrajectory(scorerTask, [], undefined))
    assert.include(none, "(no answer")
    assert.include(none, "(the assistant made no tool calls)")
  })

  it("keeps the evidence within its budget and counts what it left out", () => {
    const big = Array.from({ length: 60 }, (_, i) => ok("dump", { page: i }, { text: "x".repeat(5_000) }))
    const evidence = Prompt.renderEvidence(makeTrajectory(scorerTask, [big], "done"))
    assert.isAtMost(evidence.length, Prompt.budgets.evidence + 100)
    const shown = evidence.split("\n").filter((l) => l.startsWith("["))
    assert.isTrue(shown.every((l) => l.length <= Prompt.budgets.observation + 40))
    assert.include(evidence, `(${60 - shown.length} more calls omitted for length)`)
  })

  it("extracts the JSON object from a fenced or chatty reply", () => {
    assert.strictEqual(Prompt.extractJsonObject("sure: {\"a\": {\"b\": 1}} ok"), "{\"a\": {\"b\": 1}}")
    assert.strictEqual(Prompt.extractJsonObject("```json\n{\"a\":1}\n```"), "{\"a\":1}")
    assert.strictEqual(Prompt.extractJsonObject("no json"), "no json")
  })
})

describe("judge prompt: the responsiveness rule (the rule judge's, in words)", () => {
  it("Quality YES needs the requested facts, to the point; padding, dumps, echoes, refusals are not YES; one unbacked number keeps faithfulness from YES", () => {
    const text = Prompt.systemPrompt
    for (const phrase of [
      "states the facts the request asks for",
      "to the point",
      "padded with content the request did not ask for",
      "dumps raw tool outputs",
      "repeats the request's own words",
      "another record",
      "A single number that no tool output supports keeps faithfulness from YES"
    ]) assert.include(text, phrase)
  })

  it("states the evidence rule (issue 24): tool outputs only — never the assistant's arguments, reasoning or echoed error messages; the request only as a claim's subject", () => {
    const text = Prompt.systemPrompt
    assert.include(text, Prompt.evidenceRule)
    for (const phrase of [
      "Evidence is what the tools returned",
      "The assistant's own call arguments, its reasoning or plan, and an error message that repeats those arguments back are not evidence",
      "a value the assistant sent to a tool is not thereby supported",
      "a value a tool only echoed back from the assistant's own arguments is not either",
      "The user's request may be restated as what a claim is about, never as the value a claim states",
      "in digits of any script, in words, as ordinals",
      "Text you cannot read counts as an unbacked claim"
    ]) assert.include(text, phrase)
  })

  it("states the claim reading: a negated, hedged, contradicted, retracted or mislabelled value is not stated; any form counts", () => {
    const text = Prompt.systemPrompt
    for (const phrase of ["negated (\"not X\")", "hedged (\"X or Y\", \"probably X\")", "contradicted by another value", "retracted later", "written under another fact's label is not stated", "a table, a JSON object, values alone, another language"]) {
      assert.include(text, phrase)
    }
  })
})
