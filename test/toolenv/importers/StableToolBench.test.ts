import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { type ImportResult, maxDescriptionLength } from "../../../src/toolenv/importers/ImportReport.ts"
import { type BenchmarkQuery, loadQueryFile, matcher, mergeQueryApis, resolveRelevant } from "../../../src/toolenv/importers/StableToolBench.ts"
import { loadDirectory } from "../../../src/toolenv/importers/ToolBench.ts"

const queriesDir = dataPathIfPresent("stabletoolbench", "solvable_queries", "test_instruction")
const toolEnv = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
const evalset = dataPathIfPresent("stabletoolbench", "toolbench", "tooleval", "results", "default_evalset", "gpt-3.5-turbo_CoT")

const tmpFile = (name: string, content: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-stb-"))
  const file = path.join(dir, name)
  fs.writeFileSync(file, content)
  return file
}

const queryApi = (tool: string, api: string, extra: Record<string, unknown> = {}) => ({
  category_name: "Data",
  tool_name: tool,
  api_name: api,
  api_description: `${api} of ${tool}`,
  required_parameters: [],
  optional_parameters: [],
  method: "GET",
  ...extra
})

const toolFile = (toolName: string, apis: ReadonlyArray<string>) =>
  JSON.stringify({
    tool_name: toolName,
    tool_description: "",
    api_list: apis.map((name) => ({ name, description: name, method: "GET", required_parameters: [], optional_parameters: [] }))
  })

describe("loadQueryFile on hand-written files", () => {
  it.effect("converts api_list entries, template responses and relevant pairs; reports bad records", () =>
    Effect.gen(function* () {
      const file = tmpFile(
        "G9_test.json",
        JSON.stringify([
          {
            query: "Find a word starting with fru",
            query_id: 7,
            api_list: [
              queryApi("Random Word API", "Get Word by Start", {
                required_parameters: [{ name: "start", type: "string", description: "", default: "fru" }],
                template_response: { word: "str", senses: [{ id: "int", _list_length: 2 }], tags: ["list of str with length 3"] }
              }),
              { tool_name: "missing category" }
            ],
            "relevant APIs": [["Random Word API", "Get Word by Start"], ["only one"]]
          },
          { query_id: 8, api_list: [] },
          { query: "no relevant list", query_id: "q9", api_list: [] }
        ])
      )
      const { queries, report } = yield* loadQueryFile(file)
      expect(queries.map((q) => q.id)).toEqual(["7", "q9"])
      expect(report.loaded).toBe(2)
      expect(report.skipped).toBe(1)
      expect(report.issueCount).toBe(4)
      const sources = report.issues.map((i) => i.source)
      expect(sources).toEqual(["G9_test.json#query=7/api_list[1]", "G9_test.json#query=7/relevant APIs[1]", "G9_test.json[1]", "G9_test.json#query=q9/api_list"])
      expect(report.issues[3]?.message).toMatch(/^empty api_list: the query offers no API/)
      const q = queries[0]
      expect(q?.relevant).toEqual([{ tool: "Random Word API", api: "Get Word by Start" }])
      const spec = q?.apis[0]
      expect(spec?.name).toBe("get_word_by_start_for_random_word_api")
      expect(spec?.id).toBe("toolbench:Data/random_word_api/get_word_by_start")
      expect(spec?.source.kind).toBe("stabletoolbench")
      expect(spec?.parameters.properties["start"]).toEqual({ type: "string", default: "fru" })
      expect(spec?.response).toEqual({
        type: "object",
        properties: {
          word: { type: "string" },
          senses: { type: "array", items: { type: "object", properties: { id: { type: "integer" } } } },
          tags: { type: "array", items: { type: "array", items: { type: "string" } } }
        }
      })
    }))

  it.effect("cuts a 5 MB api_description to maxDescriptionLength and reports the cut", () =>
    Effect.gen(function* () {
      const file = tmpFile("G8_test.json", JSON.stringify([
        { query: "q", query_id: 1, api_list: [queryApi("Big Tool", "Big Api", { api_description: "x".repeat(5_000_000) })] }
      ]))
      const { queries, report } = yield* loadQueryFile(file)
      expect(queries[0]?.apis[0]?.description.length).toBe(maxDescriptionLength)
      expect(report.issues.map((i) => `${i.source}: ${i.message}`)).toEqual([
        `G8_test.json#query=1/api_list[0].description: description truncated from 5000000 to ${maxDescriptionLength} characters`
      ])
    }))

  it.effect("fails with ImportError for a file that is not an array of queries", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(loadQueryFile(tmpFile("x.json", "{\"query\": 1}")))
      expect(Exit.isFailure(exit) && String(exit.cause).includes("not a query file")).toBe(true)
      const missing = yield* Effect.exit(loadQueryFile(path.join(os.tmpdir(), "no-such-query-file.json")))
      expect(Exit.isFailure(missing) && String(missing.cause).includes("cannot read")).toBe(true)
    }))
})

