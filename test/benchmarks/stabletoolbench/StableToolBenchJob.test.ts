import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Teacher from "../../../src/agent/Teacher.ts"
import * as Job from "../../../src/benchmarks/stabletoolbench/StableToolBenchJob.ts"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { Retriever } from "../../../src/retrieval/Retriever.ts"
import * as Rollout from "../../../src/runtime/Rollout.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { makeLibrary, ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as JudgeLlm from "../../../layers/model/JudgeLlm.ts"
import * as OpenAiClient from "../../../layers/model/OpenAiClient.ts"
import { LoopbackServer as Loopback, type RecordedRequest, Reply } from "../../support/LoopbackServer.ts"

const g3 = dataPathIfPresent("stabletoolbench", "solvable_queries", "test_instruction", "G3_instruction.json")

/** A one-tool ToolBench folder: the real query file's api_lists bring every API its queries need. */
const smallLibrary = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-stb-job-"))
  fs.mkdirSync(path.join(dir, "Entertainment"), { recursive: true })
  fs.writeFileSync(path.join(dir, "Entertainment", "jokes.json"), JSON.stringify({
    tool_name: "Jokes",
    tool_description: "Jokes of every kind",
    api_list: [{ name: "Random Joke", description: "Returns a random joke", method: "GET", required_parameters: [], optional_parameters: [] }]
  }))
  return dir
}

const completion = (content: string) => ({
  model: "judge-model",
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 50, completion_tokens: 10 }
})

const userOf = (request: { readonly body: unknown }): string =>
  ((request.body as { readonly messages?: ReadonlyArray<{ readonly role: string; readonly content: string }> }).messages ?? [])
    .find((m) => m.role === "user")?.content ?? ""

