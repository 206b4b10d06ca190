import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import * as PolicyLearned from "../../../layers/onnx/PolicyLearned.ts"
import * as PolicyOpenAi from "../../../layers/model/PolicyOpenAi.ts"
import type { Policy } from "../../../src/agent/Policy.ts"
import { toolName } from "../../../src/domain/Ids.ts"
import * as ApiBankScore from "../../../src/benchmarks/apibank/ApiBankScore.ts"
import * as ApiBankRun from "../../../src/benchmarks/apibank/ApiBankRun.ts"
import { searchToolName } from "../../../src/protocol/OpenAiFormat.ts"
import { Retriever } from "../../../src/retrieval/Retriever.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import { type RecordedRequest, LoopbackServer, Reply } from "../../support/LoopbackServer.ts"
import { spawnProgram } from "../../support/Spawn.ts"
import { gold, writeFixture } from "./ApiBankFixture.ts"

const dir = writeFixture()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const load = Effect.gen(function*() {
  const api = yield* ApiBankRun.loadLibrary(dir)
  const l1 = yield* ApiBankRun.loadLevel(path.join(dir, "lv1-lv2-samples"), 1, api)
  const l2 = yield* ApiBankRun.loadLevel(path.join(dir, "lv1-lv2-samples"), 2, api)
  return { api, l1, l2 }
})

/** Runs both levels of the fixture with a policy layer; returns the summaries and the step records. */
const runWith = (policy: Layer.Layer<Policy, unknown>) =>
  Effect.gen(function*() {
    const { api, l1, l2 } = yield* load
    const services = Layer.mergeAll(policy, Retriever.layerBm25.pipe(Layer.provide(Layer.succeed(ToolLibrary, api.searchable))))
    const [r1, r2] = yield* Effect.all([
      ApiBankRun.run(l1.steps, api, { concurrency: 2, seed: 1 }),
      ApiBankRun.run(l2.steps, api, { concurrency: 2, seed: 1 })
    ]).pipe(Effect.provide(services))
    return {
      s1: ApiBankScore.summarise(1, l1.files, r1.map((r) => r.verdict), l1.unresolved),
      s2: ApiBankScore.summarise(2, l2.files, r2.map((r) => r.verdict), l2.unresolved),
      records: [...r1, ...r2]
    }
  })

const completion = (message: Record<string, unknown>) => ({
  model: "api-bank-model",
  choices: [{ message: { role: "assistant", ...message }, finish_reason: "stop" }],
  usage: { prompt_tokens: 100, completion_tokens: 10 }
})

/** The dialogue the request shows (the user message of the policy's conversation). */
const transcriptOf = (request: RecordedRequest): string =>
  ((request.body as { readonly messages: ReadonlyArray<{ readonly content: string | null }> }).messages.map((m) => m.content ?? "").join("\n"))

/** The fixture's next call, by what the transcript already holds. */
const nextCall = (text: string): { readonly name: string; readonly args: Record<string, string> } =>
  text.includes("(1+2)*3")
    ? { name: "Calculator", args: { formula: gold.formula } }
    : text.includes("API: [GetUserToken(")
    ? { name: "AddAgenda", args: gold.agenda }
    : text.includes("Can you put the meeting") && !text.includes("API: [ToolSearcher(")
    ? { name: "ToolSearcher", args: { keywords: "add agenda" } }
    : { name: "GetUserToken", args: gold.token }

const openAi = (server: { readonly url: string }, mode: "text" | "native") =>
  PolicyOpenAi.layer({ mode, lenient: true }).pipe(Layer.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "api-bank-model", maxRetries: 0 })))

