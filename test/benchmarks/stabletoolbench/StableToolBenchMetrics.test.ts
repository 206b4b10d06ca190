import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { toolId, toolName } from "../../../src/domain/Ids.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import type { SearchResult, Trajectory } from "../../../src/domain/Trajectory.ts"
import * as Metrics from "../../../src/benchmarks/stabletoolbench/StableToolBenchMetrics.ts"
import * as StbJudge from "../../../src/benchmarks/stabletoolbench/StableToolBenchJudge.ts"
import * as Job from "../../../src/benchmarks/stabletoolbench/StableToolBenchJob.ts"
import type { BenchmarkQuery } from "../../../src/toolenv/importers/StableToolBench.ts"
import * as JudgeLlm from "../../../layers/model/JudgeLlm.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import { failed, makeTrajectory, ok } from "../../judge/fixtures.ts"
import { type LoopbackServer, LoopbackServer as Loopback, Reply } from "../../support/LoopbackServer.ts"

const spec = (name: string, group: string, api: string, category: string, parameters: ToolSpec["parameters"] = { type: "object", properties: {}, required: [] }): ToolSpec => ({
  id: toolId(`toolbench:${category}/${group}/${api}`),
  name: toolName(name),
  group,
  apiName: api,
  category,
  description: `${api} of ${group}`,
  parameters,
  source: { kind: "toolbench", ref: name }
})

const forecast = spec("forecast_for_weather", "Weather", "Forecast", "Weather", {
  type: "object",
  properties: { city: { type: "string", default: "Paris" }, days: { type: "integer" }, unit: { type: "string", enum: ["C", "F"] }, verbose: { type: "boolean" } },
  required: ["city", "days", "unit"]
})
const alerts = spec("alerts_for_weather", "Weather", "Alerts", "Weather")
const joke = spec("random_joke_for_jokes", "Jokes", "Random Joke", "Entertainment")

const benchmarkQuery = (relevant: ReadonlyArray<readonly [string, string]>): BenchmarkQuery => ({
  id: "7",
  query: "Forecast for Paris, any weather alerts, and a joke.",
  relevant: relevant.map(([tool, api]) => ({ tool, api })),
  apis: [forecast, alerts, joke]
})

/** The query with three distinct relevant pairs (one listed twice, in another spelling) and one that resolves to nothing. */
const query = Metrics.toQueryTask(
  benchmarkQuery([["Weather", "Forecast"], ["weather", "forecast"], ["Weather", "Alerts"], ["Jokes", "Random Joke"], ["Gone", "Missing"]]),
  [forecast, forecast, alerts, joke, undefined],
  "G9.json"
)

const search = (n: number): SearchResult => ({ slot: `s${n}`, query: "weather", hits: [], startMs: 0, endMs: 1 })

/** A trajectory over the query's task, with `searches` searches in its first round. */
const rollout = (rounds: Parameters<typeof makeTrajectory>[1], answer: string | undefined, searches = 0): Trajectory => {
  const t = makeTrajectory(query.task, rounds, answer)
  return { ...t, steps: t.steps.map((s, i) => (i === 0 ? { ...s, searches: Array.from({ length: searches }, (_, k) => search(k)) } : s)) }
}

describe("a StableToolBench query as a task", () => {
  it("relevant pairs are deduplicated by match key; an unresolved one stays in the Path denominator", () => {
    assert.strictEqual(query.relevantCount, 4)
    assert.strictEqual(query.unresolved, 1)
    assert.deepStrictEqual(query.relevant, [forecast.name, alerts.name, joke.name])
    assert.deepStrictEqual(query.task.gold.map((g) => g.tool), [forecast.name, alerts.name, joke.name])
    assert.isTrue(query.task.gold.every((g) => g.deps.length === 0))
    assert.strictEqual(query.task.level, "I3")
    assert.deepStrictEqual(query.task.categories, ["Weather", "Entertainment"])
    assert.strictEqual(query.task.id, "stb:G9.json:7")
    assert.strictEqual(query.task.request, "Forecast for Paris, any weather alerts, and a joke.")
  })

  it("oracle arguments: the documented default, else the first allowed value, else the empty value of the type; optional ones left out", () => {
    assert.deepStrictEqual(Metrics.oracleArguments(forecast), { city: "Paris", days: 0, unit: "C" })
    assert.deepStrictEqual(Metrics.oracleArguments(joke), {})
  })

  it("levels: one tool I1, several tools of one category I2, several categories I3", () => {
    assert.strictEqual(Metrics.levelOf([forecast, alerts]), "I1")
    assert.strictEqual(Metrics.levelOf([forecast, spec("news_for_storms", "Storms", "News", "Weather")]), "I2")
    assert.strictEqual(Metrics.levelOf([forecast, joke]), "I3")
  })
})

