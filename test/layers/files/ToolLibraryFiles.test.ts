import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { load, layer, layerToolBench } from "../../../layers/files/ToolLibraryFiles.ts"
import { dataPathIfPresent, repoRoot } from "../../../src/io/DataPath.ts"
import { specCaps } from "../../../src/toolenv/importers/ImportReport.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"

const toolEnv = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")
const g1 = dataPathIfPresent("stabletoolbench", "solvable_queries", "test_instruction", "G1_instruction.json")

const toolBenchDir = (): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-lib-"))
  fs.mkdirSync(path.join(root, "Video_Images"))
  fs.writeFileSync(
    path.join(root, "Video_Images", "tube.json"),
    JSON.stringify({
      tool_name: "Tube",
      tool_description: "Videos",
      api_list: [
        { name: "Search Videos", description: "search", method: "GET", required_parameters: [{ name: "q", type: "STRING", description: "", default: "" }], optional_parameters: [], schema: { type: "object", properties: { items: { type: "array", items: { type: "object", properties: { videoId: { type: "string" } } } } } } },
        { name: "Video Details", description: "details", method: "GET", required_parameters: [{ name: "video_id", type: "STRING", description: "", default: "" }], optional_parameters: [] }
      ]
    })
  )
  fs.writeFileSync(path.join(root, "Video_Images", "broken.json"), "{")
  return root
}

describe("ToolLibraryFiles", () => {
  it.effect("serves a ToolBench folder as the ToolLibrary, with G_dep and x-entity marks", () =>
    Effect.gen(function* () {
      const lib = yield* ToolLibrary
      expect(lib.tools.map((t) => t.name)).toEqual(["search_videos_for_tube", "video_details_for_tube"])
      expect(lib.categories).toEqual(["Video_Images"])
      expect(lib.get("video_details_for_tube")?.parameters.properties["video_id"]?.["x-entity"]).toBe("video.id")
      expect(lib.graph.kind("search_videos_for_tube", "video_details_for_tube")).toBe("hard")
      expect(lib.graph.incoming("video_details_for_tube")).toEqual([
        { from: "search_videos_for_tube", to: "video_details_for_tube", kind: "hard", param: "video_id", field: "items[].videoId", entity: "video.id" }
      ])
    }).pipe(Effect.provide(layerToolBench(toolBenchDir()))))

  it.effect("mixes sources, keeps names unique across them and returns every report", () =>
    Effect.gen(function* () {
      const mcp = path.join(repoRoot, "test", "fixtures", "mcp-tools-list.json")
      const loaded = yield* load([
        { kind: "toolbench", dir: toolBenchDir() },
        { kind: "mcp", path: mcp, server: "tracker" },
        { kind: "mcp", path: mcp, server: "tracker2" }
      ])
      const names = loaded.library.tools.map((t) => t.name)
      expect(names.length).toBe(14)
      expect(new Set(names).size).toBe(14)
      // the copy's ids sort after the original's, so the original keeps the plain names
      expect(loaded.library.get("get_issue")?.id).toBe("mcp:tracker/get_issue")
      expect(loaded.reports.map((r) => [r.loaded, r.skipped])).toEqual([[2, 1], [6, 2], [6, 2]])
      expect(loaded.reports[0]?.issues[0]?.source).toBe("Video_Images/broken.json")
      expect(loaded.library.categories).toEqual(["MCP", "Video_Images"])
    }))

  it.effect("caps names, parameters, defaults and schemas like descriptions: a 4 MB tool file is a spec within the caps, each cap reported", () =>
    Effect.gen(function* () {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-lib-"))
      fs.mkdirSync(path.join(root, "Data"))
      const wide = Object.fromEntries(Array.from({ length: 3_000 }, (_, i) => [`field_${i}`, { type: "string" }]))
      const file = JSON.stringify({
        tool_name: `Big${"n".repeat(1_000_000)}`,
        tool_description: "a scraped tool",
        api_list: [{
          name: `Fetch${"a".repeat(500_000)}`,
          description: "fetch",
          method: "GET",
          required_parameters: [{ name: "q", type: "STRING", description: "query", default: "x".repeat(200_000) }],
          optional_parameters: [
            ...Array.from({ length: 2_000 }, (_, i) => ({ name: `p${i}`, type: "STRING", description: "", default: `${i}` })),
            { name: "n".repeat(5_000), type: "STRING", description: "", default: "" }
          ],
          schema: { type: "object", properties: { items: { type: "array", items: { type: "object", properties: wide } }, kind: { type: "string", enum: Array.from({ length: 5_000 }, (_, i) => `k${i}`) } } }
        }]
      })
      assert.isAbove(file.length, 1_500_000)
      fs.writeFileSync(path.join(root, "Data", "big.json"), file)
      const loaded = yield* load([{ kind: "toolbench", dir: root }])
      const [spec] = loaded.library.tools
      assert.isDefined(spec)
      const bytes = JSON.stringify(spec).length
      assert.isBelow(bytes, specCaps.specBytes)
      assert.isAtMost(spec!.group.length, specCaps.displayName)
      assert.isAtMost(spec!.apiName.length, specCaps.displayName)
      assert.strictEqual(Object.keys(spec!.parameters.properties).length, specCaps.properties)
      // the file was 4x its cap in names alone; the spec kept is a small fraction of it
      assert.isBelow(bytes, file.length / 4)
      assert.deepStrictEqual(spec!.parameters.required, ["q"])
      assert.isUndefined(spec!.parameters.properties["q"]?.default)
      assert.notProperty(spec!.parameters.properties, "n".repeat(5_000))
      const caps = loaded.reports.find((r) => r.source.startsWith("size caps"))
      const messages = (caps?.issues ?? []).map((i) => i.message).join("\n")
      for (const expected of ["group of 1000003 characters cut to 4096", "apiName of 500005 characters cut to 4096", "default value of 200002 characters dropped", "2001 properties cut to 1024", "name over 4096 characters dropped", "enum of 5000 values cut to 4096"]) {
        assert.include(messages, expected)
      }
    }))

  it.effect("fails with ImportError when a source is missing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Layer.build(layer([{ kind: "openapi", path: path.join(os.tmpdir(), "no-such-spec.json") }])).pipe(Effect.scoped))
      expect(Exit.isFailure(exit) && String(exit.cause).includes("ImportError")).toBe(true)
    }))

  it.effect.skipIf(toolEnv === undefined || g1 === undefined)("ToolEnv2404 merged with G1_instruction's api_lists (needs ../shared/data)", () =>
    Effect.gen(function* () {
      const loaded = yield* load([{ kind: "toolbench", dir: toolEnv ?? "", queryFiles: [g1 ?? ""] }])
      expect(loaded.library.tools.length).toBe(46803 + 176)
      expect(loaded.reports.map((r) => r.loaded)).toEqual([46803, 163, 176])
      expect(loaded.library.graph.edges.length).toBeGreaterThan(20000)
    }))
})
