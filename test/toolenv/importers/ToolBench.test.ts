import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { ToolSpec } from "../../../src/domain/Tool.ts"
import { capDescription, collector, maxDescriptionLength } from "../../../src/toolenv/importers/ImportReport.ts"
import { readText } from "../../../src/toolenv/importers/Read.ts"
import { loadDirectory, matchKey, toolBenchName } from "../../../src/toolenv/importers/ToolBench.ts"

const toolEnv = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")

const writeTree = (files: Record<string, string>): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-toolbench-"))
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), content)
  }
  return root
}

const api = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  url: "https://example.test/x",
  description: `${name} description`,
  method: "GET",
  required_parameters: [],
  optional_parameters: [],
  ...extra
})

const tool = (toolName: string, apis: ReadonlyArray<unknown>) =>
  JSON.stringify({ tool_name: toolName, tool_description: `${toolName} tool`, api_list: apis })

describe("toolBenchName", () => {
  it("follows <api>_for_<tool> in snake case", () => {
    expect(toolBenchName("Random Word API", "Get Word by Start")).toBe("get_word_by_start_for_random_word_api")
    expect(toolBenchName("👋 Demo Project", "Get Order")).toBe("get_order_for_demo_project")
  })

  it("keeps the last 64 characters of a long name, as ToolBench does", () => {
    const n = toolBenchName("Restaurants near me USA", "Get All Restaurant Locations by Zipcode")
    expect(n).toBe("_all_restaurant_locations_by_zipcode_for_restaurants_near_me_usa")
    const long = toolBenchName("A Very Long RapidAPI Tool Name That Goes On And On", "Get the extremely detailed statistics of a player")
    expect(long.length).toBe(64)
    expect(long.endsWith("_for_a_very_long_rapidapi_tool_name_that_goes_on_and_on")).toBe(true)
  })

  it("folds names like ToolBench (no accent folding, no camel-case split)", () => {
    expect(toolBenchName("Números a letras", "NAL Path")).toBe("nal_path_for_n_meros_a_letras")
    expect(toolBenchName("tes", "loginUser")).toBe("loginuser_for_tes")
  })

  it("never returns an empty name for names with no ASCII letters", () => {
    const n = toolBenchName("天气", "查询")
    expect(n).toMatch(/^x[0-9a-z]{6}_for_x[0-9a-z]{6}$/)
  })
})

describe("matchKey", () => {
  it("ignores case, spaces, underscores and punctuation", () => {
    expect(matchKey("Random Word API", "Get Word_by-Start")).toBe(matchKey("random_word_api", "get word by start"))
    expect(matchKey("Kick.com API | Kick API", "Get Channel Clips")).toBe("kickcomapikickapi/getchannelclips")
  })

  it("keeps tool and API apart", () => {
    expect(matchKey("ab", "c")).not.toBe(matchKey("a", "bc"))
  })
})

