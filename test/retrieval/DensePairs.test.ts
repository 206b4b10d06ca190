import { describe, expect, it } from "@effect/vitest"
import { rng } from "../../src/math/Random.ts"
import * as DensePairs from "../../src/retrieval/DensePairs.ts"
import * as World from "../../src/toolenv/world/World.ts"

const tools = World.make({ size: 600 }).library.tools

const multiIntent = (config: DensePairs.PairConfig) =>
  DensePairs.libraryPairs(tools, rng(9), config).filter((p) => p.positives.length > 1)

describe("DensePairs.libraryPairs: multi-intent scope", () => {
  it("group 1: every multi-intent query asks for tools of one provider", () => {
    const pairs = multiIntent({ ...DensePairs.defaultPairConfig, multiIntentScope: { group: 1, category: 0 } })
    expect(pairs.length).toBeGreaterThan(100)
    // a provider with one tool has no second one to ask for: the others then come from anywhere
    const size = new Map<string, number>()
    for (const t of tools) size.set(t.group, (size.get(t.group) ?? 0) + 1)
    const anchoredInGroups = pairs.filter((p) => (size.get(tools[p.positives[0] ?? 0]?.group ?? "") ?? 0) > 1)
    expect(anchoredInGroups.length).toBeGreaterThan(100)
    for (const p of anchoredInGroups) expect(new Set(p.positives.map((i) => tools[i]?.group)).size).toBe(1)
  })

  it("category 1: every multi-intent query stays in one category and mostly spans providers", () => {
    const pairs = multiIntent({ ...DensePairs.defaultPairConfig, multiIntentScope: { group: 0, category: 1 } })
    expect(pairs.length).toBeGreaterThan(100)
    for (const p of pairs) expect(new Set(p.positives.map((i) => tools[i]?.category)).size).toBe(1)
    const spanning = pairs.filter((p) => new Set(p.positives.map((i) => tools[i]?.group)).size > 1).length
    expect(spanning).toBeGreaterThan(0.5 * pairs.length)
  })

  it("the rate scales the number of multi-intent queries", () => {
    const one = DensePairs.libraryPairs(tools, rng(9), DensePairs.defaultPairConfig).length
    const two = DensePairs.libraryPairs(tools, rng(9), { ...DensePairs.defaultPairConfig, multiIntentRate: 2 }).length
    expect(two - one).toBe(tools.length)
  })
})