describe("API-Bank through a policy", () => {
  it.effect("the fixture's records: steps, and the records left out with their reasons", () =>
    Effect.gen(function*() {
      const { l1, l2 } = yield* load
      assert.deepStrictEqual(l1.steps.map((s) => `${s.file}#${s.index}:${s.gold.name}`), [
        "AddAgenda-level-1-1.jsonl#0:GetUserToken",
        "AddAgenda-level-1-1.jsonl#1:AddAgenda",
        "Broken-level-1-1.jsonl#0:GetUserToken",
        "Calculator-level-1-1.jsonl#0:Calculator"
      ])
      assert.deepStrictEqual(l1.unresolved.map((u) => [u.file, u.reason]), [
        ["Broken-level-1-1.jsonl", "malformed_line"],
        ["Broken-level-1-1.jsonl", "unknown_api"],
        ["NoCall-level-1-1.jsonl", "no_api_call"]
      ])
      assert.deepStrictEqual(l2.steps.map((s) => [s.gold.name, s.found]), [["ToolSearcher", "AddAgenda"], ["GetUserToken", undefined], ["AddAgenda", undefined]])
    }))

  it.effect("the policy's context: level 1 shows the dialogue's APIs as a search result, earlier calls as executed steps; level 2 starts with no tool", () =>
    Effect.gen(function*() {
      const { api, l1, l2 } = yield* load
      const second = ApiBankRun.contextOf(l1.steps[1] as ApiBankScore.Step, api, false, 1)
      assert.deepStrictEqual(second.tools.map((t) => t.name).sort(), ["AddAgenda", "GetUserToken"])
      assert.deepStrictEqual(second.history.map((s) => [s.phase, s.searches.length, s.observations.map((o) => o.tool)]), [["explore", 1, []], ["execute", 0, ["GetUserToken"]]])
      assert.include(second.request, "API: [GetUserToken(username='foo', password='bar')] Response: {\"token\":\"z9x8c7v6b5n4m3q2w1\"}")
      assert.isUndefined(second.task)
      assert.strictEqual(ApiBankRun.contextOf(l1.steps[1] as ApiBankScore.Step, api, true, 1).task?.gold[0]?.tool, "AddAgenda")
      const first2 = ApiBankRun.contextOf(l2.steps[0] as ApiBankScore.Step, api, false, 1)
      assert.deepStrictEqual([first2.tools.length, first2.history.length], [0, 0])
      const third2 = ApiBankRun.contextOf(l2.steps[2] as ApiBankScore.Step, api, false, 1)
      assert.deepStrictEqual(third2.tools.map((t) => t.name).sort(), ["AddAgenda", "GetUserToken"])
    }))

  it.effect("reading outputs: structured turns, ParaAct tags, API-Bank's text, ToolSearcher as a search, garbage as no call", () =>
    Effect.gen(function*() {
      const { api } = yield* load
      const usage = { promptTokens: 0, completionTokens: 0 }
      const read = (text: string) => ApiBankRun.readOutput({ text, usage }, api)
      assert.deepStrictEqual(read("[AddAgenda(token='t', content='c')]"), { _tag: "call", name: "AddAgenda", arguments: { token: "t", content: "c" }, via: "api-bank" })
      assert.deepStrictEqual(read("<call>[{\"id\":\"c1\",\"name\":\"GetUserToken\",\"arguments\":{\"username\":\"foo\"}}]</call>"), {
        _tag: "call",
        name: "GetUserToken",
        arguments: { username: "foo" },
        via: "paraact"
      })
      assert.deepStrictEqual(read("<search>[{\"slot\":\"s1\",\"query\":\"add agenda\"}]</search>"), { _tag: "search", keywords: "add agenda", via: "paraact" })
      assert.deepStrictEqual(read("[ToolSearcher(keywords='add agenda')]"), { _tag: "search", keywords: "add agenda", via: "api-bank" })
      assert.strictEqual(read("<call>[{\"name\": </call>")._tag, "none")
      assert.strictEqual(read("Sure, I will add it.")._tag, "none")
      assert.strictEqual(read("")._tag, "none")
      const structured = ApiBankRun.readOutput({ text: "", usage, turn: { searches: [], calls: [], answer: "done" } }, api)
      assert.strictEqual(structured._tag, "none")
      const native = ApiBankRun.readOutput({ text: "", usage, turn: { searches: [], calls: [{ id: "c9" as never, tool: toolName("Calculator"), arguments: { formula: "1+1" } }] } }, api)
      assert.deepStrictEqual(native, { _tag: "call", name: "Calculator", arguments: { formula: "1+1" }, via: "structured" })
    }))

  it.effect("the oracle: every call right; its ToolSearcher step runs our retriever", () =>
    Effect.gen(function*() {
      const { l1, l2 } = yield* load
      const { s1, s2 } = yield* runWith(ApiBankRun.oracle([...l1.steps, ...l2.steps]))
      assert.deepStrictEqual([s1.steps, s1.correct, s1.dialogues, s1.successful, s1.partialDialogues], [4, 4, 3, 2, 1])
      assert.deepStrictEqual([s2.steps, s2.correct, s2.searchSteps, s2.searchCorrect, s2.successful], [3, 3, 1, 1, 1])
    }))

  it.live("a model answering in API-Bank's format over a loopback OpenAI-compatible server; malformed output scores wrong", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        fallback: (request) => {
          const next = nextCall(transcriptOf(request))
          // the Calculator reply drops API-Bank's brackets: not its format, so no call
          const text = next.name === "Calculator"
            ? `Calculator(formula='${next.args["formula"]}')`
            : `API-Request: ${ApiBankScore.formatApiCall(next.name, next.args)}`
          return Reply.json(completion({ content: text }))
        }
      })
      const { s1, s2, records } = yield* runWith(openAi(server, "text"))
      assert.deepStrictEqual([s1.steps, s1.correct, s1.successful, s1.dialogues], [4, 3, 1, 3])
      assert.deepStrictEqual(s1.outcomes, { correct: 3, no_call: 1 })
      assert.deepStrictEqual([s2.steps, s2.correct, s2.successful], [3, 3, 1])
      assert.isTrue(records.filter((r) => r.verdict.correct).every((r) => r.verdict.prediction._tag !== "call" || r.verdict.prediction.via === "api-bank"))
      assert.strictEqual((yield* server.requests).length, 7)
    }))

  it.live("native tool calls over the loopback server; a server error is a policy_error step, not a crash", () =>
    Effect.gen(function*() {
      const server = yield* LoopbackServer.make({
        fallback: (request) => {
          const next = nextCall(transcriptOf(request))
          if (next.name === "Calculator") return Reply.status(503)
          const fn = next.name === "ToolSearcher"
            ? { name: searchToolName, arguments: JSON.stringify({ slot: "s1", query: next.args["keywords"] }) }
            : { name: next.name, arguments: JSON.stringify(next.args) }
          return Reply.json(completion({ content: null, tool_calls: [{ id: "call_1", type: "function", function: fn }] }))
        }
      })
      const { s1, s2 } = yield* runWith(openAi(server, "native"))
      assert.deepStrictEqual(s1.outcomes, { correct: 3, policy_error: 1 })
      assert.deepStrictEqual([s2.correct, s2.searchCorrect], [3, 1])
    }))

  it.effect("the embedded learned policy (models/) acts on every step without failing", () =>
    Effect.gen(function*() {
      const { s1, s2, records } = yield* runWith(PolicyLearned.layer(PolicyLearned.shippedDir, { decoding: "greedy" }))
      assert.strictEqual(s1.steps + s2.steps, 7)
      assert.strictEqual(records.length, 7)
      assert.isTrue(records.every((r) => r.verdict.outcome !== "policy_error"))
      assert.isTrue(records.every((r) => r.verdict.prediction._tag === "none" || (r.verdict.prediction._tag !== "policy_error" && r.verdict.prediction.via === "structured")))
    }))

  it("npm run api-bank: the oracle on the fixture, --json and --verdicts", async () => {
    const out = path.join(dir, "verdicts.jsonl")
    const r = await spawnProgram("programs/api-bank.ts", ["--data", dir, "--policy", "oracle", "--json", "--verdicts", out])
    assert.strictEqual(r.code, 0, r.stderr)
    const last = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as { levels: Record<string, ApiBankScore.LevelSummary> }
    assert.deepStrictEqual([last.levels["L1"]?.accuracy, last.levels["L1"]?.steps, last.levels["L2"]?.accuracy], [100, 4, 100])
    assert.include(r.stdout, "L1 records left out: malformed_line 1, unknown_api 1, no_api_call 1")
    assert.strictEqual(fs.readFileSync(out, "utf8").trim().split("\n").length, 7)
  })
})