describe("StableToolBench job on the real G3_instruction queries (skipped without ../shared/data)", () => {
  it.live.skipIf(g3 === undefined)("oracle rollouts judged by a scripted loopback judge: Solved, Unsure → Solved, malformed → Unsolved, Unsolved", () =>
    Effect.gen(function*() {
      const setup = yield* Job.load(smallLibrary(), [g3 as string])
      const file = setup.files[0]
      assert.strictEqual(file?.name, "G3_instruction.json")
      assert.strictEqual(file?.queries.length, 61)
      // every relevant pair of the file resolves through its api_list, and every gold tool is in the library
      for (const q of file?.queries ?? []) {
        assert.strictEqual(q.unresolved, 0, q.id)
        assert.isAbove(q.relevantCount, 0, q.id)
        for (const name of q.relevant) assert.isDefined(setup.library.get(name), name)
      }
      const chosen = { ...(file as Job.QueryFileTasks), queries: (file as Job.QueryFileTasks).queries.slice(0, 4) }
      const [solved, unsure, malformed, unsolved] = chosen.queries.map((q) => q.query)
      const about = (text: string | undefined) => (r: Pick<RecordedRequest, "body">) => text !== undefined && userOf(r).includes(text)
      const server = yield* Loopback.make({
        routes: [
          { match: (r) => userOf(r).includes("first look at this answer was Unsure"), reply: Reply.json(completion(`{"answer_status": "Solved"}`)) },
          { match: about(solved), reply: Reply.json(completion("```json\n{\"answer_status\": \"Solved\", \"reason\": \"all parts\"}\n```")) },
          { match: about(unsure), reply: Reply.json(completion(`{"answer_status": "Unsure"}`)) },
          { match: about(malformed), reply: Reply.json(completion("I cannot decide.")) },
          { match: about(unsolved), reply: Reply.json(completion(`{"answer_status": "Unsolved"}`)) }
        ]
      })
      const labeler = yield* JudgeLlm.makePassRate().pipe(
        Effect.provide(OpenAiClient.layerFrom({ baseUrl: `${server.url}/v1`, model: "judge-model", maxRetries: 0, backoffBaseMs: 5 }))
      )
      const app = Rollout.layer({ faults: false }).pipe(
        Layer.provideMerge(Layer.mergeAll(Teacher.layer({ mistakeRate: 0 }), Retriever.layerBm25, Simulator.layer({ faultRate: 0 }))),
        Layer.provideMerge(Layer.succeed(ToolLibrary, setup.library))
      )
      const seen: Array<string> = []
      const rows = yield* Job.run([chosen], {
        paradigm: "ParaAct",
        seed: 1,
        runs: 2,
        concurrency: 2,
        progress: false,
        labeler,
        onTrajectory: (_file, query, trajectory) => Effect.sync(() => void seen.push(`${query.id}:${trajectory.answer === undefined ? "-" : "a"}`))
      }).pipe(Effect.provide(app))
      const [name, row] = rows[0] ?? []
      assert.strictEqual(name, "G3_instruction.json")
      assert.strictEqual(row?.queries, 4)
      assert.strictEqual(seen.length, 4)
      // the oracle answers every query, so each is judged in both runs
      assert.strictEqual(row?.unanswered, 0)
      assert.deepStrictEqual(row?.passRate?.perRun, [0.5, 0.5])
      assert.strictEqual(row?.passRate?.mean, 0.5)
      assert.strictEqual(row?.judgeFailures, 2)
      assert.isAbove(row?.path ?? 0, 0)
      assert.isAtMost(row?.path ?? 2, 1)
      assert.isAbove(row?.calls ?? 0, 0)
      assert.isAbove(row?.searches ?? 0, 0)
      // per run: one call each for Solved / Unsolved, two for Unsure (+ evidence), two for the malformed one (asked again)
      assert.strictEqual((yield* server.requests).length, 2 * (1 + 2 + 2 + 1))

      // the rule judge: no call, pass rate null
      const before = (yield* server.requests).length
      const ruled = yield* Job.run([chosen], { paradigm: "ParaAct", seed: 1, runs: 3, concurrency: 2, progress: false }).pipe(Effect.provide(app))
      assert.isNull(ruled[0]?.[1].passRate)
      assert.strictEqual(ruled[0]?.[1].path, row?.path)
      assert.strictEqual((yield* server.requests).length, before)
    }).pipe(Effect.scoped))
})

describe("StableToolBench job options", () => {
  it.effect("a run count below 1 and a file without queries are typed errors naming the field", () =>
    Effect.gen(function*() {
      const noRuns = yield* Effect.flip(Job.run([], { paradigm: "ParaAct", seed: 1, runs: 0, concurrency: 1, progress: false }))
      assert.deepInclude(noRuns, { _tag: "StableToolBenchError", field: "runs" })
      const empty = yield* Effect.flip(Job.run([{ name: "x.json", path: "/tmp/x.json", queries: [], report: { source: "x", loaded: 0, skipped: 0, issues: [], issueCount: 0 } }], {
        paradigm: "ParaAct", seed: 1, runs: 1, concurrency: 1, progress: false
      }))
      assert.deepInclude(empty, { _tag: "StableToolBenchError", field: "queries" })
      assert.include(empty.message, "/tmp/x.json: no usable query")
      const broken = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-stb-bad-")), "not_queries.json")
      fs.writeFileSync(broken, JSON.stringify({ query: "an object, not an array of queries" }))
      const notQueries = yield* Effect.flip(Job.load(smallLibrary(), [broken]))
      assert.deepInclude(notQueries, { _tag: "ImportError", source: broken })
      assert.include(notQueries.message, "not a query file")
    }).pipe(Effect.provide(Rollout.layer().pipe(
      Layer.provideMerge(Layer.mergeAll(Teacher.layer(), Retriever.layerBm25, Simulator.layer())),
      Layer.provideMerge(Layer.succeed(ToolLibrary, makeLibrary("empty", [], DepGraph.make([]))))
    ))))
})
