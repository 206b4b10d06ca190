import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Stats from "../../src/math/Stats.ts"

/** C(n, k) exactly. */
const choose = (n: number, k: number): bigint => {
  if (k < 0 || k > n) return 0n
  let out = 1n
  for (let i = 1; i <= k; i++) out = (out * BigInt(n - k + i)) / BigInt(i)
  return out
}

describe("Stats", () => {
  it("mean and population std of a textbook sample", () => {
    expect(Stats.mean([2, 4, 4, 4, 5, 5, 7, 9])).toBe(5)
    expect(Stats.std([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2)
    expect(Stats.std([3])).toBe(0)
  })

  it("percentiles interpolate linearly between ranks (numpy's default)", () => {
    expect(Stats.p50([4, 1, 3, 2])).toBe(2.5)
    expect(Stats.p95(Array.from({ length: 20 }, (_, i) => i + 1))).toBeCloseTo(19.05, 12)
    expect(Stats.percentile([5, 1, 9], 0)).toBe(1)
    expect(Stats.percentile([5, 1, 9], 100)).toBe(9)
  })

  it("percentiles are monotone in p and bounded by min and max", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 50 }), fc.double({ min: 0, max: 100, noNaN: true }), fc.double({ min: 0, max: 100, noNaN: true }), (xs, p, q) => {
        const [lo, hi] = p <= q ? [p, q] : [q, p]
        const s = Stats.summary(xs)
        expect(Stats.percentile(xs, lo)).toBeLessThanOrEqual(Stats.percentile(xs, hi))
        expect(Stats.percentile(xs, lo)).toBeGreaterThanOrEqual(s.min)
        expect(Stats.percentile(xs, hi)).toBeLessThanOrEqual(s.max)
      })
    )
  })

  it("an undefined statistic is NaN", () => {
    expect(Stats.mean([])).toBeNaN()
    expect(Stats.std([])).toBeNaN()
    expect(Stats.p50([])).toBeNaN()
    expect(Stats.percentile([1], 101)).toBeNaN()
    expect(Stats.summary([])).toEqual({ n: 0, mean: NaN, std: NaN, min: NaN, p50: NaN, p95: NaN, max: NaN })
  })

  it("pass@k equals 1 − C(n−c, k)/C(n, k) computed exactly", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n }), fc.integer({ min: 1, max: n }))), ([n, c, k]) => {
        const exact = 1 - Number((choose(n - c, k) * 10n ** 15n) / choose(n, k)) / 1e15
        expect(Stats.passAtK(n, c, k)).toBeCloseTo(exact, 12)
      }),
      { numRuns: 500 }
    )
  })

  it("pass@k edge cases: pass@1 is c/n, no success gives 0, too few failures give 1, bad counts give NaN", () => {
    expect(Stats.passAtK(10, 3, 1)).toBeCloseTo(0.3, 15)
    expect(Stats.passAtK(10, 0, 5)).toBe(0)
    expect(Stats.passAtK(10, 8, 3)).toBe(1)
    expect(Stats.passAtK(200, 1, 100)).toBeCloseTo(0.5, 12)
    expect(Stats.passAtK(5, 6, 1)).toBeNaN()
    expect(Stats.passAtK(5, 2, 6)).toBeNaN()
    expect(Stats.passAtK(5, 2, 0)).toBeNaN()
    expect(Stats.passAtK(5.5, 2, 1)).toBeNaN()
  })

  it("pass@k grows with c and with k, and stays finite for large n", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 5000 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 1, max: n - 1 }))), ([n, c, k]) => {
        const v = Stats.passAtK(n, c, k)
        expect(Number.isFinite(v)).toBe(true)
        expect(Stats.passAtK(n, c + 1, k)).toBeGreaterThanOrEqual(v)
        expect(Stats.passAtK(n, c, k + 1)).toBeGreaterThanOrEqual(v)
      })
    )
  })
})
