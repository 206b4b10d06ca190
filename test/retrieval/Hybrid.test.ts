import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { toolName } from "../../src/domain/Ids.ts"
import type { SearchHit } from "../../src/domain/Trajectory.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Hybrid from "../../src/retrieval/Hybrid.ts"

const hits = (...pairs: ReadonlyArray<readonly [string, number]>): Array<SearchHit> =>
  pairs.map(([tool, score]) => ({ tool: toolName(tool), score }))

const names = (list: ReadonlyArray<SearchHit>) => list.map((h) => h.tool as string)

describe("Hybrid.reciprocalRank", () => {
  const a = hits(["a", 3], ["b", 2], ["c", 1])
  const b = hits(["c", 10], ["a", 6], ["d", 2])

  it("sums weight / (60 + rank) over rankings", () => {
    const fused = Hybrid.reciprocalRank([{ hits: a, weight: 1 }, { hits: b, weight: 1 }], 10)
    expect(names(fused)).toEqual(["a", "c", "b", "d"])
    expect(fused[0]?.score).toBeCloseTo(1 / 61 + 1 / 62, 12)
    expect(fused[1]?.score).toBeCloseTo(1 / 63 + 1 / 61, 12)
    expect(fused[2]?.score).toBeCloseTo(1 / 62, 12)
    expect(fused[3]?.score).toBeCloseTo(1 / 63, 12)
  })

  it("weights and the rank offset change the order as the formula says", () => {
    // c: 3/61 + 1/63 beats a: 3/62 + 1/61
    const fused = Hybrid.reciprocalRank([{ hits: a, weight: 1 }, { hits: b, weight: 3 }], 2)
    expect(names(fused)).toEqual(["c", "a"])
    expect(fused[0]?.score).toBeCloseTo(3 / 61 + 1 / 63, 12)
    const sharp = Hybrid.reciprocalRank([{ hits: a, weight: 1 }, { hits: b, weight: 1 }], 4, 0)
    // k = 0: a = 1 + 1/2, c = 1/3 + 1
    expect(sharp[0]?.score).toBeCloseTo(1.5, 12)
    expect(sharp[1]?.score).toBeCloseTo(4 / 3, 12)
  })

  it("breaks ties by first appearance", () => {
    const fused = Hybrid.reciprocalRank([{ hits: hits(["x", 1]), weight: 1 }, { hits: hits(["y", 1]), weight: 1 }], 2)
    expect(names(fused)).toEqual(["x", "y"])
  })

  it("is the identity on a single ranking, and keeps k", () => {
    fc.assert(fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 30 }), fc.integer({ min: 1, max: 40 }), (tools, k) => {
      const list = tools.map((t, i) => ({ tool: toolName(t), score: -i }))
      const fused = Hybrid.reciprocalRank([{ hits: list, weight: 1 }], k)
      expect(names(fused)).toEqual(tools.slice(0, k))
    }))
  })
})

describe("Hybrid.weightedScore", () => {
  const a = hits(["a", 3], ["b", 2], ["c", 1])
  const b = hits(["c", 10], ["a", 6], ["d", 2])

  it("min–max normalises each ranking and sums with weights", () => {
    expect(Hybrid.minMax(a)).toEqual([1, 0.5, 0])
    expect(Hybrid.minMax(hits(["q", 5], ["r", 5]))).toEqual([1, 1])
    const fused = Hybrid.weightedScore([{ hits: a, weight: 1 }, { hits: b, weight: 1 }], 10)
    expect(names(fused)).toEqual(["a", "c", "b", "d"])
    expect(fused.map((h) => h.score)).toEqual([1.5, 1, 0.5, 0])
    const tilted = Hybrid.weightedScore([{ hits: a, weight: 1 }, { hits: b, weight: 3 }], 2)
    expect(names(tilted)).toEqual(["c", "a"])
    expect(tilted.map((h) => h.score)).toEqual([3, 2.5])
  })
})

const fixed = (name: string, list: ReadonlyArray<SearchHit>) =>
  Layer.succeed(Retriever, Retriever.of({ name, search: (queries) => Effect.succeed(queries.map(() => list)) }))

describe("Hybrid.layer", () => {
  it.effect("fuses two retriever layers per query", () =>
    Effect.gen(function*() {
      const retriever = yield* Retriever
      expect(retriever.name).toBe("hybrid(left+right)")
      const [first, second] = yield* retriever.search(["q1", "q2"], 3)
      expect(names(first ?? [])).toEqual(["a", "c", "b"])
      expect(names(second ?? [])).toEqual(["a", "c", "b"])
    }).pipe(Effect.provide(Hybrid.layer(
      fixed("left", hits(["a", 3], ["b", 2], ["c", 1])),
      fixed("right", hits(["c", 10], ["a", 6], ["d", 2]))
    ))))

  it.effect("rejects a k that is not a positive integer", () =>
    Effect.gen(function*() {
      const retriever = yield* Retriever
      const error = yield* Effect.flip(retriever.search(["q"], 0))
      expect(error._tag).toBe("RetrieverError")
      expect(error.message).toContain("got 0")
    }).pipe(Effect.provide(Hybrid.layer(fixed("l", []), fixed("r", [])))))
})