describe("mergeQueryApis", () => {
  it.effect("reuses the library's spec for an API it has (whatever the spelling) and adds the others once", () =>
    Effect.gen(function* () {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-stb-lib-"))
      fs.mkdirSync(path.join(root, "Data"))
      fs.writeFileSync(path.join(root, "Data", "random_word_api.json"), toolFile("Random Word API", ["Get Word by Start", "Get Word by Length"]))
      const library = yield* loadDirectory(root)
      const file = tmpFile(
        "G1.json",
        JSON.stringify([
          { query: "a", query_id: 1, api_list: [queryApi("random_word_api", "get word by start"), queryApi("Random Word API", "Get Word (FREE)")], "relevant APIs": [["random_word_api", "get word by start"]] },
          { query: "b", query_id: 2, api_list: [queryApi("Random Word API", "Get Word (FREE)")], "relevant APIs": [["Random Word API", "Get Word (FREE)"]] }
        ])
      )
      const { queries } = yield* loadQueryFile(file)
      const merged = mergeQueryApis(library.tools, queries)
      expect(merged.added).toBe(1)
      expect(merged.matched).toBe(1)
      expect(merged.tools.length).toBe(3)
      expect(new Set(merged.tools.map((t) => t.name)).size).toBe(3)
      const start = library.tools.find((t) => t.apiName === "Get Word by Start")
      expect(merged.queries[0]?.apis[0]).toBe(start)
      const find = matcher(merged.tools).find
      expect(resolveRelevant(merged.queries[0] as BenchmarkQuery, find).map((t) => t?.name)).toEqual(["get_word_by_start_for_random_word_api"])
      expect(resolveRelevant(merged.queries[1] as BenchmarkQuery, find).map((t) => t?.name)).toEqual(["get_word_free_for_random_word_api"])
      // merging again adds nothing
      expect(mergeQueryApis(merged.tools, queries).added).toBe(0)
    }))
})

describe.skipIf(queriesDir === undefined || toolEnv === undefined)("StableToolBench test queries (needs ../shared/data)", () => {
  let library: ImportResult | undefined
  beforeAll(async () => {
    library = await Effect.runPromise(loadDirectory(toolEnv ?? ""))
  })

  const files = [
    ["G1_instruction", 163],
    ["G1_category", 153],
    ["G2_instruction", 106],
    ["G3_instruction", 61]
  ] as const

  it.effect.skipIf(evalset === undefined)("names are ToolBench's own: 1,282 of the 1,520 function names in the reference answers are library names", () =>
    Effect.gen(function* () {
      const names = new Set<string>((library?.tools ?? []).map((t) => t.name))
      const reference = new Set<string>()
      for (const [name] of files) {
        const { queries } = yield* loadQueryFile(path.join(queriesDir ?? "", `${name}.json`))
        for (const q of queries) for (const a of q.apis) names.add(a.name)
        const answers = fs.readFileSync(path.join(evalset ?? "", `${name}.json`), "utf8")
        for (const m of answers.matchAll(/"name": "([^"]+_for_[^"]+)"/g)) reference.add(m[1] ?? "")
      }
      expect(reference.size).toBe(1520)
      expect([...reference].filter((n) => names.has(n)).length).toBe(1282)
    }))

  for (const [name, count] of files) {
    it.effect(`${name}: ${count} queries, every relevant pair resolves after merging`, () =>
      Effect.gen(function* () {
        const { queries, report } = yield* loadQueryFile(path.join(queriesDir ?? "", `${name}.json`))
        expect(queries.length).toBe(count)
        expect(report.skipped).toBe(0)
        const tools: ReadonlyArray<ToolSpec> = library?.tools ?? []
        const merged = mergeQueryApis(tools, queries)
        const find = matcher(merged.tools).find
        const unresolved = merged.queries.flatMap((q) => resolveRelevant(q, find).flatMap((t, i) => (t === undefined ? [`${q.id}:${JSON.stringify(q.relevant[i])}`] : [])))
        expect(unresolved).toEqual([])
        expect(new Set(merged.tools.map((t) => t.name)).size).toBe(merged.tools.length)
        expect(new Set(merged.tools.map((t) => t.id)).size).toBe(merged.tools.length)
        expect(merged.added).toBeGreaterThan(0)
        expect(merged.tools.length).toBe(tools.length + merged.added)
      }))
  }
})
