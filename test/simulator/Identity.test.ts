import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import { canonicalJson, callKey as referenceKey } from "../../src/math/CanonicalJson.ts"
import { callKey, canonicalArguments } from "../../src/simulator/Identity.ts"

/** Argument objects as agents send them: mostly scalars, some nested values, keys of any spelling. */
const key = fc.oneof(fc.constantFrom("id", "Id", "ID", "team_id", "limit", "a", "B", "_x", "é", "__proto__", "constructor", "10", "2"), fc.string({ maxLength: 8 }))
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom(-0, 1e21, 1e-7, 0.1 + 0.2))
const args: fc.Arbitrary<JsonObject> = fc.dictionary(key, fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 1, arbitrary: fc.jsonValue() }), { maxKeys: 16 }) as fc.Arbitrary<JsonObject>

describe("Identity: the hot-path call key", () => {
  it("prints exactly canonicalJson for any argument object (up to 16 keys, nested values, odd keys and numbers)", () => {
    fc.assert(fc.property(args, (a) => {
      expect(canonicalArguments(a)).toBe(canonicalJson(a))
    }), { numRuns: 2000 })
  })

  it("gives exactly callKey of src/math/CanonicalJson.ts", () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), args, (tool, a) => {
      expect(callKey(tool, a)).toBe(referenceKey(tool, a))
    }), { numRuns: 500 })
  })

  it("sorts keys by code unit, skips undefined values and prints non-finite numbers as null", () => {
    const a = { b: 1, B: "x", a: [2, { z: true, y: null }], skipped: undefined, inf: Number.POSITIVE_INFINITY, nan: Number.NaN } as unknown as JsonObject
    expect(canonicalArguments(a)).toBe('{"B":"x","a":[2,{"y":null,"z":true}],"b":1,"inf":null,"nan":null}')
    expect(callKey("t", {})).toBe("t({})")
  })

  it("keeps an own __proto__ key as data", () => {
    const a = JSON.parse('{"__proto__": {"x": 1}, "q": "s"}') as JsonObject
    expect(canonicalArguments(a)).toBe('{"__proto__":{"x":1},"q":"s"}')
    expect(canonicalArguments(a)).toBe(canonicalJson(a))
  })

  it("falls back to canonical JSON for arguments that are not an object", () => {
    for (const v of [null, [1, "a"], "text", 3] as ReadonlyArray<Json>) {
      expect(canonicalArguments(v as unknown as JsonObject)).toBe(canonicalJson(v))
    }
  })
})
