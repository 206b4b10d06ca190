import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import { convertFile, loadFile } from "../../../src/toolenv/importers/ToolAlpaca.ts"

const real = dataPathIfPresent("toolalpaca", "data", "eval_real.json")
const simulated = dataPathIfPresent("toolalpaca", "data", "eval_simulated.json")

describe("ToolAlpaca on hand-written entries", () => {
  it("reads each API's OpenAPI document and reports the ones that are not", () => {
    const doc = { openapi: "3.0.1", info: { title: "Facts" }, paths: { "/facts/random": { get: { operationId: "randomFact", responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "object", properties: { text: { type: "string" } } } } } } } } } } }
    const result = convertFile(
      [
        { Name: "Random Facts", Category: "Entertainment", Documentation: JSON.stringify(doc) },
        { Name: "Broken", Category: "Other", Documentation: "not json" },
        { Category: "Other" }
      ],
      "eval_x.json"
    )
    expect(result?.tools.map((t) => [t.id, t.name, t.group, t.category])).toEqual([["openapi:random_facts/randomFact", "randomFact", "Random Facts", "Entertainment"]])
    expect(result?.report.loaded).toBe(1)
    expect(result?.report.skipped).toBe(2)
    expect(result?.report.issues[0]?.message).toContain("Documentation is not an OpenAPI document")
    expect(convertFile({}, "x.json")).toBeUndefined()
  })
})

describe.skipIf(real === undefined || simulated === undefined)("ToolAlpaca data (needs ../shared/data/toolalpaca)", () => {
  it.effect("loads the operations of the 11 real and 10 simulated evaluation APIs", () =>
    Effect.gen(function* () {
      const r = yield* loadFile(real ?? "")
      expect(r.tools.length).toBe(40)
      expect(new Set(r.tools.map((t) => t.group)).size).toBe(11)
      const s = yield* loadFile(simulated ?? "")
      expect(s.tools.length).toBe(54)
      expect(new Set(s.tools.map((t) => t.group)).size).toBe(10)
    }))
})
