import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { rng } from "../../src/math/Random.ts"
import * as TD from "../../src/math/TurnDistribution.ts"
import type { Choice, KindSlot, Layout } from "../../src/math/TurnDistribution.ts"
import { caseArb, choices, expectGradClose, key, numericGrad } from "./TurnLayouts.ts"

describe("TurnDistribution.logProb", () => {
  it("the generated layouts are valid", () => {
    fc.assert(fc.property(caseArb(4), ({ layout }) => {
      expect(TD.validate(layout)).toBeUndefined()
    }), { numRuns: 200 })
  })

  for (const scale of [4, 50]) {
    it(`exp(logProb) sums to 1 over every possible choice (logits within ±${scale})`, () => {
      fc.assert(
        fc.property(caseArb(scale), ({ layout, logits }) => {
          let total = 0
          for (const c of choices(layout)) {
            const lp = TD.logProb(layout, logits, c)
            expect(lp).toBeLessThanOrEqual(0)
            total += Math.exp(lp)
          }
          expect(Math.abs(total - 1)).toBeLessThan(1e-9)
        }),
        { numRuns: 300 }
      )
    })
  }

  it("a hand-computed turn: P(kind) = 3/4, P({a} | non-empty of two fair coins) = 1/3, P(plan) = 1/2", () => {
    const layout: Layout = {
      kinds: [{ row: 0, start: 0, end: 0, mode: "none", plan: false }, { row: 1, start: 2, end: 4, mode: "subset", plan: true }],
      planRow: 4,
      rows: 5
    }
    const logits = Float64Array.from([0, Math.log(3), 0, 0, 0])
    expect(TD.logProb(layout, logits, { kind: 1, selected: [2], plan: true })).toBeCloseTo(Math.log((3 / 4) * (1 / 3) * (1 / 2)), 14)
    expect(TD.logProb(layout, logits, { kind: 1, selected: [2, 3], plan: false })).toBeCloseTo(Math.log((3 / 4) * (1 / 3) * (1 / 2)), 14)
    expect(TD.logProb(layout, logits, { kind: 0, selected: [], plan: false })).toBeCloseTo(Math.log(1 / 4), 14)
  })

  it("choices the layout cannot produce have log-probability −∞ and no gradient", () => {
    const layout: Layout = {
      kinds: [{ row: 0, start: 2, end: 4, mode: "subset", plan: true }, { row: 1, start: 4, end: 6, mode: "one", plan: false }],
      planRow: 6,
      rows: 7
    }
    const logits = Float64Array.from([0.3, -0.2, 1, -1, 0.5, 2, 0.1])
    const bad: ReadonlyArray<Choice> = [
      { kind: 0, selected: [], plan: false },
      { kind: 0, selected: [3, 2], plan: false },
      { kind: 0, selected: [2, 4], plan: false },
      { kind: 1, selected: [4, 5], plan: false },
      { kind: 1, selected: [4], plan: true },
      { kind: 2, selected: [], plan: false }
    ]
    for (const c of bad) {
      expect(TD.logProb(layout, logits, c)).toBe(-Infinity)
      expect([...TD.logProbGrad(layout, logits, c).dLogits]).toEqual(Array(7).fill(0))
    }
  })

  it("logProbGrad matches finite differences, and rows the choice does not involve get exactly 0", () => {
    fc.assert(
      fc.property(caseArb(3), fc.nat(), ({ layout, logits }, pick) => {
        const all = choices(layout)
        const c = all[pick % all.length] as Choice
        const { logprob, dLogits } = TD.logProbGrad(layout, logits, c)
        expect(logprob).toBe(TD.logProb(layout, logits, c))
        expectGradClose(dLogits, numericGrad((z) => TD.logProb(layout, z, c), logits), key(c))
        const slot = layout.kinds[c.kind] as KindSlot
        const involved = new Set([...layout.kinds.map((k) => k.row), ...Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)])
        if (slot.plan && layout.planRow !== undefined) involved.add(layout.planRow)
        dLogits.forEach((g, r) => {
          if (!involved.has(r)) expect(g).toBe(0)
        })
      }),
      { numRuns: 300 }
    )
  })
})

