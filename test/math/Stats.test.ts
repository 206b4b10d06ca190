import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Stats from "../../src/math/Stats.ts"
import { rng } from "../../src/math/Random.ts"

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

describe("Stats.pairedBootstrap", () => {
  /** 1–4 seeds × 2–30 tasks of differences on a coarse grid (success rates differ by multiples of 1/2 per task). */
  const diffsArb = fc.integer({ min: 1, max: 4 }).chain((seeds) =>
    fc.integer({ min: 2, max: 30 }).chain((tasks) =>
      fc.array(fc.array(fc.integer({ min: -2, max: 2 }).map((k) => k / 2), { minLength: tasks, maxLength: tasks }), { minLength: seeds, maxLength: seeds })
    )
  )
  const options = { resamples: 400 }

  it("the mean is the mean of every cell, inside [lo, hi], and the interval is deterministic for a seed", () => {
    fc.assert(
      fc.property(diffsArb, fc.integer({ min: 0, max: 1000 }), (diffs, seed) => {
        const ci = Stats.pairedBootstrap(diffs, { ...options, seed })
        expect(ci.mean).toBeCloseTo(Stats.mean(diffs.flat()), 12)
        expect(ci.lo).toBeLessThanOrEqual(ci.mean + 1e-12)
        expect(ci.hi).toBeGreaterThanOrEqual(ci.mean - 1e-12)
        expect(Stats.pairedBootstrap(diffs, { ...options, seed })).toEqual(ci)
      }),
      { numRuns: 200 }
    )
  })

  it("equivariant: shifting every difference by c shifts the interval by c, scaling by a > 0 scales it, negating mirrors it (swapping the two models)", () => {
    fc.assert(
      fc.property(diffsArb, fc.double({ min: -50, max: 50, noNaN: true }), fc.double({ min: 0.1, max: 100, noNaN: true }), (diffs, c, a) => {
        const ci = Stats.pairedBootstrap(diffs, options)
        const shifted = Stats.pairedBootstrap(diffs.map((row) => row.map((d) => d + c)), options)
        const scaled = Stats.pairedBootstrap(diffs.map((row) => row.map((d) => a * d)), options)
        const swapped = Stats.pairedBootstrap(diffs.map((row) => row.map((d) => -d)), options)
        const near = (x: number, y: number) => expect(Math.abs(x - y)).toBeLessThan(1e-9 * (1 + Math.abs(x) + Math.abs(y)))
        near(shifted.mean, ci.mean + c)
        near(shifted.lo, ci.lo + c)
        near(shifted.hi, ci.hi + c)
        near(scaled.lo, a * ci.lo)
        near(scaled.hi, a * ci.hi)
        near(swapped.mean, -ci.mean)
        near(swapped.lo, -ci.hi)
        near(swapped.hi, -ci.lo)
      }),
      { numRuns: 150 }
    )
  })

  it("no spread, no interval: identical differences give lo = mean = hi; a wider level gives a wider interval", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 20 }), fc.double({ min: -1, max: 1, noNaN: true }), (seeds, tasks, c) => {
        const ci = Stats.pairedBootstrap(Array.from({ length: seeds }, () => Array<number>(tasks).fill(c)), options)
        expect(ci.lo).toBeCloseTo(c, 12)
        expect(ci.hi).toBeCloseTo(c, 12)
      })
    )
    fc.assert(
      fc.property(diffsArb, (diffs) => {
        const narrow = Stats.pairedBootstrap(diffs, { ...options, level: 0.5 })
        const wide = Stats.pairedBootstrap(diffs, { ...options, level: 0.95 })
        expect(wide.lo).toBeLessThanOrEqual(narrow.lo)
        expect(wide.hi).toBeGreaterThanOrEqual(narrow.hi)
      }),
      { numRuns: 100 }
    )
  })

  it("covers the true mean difference about 95% of the time (300 simulated comparisons of 2 seeds × 60 tasks)", () => {
    const r = rng(2024)
    let covered = 0
    const trials = 300
    for (let i = 0; i < trials; i++) {
      // task-level differences with mean 0.1 and a per-seed offset (training-run noise) of sd 0.02
      const offsets = [0, 1].map(() => 0.02 * r.normal())
      const task = Array.from({ length: 60 }, () => 0.1 + 0.4 * r.normal())
      const diffs = offsets.map((o) => task.map((t) => t + o + 0.2 * r.normal()))
      const ci = Stats.pairedBootstrap(diffs, { resamples: 500, seed: i })
      if (ci.lo <= 0.1 && 0.1 <= ci.hi) covered++
    }
    // the percentile bootstrap under-covers a little in small samples; far from 95% would mean a broken interval
    expect(covered / trials).toBeGreaterThan(0.86)
    expect(covered / trials).toBeLessThan(0.995)
  })

  /** Differences with a cluster index per task (every index below the count used), as `clusters` wants them. */
  const clusteredArb = diffsArb.chain((diffs) =>
    fc.array(fc.integer({ min: 0, max: 5 }), { minLength: diffs[0]!.length, maxLength: diffs[0]!.length }).map((raw) => {
      const order = [...new Set(raw)]
      return { diffs, clusters: raw.map((c) => order.indexOf(c)) }
    })
  )

  it("clusters: one per task in order is the task bootstrap draw for draw; the mean is every cell's; shifting, scaling and negating carry over", () => {
    fc.assert(
      fc.property(diffsArb, fc.integer({ min: 0, max: 1000 }), (diffs, seed) => {
        const own = Array.from({ length: diffs[0]!.length }, (_, t) => t)
        expect(Stats.pairedBootstrap(diffs, { ...options, seed, clusters: own })).toEqual(Stats.pairedBootstrap(diffs, { ...options, seed }))
      }),
      { numRuns: 100 }
    )
    fc.assert(
      fc.property(clusteredArb, fc.double({ min: -50, max: 50, noNaN: true }), ({ diffs, clusters }, c) => {
        const ci = Stats.pairedBootstrap(diffs, { ...options, clusters })
        expect(ci.mean).toBeCloseTo(Stats.mean(diffs.flat()), 12)
        expect(ci.lo).toBeLessThanOrEqual(ci.mean + 1e-12)
        expect(ci.hi).toBeGreaterThanOrEqual(ci.mean - 1e-12)
        const shifted = Stats.pairedBootstrap(diffs.map((row) => row.map((d) => d + c)), { ...options, clusters })
        const swapped = Stats.pairedBootstrap(diffs.map((row) => row.map((d) => -d)), { ...options, clusters })
        const near = (x: number, y: number) => expect(Math.abs(x - y)).toBeLessThan(1e-9 * (1 + Math.abs(x) + Math.abs(y)))
        near(shifted.lo, ci.lo + c)
        near(shifted.hi, ci.hi + c)
        near(swapped.lo, -ci.hi)
        near(swapped.hi, -ci.lo)
      }),
      { numRuns: 150 }
    )
  })

  it("clusters: one cluster of every task leaves only the seeds to resample; clusters that are not 0 … C − 1, one per task, give NaN", () => {
    fc.assert(
      fc.property(diffsArb, (diffs) => {
        const one = Stats.pairedBootstrap(diffs.slice(0, 1), { ...options, clusters: diffs[0]!.map(() => 0) })
        expect(one.lo).toBeCloseTo(one.mean, 12)
        expect(one.hi).toBeCloseTo(one.mean, 12)
      }),
      { numRuns: 100 }
    )
    const diffs = [[1, 0, -1]]
    for (const clusters of [[0, 1], [0, 2, 2], [0, -1, 1], [0, 0.5, 1]]) {
      expect(Stats.pairedBootstrap(diffs, { ...options, clusters }).lo).toBeNaN()
    }
  })

  it("when tasks pass or fail by cluster, the task bootstrap under-covers and the cluster bootstrap covers (200 simulated comparisons, 12 clusters × 5 tasks)", () => {
    const r = rng(77)
    let plain = 0
    let clustered = 0
    const trials = 200
    const clusters = Array.from({ length: 60 }, (_, t) => Math.floor(t / 5))
    for (let i = 0; i < trials; i++) {
      // a shared effect per cluster (sd 0.4) and a small one per task (sd 0.1) around the true difference 0.1
      const effect = Array.from({ length: 12 }, () => 0.4 * r.normal())
      const diffs = [clusters.map((c) => 0.1 + (effect[c] as number) + 0.1 * r.normal())]
      const a = Stats.pairedBootstrap(diffs, { resamples: 500, seed: i })
      const b = Stats.pairedBootstrap(diffs, { resamples: 500, seed: i, clusters })
      if (a.lo <= 0.1 && 0.1 <= a.hi) plain++
      if (b.lo <= 0.1 && 0.1 <= b.hi) clustered++
    }
    expect(clustered / trials).toBeGreaterThan(0.85)
    expect(plain / trials).toBeLessThan(clustered / trials - 0.2)
  })

  it("clusterIndex numbers keys in order of first appearance: equal keys share an index, every index below the count is used", () => {
    expect(Stats.clusterIndex(["b", "a", "b", "c", "a"])).toEqual([0, 1, 0, 2, 1])
    expect(Stats.clusterIndex([])).toEqual([])
    fc.assert(
      fc.property(fc.array(fc.constantFrom("x", "y", "z", "w"), { maxLength: 30 }), (keys) => {
        const index = Stats.clusterIndex(keys)
        const count = new Set(keys).size
        expect(new Set(index)).toEqual(new Set(Array.from({ length: count }, (_, i) => i)))
        keys.forEach((k, i) => keys.forEach((l, j) => expect(index[i] === index[j]).toBe(k === l)))
        // the first occurrence of index c comes after the first of every index below it
        index.forEach((c, i) => expect(index.slice(0, i).some((d) => d === c) || index.slice(0, i).every((d) => d < c)).toBe(true))
      })
    )
  })

  it("NaN for no difference or ragged rows", () => {
    for (const diffs of [[], [[]], [[1, 2], [1]]]) {
      const ci = Stats.pairedBootstrap(diffs)
      expect([ci.mean, ci.lo, ci.hi].every(Number.isNaN)).toBe(true)
    }
  })
})