describe("loadDirectory on hand-written files", () => {
  it.effect("reports bad JSON, bad records and wrong types with the file and reason, and loads the rest", () =>
    Effect.gen(function* () {
      const root = writeTree({
        "Sports/good.json": tool("Good Tool", [
          api("List Teams", {
            schema: { type: "object", properties: { teams: { type: "array", items: { type: "object", properties: { id: { type: "integer" } } } } } }
          }),
          api("Team Details", {
            required_parameters: [{ name: "team_id", type: "NUMBER", description: "the team", default: "7" }],
            optional_parameters: [
              { name: "season", type: "DATE (YYYY-MM-DD)", description: "", default: "" },
              { name: "flag", type: "BOOLEAN", description: "", default: "true" },
              { name: 42, type: "STRING" },
              { name: "team_id", type: "STRING", description: "duplicate" }
            ]
          })
        ]),
        "Sports/broken.json": "{ \"tool_name\": \"Broken\", \"api_list\": [",
        "Sports/no_list.json": JSON.stringify({ tool_name: "No list" }),
        "Data/partial.json": tool("Partial", [api("Works"), { description: "no name" }, api("Odd types", { required_parameters: [{ name: "x", type: null, description: "", default: "" }] })]),
        "stray.json": "{}"
      })
      const result = yield* loadDirectory(root)
      expect(result.tools.map((t) => t.name).sort()).toEqual([
        "list_teams_for_good_tool",
        "odd_types_for_partial",
        "team_details_for_good_tool",
        "works_for_partial"
      ])
      expect(result.report.loaded).toBe(4)
      expect(result.report.skipped).toBe(3)
      const messages = result.report.issues.map((i) => `${i.source}: ${i.message}`)
      expect(messages.some((m) => m.startsWith("Sports/broken.json: tool file skipped: invalid JSON"))).toBe(true)
      expect(messages.some((m) => m.startsWith("Sports/no_list.json: tool file skipped") && m.includes("api_list"))).toBe(true)
      expect(messages.some((m) => m.startsWith("Data/partial.json#api_list[1]: API skipped") && m.includes("name"))).toBe(true)
      expect(messages.some((m) => m.includes("optional_parameters[2]: parameter dropped"))).toBe(true)
      expect(messages.some((m) => m.includes("\"team_id\" listed twice"))).toBe(true)
      expect(messages.some((m) => m.includes("type null unknown, assumed string"))).toBe(true)
      expect(messages.some((m) => m.startsWith("stray.json: file outside a category folder"))).toBe(true)
      expect(result.report.issueCount).toBe(7)

      const details = result.tools.find((t) => t.apiName === "Team Details")
      expect(details?.id).toBe("toolbench:Sports/good_tool/team_details")
      expect(details?.category).toBe("Sports")
      expect(details?.group).toBe("Good Tool")
      expect(details?.groupDescription).toBe("Good Tool tool")
      expect(details?.parameters).toEqual({
        type: "object",
        properties: {
          team_id: { type: "number", description: "the team", default: 7 },
          season: { type: "string", format: "date" },
          flag: { type: "boolean", default: true }
        },
        required: ["team_id"]
      })
      const list = result.tools.find((t) => t.apiName === "List Teams")
      expect(list?.response?.properties?.["teams"]?.items?.properties?.["id"]).toEqual({ type: "integer" })
      expect(list?.source).toEqual({ kind: "toolbench", ref: "Sports/good.json#api_list[0]" })
    }))

  it.effect("makes colliding names unique by id order and gives the same names when loaded twice", () =>
    Effect.gen(function* () {
      const root = writeTree({
        "Email/validator.json": tool("Email Validator", [api("Validate"), api("Validate")]),
        "Tools/validator.json": tool("Email Validator", [api("Validate")]),
        "Business/validator.json": tool("Email-Validator", [api("validate")]),
        "Data/long.json": tool("A Very Long RapidAPI Tool Name That Goes On And On", [
          api("Get the extremely detailed statistics of a player"),
          api("List the extremely detailed statistics of a player")
        ])
      })
      const first = yield* loadDirectory(root)
      const second = yield* loadDirectory(root)
      expect(first.tools.map((t) => [t.id, t.name])).toEqual(second.tools.map((t) => [t.id, t.name]))
      const names = first.tools.map((t) => t.name)
      expect(new Set(names).size).toBe(6)
      expect(new Set(first.tools.map((t) => t.id)).size).toBe(6)
      for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      // the smallest id keeps the plain name
      const plain = first.tools.find((t) => t.name === "validate_for_email_validator")
      expect(plain?.id).toBe("toolbench:Business/email_validator/validate")
      expect(first.tools.find((t) => t.id === "toolbench:Email/email_validator/validate~2")).toBeDefined()
    }))

  it.effect("keeps parameters named __proto__ or constructor as parameters", () =>
    Effect.gen(function* () {
      const root = writeTree({
        "Data/odd.json": tool("Odd", [api("Odd Names", { required_parameters: [{ name: "constructor", type: "STRING", description: "", default: "" }], optional_parameters: [{ name: "__proto__", type: "NUMBER", description: "", default: "1" }] })])
      })
      const result = yield* loadDirectory(root)
      const params = result.tools[0]?.parameters
      expect(Object.keys(params?.properties ?? {})).toEqual(["constructor", "__proto__"])
      expect(params?.required).toEqual(["constructor"])
      expect(Object.getPrototypeOf(params?.properties)).toBe(Object.prototype)
      expect(result.report.issueCount).toBe(0)
    }))

  it.effect("reports a tool file with an empty api_list and a folder named *.json, one skipped line each", () =>
    Effect.gen(function* () {
      const root = writeTree({
        "Sports/empty.json": tool("Empty", []),
        "Sports/good.json": tool("Good", [api("Works")]),
        "Sports/nested.json/inner.json": tool("Inner", [api("Hidden")])
      })
      const result = yield* loadDirectory(root)
      expect(result.tools.map((t) => t.name)).toEqual(["works_for_good"])
      expect(result.report.loaded).toBe(1)
      expect(result.report.skipped).toBe(2)
      const messages = result.report.issues.map((i) => `${i.source}: ${i.message}`)
      expect(messages).toContain("Sports/empty.json: tool file skipped: empty api_list: no API to import")
      expect(messages).toContain("Sports/nested.json: a folder named like a data file, not a file: skipped")
      expect(result.report.issueCount).toBe(2)
    }))

  it.effect("a FIFO, a link to a FIFO and a dangling link named *.json are skipped lines, never opened (no hang)", () =>
    Effect.gen(function* () {
      const root = writeTree({ "Sports/good.json": tool("Good", [api("Works")]) })
      execFileSync("mkfifo", [path.join(root, "Sports", "pipe.json")])
      fs.symlinkSync(path.join(root, "Sports", "pipe.json"), path.join(root, "Sports", "link-to-pipe.json"))
      fs.symlinkSync(path.join(root, "Sports", "gone"), path.join(root, "Sports", "dangling.json"))
      const result = yield* loadDirectory(root)
      expect(result.tools.map((t) => t.name)).toEqual(["works_for_good"])
      const messages = result.report.issues.map((i) => `${i.source}: ${i.message}`)
      for (const name of ["dangling.json", "link-to-pipe.json", "pipe.json"]) {
        expect(messages).toContain(`Sports/${name}: not a regular file (a FIFO, socket, device or broken link): never opened: skipped`)
      }
      expect(result.report.skipped).toBe(3)
      // and reading one directly is a typed error naming it, not a wait for a writer
      const direct = yield* Effect.flip(readText(path.join(root, "Sports", "pipe.json")))
      expect(direct.message).toBe("not a regular file (a FIFO, socket, device or broken link): never opened")
    }))

  it.effect("cuts tool, group and parameter descriptions to maxDescriptionLength and counts each cut in the report", () =>
    Effect.gen(function* () {
      const huge = "d".repeat(5_000_000)
      const root = writeTree({
        "Data/huge.json": JSON.stringify({
          tool_name: "Huge",
          tool_description: huge,
          api_list: [
            api("Big", { description: huge, required_parameters: [{ name: "q", type: "STRING", description: huge, default: "" }] }),
            api("Small")
          ]
        })
      })
      const result = yield* loadDirectory(root)
      expect(maxDescriptionLength).toBe(65_536)
      const big = result.tools.find((t) => t.apiName === "Big")
      expect(big?.description.length).toBe(maxDescriptionLength)
      expect(big?.description.endsWith("…")).toBe(true)
      expect(big?.groupDescription?.length).toBe(maxDescriptionLength)
      expect(big?.parameters.properties["q"]?.description?.length).toBe(maxDescriptionLength)
      expect(result.tools.find((t) => t.apiName === "Small")?.description).toBe("Small description")
      const cuts = result.report.issues.filter((i) => i.message === `description truncated from 5000000 to ${maxDescriptionLength} characters`)
      // the group description is cut once per API (each API carries it), the API and parameter descriptions once each
      expect(cuts.map((i) => i.source).sort()).toEqual([
        "Data/huge.json#api_list[0].description",
        "Data/huge.json#api_list[0].required_parameters[0]",
        "Data/huge.json#api_list[0].tool_description",
        "Data/huge.json#api_list[1].tool_description"
      ])
      expect(result.report.issueCount).toBe(4)
      expect(result.report.loaded).toBe(2)
    }))

  it("never cuts a description inside a surrogate pair", () => {
    const issues = collector()
    const text = "a".repeat(maxDescriptionLength - 2) + "😀".repeat(10)
    const cut = capDescription(text, "x", issues)
    expect(cut.length).toBeLessThanOrEqual(maxDescriptionLength)
    expect(cut.endsWith("…")).toBe(true)
    expect(/[\ud800-\udbff]…$/.test(cut)).toBe(false)
    expect(issues.report("x").issueCount).toBe(1)
  })

  it.effect("fails with ImportError only when the folder itself is missing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(loadDirectory(path.join(os.tmpdir(), "paraagent-no-such-folder-xyz")))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("ImportError")
    }))
})