describe("TurnDistribution.listwiseGrad", () => {
  it("is −log Σ_S softmax over the kind's candidates, non-negative, 0 when S is every candidate, with a finite-difference gradient on those rows only", () => {
    fc.assert(
      fc.property(caseArb(3), fc.nat(), ({ layout, logits }, pick) => {
        const all = choices(layout)
        const c = all[pick % all.length] as Choice
        const slot = layout.kinds[c.kind] as KindSlot
        const { loss, dLogits } = TD.listwiseGrad(layout, logits, c)
        if (slot.mode !== "subset" || c.selected.length === 0) {
          expect(loss).toBe(0)
          expect([...dLogits].every((g) => g === 0)).toBe(true)
          return
        }
        // written out: the softmax over the kind's rows, summed over the chosen ones
        const rows = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i)
        const m = Math.max(...rows.map((r) => logits[r] as number))
        const z = rows.reduce((a, r) => a + Math.exp((logits[r] as number) - m), 0)
        const mass = c.selected.reduce((a, r) => a + Math.exp((logits[r] as number) - m), 0) / z
        expect(loss).toBeCloseTo(-Math.log(mass), 9)
        expect(loss).toBeGreaterThanOrEqual(-1e-12)
        if (c.selected.length === rows.length) expect(loss).toBeCloseTo(0, 12)
        expectGradClose(dLogits, numericGrad((zs) => TD.listwiseGrad(layout, zs, c).loss, logits), key(c))
        dLogits.forEach((g, r) => {
          if (r < slot.start || r >= slot.end) expect(g).toBe(0)
        })
        // a constant added to every candidate of the kind changes nothing
        const shifted = Float64Array.from(logits, (v, r) => (r >= slot.start && r < slot.end ? v + 3 : v))
        expect(TD.listwiseGrad(layout, shifted, c).loss).toBeCloseTo(loss, 9)
      }),
      { numRuns: 300 }
    )
  })
})

describe("TurnDistribution.sample", () => {
  it("draws exactly from the (tempered) distribution: frequencies over 20k seeded draws pass a chi-square bound", () => {
    fc.assert(
      fc.property(caseArb(2), fc.constantFrom(1, 0.5, 2), ({ layout, logits, seed }, temperature) => {
        const n = 20_000
        const u = rng(seed ^ 0x5eed).next
        const counts = new Map<string, number>()
        for (let i = 0; i < n; i++) {
          const c = TD.sample(layout, logits, u, temperature)
          counts.set(key(c), (counts.get(key(c)) ?? 0) + 1)
        }
        const tempered = TD.temper(logits, temperature)
        const expected = choices(layout).map((c) => ({ key: key(c), e: n * Math.exp(TD.logProb(layout, tempered, c)) }))
        // every drawn choice is a possible one
        const known = new Set(expected.map((x) => x.key))
        for (const k of counts.keys()) expect(known.has(k)).toBe(true)
        // Pearson's statistic over the cells expected ≥ 5 times, the rest lumped into one cell
        let chi2 = 0
        let cells = 0
        let restObserved = 0
        let restExpected = 0
        for (const { key: k, e } of expected) {
          const o = counts.get(k) ?? 0
          if (e >= 5) {
            chi2 += (o - e) ** 2 / e
            cells++
          } else {
            restObserved += o
            restExpected += e
          }
        }
        if (restExpected >= 5) {
          chi2 += (restObserved - restExpected) ** 2 / restExpected
          cells++
        } else {
          expect(restObserved).toBeLessThanOrEqual(restExpected + 10)
        }
        const df = Math.max(1, cells - 1)
        // mean df, sd sqrt(2 df): six standard deviations above is far in the tail for any df here
        expect(chi2).toBeLessThan(df + 6 * Math.sqrt(2 * df))
      }),
      { numRuns: 12, seed: 20_240_611 }
    )
  })

  it("draws a subset kind's first candidate exactly: a hand-computed case over 50k draws", () => {
    // p = (0.2, 0.5): P({0}) = 0.2·0.5/0.6, P({1}) = 0.8·0.5/0.6, P({0,1}) = 0.2·0.5/0.6
    const layout: Layout = { kinds: [{ row: 0, start: 1, end: 3, mode: "subset", plan: false }], rows: 3 }
    const logits = Float64Array.from([0, Math.log(0.2 / 0.8), 0])
    const u = rng(99).next
    const counts = new Map<string, number>()
    const n = 50_000
    for (let i = 0; i < n; i++) {
      const c = TD.sample(layout, logits, u)
      counts.set(c.selected.join(","), (counts.get(c.selected.join(",")) ?? 0) + 1)
    }
    for (const [k, p] of [["1", 1 / 6], ["2", 2 / 3], ["1,2", 1 / 6]] as const) {
      expect(Math.abs((counts.get(k) ?? 0) / n - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n))
    }
  })

  it("as the temperature goes to 0 it returns the greedy choice; temperature 0 is greedy", () => {
    fc.assert(
      fc.property(caseArb(3), ({ layout, logits, seed }) => {
        // well-separated logits: ties and near-zero Bernoulli logits make the limit ambiguous
        const sorted = [...logits].sort((a, b) => a - b)
        fc.pre(sorted.every((z, i) => Math.abs(z) > 0.05 && (i === 0 || z - (sorted[i - 1] as number) > 0.05)))
        const u = rng(seed).next
        const g = TD.greedy(layout, logits)
        for (let i = 0; i < 20; i++) expect(TD.sample(layout, logits, u, 1e-4)).toEqual(g)
        expect(TD.sample(layout, logits, u, 0)).toEqual(g)
      }),
      { numRuns: 200 }
    )
  })
})