describe("Path, rounds, calls, searches of one rollout", () => {
  it("Path = distinct relevant APIs called successfully / relevant pairs; failed, refused and irrelevant calls do not count", () => {
    const refused = { ...ok(joke.name, {}, { joke: "x" }), attempts: 0 }
    const t = rollout([
      [ok(forecast.name, { city: "Paris" }, { temp: 21 }), ok(forecast.name, { city: "Lyon" }, { temp: 19 }), failed(alerts.name, {}, "server_error", "500")],
      [refused, ok("translate_for_other", {}, { text: "hi" })]
    ], "It is 21 degrees in Paris.", 2)
    const outcome = Metrics.outcomeOf(query, t)
    assert.strictEqual(outcome.path, 1 / 4)
    assert.strictEqual(outcome.calls, 4)
    assert.strictEqual(outcome.searches, 2)
    assert.strictEqual(outcome.rounds, 2)
    assert.isTrue(outcome.answered)
  })

  it("every relevant API called successfully: Path 3/4 (the unresolved pair can never be hit)", () => {
    const t = rollout([[ok(forecast.name, {}, {}), ok(alerts.name, {}, {}), ok(joke.name, {}, {})]], "done")
    assert.strictEqual(Metrics.outcomeOf(query, t).path, 3 / 4)
  })

  it("no final answer (none, or only whitespace) is not answered; a query listing no relevant API has no Path", () => {
    assert.isFalse(Metrics.outcomeOf(query, rollout([[]], undefined)).answered)
    assert.isFalse(Metrics.outcomeOf(query, rollout([[]], "  \n ")).answered)
    const none = Metrics.toQueryTask(benchmarkQuery([]), [], "G9.json")
    assert.isUndefined(Metrics.outcomeOf(none, rollout([[]], "x")).path)
  })
})

