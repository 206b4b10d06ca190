import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { hash32, hash32Bytes } from "../../src/math/Random.ts"

describe("Random", () => {
  it("hash32Bytes is hash32 of the string of the bytes' char codes, for any seed", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (bytes, seed) => {
        expect(hash32Bytes(bytes, seed)).toBe(hash32(String.fromCharCode(...bytes), seed))
        expect(hash32Bytes(bytes)).toBe(hash32(String.fromCharCode(...bytes)))
      }),
      { numRuns: 300 }
    )
  })

  it("hash32Bytes reads a subarray's own bytes (a view into a larger buffer)", () => {
    const floats = Float64Array.from([0.5, -0, 1e-300, 3])
    const bytes = new Uint8Array(floats.buffer, 8, 16)
    expect(hash32Bytes(bytes, 7)).toBe(hash32(String.fromCharCode(...bytes), 7))
  })
})