describe.skipIf(toolEnv === undefined)("ToolEnv2404 (needs ../shared/data/toolenv2404)", () => {
  it.effect("loads every API of the 12,301 tool files in 49 categories", () =>
    Effect.gen(function* () {
      const result = yield* loadDirectory(toolEnv ?? "")
      const stats = DepGraph.stats(result.tools, DepGraph.empty)
      expect(result.tools.length).toBe(46803)
      expect(result.report.loaded).toBe(46803)
      expect(result.report.skipped).toBe(0)
      expect(stats.categories).toBe(49)
      expect(stats.tools).toBe(12301)
      expect(new Set(result.tools.map((t) => t.name)).size).toBe(46803)
      expect(new Set(result.tools.map((t) => t.id)).size).toBe(46803)
      expect(result.tools.filter((t) => !/^[A-Za-z0-9_-]{1,64}$/.test(t.name)).map((t) => t.name)).toEqual([])
      expect(result.tools.filter((t) => t.response !== undefined).length).toBe(11950)
      const clique = result.tools.find((t) => t.group === "TheClique" && t.apiName === "Songkick concert")
      expect(clique?.name).toBe("songkick_concert_for_theclique")
      expect(clique?.parameters.required).toEqual(["id_conc"])
      // every spec is a valid ToolSpec (the domain schema), x-entity marks included
      const decode = Schema.decodeUnknownExit(ToolSpec)
      expect(result.tools.filter((t) => decode(t)._tag === "Failure").map((t) => t.id)).toEqual([])
    }))
})