describe("the solvable pass rate", () => {
  it("Solved 1, Unsure 0.5, Unsolved 0; a run's score is its mean over queries; the rate is the mean over runs (population sd)", () => {
    const rate = Metrics.passRate([["Solved", "Solved", "Unsolved"], ["Unsure", "Unsolved", "Unsolved"], ["Solved", "Unsure", "Solved"], ["Unsolved", "Unsolved", "Unsolved"]], 3)
    assert.deepStrictEqual(rate.perRun, [2.5 / 4, 1.5 / 4, 1 / 4])
    assert.closeTo(rate.mean, 5 / 12, 1e-12)
    const m = 5 / 12
    assert.closeTo(rate.sd, Math.sqrt(((2.5 / 4 - m) ** 2 + (1.5 / 4 - m) ** 2 + (1 / 4 - m) ** 2) / 3), 1e-12)
  })

  it("a label missing for a run scores 0 in that run (as the harness counts it); no query is NaN, not 0", () => {
    assert.deepStrictEqual(Metrics.passRate([["Solved"], ["Solved", "Solved"]], 2).perRun, [1, 0.5])
    assert.isNaN(Metrics.passRate([], 3).mean)
  })

  it("bounded by 0 and 1; all Unsure is exactly 0.5; the plain mean with sd 0 when the runs agree", () => {
    const status = fc.constantFrom<Metrics.AnswerStatus>("Solved", "Unsure", "Unsolved")
    fc.assert(fc.property(fc.array(fc.array(status, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 30 }), (labels) => {
      const rate = Metrics.passRate(labels, 3)
      assert.isAtLeast(rate.mean, 0)
      assert.isAtMost(rate.mean, 1)
      assert.strictEqual(Metrics.passRate(labels.map(() => ["Unsure", "Unsure", "Unsure"]), 3).mean, 0.5)
      const agreed = labels.map((q): ReadonlyArray<Metrics.AnswerStatus> => [q[0] ?? "Unsolved", q[0] ?? "Unsolved", q[0] ?? "Unsolved"])
      const plain = agreed.reduce((s, q) => s + Metrics.statusScore[q[0] ?? "Unsolved"], 0) / labels.length
      assert.closeTo(Metrics.passRate(agreed, 3).mean, plain, 1e-12)
      assert.closeTo(Metrics.passRate(agreed, 3).sd, 0, 1e-12)
    }))
  })

  it("a file summary: pass rate null without labels (never guessed), counted failures and unanswered queries", () => {
    const answered = Metrics.outcomeOf(query, rollout([[ok(forecast.name, {}, {})]], "x", 1))
    const silent = Metrics.outcomeOf(query, rollout([[], []], undefined))
    const unlabelled = Metrics.summarize([{ query, outcome: answered, labels: null, judgeFailures: 0 }, { query, outcome: silent, labels: null, judgeFailures: 0 }], 3)
    assert.isNull(unlabelled.passRate)
    assert.strictEqual(unlabelled.path, 1 / 8)
    assert.strictEqual(unlabelled.rounds, 1.5)
    assert.strictEqual(unlabelled.searches, 0.5)
    assert.strictEqual(unlabelled.unanswered, 1)
    assert.strictEqual(unlabelled.unresolved, 2)
    const labelled = Metrics.summarize([
      { query, outcome: answered, labels: ["Solved", "Unsure"], judgeFailures: 1 },
      { query, outcome: silent, labels: ["Unsolved", "Unsolved"], judgeFailures: 0 }
    ], 2)
    assert.deepStrictEqual(labelled.passRate?.perRun, [0.5, 0.25])
    assert.strictEqual(labelled.judgeFailures, 1)
    const json = JSON.parse(Metrics.jsonReport([["G9.json", unlabelled], ["G8.json", labelled]], { policy: "hand" })) as {
      files: Record<string, { path: number; pass_rate: number | null; rounds: number; calls: number; searches: number; queries: number }>
    }
    assert.deepStrictEqual(Object.keys(json.files), ["G9.json", "G8.json"])
    assert.isNull(json.files["G9.json"]?.pass_rate)
    assert.strictEqual(json.files["G8.json"]?.pass_rate, 0.375)
    assert.strictEqual(json.files["G9.json"]?.queries, 2)
    assert.include(Metrics.table([["G9.json", unlabelled]]), "| n/a |")
  })
})

describe("reading the judge's label", () => {
  it("the JSON object (fenced, prose around, any case, an AnswerStatus. prefix), else one bare status word", () => {
    assert.deepStrictEqual(StbJudge.readLabel(`{"answer_status": "Solved", "reason": "gives the forecast"}`), { _tag: "label", status: "Solved", reason: "gives the forecast" })
    assert.deepInclude(StbJudge.readLabel("Sure:\n```json\n{\"answer_status\": \" UNSURE \"}\n```"), { _tag: "label", status: "Unsure" })
    assert.deepInclude(StbJudge.readLabel(`{"answer_status": "AnswerStatus.Unsolved"}`), { _tag: "label", status: "Unsolved" })
    assert.deepInclude(StbJudge.readLabel("The answer is unsolved."), { _tag: "label", status: "Unsolved" })
  })

  it("malformed replies are malformed, never thrown: empty, not a status, two statuses, a wrong field", () => {
    for (const text of ["", "I think it is fine", "Solved? No, Unsolved.", `{"answer_status": "Passed"}`, `{"status": "x"}`, "{\"answer_status\": "]) {
      assert.strictEqual(StbJudge.readLabel(text)._tag, "malformed", text)
    }
  })
})

