import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as path from "node:path"
import { repoRoot } from "../../../src/io/DataPath.ts"
import { infer } from "../../../src/toolenv/DepInference.ts"
import { convertList, loadFile } from "../../../src/toolenv/importers/Mcp.ts"

const fixture = path.join(repoRoot, "test", "fixtures", "mcp-tools-list.json")

describe("MCP tools/list", () => {
  it.effect("imports the fixture's JSON-RPC response, reporting the bad entries", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadFile(fixture, { server: "tracker" })
      expect(tools.map((t) => t.name)).toEqual(["search_issues", "get_issue", "add_comment", "projects_list", "create_issue", "bulk_close"])
      expect(tools.map((t) => t.id)).toContain("mcp:tracker/projects/list")
      expect(report.loaded).toBe(6)
      expect(report.skipped).toBe(2)
      expect(report.issues.map((i) => `${i.source}: ${i.message}`)).toEqual([
        "mcp-tools-list.json#tools[4]: inputSchema repaired: (root): required names no property: \"due\"",
        "mcp-tools-list.json#tools[5]: inputSchema is not an object schema (type \"array\"); the tool takes no arguments",
        "mcp-tools-list.json#tools[6]: tool skipped: Missing key at [\"name\"]",
        "mcp-tools-list.json#tools[7]: tool \"get_issue\" listed twice; the first is kept"
      ])
      const search = tools[0]
      expect(search?.group).toBe("tracker")
      expect(search?.category).toBe("MCP")
      expect(search?.parameters.additionalProperties).toBe(false)
      expect(search?.parameters.properties["limit"]).toEqual({ type: "integer", default: 10, minimum: 1, maximum: 50 })
      // $defs resolved inside the output schema
      expect(search?.response?.properties?.["issues"]?.items?.properties?.["id"]?.type).toBe("string")
      // a self-reference ends in a marked stub instead of recursing forever
      expect(tools[1]?.response?.properties?.["parent"]?.properties?.["parent"]).toEqual({ type: "object", description: "recursive reference to #" })
      // anyOf with null picks the non-null branch
      expect(tools[4]?.parameters.properties["priority"]).toEqual({ type: "string", enum: ["low", "normal", "urgent"] })
      const edges = infer(tools).edges
      expect(edges).toContainEqual({ from: "search_issues", to: "get_issue", kind: "hard", param: "issue_id", field: "issues[].id", entity: "issue.id" })
      expect(edges).toContainEqual({ from: "projects_list", to: "create_issue", kind: "hard", param: "project_id", field: "projects[].project_id", entity: "project.id" })
    }))

  it("accepts a bare result and several pages", () => {
    const page = (name: string) => ({ tools: [{ name, inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }] })
    expect(convertList(page("a"), "x.json")?.tools.map((t) => t.name)).toEqual(["a"])
    const paged = convertList([page("a"), { jsonrpc: "2.0", id: 3, result: page("b") }], "srv.json")
    expect(paged?.tools.map((t) => t.id)).toEqual(["mcp:srv/a", "mcp:srv/b"])
    expect(paged?.tools[1]?.source.ref).toBe("srv.json#page[1].tools[0]")
    expect(convertList({ result: { items: [] } }, "x.json")).toBeUndefined()
  })

  it.effect("fails on a file that is not a tool list", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(loadFile(path.join(repoRoot, "package.json")))
      expect(Exit.isFailure(exit) && String(exit.cause).includes("not a tools/list result")).toBe(true)
    }))
})
