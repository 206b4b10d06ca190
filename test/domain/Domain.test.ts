import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { JsonSchema, ToolSpec } from "../../src/domain/index.ts"

const spec = {
  id: "generated:sports/team_roster",
  name: "team_roster",
  group: "Team Roster",
  apiName: "team_roster",
  category: "Sports",
  description: "Lists the players of a team.",
  parameters: {
    type: "object",
    properties: { team_id: { type: "string", "x-entity": "team.id", description: "the team" } },
    required: ["team_id"]
  },
  response: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
  source: { kind: "generated", ref: "seed=1" }
}

describe("domain schemas", () => {
  it("round-trips a ToolSpec through JSON", () => {
    const codec = Schema.fromJsonString(ToolSpec)
    const decoded = Schema.decodeUnknownSync(codec)(JSON.stringify(spec))
    expect(Schema.decodeUnknownSync(codec)(Schema.encodeSync(codec)(decoded))).toEqual(decoded)
    expect(decoded.parameters.properties["team_id"]?.["x-entity"]).toBe("team.id")
  })

  it("rejects a JSON schema with a bad type and names the path", () => {
    const exit = Schema.decodeUnknownExit(JsonSchema)({ properties: { a: { type: "strin" } } })
    expect(String(exit)).toContain(`["properties"]["a"]["type"]`)
  })
})
