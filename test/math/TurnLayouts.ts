/**
 * Random turn layouts for the turn-distribution and policy-gradient tests: valid layouts with shuffled rows, every
 * choice a layout can produce, and central finite differences.
 */
import fc from "fast-check"
import { expect } from "vitest"
import { rng } from "../../src/math/Random.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import type { Choice, KindSlot, Layout } from "../../src/math/TurnDistribution.ts"

/**
 * A random valid layout: 2–3 kinds of 0–4 candidates each (0 = mode "none", else "subset" or "one"), each with or
 * without the plan bit, and up to 2 unused rows; the blocks (kind rows, candidate ranges, plan row, unused rows) are
 * placed in a seeded random order so rows are absolute and not in any convenient order. Logits come from the same
 * seed, uniform in ±scale.
 */
export const caseArb = (scale: number, kinds = { min: 2, max: 3 }, modes: ReadonlyArray<"subset" | "one"> = ["subset", "one"]) =>
  fc.record({
    kinds: fc.array(
      fc.record({ candidates: fc.integer({ min: 0, max: 4 }), mode: fc.constantFrom(...modes), plan: fc.boolean() }),
      { minLength: kinds.min, maxLength: kinds.max }
    ),
    unused: fc.integer({ min: 0, max: 2 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 })
  }).map(({ kinds, unused, seed }) => {
    const r = rng(seed)
    const planned = kinds.some((k) => k.plan)
    type Block = { readonly tag: string; readonly length: number }
    const blocks: Array<Block> = [
      ...kinds.flatMap((k, i): Array<Block> => [{ tag: `row${i}`, length: 1 }, ...(k.candidates > 0 ? [{ tag: `cand${i}`, length: k.candidates }] : [])]),
      ...(planned ? [{ tag: "plan", length: 1 }] : []),
      ...Array.from({ length: unused }, (): Block => ({ tag: "unused", length: 1 }))
    ]
    const offset = new Map<string, number>()
    let rows = 0
    for (const b of r.shuffle(blocks)) {
      offset.set(b.tag, rows)
      rows += b.length
    }
    const slots = kinds.map((k, i): KindSlot => {
      const start = offset.get(`cand${i}`) ?? 0
      return {
        row: offset.get(`row${i}`) ?? -1,
        start,
        end: start + k.candidates,
        mode: k.candidates === 0 ? "none" : k.mode,
        plan: k.plan
      }
    })
    const planRow = offset.get("plan")
    const layout: Layout = planRow === undefined ? { kinds: slots, rows } : { kinds: slots, rows, planRow }
    return { layout, logits: Float64Array.from({ length: rows }, () => (2 * r.next() - 1) * scale), seed }
  })

/** Every choice the layout can produce. */
export const choices = (layout: Layout): Array<Choice> =>
  layout.kinds.flatMap((slot, kind) => {
    const n = slot.end - slot.start
    const candidates: Array<Array<number>> =
      slot.mode === "none"
        ? [[]]
        : slot.mode === "one"
        ? Array.from({ length: n }, (_, i) => [slot.start + i])
        : Array.from({ length: 2 ** n - 1 }, (_, m) => Array.from({ length: n }, (_, i) => i).filter((i) => ((m + 1) >> i) & 1).map((i) => slot.start + i))
    const plans = slot.plan ? [false, true] : [false]
    return candidates.flatMap((selected) => plans.map((plan) => ({ kind, selected, plan })))
  })

/** A choice as a string, for counting. */
export const key = (c: Choice): string => `${c.kind}|${c.selected.join(",")}|${c.plan}`

/** Central finite differences of f at every coordinate of `at`. */
export const numericGrad = (f: (z: Float64Array) => number, at: Float64Array, h = 1e-5): Float64Array =>
  at.map((_, i) => {
    const plus = new Float64Array(at)
    const minus = new Float64Array(at)
    plus[i] = (plus[i] as number) + h
    minus[i] = (minus[i] as number) - h
    return (f(plus) - f(minus)) / (2 * h)
  })

/**
 * The parameters of a set scorer at which a set's max changes hands within ±h: its pooled max has a kink there, so a
 * central difference across it measures the mean of two one-sided slopes, not the gradient (a measure-zero set that a
 * property test still draws now and then).
 */
export const maxKinks = (params: SetScorer.Params, x: Float64Array, rows: number, sets: SetScorer.Sets, h = 1e-5): ReadonlySet<number> => {
  const argmax = SetScorer.forward(params, x, rows, sets).trace.argmax
  const moved = (data: Float64Array) => SetScorer.forward({ ...params, data }, x, rows, sets).trace.argmax.some((a, k) => a !== argmax[k])
  const out = new Set<number>()
  params.data.forEach((_, i) => {
    const plus = new Float64Array(params.data)
    const minus = new Float64Array(params.data)
    plus[i] = (plus[i] as number) + h
    minus[i] = (minus[i] as number) - h
    if (moved(plus) || moved(minus)) out.add(i)
  })
  return out
}

/**
 * Fails naming the first coordinate where the analytic and numeric gradients differ by more than 1e-6 (relative, floor
 * 1); the coordinates in `kinks` (where the function has a kink within the difference's step, {@link maxKinks}) are
 * not compared.
 */
export const expectGradClose = (analytic: Float64Array, numeric: Float64Array, what: string, kinks: ReadonlySet<number> = new Set()) => {
  analytic.forEach((a, i) => {
    if (kinks.has(i)) return
    const n = numeric[i] as number
    if (!(Math.abs(a - n) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(n)))) expect.unreachable(`${what} row ${i}: analytic ${a}, numeric ${n}`)
  })
}