describe("TurnDistribution.greedy", () => {
  it("takes the argmax kind and, within it, the most probable candidates and plan bit", () => {
    fc.assert(
      fc.property(caseArb(3), ({ layout, logits }) => {
        const g = TD.greedy(layout, logits)
        const best = Math.max(...layout.kinds.map((k) => logits[k.row] as number))
        expect(logits[(layout.kinds[g.kind] as KindSlot).row]).toBe(best)
        const lp = TD.logProb(layout, logits, g)
        expect(Number.isFinite(lp)).toBe(true)
        for (const c of choices(layout)) if (c.kind === g.kind) expect(TD.logProb(layout, logits, c)).toBeLessThanOrEqual(lp + 1e-12)
      }),
      { numRuns: 300 }
    )
  })

  it("a subset kind with every p < 1/2 picks the single most probable candidate", () => {
    const layout: Layout = { kinds: [{ row: 3, start: 0, end: 3, mode: "subset", plan: false }], rows: 4 }
    expect(TD.greedy(layout, Float64Array.from([-2, -0.5, -1, 0]))).toEqual({ kind: 0, selected: [1], plan: false })
    expect(TD.greedy(layout, Float64Array.from([2, -0.5, 1, 0]))).toEqual({ kind: 0, selected: [0, 2], plan: false })
  })
})

describe("TurnDistribution.greedyAbove", () => {
  it("threshold ½ is greedy; a kind left out decodes as greedy", () => {
    fc.assert(
      fc.property(caseArb(3), fc.double({ min: 0.01, max: 0.99, noNaN: true }), ({ layout, logits }, t) => {
        expect(TD.greedyAbove(layout, logits, 0.5)).toEqual(TD.greedy(layout, logits))
        expect(TD.greedyAbove(layout, logits, t, () => false)).toEqual(TD.greedy(layout, logits))
      }),
      { numRuns: 300 }
    )
  })

  it("keeps greedy's kind and plan bit, is a possible choice, and keeps exactly the subset candidates above the threshold (else the best one)", () => {
    fc.assert(
      fc.property(caseArb(3), fc.double({ min: 0.01, max: 0.99, noNaN: true }), ({ layout, logits }, t) => {
        const g = TD.greedy(layout, logits)
        const a = TD.greedyAbove(layout, logits, t)
        expect(a.kind).toBe(g.kind)
        expect(a.plan).toBe(g.plan)
        expect(Number.isFinite(TD.logProb(layout, logits, a))).toBe(true)
        const slot = layout.kinds[g.kind] as KindSlot
        if (slot.mode !== "subset") {
          expect(a).toEqual(g)
          return
        }
        const above = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i).filter((r) => TD.sigmoid(logits[r] as number) > t + 1e-12)
        const borderline = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i).some((r) => Math.abs(TD.sigmoid(logits[r] as number) - t) <= 1e-12)
        if (borderline) return
        const best = Array.from({ length: slot.end - slot.start }, (_, i) => slot.start + i).reduce((b, r) => ((logits[r] as number) > (logits[b] as number) ? r : b), slot.start)
        expect(a.selected).toEqual(above.length > 0 ? above : [best])
      }),
      { numRuns: 300 }
    )
  })

  it("lowering the threshold only adds candidates", () => {
    fc.assert(
      fc.property(caseArb(3), fc.double({ min: 0.01, max: 0.98, noNaN: true }), fc.double({ min: 0.001, max: 0.5, noNaN: true }), ({ layout, logits }, hi, dt) => {
        const lo = Math.max(0.005, hi - dt)
        const a = TD.greedyAbove(layout, logits, hi)
        const b = TD.greedyAbove(layout, logits, lo)
        for (const r of a.selected) expect(b.selected).toContain(r)
      }),
      { numRuns: 300 }
    )
  })

  it("three facts at p ≈ 0.3 and the rest far below: greedy states one, p > 0.2 states the three", () => {
    const z = Math.log(0.3 / 0.7)
    const layout: Layout = { kinds: [{ row: 5, start: 0, end: 5, mode: "subset", plan: false }], rows: 6 }
    const logits = Float64Array.from([z, -4, z + 0.1, z - 0.1, -5, 0])
    expect(TD.greedy(layout, logits)).toEqual({ kind: 0, selected: [2], plan: false })
    expect(TD.greedyAbove(layout, logits, 0.2)).toEqual({ kind: 0, selected: [0, 2, 3], plan: false })
  })
})

