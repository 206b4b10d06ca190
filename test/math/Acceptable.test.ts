import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Acceptable from "../../src/math/Acceptable.ts"
import { rng } from "../../src/math/Random.ts"
import * as TD from "../../src/math/TurnDistribution.ts"
import type { Layout } from "../../src/math/TurnDistribution.ts"
import { caseArb, choices, expectGradClose, key, numericGrad } from "./TurnLayouts.ts"

/** A random label over a layout: some kinds (distinct), each with random groups and allowed rows among its candidates. */
const labelOf = (layout: Layout, seed: number): Acceptable.Acceptable => {
  const r = rng(seed)
  const kinds = r.shuffle(layout.kinds.map((_, k) => k)).slice(0, 1 + Math.floor(r.next() * layout.kinds.length))
  return {
    alternatives: kinds.map((kind) => {
      const slot = layout.kinds[kind] as TD.KindSlot
      const rows = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
      const allowed = rows.filter(() => r.next() < 0.7)
      const groups = Array.from({ length: Math.floor(r.next() * 3) }, () => allowed.filter(() => r.next() < 0.5)).filter((g) => g.length > 0)
      const plan = r.next() < 0.3 ? undefined : r.next() < 0.5
      return { kind, groups, allowed, plan }
    })
  }
}

describe("Acceptable.logProb", () => {
  it("the label of one exact choice has the choice's log-probability", () => {
    fc.assert(fc.property(caseArb(6), ({ layout, logits }) => {
      for (const c of choices(layout)) {
        const exact = Acceptable.logProb(layout, logits, Acceptable.exactly(layout, c))
        expect(Math.abs(exact - TD.logProb(layout, logits, c))).toBeLessThan(1e-9)
        expect(Acceptable.accepts(layout, Acceptable.exactly(layout, c), c)).toBe(true)
      }
    }), { numRuns: 200 })
  })

  it("P(acceptable) is the sum of P(choice) over every choice the label accepts (groups overlapping or not)", () => {
    fc.assert(fc.property(caseArb(4), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ layout, logits }, seed) => {
      const label = labelOf(layout, seed)
      let total = 0
      for (const c of choices(layout)) if (Acceptable.accepts(layout, label, c)) total += Math.exp(TD.logProb(layout, logits, c))
      const lp = Acceptable.logProb(layout, logits, label)
      if (total === 0) expect(lp).toBe(-Infinity)
      else expect(Math.abs(Math.exp(lp) - total)).toBeLessThan(1e-9)
    }), { numRuns: 400 })
  })

  it("logProbGrad matches finite differences", () => {
    fc.assert(fc.property(caseArb(3), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ layout, logits }, seed) => {
      const label = labelOf(layout, seed)
      const { logprob, dLogits } = Acceptable.logProbGrad(layout, logits, label)
      if (logprob === -Infinity) return
      expectGradClose(dLogits, numericGrad((z) => Acceptable.logProb(layout, z, label), logits), `label ${JSON.stringify(label)}`)
    }), { numRuns: 300 })
  })

  it("stays finite for extreme logits when the label is possible", () => {
    fc.assert(fc.property(caseArb(200), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ layout, logits }, seed) => {
      const label = labelOf(layout, seed)
      const possible = choices(layout).some((c) => Acceptable.accepts(layout, label, c))
      const { logprob, dLogits } = Acceptable.logProbGrad(layout, logits, label)
      if (possible) expect(Number.isFinite(logprob)).toBe(true)
      dLogits.forEach((g) => expect(Number.isFinite(g)).toBe(true))
    }), { numRuns: 300 })
  })

  it("a hand-computed case: two equivalent providers of one call, either (or both) acceptable", () => {
    // one subset kind of three candidates: rows 1 and 2 serve the call, row 3 does not
    const layout: Layout = { kinds: [{ row: 0, start: 1, end: 4, mode: "subset", plan: false }], rows: 4 }
    const logits = Float64Array.from([0, 0, 0, 0])
    const label: Acceptable.Acceptable = { alternatives: [{ kind: 0, groups: [[1, 2]], allowed: [1, 2], plan: undefined }] }
    // non-empty subsets of 3 fair coins: 7; acceptable: {1}, {2}, {1, 2}
    expect(Acceptable.logProb(layout, logits, label)).toBeCloseTo(Math.log(3 / 7), 14)
    const accepted = choices(layout).filter((c) => Acceptable.accepts(layout, label, c)).map(key).sort()
    expect(accepted).toEqual(["0|1,2|false", "0|1|false", "0|2|false"])
  })
})

describe("Acceptable.disjointGroups", () => {
  it("keeps identical groups once and merges groups that share a row", () => {
    expect(Acceptable.disjointGroups([[1, 2], [2, 1], [5], [3, 4], [4, 6], []])).toEqual([[1, 2], [5], [3, 4, 6]])
  })
})

describe("Acceptable.matched", () => {
  it("takes per group the row the logits favour: an accepted turn, the most probable of the accepted turns with one row a group, and the choice itself without groups", () => {
    fc.assert(fc.property(caseArb(4), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ layout, logits }, seed) => {
      const label = labelOf(layout, seed)
      for (const alternative of label.alternatives) {
        const slot = layout.kinds[alternative.kind] as TD.KindSlot
        if (slot.mode === "none") continue
        const groups = alternative.groups
        // the oracle's own pick: the first row of each group
        const first = slot.mode === "one" ? [groups[0]?.[0] ?? alternative.allowed[0]] : [...new Set(groups.map((g) => g[0] as number))].sort((a, b) => a - b)
        if (first[0] === undefined || first.length === 0) continue
        const plan = alternative.plan ?? false
        const choice: TD.Choice = { kind: alternative.kind, selected: first as Array<number>, plan: slot.plan ? plan : false }
        const m = Acceptable.matched(layout, label, choice, logits)
        if (groups.length === 0) {
          expect(m).toEqual(choice)
          continue
        }
        expect(m.kind).toBe(choice.kind)
        expect(m.plan).toBe(choice.plan)
        if (slot.mode === "subset") {
          expect(Acceptable.accepts(layout, label, m)).toBe(true)
          for (const g of groups) {
            const best = Math.max(...g.map((r) => logits[r] as number))
            expect(g.some((r) => m.selected.includes(r) && logits[r] === best)).toBe(true)
          }
          // among the turns taking one row of each group (and nothing else), none is more probable
          for (const c of choices(layout)) {
            if (c.kind !== m.kind || c.plan !== m.plan || c.selected.length !== m.selected.length || !Acceptable.accepts(layout, label, c)) continue
            if (!groups.every((g) => c.selected.some((r) => g.includes(r))) || !c.selected.every((r) => groups.some((g) => g.includes(r)))) continue
            if (groups.some((g, i) => groups.some((h, j) => i !== j && g.some((r) => h.includes(r))))) continue
            expect(TD.logProb(layout, logits, c)).toBeLessThanOrEqual(TD.logProb(layout, logits, m) + 1e-9)
          }
        } else {
          expect(m.selected).toHaveLength(1)
          expect(logits[m.selected[0] as number]).toBe(Math.max(...groups.flat().map((r) => logits[r] as number)))
        }
      }
    }), { numRuns: 300 })
  })
})
