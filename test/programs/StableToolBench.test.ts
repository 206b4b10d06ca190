import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Metrics from "../../src/benchmarks/stabletoolbench/StableToolBenchMetrics.ts"
import { LoopbackServer as Loopback, type RecordedRequest, Reply } from "../support/LoopbackServer.ts"
import { spawnProgram } from "../support/Spawn.ts"

const api = (name: string, description: string, params: ReadonlyArray<string> = []) => ({
  name,
  description,
  method: "GET",
  required_parameters: params.map((p) => ({ name: p, type: "STRING", description: `the ${p}`, default: "Paris" })),
  optional_parameters: []
})

const listEntry = (category: string, tool: string, apiName: string, description: string) => ({
  category_name: category, tool_name: tool, api_name: apiName, api_description: description,
  required_parameters: [], optional_parameters: [], method: "GET"
})

/** A three-API library and a query file of three queries, one of which the scripted judge answers with garbage. */
const writeFixture = (dir: string): { readonly library: string; readonly queries: string } => {
  const library = path.join(dir, "tools")
  fs.mkdirSync(path.join(library, "Weather"), { recursive: true })
  fs.mkdirSync(path.join(library, "Entertainment"), { recursive: true })
  fs.writeFileSync(path.join(library, "Weather", "weather_api.json"), JSON.stringify({
    tool_name: "Weather API",
    tool_description: "Forecasts and alerts for any city",
    api_list: [api("Forecast", "Daily weather forecast for a city", ["city"]), api("Alerts", "Severe weather alerts for a city", ["city"])]
  }))
  fs.writeFileSync(path.join(library, "Entertainment", "jokes.json"), JSON.stringify({
    tool_name: "Jokes",
    tool_description: "Jokes of every kind",
    api_list: [api("Random Joke", "Returns a random joke")]
  }))
  const queries = path.join(dir, "G9_test.json")
  fs.writeFileSync(queries, JSON.stringify([
    { query_id: 1, query: "What is the weather forecast for Paris tomorrow?", api_list: [listEntry("Weather", "Weather API", "Forecast", "Daily weather forecast for a city")], "relevant APIs": [["Weather API", "Forecast"]] },
    { query_id: 2, query: "Tell me a random joke, please.", api_list: [listEntry("Entertainment", "Jokes", "Random Joke", "Returns a random joke")], "relevant APIs": [["Jokes", "Random Joke"]] },
    { query_id: 3, query: "MALFORMED: are there severe weather alerts for Paris?", api_list: [listEntry("Weather", "Weather API", "Alerts", "Severe weather alerts for a city")], "relevant APIs": [["Weather API", "Alerts"]] }
  ]))
  return { library, queries }
}

const completion = (content: string) => ({
  model: "judge-model",
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 10 }
})

const userOf = (request: Pick<RecordedRequest, "body">): string =>
  ((request.body as { readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string }> }).messages ?? [])
    .find((m) => m.role === "user")?.content ?? ""

interface Line {
  readonly file: string
  readonly query: string
  readonly labels: ReadonlyArray<Metrics.AnswerStatus> | null
  readonly trajectory: { readonly answer?: string }
}

describe("npm run stabletoolbench (spawned)", () => {
  it.live("the embedded learned policy judged by a scripted loopback judge: the JSON line agrees with the stored labels; malformed replies are Unsolved", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-stb-"))
      const fixture = writeFixture(dir)
      const server = yield* Loopback.make({
        routes: [{ match: (r) => userOf(r).includes("MALFORMED"), reply: Reply.json(completion("hmm, not sure what to say")) }],
        fallback: Reply.json(completion(`{"answer_status": "Solved", "reason": "scripted"}`))
      })
      const out = path.join(dir, "run")
      const r = yield* Effect.promise(() =>
        spawnProgram("programs/stabletoolbench.ts", [
          "--library", fixture.library, "--queries", fixture.queries, "--policy", "paraagent", "--judge", "llm", "--runs", "2",
          "--max-rounds", "4", "--out", out, "--json", "--base-url", `${server.url}/v1`, "--model", "judge-model", "--max-retries", "0"
        ])
      )
      assert.strictEqual(r.code, 0, r.stderr)
      const last = r.stdout.trim().split("\n").at(-1) ?? ""
      const report = JSON.parse(last) as { files: Record<string, { path: number; pass_rate: number | null; rounds: number; calls: number; searches: number; queries: number; judge_failures: number }> }
      const row = report.files["G9_test.json"]
      assert.isDefined(row)
      assert.strictEqual(row?.queries, 3)
      assert.isAtLeast(row?.path ?? -1, 0)
      assert.isAtMost(row?.path ?? 2, 1)
      assert.isAbove(row?.rounds ?? 0, 0)

      const lines = fs.readFileSync(path.join(out, "trajectories.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Line)
      assert.strictEqual(lines.length, 3)
      const requests = yield* server.requests
      for (const line of lines) {
        const answered = (line.trajectory.answer?.trim() ?? "") !== ""
        const malformed = line.query === "3"
        const expected: Metrics.AnswerStatus = answered && !malformed ? "Solved" : "Unsolved"
        assert.deepStrictEqual(line.labels, [expected, expected], line.query)
        const asked = requests.filter((q) => userOf(q).includes(malformed ? "MALFORMED" : line.query === "1" ? "forecast for Paris" : "random joke")).length
        // two evaluation runs; a malformed reply is asked once more
        assert.strictEqual(asked, answered ? (malformed ? 4 : 2) : 0, line.query)
      }
      // the judge was exercised: the learned policy answered (the fixed seed makes this stable)
      assert.isTrue(lines.some((l) => (l.trajectory.answer?.trim() ?? "") !== ""))
      const labels = lines.map((l) => l.labels ?? [])
      assert.closeTo(row?.pass_rate ?? -1, Metrics.passRate(labels, 2).mean, 1e-6)
      assert.strictEqual(row?.judge_failures, lines.some((l) => l.query === "3" && (l.trajectory.answer?.trim() ?? "") !== "") ? 2 : 0)
      assert.include(r.stdout, "| G9_test.json | 3 |")
      const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as { files: Record<string, unknown> }
      assert.deepStrictEqual(summary.files, report.files)

    }).pipe(Effect.scoped))
})