describe("TurnDistribution.entropy", () => {
  it("its gradient matches finite differences", () => {
    fc.assert(
      fc.property(caseArb(3), ({ layout, logits }) => {
        const { entropy, dLogits } = TD.entropy(layout, logits)
        expect(entropy).toBeGreaterThanOrEqual(0)
        expectGradClose(dLogits, numericGrad((z) => TD.entropy(layout, z).entropy, logits), "entropy")
      }),
      { numRuns: 300 }
    )
  })

  it("is the exact entropy −Σ P log P of the turn when no kind is a subset", () => {
    fc.assert(
      fc.property(caseArb(3, { min: 1, max: 3 }, ["one"]), ({ layout, logits }) => {
        let exact = 0
        for (const c of choices(layout)) {
          const lp = TD.logProb(layout, logits, c)
          exact -= Math.exp(lp) * lp
        }
        expect(TD.entropy(layout, logits).entropy).toBeCloseTo(exact, 10)
      }),
      { numRuns: 300 }
    )
  })

  it("a hand-computed case: two equally likely kinds, one with two fair coins, the other with the plan bit at p = 1/2", () => {
    const layout: Layout = {
      kinds: [{ row: 0, start: 2, end: 4, mode: "subset", plan: false }, { row: 1, start: 4, end: 4, mode: "none", plan: true }],
      planRow: 4,
      rows: 5
    }
    // H(kind) = ln 2; subset kind: 2 ln 2 (the unconditioned Bernoullis); plan kind: ln 2
    expect(TD.entropy(layout, new Float64Array(5)).entropy).toBeCloseTo(Math.LN2 + 0.5 * 2 * Math.LN2 + 0.5 * Math.LN2, 14)
  })
})

