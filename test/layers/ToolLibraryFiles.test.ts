import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { load, layer, layerToolBench } from "../../layers/ToolLibraryFiles.ts"
import { dataPathIfPresent, repoRoot } from "../../src/io/DataPath.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"

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