const completion = (content: string) => ({
  model: "judge-model",
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 10 }
})

const userOf = (body: unknown): string => {
  const messages = (body as { readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }> }).messages
  return messages.find((m) => m.role === "user")?.content ?? ""
}

const labelerFor = (server: LoopbackServer) =>
  JudgeLlm.makePassRate().pipe(Effect.provide(Layer.fresh(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "judge-model", maxRetries: 0, backoffBaseMs: 5 }))))

describe("the pass-rate judge against a loopback server", () => {
  const answered = rollout([[ok(forecast.name, { city: "Paris" }, { temp: 21 })]], "It is 21 degrees in Paris tomorrow.")

  it.live("Solved in one call that shows the query and the final answer only", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion(`{"answer_status": "Solved", "reason": "ok"}`))] })
      const labeler = yield* labelerFor(server)
      const result = yield* labeler.label(query.query, answered)
      assert.deepStrictEqual(result, { status: "Solved", reason: "ok" })
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 1)
      assert.include(userOf(requests[0]?.body), "It is 21 degrees in Paris tomorrow.")
      assert.include(userOf(requests[0]?.body), query.query)
      assert.notInclude(userOf(requests[0]?.body), "temp")
      assert.strictEqual(labeler.name, "llm-pass-rate:judge-model")
    }))

  it.live("Unsure is looked at again with the tool evidence; the second label is the label", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({ replies: [Reply.json(completion(`{"answer_status": "Unsure"}`)), Reply.json(completion(`{"answer_status": "Solved"}`))] })
      const result = yield* (yield* labelerFor(server)).label(query.query, answered)
      assert.strictEqual(result.status, "Solved")
      const requests = yield* server.requests
      assert.strictEqual(requests.length, 2)
      assert.include(userOf(requests[1]?.body), `${forecast.name}({"city":"Paris"}) -> ok: {"temp":21}`)
    }))

  it.live("a malformed reply is asked once more; twice malformed, or an endpoint failure, is Unsolved with the failure recorded", () =>
    Effect.gen(function*() {
      const repaired = yield* Loopback.make({ replies: [Reply.json(completion("no idea")), Reply.json(completion(`{"answer_status": "Unsure"}`)), Reply.json(completion(`{"answer_status": "unsure"}`))] })
      assert.deepInclude(yield* (yield* labelerFor(repaired)).label(query.query, answered), { status: "Unsure" })
      assert.strictEqual((yield* repaired.requests).length, 3)

      const garbage = yield* Loopback.make({ fallback: Reply.json(completion("Solved or Unsolved, hard to say")) })
      const twice = yield* (yield* labelerFor(garbage)).label(query.query, answered)
      assert.strictEqual(twice.status, "Unsolved")
      assert.include(twice.failure ?? "", "several statuses")
      assert.strictEqual((yield* garbage.requests).length, 2)

      const broken = yield* Loopback.make({ fallback: Reply.text("{not json", { status: 200 }) })
      const down = yield* (yield* labelerFor(broken)).label(query.query, answered)
      assert.strictEqual(down.status, "Unsolved")
      assert.isString(down.failure)
    }))

  it.live("no final answer: Unsolved in every run without a judge call", () =>
    Effect.gen(function*() {
      const server = yield* Loopback.make({})
      const labeler = yield* labelerFor(server)
      const silent = yield* Job.labelAnswer(labeler, query, rollout([[]], undefined), 3)
      assert.deepStrictEqual(silent, { labels: ["Unsolved", "Unsolved", "Unsolved"], failures: 0 })
      assert.strictEqual((yield* server.requests).length, 0)
      yield* server.push(...[1, 2, 3].map(() => Reply.json(completion(`{"answer_status": "Solved"}`))))
      const judged = yield* Job.labelAnswer(labeler, query, answered, 3)
      assert.deepStrictEqual(judged, { labels: ["Solved", "Solved", "Solved"], failures: 0 })
    }))
})
