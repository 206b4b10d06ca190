import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { convertSealTools, loadSealTools } from "../../../src/toolenv/importers/SealTools.ts"

const sealTools = dataPathIfPresent("seal-tools", "Seal-Tools_Dataset", "tool.jsonl")

describe("Seal-Tools on hand-written lines", () => {
  it("maps Python types and fields, and reports bad lines", () => {
    const text = [
      JSON.stringify({ api_name: "getTeamInfo", api_description: "Team facts", field: "Sports/Football", parameters: { team: { type: "str", description: "Team name" } }, required: ["team"], responses: { team_id: { type: "int", description: "id" }, coach: { type: "str" } } }),
      JSON.stringify({ api_name: "getSchedule", api_description: "Fixtures", field: "Sports/Football", parameters: { team_id: { type: "int" }, season: { type: "year" } }, required: ["team_id", "venue"], responses: {} }),
      "{oops",
      JSON.stringify({ api_description: "nameless" }),
      JSON.stringify({ api_name: "getTeamInfo", field: "Sports/Football" })
    ].join("\n")
    const { tools, report } = convertSealTools(text, "tool.jsonl")
    expect(tools.map((t) => [t.id, t.name, t.category, t.group])).toEqual([
      ["seal-tools:getTeamInfo", "getTeamInfo", "Sports", "Sports/Football"],
      ["seal-tools:getSchedule", "getSchedule", "Sports", "Sports/Football"]
    ])
    expect(tools[0]?.response).toEqual({ type: "object", properties: { team_id: { type: "integer", description: "id" }, coach: { type: "string" } } })
    expect(tools[1]?.parameters).toEqual({ type: "object", properties: { team_id: { type: "integer" }, season: { type: "string" } }, required: ["team_id"] })
    expect(tools[1]?.response).toBeUndefined()
    expect(report.loaded).toBe(2)
    expect(report.skipped).toBe(3)
    expect(report.issues.map((i) => i.source)).toEqual(["tool.jsonl:2.parameters.season", "tool.jsonl:2", "tool.jsonl:3", "tool.jsonl:4", "tool.jsonl:5"])
  })
})

describe.skipIf(sealTools === undefined)("Seal-Tools data (needs ../shared/data/seal-tools)", () => {
  it.effect("loads the 4,076 tools in 146 fields", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadSealTools(sealTools ?? "")
      expect(tools.length).toBe(4076)
      expect(report.issueCount).toBe(0)
      expect(new Set(tools.map((t) => t.category)).size).toBe(146)
      expect(new Set(tools.map((t) => t.name)).size).toBe(4076)
    }))
})