describe("TurnDistribution stability", () => {
  it("logits at ±50 (and ±1000) give finite log-probabilities, gradients, entropies and valid samples", () => {
    const extreme = (scale: number) =>
      caseArb(1).map(({ layout, logits, seed }) => ({ layout, seed, logits: logits.map((z) => (z < -0.3 ? -scale : z > 0.3 ? scale : z)) }))
    fc.assert(
      fc.property(fc.constantFrom(50, 1000).chain(extreme), ({ layout, logits, seed }) => {
        for (const c of choices(layout)) {
          const { logprob, dLogits } = TD.logProbGrad(layout, logits, c)
          expect(Number.isFinite(logprob)).toBe(true)
          expect(dLogits.every(Number.isFinite)).toBe(true)
        }
        const h = TD.entropy(layout, logits)
        expect(Number.isFinite(h.entropy) && h.entropy >= 0).toBe(true)
        expect(h.dLogits.every(Number.isFinite)).toBe(true)
        const u = rng(seed).next
        for (let i = 0; i < 20; i++) expect(Number.isFinite(TD.logProb(layout, logits, TD.sample(layout, logits, u)))).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("every candidate of a subset at −50: choosing all of them is finite (≈ −50 per extra candidate), choosing one ≈ log(1/n)", () => {
    const layout: Layout = { kinds: [{ row: 0, start: 1, end: 4, mode: "subset", plan: false }], rows: 4 }
    const logits = Float64Array.from([0, -50, -50, -50])
    expect(TD.logProb(layout, logits, { kind: 0, selected: [1, 2, 3], plan: false })).toBeCloseTo(-100 - Math.log(3), 9)
    expect(TD.logProb(layout, logits, { kind: 0, selected: [2], plan: false })).toBeCloseTo(-Math.log(3), 9)
  })
})

describe("TurnDistribution.validate", () => {
  const good: Layout = {
    kinds: [{ row: 0, start: 1, end: 3, mode: "subset", plan: true }, { row: 3, start: 4, end: 4, mode: "none", plan: false }],
    planRow: 4,
    rows: 5
  }

  it("accepts a well-formed layout", () => {
    expect(TD.validate(good)).toBeUndefined()
  })

  it("names what is wrong with a malformed one", () => {
    const [k0, k1] = good.kinds as [KindSlot, KindSlot]
    const cases: ReadonlyArray<readonly [Layout, string]> = [
      [{ kinds: [], rows: 1 }, "no kinds"],
      [{ ...good, rows: 4 }, "the plan row is row 4, outside [0, 4)"],
      [{ ...good, kinds: [{ ...k0, row: 1 }, k1] }, "row 1 is both kind 0's row and a candidate of kind 0"],
      [{ ...good, kinds: [k0, { ...k1, row: 4 }] }, "row 4 is both kind 1's row and the plan row"],
      [{ ...good, kinds: [{ ...k0, mode: "none" }, k1] }, `kind 0 has mode "none" and 2 candidates (mode "none" iff no candidates)`],
      [{ ...good, kinds: [k0, { ...k1, mode: "one" }] }, `kind 1 has mode "one" and 0 candidates (mode "none" iff no candidates)`],
      [{ ...good, kinds: [{ ...k0, start: 3, end: 1 }, k1] }, "kind 0's candidates [3, 1) are not a range"],
      [{ kinds: good.kinds, rows: 5 }, "a kind carries a plan but there is no plan row"],
      [{ ...good, kinds: [{ ...k0, plan: false }, k1] }, "a plan row but no kind carries a plan"],
      [{ ...good, kinds: [k0, { ...k1, row: -1 }] }, "kind 1's row is row -1, outside [0, 5)"]
    ]
    for (const [layout, reason] of cases) expect(TD.validate(layout)).toBe(reason)
  })
})

describe("TurnDistribution.factors (per-action credit)", () => {
  it("the factors sum to logProb, every chosen row is a candidate factor at its position, and the kind and plan are factors", () => {
    fc.assert(
      fc.property(caseArb(6), fc.nat(), ({ layout, logits }, pick) => {
        const all = choices(layout)
        const c = all[pick % all.length] as Choice
        const fs = TD.factors(layout, logits, c)
        const total = fs.reduce((s, f) => s + f.logprob, 0)
        expect(Math.abs(total - TD.logProb(layout, logits, c))).toBeLessThan(1e-9)
        for (const f of fs) expect(f.logprob).toBeLessThanOrEqual(1e-15)
        expect(fs[0]?.target._tag).toBe("kind")
        const slot = layout.kinds[c.kind] as KindSlot
        expect(fs.some((f) => f.target._tag === "plan")).toBe(slot.plan)
        c.selected.forEach((row, position) => {
          const own = fs.find((f) => f.target._tag === "candidate" && f.target.row === row)
          expect(own?.target).toEqual({ _tag: "candidate", row, chosen: true, position })
        })
        // a subset's unchosen candidates after the first are factors of their own, marked not chosen
        for (const f of fs) {
          if (f.target._tag === "candidate" && !f.target.chosen) {
            expect(c.selected.includes(f.target.row)).toBe(false)
            expect(f.target.row).toBeGreaterThan(c.selected[0] as number)
          }
        }
      }),
      { numRuns: 400 }
    )
  })

  it("addFactorGrad: each factor's weighted gradient matches finite differences of that factor; all weights 1 give logProbGrad", () => {
    fc.assert(
      fc.property(caseArb(3), fc.nat(), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ layout, logits }, pick, seed) => {
        const all = choices(layout)
        const c = all[pick % all.length] as Choice
        const n = TD.factors(layout, logits, c).length
        const r = rng(seed)
        const weights = Float64Array.from({ length: n }, () => 2 * r.next() - 1)
        const d = new Float64Array(layout.rows)
        TD.addFactorGrad(layout, logits, c, weights, d)
        const weighted = (z: Float64Array) => TD.factors(layout, z, c).reduce((s, f, i) => s + (weights[i] as number) * f.logprob, 0)
        expectGradClose(d, numericGrad(weighted, logits), `factors ${key(c)}`)
        const ones = new Float64Array(layout.rows)
        TD.addFactorGrad(layout, logits, c, new Float64Array(n).fill(1), ones)
        expectGradClose(ones, TD.logProbGrad(layout, logits, c).dLogits, `all-ones ${key(c)}`)
      }),
      { numRuns: 300 }
    )
  })

  it("a decoded choice's candidates are no factor: log P = log P(kind) + log P(plan), its factors are the kind and plan only, and no candidate logit gets gradient", () => {
    fc.assert(
      fc.property(caseArb(6), fc.nat(), ({ layout, logits }, pick) => {
        const all = choices(layout)
        const drawn = all[pick % all.length] as Choice
        const c: Choice = { ...drawn, decoded: true }
        const slot = layout.kinds[c.kind] as KindSlot
        const kindRows = layout.kinds.map((k) => k.row)
        const lse = Math.log(kindRows.reduce((s, r) => s + Math.exp(logits[r] as number), 0))
        const plan = slot.plan && layout.planRow !== undefined ? TD.logSigmoid((c.plan ? 1 : -1) * (logits[layout.planRow] as number)) : 0
        expect(TD.logProb(layout, logits, c)).toBeCloseTo((logits[slot.row] as number) - lse + plan, 10)
        const fs = TD.factors(layout, logits, c)
        expect(fs.map((f) => f.target._tag)).toEqual(slot.plan ? ["kind", "plan"] : ["kind"])
        const { dLogits } = TD.logProbGrad(layout, logits, c)
        for (const k of layout.kinds) for (let r = k.start; r < k.end; r++) expect(dLogits[r]).toBe(0)
        const ones = new Float64Array(layout.rows)
        TD.addFactorGrad(layout, logits, c, new Float64Array(fs.length).fill(1), ones)
        expectGradClose(ones, dLogits, `decoded ${key(c)}`)
        // a choice the layout cannot produce stays impossible when marked decoded
        expect(TD.logProb(layout, logits, { kind: c.kind, selected: [-1], plan: false, decoded: true })).toBe(-Infinity)
      }),
      { numRuns: 300 }
    )
  })

  it("an impossible choice has no factor and adds no gradient", () => {
    const layout: Layout = { kinds: [{ row: 0, start: 1, end: 3, mode: "subset", plan: false }], rows: 3 }
    const logits = Float64Array.from([0, 1, -1])
    expect(TD.factors(layout, logits, { kind: 0, selected: [], plan: false })).toEqual([])
    const d = new Float64Array(3)
    TD.addFactorGrad(layout, logits, { kind: 0, selected: [], plan: false }, [1, 1], d)
    expect([...d]).toEqual([0, 0, 0])
  })
})

describe("TurnDistribution.entropyNormalised", () => {
  it("its gradient matches finite differences and it lies in [0, 3]", () => {
    fc.assert(
      fc.property(caseArb(3), ({ layout, logits }) => {
        const { entropy, dLogits } = TD.entropyNormalised(layout, logits)
        expect(entropy).toBeGreaterThanOrEqual(0)
        expect(entropy).toBeLessThanOrEqual(3 + 1e-12)
        expectGradClose(dLogits, numericGrad((z) => TD.entropyNormalised(layout, z).entropy, logits), "entropyNormalised")
      }),
      { numRuns: 300 }
    )
  })

  it("does not grow with the candidate count: n fair candidates of one subset kind give the same bonus for every n, the summed entropy n·ln 2", () => {
    for (const n of [1, 2, 5, 20, 200]) {
      const layout: Layout = { kinds: [{ row: 0, start: 1, end: 1 + n, mode: "subset", plan: false }], rows: 1 + n }
      const logits = new Float64Array(1 + n)
      expect(TD.entropyNormalised(layout, logits).entropy).toBeCloseTo(1, 12)
      expect(TD.entropy(layout, logits).entropy).toBeCloseTo(n * Math.LN2, 9)
    }
    for (const n of [2, 7, 50]) {
      const layout: Layout = { kinds: [{ row: 0, start: 1, end: 1 + n, mode: "one", plan: false }], rows: 1 + n }
      expect(TD.entropyNormalised(layout, new Float64Array(1 + n)).entropy).toBeCloseTo(1, 12)
    }
  })
})
