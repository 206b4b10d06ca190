import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { ToolSpec } from "../../../src/domain/Tool.ts"
import { categoryOf, convertFiles, loadDirectory } from "../../../src/toolenv/importers/Bfcl.ts"

const bfcl = dataPathIfPresent("bfcl")

const record = (id: string, functions: ReadonlyArray<unknown>) => JSON.stringify({ id, question: [[{ role: "user", content: "q" }]], function: functions })

const triangle = {
  name: "geometry.triangle_area",
  description: "Area of a triangle.",
  parameters: {
    type: "dict",
    properties: {
      base: { type: "float", description: "base" },
      sides: { type: "tuple", items: { type: "integer" } },
      meta: { type: "dict", properties: { unit: { type: "string", enum: ["m", "cm"] } } },
      anything: { type: "any" }
    },
    required: ["base", "height"]
  }
}

describe("BFCL on hand-written records", () => {
  it.effect("a folder named BFCL_*.json in the data folder is reported as skipped, not silently passed over", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-bfcl-"))
      fs.writeFileSync(path.join(dir, "BFCL_v4_simple.json"), record("simple_0", [triangle]))
      fs.mkdirSync(path.join(dir, "BFCL_v4_multiple.json"))
      const { tools, report } = yield* loadDirectory(dir)
      expect(tools.map((t) => t.apiName)).toEqual(["geometry.triangle_area"])
      expect(report.skipped).toBe(1)
      expect(report.issues.map((i) => `${i.source}: ${i.message}`)).toContain("BFCL_v4_multiple.json: a folder named like a data file, not a file: skipped")
    }))

  it("maps BFCL types, keeps identical functions once and reports bad lines", () => {
    const text = [
      record("simple_0", [triangle]),
      record("simple_1", [triangle, { name: "math.factorial", description: "n!", parameters: { type: "dict", properties: { number: { type: "integer" } }, required: ["number"] } }]),
      "{ not json",
      JSON.stringify({ id: "x", question: [] }),
      record("simple_3", [{ description: "no name" }, { name: "math.factorial", description: "n! (another variant)", parameters: { type: "dict", properties: {}, required: [] } }])
    ].join("\n")
    const { tools, report } = convertFiles([{ file: "BFCL_v4_simple.json", text }], "test")
    expect(tools.map((t) => t.apiName)).toEqual(["geometry.triangle_area", "math.factorial", "math.factorial"])
    expect(report.loaded).toBe(3)
    expect(report.skipped).toBe(3)
    expect(report.issues.map((i) => i.source)).toEqual([
      "BFCL_v4_simple.json#simple_0/function[0]",
      "BFCL_v4_simple.json:3",
      "BFCL_v4_simple.json:4",
      "BFCL_v4_simple.json#simple_3/function[0]"
    ])
    expect(report.issues[0]?.message).toContain("required names no property: \"height\"")
    const area = tools[0]
    expect(area?.name).toBe("geometry_triangle_area")
    expect(area?.group).toBe("geometry")
    expect(area?.category).toBe("simple")
    expect(area?.parameters).toEqual({
      type: "object",
      properties: {
        base: { type: "number", description: "base" },
        sides: { type: "array", items: { type: "integer" } },
        meta: { type: "object", properties: { unit: { type: "string", enum: ["m", "cm"] } } },
        anything: {}
      },
      required: ["base"]
    })
    // two different functions with one name: distinct ids and names, the smaller id keeps the plain name
    const [a, b] = tools.slice(1)
    expect(a?.id).not.toBe(b?.id)
    expect(new Set([a?.name, b?.name]).size).toBe(2)
    expect([a?.name, b?.name]).toContain("math_factorial")
    // content-addressed ids: the same input gives the same ids
    expect(convertFiles([{ file: "BFCL_v4_simple.json", text }], "test").tools.map((t) => t.id)).toEqual(tools.map((t) => t.id))
  })

  it("names the category after the file", () => {
    expect(categoryOf("/x/BFCL_v4_live_multiple.json")).toBe("live_multiple")
  })
})

describe.skipIf(bfcl === undefined)("BFCL v4 data (needs ../shared/data/bfcl)", () => {
  it.effect("loads 2,332 distinct functions out of 5,833 listed in 2,351 records", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadDirectory(bfcl ?? "")
      expect(tools.length).toBe(2332)
      expect(report.loaded).toBe(2332)
      expect(report.skipped).toBe(0)
      expect(new Set(tools.map((t) => t.name)).size).toBe(2332)
      expect(tools.filter((t) => !/^[A-Za-z0-9_-]{1,64}$/.test(t.name))).toEqual([])
      const decode = Schema.decodeUnknownExit(ToolSpec)
      expect(tools.filter((t) => decode(t)._tag === "Failure").map((t) => t.id)).toEqual([])
      const categories = new Map<string, number>()
      for (const t of tools) categories.set(t.category, (categories.get(t.category) ?? 0) + 1)
      expect(Object.fromEntries(categories)).toEqual({ irrelevance: 239, live_multiple: 1073, live_simple: 154, multiple: 480, parallel: 153, simple_python: 233 })
    }))
})
