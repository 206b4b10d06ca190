import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { ToolSpec } from "../../src/domain/Tool.ts"
import * as Metrics from "../../src/retrieval/Metrics.ts"

const spec = (name: string, group: string, apiName: string, category = "Data"): ToolSpec => ({
  id: toolId(`test:${name}`),
  name: toolName(name),
  group,
  apiName,
  category,
  description: "",
  parameters: { type: "object", properties: {}, required: [] },
  source: { kind: "toolbench", ref: name }
})

describe("Metrics", () => {
  it("credits each relevant pair once, at its first hit", () => {
    const relevant = [new Set(["a", "a_copy"]), new Set(["b"])]
    expect(Metrics.gains(["a", "x", "b", "a_copy", "b"], relevant)).toEqual([1, 0, 1, 0, 0])
    expect(Metrics.gains([], relevant)).toEqual([])
  })

  it("NDCG@k on hand-computed cases (binary gains, ideal DCG over min(k, #relevant))", () => {
    // hits at ranks 2 and 4 of 2 relevant: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3)
    expect(Metrics.ndcgAt(5, [0, 1, 0, 1, 0], 2)).toBeCloseTo(0.6509209298071326, 12)
    // one relevant found at rank 3: 1/log2 4 = 0.5
    expect(Metrics.ndcgAt(5, [0, 0, 1], 1)).toBeCloseTo(0.5, 12)
    // hits at ranks 1 and 5 of 3 relevant: (1 + 1/log2 6) / (1 + 1/log2 3 + 1/2)
    expect(Metrics.ndcgAt(5, [1, 0, 0, 0, 1], 3)).toBeCloseTo(0.6508205185601091, 12)
    // more relevant than k: the ideal list is k hits long, so k hits is perfect
    expect(Metrics.ndcgAt(5, [1, 1, 1, 1, 1, 0], 7)).toBe(1)
    expect(Metrics.ndcgAt(1, [1], 3)).toBe(1)
    expect(Metrics.ndcgAt(1, [0, 1], 1)).toBe(0)
    // ranks past k do not count
    expect(Metrics.ndcgAt(2, [0, 0, 1], 1)).toBe(0)
    expect(Metrics.ndcgAt(5, [1], 0)).toBeNaN()
  })

  it("Recall@k = found in the first k / all relevant", () => {
    expect(Metrics.recallAt(5, [0, 1, 0, 1, 0, 1], 4)).toBe(0.5)
    expect(Metrics.recallAt(10, [0, 1, 0, 1, 0, 1], 4)).toBe(0.75)
    expect(Metrics.recallAt(5, [], 2)).toBe(0)
    expect(Metrics.recallAt(5, [1], 0)).toBeNaN()
  })

  it("NDCG and recall lie in [0, 1], and NDCG is 1 exactly for an ideal ranking (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 12 }), fc.array(fc.boolean(), { maxLength: 12 }), (relevantCount, k, flags) => {
        // no more hits than relevant items
        let budget = relevantCount
        const gain = flags.map((f) => (f && budget-- > 0 ? 1 : 0))
        const ndcg = Metrics.ndcgAt(k, gain, relevantCount)
        expect(ndcg).toBeGreaterThanOrEqual(0)
        expect(ndcg).toBeLessThanOrEqual(1 + 1e-12)
        expect(Metrics.recallAt(k, gain, relevantCount)).toBeLessThanOrEqual(1)
        const ideal = Array.from({ length: Math.min(k, relevantCount) }, () => 1)
        expect(Metrics.ndcgAt(k, ideal, relevantCount)).toBeCloseTo(1, 12)
      })
    )
  })

  it("matches pairs ignoring case, spaces, underscores and punctuation, preferring the api_list's category", () => {
    const library = [
      spec("w1", "Random Word API", "Get Word by Length", "Data"),
      spec("w1_other", "random_word_api", "get-word BY length", "Education"),
      spec("z", "US ZIP Code to Income", "ZIP code", "Data")
    ]
    const index = Metrics.relevanceIndex(library)
    const pairs = [
      { tool: "RANDOM WORD API", api: "get_word_by_length" },
      { tool: "Random Word API", api: "Get Word by Length" }, // the same pair again: counted once
      { tool: "us zip code to income", api: "ZIP_code" },
      { tool: "Missing Tool", api: "Nope" }
    ]
    const inData = Metrics.matchRelevant(index, pairs, Metrics.categoriesOf([spec("q", "Random Word API", "Get Word by Length", "Data")]))
    expect(inData.relevant.map((s) => [...s])).toEqual([["w1"], ["z"]])
    expect(inData.unmatched).toEqual([{ tool: "Missing Tool", api: "Nope" }])
    // without a category every entry of the key is acceptable
    expect(Metrics.matchRelevant(index, pairs.slice(0, 1)).relevant.map((s) => [...s].sort())).toEqual([["w1", "w1_other"]])
    // an unmatched pair stays relevant: it lowers recall instead of vanishing
    expect(Metrics.scoreQuery(["w1", "z"], inData)).toEqual({
      ndcg1: 1,
      ndcg5: (1 + 1 / Math.log2(3)) / (1 + 1 / Math.log2(3) + 0.5),
      recall5: 2 / 3,
      recall10: 2 / 3
    })
  })
})
