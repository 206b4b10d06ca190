import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import { callKey, canonicalJson } from "../../src/math/CanonicalJson.ts"

/** The obvious implementation, kept here as the reference the optimised one must equal. */
const reference = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`
  const record = value as Record<string, unknown>
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(",")}}`
}

/** Argument objects as agents send them: mostly scalars, some nested values, keys of any spelling. */
const key = fc.oneof(fc.constantFrom("id", "Id", "ID", "team_id", "limit", "a", "B", "_x", "é", "__proto__", "constructor", "10", "2"), fc.string({ maxLength: 8 }))
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom(-0, 1e21, 1e-7, 0.1 + 0.2))
const args: fc.Arbitrary<JsonObject> = fc.dictionary(key, fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue() }), { maxKeys: 16 }) as fc.Arbitrary<JsonObject>

describe("CanonicalJson", () => {
  it("equals the reference on argument objects (up to 16 keys, nested values, odd keys and numbers)", () => {
    fc.assert(fc.property(args, (a) => {
      expect(canonicalJson(a)).toBe(reference(a))
    }), { numRuns: 2000 })
  })

  it("equals the reference on any JSON value", () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      expect(canonicalJson(v)).toBe(reference(v))
    }), { numRuns: 2000 })
  })

  it("prints equal values equally, whatever the key order", () => {
    fc.assert(fc.property(args, (a) => {
      const reversed = Object.fromEntries(Object.entries(a).reverse()) as JsonObject
      expect(callKey("t", reversed)).toBe(callKey("t", a))
    }), { numRuns: 500 })
  })

  it("sorts keys by code unit, skips undefined members, prints non-finite numbers as null, keeps __proto__ as data", () => {
    const a = { b: 1, B: "x", a: [2, { z: true, y: null }], skipped: undefined, inf: Number.POSITIVE_INFINITY, nan: Number.NaN } as unknown as JsonObject
    expect(canonicalJson(a)).toBe('{"B":"x","a":[2,{"y":null,"z":true}],"b":1,"inf":null,"nan":null}')
    expect(canonicalJson(JSON.parse('{"__proto__": {"x": 1}, "q": "s"}') as Json)).toBe('{"__proto__":{"x":1},"q":"s"}')
    expect(callKey("t", {})).toBe("t({})")
    expect(canonicalJson(-0)).toBe("0")
  })
})
