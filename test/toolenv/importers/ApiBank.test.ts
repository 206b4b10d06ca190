import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { infer } from "../../../src/toolenv/DepInference.ts"
import { ToolSpec } from "../../../src/domain/Tool.ts"
import { loadCatalogFile, loadDirectory, parseCsv } from "../../../src/toolenv/importers/ApiBank.ts"

const apiBank = dataPathIfPresent("api-bank")

const tree = (files: Record<string, string>): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-apibank-"))
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), content)
  }
  return root
}

const tokenApi = { name: "GetUserToken", description: "Get the user token.", input_parameters: { username: { type: "str", description: "The username." }, password: { type: "str", description: "The password." } }, output_parameters: { token: { type: "str", description: "The token." } } }
const agendaApi = {
  name: "AddAgenda",
  description: "Add an agenda item.",
  input_parameters: { token: { type: "str", description: "User's token." }, content: { type: "str", description: "The content." }, location: { type: "str", description: "[Optional] Where." }, attendees: { type: "list(str)", description: "People." } },
  output_parameters: { status: { type: "str", description: "success or failed" } }
}

const prompt = (apis: ReadonlyArray<unknown>) => ({ file: "x.jsonl", id: 0, instruction: `Generate an API request...\nAPI descriptions:\n${apis.map((a) => JSON.stringify(a)).join("\n")}\n`, input: "", expected_output: "" })

describe("API-Bank on hand-written files", () => {
  it.effect("reads prompts, the CSV's Python api_info and training ToolSearcher results; first description wins", () =>
    Effect.gen(function* () {
      const csv = [
        "id,类名,api_info",
        `1,GetUserToken,"description = ""Another wording""\ninput_parameters = {'username': {'type': 'str', 'description': 'u'}}\noutput_parameters = {}"`,
        `2,QueryStock,"description = ""Query a stock price.""\ninput_parameters = {\n    'stock_code': {'type': 'str', 'description': 'The code.'},\n}\noutput_parameters = {'stock_price': {'type': 'float', 'description': 'The price.'}}"`,
        "3,ImageCaption,."
      ].join("\n")
      const dialogue = {
        instruction: "",
        input: "User: find a retreat\nAPI-Request: [ToolSearcher(keywords='retreat')]->{'name': 'RetreatFinder', 'description': 'Finds the retreat's venues.', 'input_parameters': {'location': {'type': str, 'description': 'Where.'}}, 'output_parameters': {'retreats': {'type': 'list', 'description': 'Venues.'}}}\nAPI-Request: [ToolSearcher(keywords='x')]->{'name': 'Broken', 'input_parameters': {'a'",
        output: ""
      }
      const root = tree({
        "test-data/level-1-api.json": JSON.stringify([prompt([tokenApi, agendaApi]), prompt([{ name: "ToolSearcher", description: "search", input_parameters: {}, output_parameters: {} }])]),
        "data/all_apis.csv": csv,
        "training-data/lv3-api-train.json": JSON.stringify([dialogue])
      })
      const { tools, report } = yield* loadDirectory(root)
      expect(tools.map((t) => `${t.name}:${t.category}`)).toEqual([
        "GetUserToken:API-Bank",
        "AddAgenda:API-Bank",
        "QueryStock:API-Bank",
        "RetreatFinder:API-Bank training"
      ])
      expect(report.loaded).toBe(4)
      expect(report.skipped).toBe(3)
      const text = report.issues.map((i) => `${i.source}: ${i.message}`)
      expect(text.some((t) => t.includes("ToolSearcher left out"))).toBe(true)
      expect(text.some((t) => t.startsWith("data/all_apis.csv:row 4: API \"ImageCaption\" skipped"))).toBe(true)
      expect(text.some((t) => t.includes("GetUserToken is described differently"))).toBe(true)
      expect(text.some((t) => t.includes("ToolSearcher result skipped"))).toBe(true)
      expect(text.some((t) => t.includes("bare name str read as a string"))).toBe(true)
      const agenda = tools.find((t) => t.name === "AddAgenda")
      expect(agenda?.parameters.required).toEqual(["token", "content", "attendees"])
      expect(agenda?.parameters.properties["attendees"]).toEqual({ type: "array", items: { type: "string" }, description: "People." })
      expect(tools.find((t) => t.name === "GetUserToken")?.description).toBe("Get the user token.")
      expect(tools.find((t) => t.name === "RetreatFinder")?.description).toBe("Finds the retreat's venues.")
      // the token from GetUserToken is what AddAgenda needs: a hard edge inside the shared API-Bank backend
      const edges = infer(tools).edges
      expect(edges).toContainEqual({ from: "GetUserToken", to: "AddAgenda", kind: "hard", param: "token", field: "token", entity: "user.token" })
    }))

  it("parses RFC 4180 CSV with quoted commas, newlines and quotes", () => {
    expect(parseCsv("a,b\n\"x, y\",\"say \"\"hi\"\"\nthere\"\r\n3,4")).toEqual([["a", "b"], ["x, y", "say \"hi\"\nthere"], ["3", "4"]])
  })
})

describe.skipIf(apiBank === undefined)("API-Bank data (needs ../shared/data/api-bank)", () => {
  it.effect("loads the 101 evaluation/CSV APIs and the APIs of the training dialogues", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadDirectory(apiBank ?? "")
      const evaluation = tools.filter((t) => t.category === "API-Bank")
      expect(evaluation.length).toBe(101)
      expect(tools.length).toBe(485)
      expect(report.skipped).toBe(8)
      expect(new Set(tools.map((t) => t.name)).size).toBe(tools.length)
      const decode = Schema.decodeUnknownExit(ToolSpec)
      expect(tools.filter((t) => decode(t)._tag === "Failure").map((t) => t.id)).toEqual([])
      const withoutTraining = yield* loadDirectory(apiBank ?? "", { training: false })
      expect(withoutTraining.tools.length).toBe(101)
      expect(withoutTraining.tools.map((t) => t.name)).toContain("QueryHealthData")
    }))

  it.effect("loads a catalog file of descriptions (the 67-tool catalog of PR 229)", () =>
    Effect.gen(function* () {
      const file = path.join(apiBank ?? "", "pr229-toolsearcher-free", "tool_catalog.json")
      const { tools, report } = yield* loadCatalogFile(file)
      expect(tools.length).toBe(67)
      expect(report.issueCount).toBe(0)
    }))
})
