import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { dataPathIfPresent, repoRoot } from "../../src/io/DataPath.ts"
import * as Benchmark from "../../src/retrieval/Benchmark.ts"

const run = promisify(execFile)
const tsx = path.join(repoRoot, "node_modules", ".bin", "tsx")
const program = path.join(repoRoot, "programs", "retrieval-eval.ts")

const api = (name: string, description: string, params: ReadonlyArray<string> = []) => ({
  name,
  description,
  method: "GET",
  required_parameters: params.map((p) => ({ name: p, type: "STRING", description: `the ${p}`, default: "" })),
  optional_parameters: []
})

/** A two-tool library and a query file whose api_lists add one API and whose relevant pairs include one that matches nothing. */
const writeFixture = (dir: string): { library: string; queries: string } => {
  const library = path.join(dir, "tools")
  fs.mkdirSync(path.join(library, "Weather"), { recursive: true })
  fs.mkdirSync(path.join(library, "Entertainment"), { recursive: true })
  fs.writeFileSync(path.join(library, "Weather", "weather_api.json"), JSON.stringify({
    tool_name: "Weather API",
    tool_description: "Forecasts and alerts for any city",
    api_list: [api("Forecast", "Daily weather forecast for a city", ["city"]), api("Alerts", "Severe weather alerts for a region", ["region"])]
  }))
  fs.writeFileSync(path.join(library, "Entertainment", "jokes.json"), JSON.stringify({
    tool_name: "Jokes",
    tool_description: "Jokes of every kind",
    api_list: [api("Random Joke", "Returns a random joke")]
  }))
  const listEntry = (category: string, tool: string, apiName: string, description: string) => ({
    category_name: category, tool_name: tool, api_name: apiName, api_description: description,
    required_parameters: [], optional_parameters: [], method: "GET"
  })
  const queries = path.join(dir, "G9_test.json")
  fs.writeFileSync(queries, JSON.stringify([
    {
      query_id: 1,
      query: "What is the weather forecast for Paris tomorrow?",
      api_list: [listEntry("Weather", "Weather API", "Forecast", "Daily weather forecast for a city")],
      "relevant APIs": [["weather api", "forecast"]]
    },
    {
      query_id: 2,
      query: "Tell me a random joke, and show the stock quote of ACME.",
      api_list: [listEntry("Entertainment", "Jokes", "Random Joke", "Returns a random joke"), listEntry("Finance", "Stocks", "Quote", "Latest stock quote for a ticker")],
      "relevant APIs": [["Jokes", "Random_Joke"], ["Stocks", "Quote"], ["Nowhere", "Nothing"]]
    }
  ]))
  return { library, queries }
}

describe("Benchmark.load", () => {
  it.effect("merges the api_lists into the library, matches relevant pairs, and keeps report keys distinct", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "retrieval-bench-"))
      const { library, queries } = writeFixture(dir)
      fs.mkdirSync(path.join(dir, "again"))
      const copy = path.join(dir, "again", path.basename(queries))
      fs.copyFileSync(queries, copy)
      const setup = yield* Benchmark.load(library, [queries, copy])
      expect(setup.tools.length).toBe(4)
      expect(setup.added).toBe(1)
      expect(setup.sets.map((s) => s.name)).toEqual(["G9_test.json", "G9_test.json#2"])
      const second = setup.sets[0]?.queries[1]
      expect(second?.matched.relevant.length).toBe(2)
      expect(second?.matched.unmatched).toEqual([{ tool: "Nowhere", api: "Nothing" }])
      const failure = yield* Effect.flip(Benchmark.load(path.join(dir, "missing"), [queries]))
      expect(failure._tag).toBe("ImportError")
      expect(failure.source).toContain("missing")
    }))
})

