import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { JsonSchema, ParametersSchema } from "../../src/domain/Json.ts"
import { compile, conforms, describe as describeIssues, validateArguments } from "../../src/toolenv/JsonSchemaValidate.ts"

const parameters: ParametersSchema = {
  type: "object",
  properties: {
    team_id: { type: "string", "x-entity": "team.id" },
    limit: { type: "integer", minimum: 1, maximum: 50 },
    ratio: { type: "number" },
    live: { type: "boolean" },
    sport: { type: "string", enum: ["football", "basketball"] },
    day: { type: "string", format: "date" },
    email: { type: "string", format: "email" },
    ids: { type: "array", items: { type: "string" } },
    filters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }
  },
  required: ["team_id"]
}
const spec = { parameters }

const errorsOf = (args: unknown) => {
  const r = validateArguments(spec, args)
  return r.ok ? [] : r.errors
}

describe("validateArguments", () => {
  it("accepts valid arguments and returns them coerced", () => {
    const r = validateArguments(spec, { team_id: "TM-1", limit: "5", ratio: "0.5", live: "TRUE", ids: "a, b", day: "2024-02-29" })
    expect(r).toEqual({ ok: true, value: { team_id: "TM-1", limit: 5, ratio: 0.5, live: true, ids: ["a", "b"], day: "2024-02-29" } })
  })

  it("sends a number given for a string parameter as its text, and drops null optionals", () => {
    expect(validateArguments(spec, { team_id: 42, sport: null })).toEqual({ ok: true, value: { team_id: "42" } })
  })

  it("reports a missing required argument by name", () => {
    const errs = errorsOf({ limit: 3 })
    expect(errs).toEqual([{ path: "team_id", kind: "missing", message: "Missing required parameter 'team_id'" }])
    expect(errorsOf({ team_id: null })[0]?.kind).toBe("missing")
  })

  it("reports a wrong type with the value", () => {
    const errs = errorsOf({ team_id: "x", limit: "many" })
    expect(errs.map((e) => [e.path, e.kind])).toEqual([["limit", "type"]])
    expect(errs[0]?.message).toBe(`Invalid value for parameter 'limit': expected integer, got string "many"`)
    expect(errorsOf({ team_id: "x", limit: 2.5 })[0]?.message).toContain("expected integer, got 2.5")
    expect(errorsOf({ team_id: { a: 1 } })[0]?.kind).toBe("type")
    expect(errorsOf({ team_id: "x", live: "yes" })[0]?.kind).toBe("type")
  })

  it("reports an enum violation listing the allowed values", () => {
    const errs = errorsOf({ team_id: "x", sport: "soccer" })
    expect(errs[0]?.kind).toBe("enum")
    expect(errs[0]?.message).toBe(`Invalid value for parameter 'sport': "soccer" is not one of "football", "basketball"`)
  })

  it("reports out-of-range numbers", () => {
    expect(errorsOf({ team_id: "x", limit: 0 })[0]?.message).toBe("Invalid value for parameter 'limit': must be >= 1, got 0")
    expect(errorsOf({ team_id: "x", limit: "80" })[0]?.message).toBe(`Invalid value for parameter 'limit': must be <= 50, got "80"`)
  })

  it("rejects unknown arguments and lists the accepted ones", () => {
    const errs = errorsOf({ team_id: "x", teamid: "y" })
    expect(errs[0]?.kind).toBe("unknown")
    expect(errs[0]?.path).toBe("teamid")
    expect(errs[0]?.message).toContain("accepted parameters: team_id, limit")
    expect(validateArguments({ parameters: { ...parameters, additionalProperties: true } }, { team_id: "x", extra: 1 }).ok).toBe(true)
    expect(validateArguments({ parameters: { type: "object", properties: {}, required: [] } }, { q: "x" }).ok).toBe(false)
  })

  it("checks formats: calendar dates and emails", () => {
    expect(errorsOf({ team_id: "x", day: "2023-02-29" })[0]?.kind).toBe("format")
    expect(errorsOf({ team_id: "x", day: "15/04/2024" })[0]?.message).toContain("expected a date (YYYY-MM-DD)")
    expect(errorsOf({ team_id: "x", email: "not-an-email" })[0]?.kind).toBe("format")
  })

  it("validates nested objects and array items with their paths", () => {
    const errs = errorsOf({ team_id: "x", filters: { town: "y" }, ids: ["a", { b: 1 }] })
    expect(errs.map((e) => `${e.kind}:${e.path}`).sort()).toEqual(["missing:filters.city", "type:ids[1]", "unknown:filters.town"])
  })

  it("rejects a non-object argument list", () => {
    const r = validateArguments(spec, ["TM-1"])
    expect(r.ok).toBe(false)
    expect(r.ok ? "" : describeIssues(r.errors)).toBe("Invalid arguments: expected a JSON object, got array")
  })

  it("accepts any integer within bounds, as a number or as its text (property)", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), fc.boolean(), (n, asText) => {
      const r = validateArguments(spec, { team_id: "x", limit: asText ? String(n) : n })
      expect(r).toEqual({ ok: true, value: { team_id: "x", limit: n } })
    }))
  })

  it("rejects any integer outside the bounds (property)", () => {
    fc.assert(fc.property(fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 51 })), (n) => {
      expect(errorsOf({ team_id: "x", limit: n }).map((e) => e.kind)).toEqual(["range"])
    }))
  })
})

describe("conforms (strict mode, for payloads)", () => {
  const response: JsonSchema = {
    type: "object",
    properties: { results: { type: "array", items: { type: "object", properties: { id: { type: "string" }, n: { type: "integer" } }, required: ["id", "n"] } } },
    required: ["results"]
  }

  it("accepts a conforming payload and extra fields", () => {
    expect(conforms(response, { results: [{ id: "a", n: 1, extra: true }] })).toEqual([])
  })

  it("does not coerce: a numeric string is not an integer", () => {
    const issues = conforms(response, { results: [{ id: "a", n: "1" }] })
    expect(issues.map((i) => i.path)).toEqual(["results[0].n"])
  })

  it("caches compiled validators per schema object", () => {
    expect(compile(response, "strict")).toBe(compile(response, "strict"))
  })
})