describe("programs/retrieval-eval", () => {
  it("ends its output with one JSON line of per-file metrics", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "retrieval-eval-"))
    const { library, queries } = writeFixture(dir)
    const { stdout } = await run(tsx, [program, "--library", library, "--queries", queries, "--json"], { cwd: repoRoot })
    const lines = stdout.trimEnd().split("\n")
    const report = JSON.parse(lines[lines.length - 1] as string)
    expect(Object.keys(report)).toEqual(["files", "build_ms", "retriever", "k"])
    expect(report.retriever).toBe("bm25")
    expect(report.build_ms).toBeGreaterThanOrEqual(0)
    const file = report.files["G9_test.json"]
    expect(Object.keys(file)).toEqual(["ndcg1", "ndcg5", "recall5", "recall10", "p50_ms", "p95_ms", "mean_ms", "queries", "scored", "unmatched"])
    // query 1: the forecast first → 100; query 2: joke and quote (added from the api_list) found, the third pair unmatchable
    expect(file.queries).toBe(2)
    expect(file.unmatched).toBe(1)
    expect(file.ndcg1).toBe(100)
    expect(file.recall10).toBeCloseTo(100 * (1 + 2 / 3) / 2, 2)
    expect(file.ndcg5).toBeCloseTo(100 * (1 + (1 + 1 / Math.log2(3)) / (1 + 1 / Math.log2(3) + 0.5)) / 2, 2)
    expect(file.p50_ms).toBeGreaterThan(0)
    expect(stdout).toContain("library: 4 APIs (3 from")
    expect(stdout).toContain("query 2: [Nowhere, Nothing]")
    // round 1's per-API configuration by name
    const roundOne = await run(tsx, [program, "--library", library, "--queries", queries, "--bm25-config", "api", "--json"], { cwd: repoRoot })
    const roundOneLines = roundOne.stdout.trimEnd().split("\n")
    expect(JSON.parse(roundOneLines[roundOneLines.length - 1] as string).retriever).toBe("bm25-api")
  })

  it("fails with an error naming the flag for bad values and combinations", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "retrieval-eval-"))
    const { library, queries } = writeFixture(dir)
    const failure = (extra: ReadonlyArray<string>) =>
      run(tsx, [program, "--library", library, "--queries", queries, ...extra], { cwd: repoRoot }).then(
        () => ({ code: 0, output: "" }),
        (error: { code?: number; stderr?: string; stdout?: string }) => ({ code: error.code, output: `${error.stderr}${error.stdout}` })
      )
    const [smallK, plainDense, vocabAlone, contradiction] = await Promise.all([
      failure(["--k", "3"]),
      failure(["--retriever", "dense", "--bm25-plain"]),
      failure(["--retriever", "dense", "--vocab", queries]),
      failure(["--bm25-plain", "--bm25-config", "api"])
    ])
    expect(smallK.code).toBe(1)
    expect(smallK.output).toContain("Invalid value for flag --k: \"3\". Expected a value between 10 and 10000")
    expect(plainDense.code).toBe(1)
    expect(plainDense.output).toContain("--bm25-plain / --bm25-config plain applies to --retriever bm25 only")
    expect(vocabAlone.code).toBe(1)
    expect(vocabAlone.output).toContain("--vocab / --tokenizer need --model")
    expect(contradiction.code).toBe(1)
    expect(contradiction.output).toContain("--bm25-plain contradicts --bm25-config api")
  })

  const realData = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
  const g1 = dataPathIfPresent("stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")
  it.skipIf(realData === undefined || g1 === undefined)(
    "on ToolEnv2404 + G1_instruction, our BM25 reaches the issue's hybrid target NDCG@5 of 59.5 within a small margin (skipped without the data folder)",
    async () => {
      const { stdout } = await run(tsx, [program, "--library", realData as string, "--queries", g1 as string, "--json"], {
        cwd: repoRoot,
        maxBuffer: 16 << 20
      })
      const lines = stdout.trimEnd().split("\n")
      const file = JSON.parse(lines[lines.length - 1] as string).files["G1_instruction.json"]
      expect(file.queries).toBe(163)
      expect(file.unmatched).toBe(0)
      // measured 59.75 with the round-2 defaults (docs/retrieval.md; round 1: 48.75); the plain BM25 reached 44.5
      expect(file.ndcg5).toBeGreaterThanOrEqual(58.5)
      expect(file.recall10).toBeGreaterThanOrEqual(73)
    },
    180_000
  )
})
