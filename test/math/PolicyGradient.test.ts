import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as Advantage from "../../src/math/Advantage.ts"
import * as SetScorer from "../../src/math/SetScorer.ts"
import * as PG from "../../src/math/PolicyGradient.ts"
import { rng } from "../../src/math/Random.ts"
import { defaultRewardConfig } from "../../src/math/Reward.ts"
import * as TD from "../../src/math/TurnDistribution.ts"
import type { Choice, Layout } from "../../src/math/TurnDistribution.ts"
import { caseArb, choices, expectGradClose, maxKinks, numericGrad } from "./TurnLayouts.ts"

/** d f / dx by central differences. */
const derivative = (f: (x: number) => number, x: number, h = 1e-6): number => (f(x + h) - f(x - h)) / (2 * h)

const norm = (xs: Float64Array): number => Math.sqrt(xs.reduce((s, x) => s + x * x, 0))

describe("ppoClip", () => {
  it("its derivative wrt the log-probability matches finite differences away from the clip boundaries", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -5, max: 0, noNaN: true }),
        fc.double({ min: -0.6, max: 0.6, noNaN: true }),
        fc.double({ min: -3, max: 3, noNaN: true }),
        fc.constantFrom(0.1, 0.2, 0.3),
        (behaviour, logRatio, advantage, clip) => {
          const r = Math.exp(logRatio)
          fc.pre(Math.abs(r - (1 + clip)) > 1e-3 && Math.abs(r - (1 - clip)) > 1e-3)
          const at = (logprob: number) => PG.ppoClip({ logprob, behaviour, advantage, clip })
          const lp = behaviour + logRatio
          const result = at(lp)
          expect(result.ratio).toBeCloseTo(r, 12)
          expect(result.dLogprob).toBeCloseTo(derivative((x) => at(x).loss, lp), 6)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("the clipped branch: A > 0 with r > 1 + ε, or A < 0 with r < 1 − ε, has a constant loss and no gradient", () => {
    const up = PG.ppoClip({ logprob: Math.log(1.5), behaviour: 0, advantage: 2, clip: 0.2 })
    expect(up).toEqual({ loss: -1.2 * 2, dLogprob: 0, ratio: expect.closeTo(1.5, 12), clipped: true })
    const down = PG.ppoClip({ logprob: Math.log(0.5), behaviour: 0, advantage: -1, clip: 0.2 })
    expect(down).toEqual({ loss: 0.8, dLogprob: 0, ratio: expect.closeTo(0.5, 12), clipped: true })
  })

  it("the unclipped branch: inside [1 − ε, 1 + ε], or moving against the advantage, the gradient is −r·A", () => {
    for (const [r, a] of [[1.1, 2], [0.9, -1], [0.5, 2], [1.5, -1], [1, 0]] as const) {
      const out = PG.ppoClip({ logprob: Math.log(r) - 1, behaviour: -1, advantage: a, clip: 0.2 })
      expect(out.clipped).toBe(false)
      expect(out.loss).toBeCloseTo(-r * a, 12)
      expect(out.dLogprob).toBeCloseTo(-r * a, 12)
    }
  })
})

describe("klK3", () => {
  it("is ≥ 0, 0 at the reference, e − 2 one nat away, and its derivative matches finite differences", () => {
    const same = PG.klK3({ logprob: -1.3, reference: -1.3 })
    expect(same.kl).toBe(0)
    expect(Math.abs(same.dLogprob)).toBe(0)
    expect(PG.klK3({ logprob: -2, reference: -1 }).kl).toBeCloseTo(Math.E - 2, 14)
    fc.assert(
      fc.property(fc.double({ min: -8, max: 0, noNaN: true }), fc.double({ min: -8, max: 0, noNaN: true }), (logprob, reference) => {
        const { kl, dLogprob } = PG.klK3({ logprob, reference })
        expect(kl).toBeGreaterThanOrEqual(0)
        const numeric = derivative((x) => PG.klK3({ logprob: x, reference }).kl, logprob)
        expect(Math.abs(dLogprob - numeric)).toBeLessThan(1e-6 * Math.max(1, Math.abs(numeric)))
      }),
      { numRuns: 500 }
    )
  })
})

describe("clipGradNorm", () => {
  it("scales a long gradient to the cap, leaves a short one alone, and returns the norm before clipping", () => {
    const g = Float64Array.from([3, 4])
    expect(PG.clipGradNorm(g, 1)).toBe(5)
    expect(g[0]).toBeCloseTo(0.6, 15)
    expect(g[1]).toBeCloseTo(0.8, 15)
    const h = Float64Array.from([3, 4])
    expect(PG.clipGradNorm(h, 10)).toBe(5)
    expect([...h]).toEqual([3, 4])
  })

  it("after clipping the norm is min(norm, cap) and the direction is unchanged", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 20 }), fc.double({ min: 0.01, max: 50, noNaN: true }), (xs, cap) => {
        const before = Float64Array.from(xs)
        const g = Float64Array.from(xs)
        const n = PG.clipGradNorm(g, cap)
        expect(n).toBeCloseTo(norm(before), 9)
        expect(norm(g)).toBeCloseTo(Math.min(n, cap), 9)
        const scale = n > cap ? cap / n : 1
        g.forEach((x, i) => expect(x).toBeCloseTo((before[i] as number) * scale, 9))
      })
    )
  })
})

describe("Adam", () => {
  /** f(θ) = ½ Σ a_i (θ_i − c_i)², minimum at c. */
  const curvature = Float64Array.from([0.1, 1, 10, 100, 3])
  const centre = Float64Array.from([1, -2, 0.5, 3, -0.25])
  const gradient = (theta: Float64Array) => theta.map((t, i) => (curvature[i] as number) * (t - (centre[i] as number)))

  it("converges on an ill-conditioned quadratic", () => {
    const theta = new Float64Array(5)
    const state = PG.adamInit(5)
    const config: PG.AdamConfig = { ...PG.defaultAdam, lr: 0.05 }
    for (let t = 0; t < 3_000; t++) PG.adamStep(theta, gradient(theta), state, config)
    expect(state.t).toBe(3_000)
    theta.forEach((x, i) => expect(Math.abs(x - (centre[i] as number))).toBeLessThan(1e-3))
  })

  it("the first bias-corrected step moves every coordinate by lr against the sign of its gradient", () => {
    const theta = Float64Array.from([0, 0, 0])
    PG.adamStep(theta, Float64Array.from([5, -0.01, 1e3]), PG.adamInit(3), PG.defaultAdam)
    theta.forEach((x, i) => expect(x).toBeCloseTo([-1e-3, 1e-3, -1e-3][i] as number, 8))
  })

  it("weight decay is decoupled: with a zero gradient θ shrinks by exactly (1 − lr·wd)", () => {
    const theta = Float64Array.from([2, -4])
    PG.adamStep(theta, new Float64Array(2), PG.adamInit(2), { ...PG.defaultAdam, lr: 0.1, weightDecay: 0.5 })
    expect([...theta]).toEqual([2 * 0.95, -4 * 0.95])
  })

  it("m, v and t are the whole state: a run resumed from copies of them matches an uninterrupted one", () => {
    const config: PG.AdamConfig = { ...PG.defaultAdam, lr: 0.02 }
    const straight = new Float64Array(5)
    const s1 = PG.adamInit(5)
    for (let t = 0; t < 40; t++) PG.adamStep(straight, gradient(straight), s1, config)
    const resumed = new Float64Array(5)
    const s2 = PG.adamInit(5)
    for (let t = 0; t < 20; t++) PG.adamStep(resumed, gradient(resumed), s2, config)
    const checkpoint = { params: [...resumed], m: [...s2.m], v: [...s2.v], t: s2.t }
    const restored = Float64Array.from(checkpoint.params)
    const s3: PG.AdamState = { m: Float64Array.from(checkpoint.m), v: Float64Array.from(checkpoint.v), t: checkpoint.t }
    for (let t = 0; t < 20; t++) PG.adamStep(restored, gradient(restored), s3, config)
    expect([...restored]).toEqual([...straight])
  })
})

describe("stepLoss and sftStepLoss", () => {
  /** A random MLP over a random layout's rows, and one choice the layout can produce. */
  const stepArb = caseArb(1).chain(({ layout, seed }) =>
    fc.record({
      pick: fc.nat(),
      offset: fc.constantFrom(-0.5, -0.05, 0.05, 0.5),
      // |A| ≥ 0.05: a subnormal advantage makes "which branch is smaller" a question of underflow
      advantage: fc.tuple(fc.boolean(), fc.double({ min: 0.05, max: 2, noNaN: true })).map(([negative, a]) => (negative ? -a : a)),
      referenceShift: fc.double({ min: -1, max: 1, noNaN: true }),
      hidden: fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 2 }),
      temperature: fc.constantFrom(1, 0.7, 1.5)
    }).map(({ pick, offset, advantage, referenceShift, hidden, temperature }) => {
      const r = rng(seed ^ 0xabc)
      const shape: SetScorer.Shape = { input: 3, encoder: { kind: "learned", width: 2 }, hidden }
      const params: SetScorer.Params = { shape, data: Float64Array.from({ length: SetScorer.size(shape) }, () => r.normal() * 0.7) }
      const x = Float64Array.from({ length: layout.rows * 3 }, () => r.normal())
      const all = choices(layout)
      const choice = all[pick % all.length] as Choice
      // one set of every row, read by every other row: the gradient goes through the pooled summaries too
      const sets: SetScorer.Sets = { members: [Array.from({ length: layout.rows }, (_, i) => i)], reads: Array.from({ length: layout.rows }, (_, i) => (i % 2 === 0 ? 0 : -1)) }
      return { layout: { ...layout, sets }, params, x, choice, offset, advantage, referenceShift, temperature }
    })
  )

  const config: PG.PpoConfig = { ...PG.defaultPpo, klCoef: 0.3, entropyCoef: 0.05 }

  it("stepLoss's gradient wrt the MLP parameters matches finite differences end to end (PPO + KL − entropy, any temperature)", () => {
    fc.assert(
      fc.property(stepArb, ({ layout, params, x, choice, offset, advantage, referenceShift, temperature }) => {
        const tempered = TD.temper(SetScorer.logits(params, x, layout.rows, layout.sets), temperature)
        const lp = TD.logProb(layout, tempered, choice)
        // behaviour and reference fixed from the unperturbed policy: r = e^offset stays on one side of the clip
        const behaviour = lp - offset
        const reference = lp + referenceShift
        const weight = 0.25
        const loss = (data: Float64Array) =>
          weight * PG.stepLoss({ params: { ...params, data }, x, layout, choice, behaviour, advantage, reference, config: { ...config, temperature }, grad: new Float64Array(data.length) }).loss
        const grad = Float64Array.from({ length: params.data.length }, () => 1)
        const out = PG.stepLoss({ params, x, layout, choice, behaviour, advantage, reference, config: { ...config, temperature }, grad, weight })
        expect(out.logprob).toBeCloseTo(lp, 12)
        expect(out.ratio).toBeCloseTo(Math.exp(offset), 12)
        expect(out.clipped).toBe(Math.abs(offset) > 0.2 && Math.sign(offset) === Math.sign(advantage))
        expect(out.kl).toBeCloseTo(PG.klK3({ logprob: lp, reference }).kl, 12)
        expect(out.entropy).toBeCloseTo(TD.entropy(layout, tempered).entropy, 12)
        // the gradient was added to a vector of ones
        expectGradClose(grad.map((g) => g - 1), numericGrad(loss, params.data), "stepLoss", maxKinks(params, x, layout.rows, layout.sets))
      }),
      { numRuns: 150 }
    )
  })

  it("sftStepLoss is −log P(demonstration) with its gradient", () => {
    fc.assert(
      fc.property(stepArb, ({ layout, params, x, choice }) => {
        const grad = new Float64Array(params.data.length)
        const out = PG.sftStepLoss({ params, x, layout, choice, grad })
        expect(out.loss).toBeCloseTo(-TD.logProb(layout, SetScorer.logits(params, x, layout.rows, layout.sets), choice), 12)
        const loss = (data: Float64Array) => PG.sftStepLoss({ params: { ...params, data }, x, layout, choice, grad: new Float64Array(data.length) }).loss
        expectGradClose(grad, numericGrad(loss, params.data), "sftStepLoss", maxKinks(params, x, layout.rows, layout.sets))
      }),
      { numRuns: 150 }
    )
  })

  it("defaults: clip 0.2, 4 epochs, KL off, entropy 0.01, gradient norm 1; Adam lr 1e-3", () => {
    expect(PG.defaultPpo).toEqual({ clip: 0.2, epochs: 4, klCoef: 0, entropyCoef: 0.01, maxGradNorm: 1 })
    expect(PG.defaultAdam).toEqual({ lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8 })
  })
})

describe("A two-armed bandit learned with GRPO advantages and PPO-clip", () => {
  // one kind ("pull") whose one-of candidates are the two arms; features: [is the kind row, is arm 0, is arm 1]
  const layout: Layout = { kinds: [{ row: 0, start: 1, end: 3, mode: "one", plan: false }], rows: 3 }
  const x = Float64Array.from([1, 0, 0, 0, 1, 0, 0, 0, 1])
  /** Row 1 is arm 0 (reward 1), row 2 arm 1 (reward 0.2). */
  const armReward = (row: number) => (row === 1 ? 1 : 0.2)
  const group = 8

  /** P(arm 0) under the current parameters; the expected reward is 0.2 + 0.8·P(arm 0). */
  const pArm0 = (params: SetScorer.Params) => Math.exp(TD.logProb(layout, SetScorer.logits(params, x, 3), { kind: 0, selected: [1], plan: false }))

  const train = (seed: number, iterations: number, reward: (row: number) => number = armReward) => {
    const params = SetScorer.init({ input: 3, encoder: { kind: "learned", width: 2 }, hidden: [4] }, seed)
    const adam = PG.adamInit(params.data.length)
    const adamConfig: PG.AdamConfig = { ...PG.defaultAdam, lr: 0.01 }
    const ppo = PG.defaultPpo
    const r = rng(seed)
    const expected: Array<number> = [0.2 + 0.8 * pArm0(params)]
    const p0: Array<number> = [pArm0(params)]
    for (let it = 0; it < iterations; it++) {
      const logits = SetScorer.logits(params, x, 3)
      const samples = Array.from({ length: group }, () => {
        const choice = TD.sample(layout, logits, r.next)
        return { choice, behaviour: TD.logProb(layout, logits, choice), reward: reward(choice.selected[0] as number) }
      })
      // one single-step rollout per sample: GRPO's advantage of its only step is the group-normalised reward
      const result = Advantage.compute("grpo", samples.map((s) => ({ traj: s.reward, phases: [0], steps: [0], stepPhase: [0] })), defaultRewardConfig.advantage)
      if (result._tag !== "Ok") return expect.unreachable(JSON.stringify(result))
      const advantages = result.advantages.map((steps) => steps[0]?.combined ?? NaN)
      for (let epoch = 0; epoch < ppo.epochs; epoch++) {
        const grad = new Float64Array(params.data.length)
        samples.forEach((s, i) =>
          PG.stepLoss({ params, x, layout, choice: s.choice, behaviour: s.behaviour, advantage: advantages[i] as number, config: ppo, grad, weight: 1 / group })
        )
        PG.clipGradNorm(grad, ppo.maxGradNorm)
        PG.adamStep(params.data, grad, adam, adamConfig)
      }
      expected.push(0.2 + 0.8 * pArm0(params))
      p0.push(pArm0(params))
    }
    return { params, expected, p0 }
  }

  it("P(arm 0) rises from ≈ 0.5 and the expected reward from ≈ 0.6 to > 0.9 within 40 iterations (lr 0.01), for several seeds", () => {
    for (const seed of [1, 2, 3]) {
      const { expected, p0 } = train(seed, 40)
      expect(Math.abs((p0[0] as number) - 0.5)).toBeLessThan(0.05)
      expect(Math.abs((expected[0] as number) - 0.6)).toBeLessThan(0.05)
      // learning, not a jump: still below 0.9 after 3 iterations (12 Adam steps)
      expect(expected[3]).toBeLessThan(0.9)
      expect(expected.at(-1)).toBeGreaterThan(0.9)
    }
  })

  it("with the rewards swapped it learns the other arm (the sign of the update is right)", () => {
    const { p0 } = train(1, 40, (row) => armReward(row === 1 ? 2 : 1))
    expect(p0.at(-1)).toBeLessThan(0.1)
  })

  it("is deterministic: the same seed gives the same parameters bit for bit", () => {
    expect([...train(5, 10).params.data]).toEqual([...train(5, 10).params.data])
  })
})

describe("batched losses (one stacked pass) against the per-step loop", () => {
  it("ppoBatch and sftBatch give the per-step losses and the same summed gradient", () => {
    fc.assert(
      fc.property(fc.array(caseArb(3), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 1000 }), fc.constantFrom(1, 0.5, 2), (cases, seed, temperature) => {
        const width = 6
        const params = SetScorer.init({ input: width, encoder: { kind: "learned", width: 3 }, hidden: [5] }, seed, 1)
        const r = rng(seed + 1)
        const steps = cases.map((c) => {
          const options = choices(c.layout)
          const choice = options[r.int(options.length)] as Choice
          const x = Float64Array.from({ length: c.layout.rows * width }, () => 2 * r.next() - 1)
          // each step's rows read sets of its own rows: stacking must keep them apart
          const rows = c.layout.rows
          const count = 1 + r.int(3)
          const sets: SetScorer.Sets = {
            members: Array.from({ length: count }, () => Array.from({ length: rows }, (_, i) => i).filter(() => r.next() < 0.5)),
            reads: Array.from({ length: rows }, () => (r.next() < 0.2 ? -1 : r.int(count)))
          }
          return { x, layout: { ...c.layout, sets }, choice, behaviour: -1 - r.next(), advantage: 2 * r.next() - 1, reference: -1.5 }
        })
        // ppoBatch trains π(logits / T) from its config
        const config = { ...PG.defaultPpo, klCoef: 0.1, temperature }
        const loopGrad = new Float64Array(params.data.length)
        // stepLoss reads T from the same config
        const loop = steps.map((s) => PG.stepLoss({ ...s, params, config, grad: loopGrad, weight: 1 / steps.length }))
        const batchGrad = new Float64Array(params.data.length)
        const batch = PG.ppoBatch({ params, steps, config, grad: batchGrad })
        batch.forEach((b, i) => expect(b.loss).toBeCloseTo((loop[i] as PG.StepLossResult).loss, 10))
        batchGrad.forEach((g, i) => expect(g).toBeCloseTo(loopGrad[i] as number, 10))
        const sftLoop = new Float64Array(params.data.length)
        const sftLosses = steps.map((s) => PG.sftStepLoss({ ...s, params, grad: sftLoop, weight: 1 / steps.length }).loss)
        const sftGrad = new Float64Array(params.data.length)
        PG.sftBatch({ params, steps, grad: sftGrad }).forEach((l, i) => expect(l).toBeCloseTo(sftLosses[i] as number, 10))
        sftGrad.forEach((g, i) => expect(g).toBeCloseTo(sftLoop[i] as number, 10))
      }),
      { numRuns: 40 }
    )
  })
})

describe("sftBatch's listwise term", () => {
  it("adds λ × the listwise loss of each step marked rank, and λ/N × its logits' gradient through the network; λ = 0 or no mark is the plain clone", () => {
    fc.assert(
      fc.property(fc.array(caseArb(3), { minLength: 1, maxLength: 5 }), fc.integer({ min: 0, max: 1000 }), fc.constantFrom(0.5, 1, 3), (cases, seed, lambda) => {
        const width = 6
        const params = SetScorer.init({ input: width, encoder: { kind: "learned", width: 3 }, hidden: [5] }, seed, 1)
        const r = rng(seed + 3)
        const steps = cases.map((c) => {
          const options = choices(c.layout)
          const choice = options[r.int(options.length)] as Choice
          const x = Float64Array.from({ length: c.layout.rows * width }, () => 2 * r.next() - 1)
          return { x, layout: c.layout, choice, rank: r.next() < 0.6 }
        })
        const plainGrad = new Float64Array(params.data.length)
        const plain = PG.sftBatch({ params, steps, grad: plainGrad })
        const zeroGrad = new Float64Array(params.data.length)
        expect(PG.sftBatch({ params, steps, grad: zeroGrad, listwise: 0 })).toEqual(plain)
        expect([...zeroGrad]).toEqual([...plainGrad])
        const unmarkedGrad = new Float64Array(params.data.length)
        expect(PG.sftBatch({ params, steps: steps.map(({ rank: _, ...rest }) => rest), grad: unmarkedGrad, listwise: lambda })).toEqual(plain)
        const grad = new Float64Array(params.data.length)
        const losses = PG.sftBatch({ params, steps, grad, listwise: lambda })
        // the term written out per step: its own forward pass, the listwise gradient of its logits, backward
        const want = Float64Array.from(plainGrad)
        steps.forEach((st, i) => {
          const { logits, trace } = SetScorer.forward(params, st.x, st.layout.rows, st.layout.sets)
          const rank = TD.listwiseGrad(st.layout, logits, st.choice)
          expect(losses[i]).toBeCloseTo((plain[i] as number) + (st.rank ? lambda * rank.loss : 0), 10)
          if (st.rank) SetScorer.backward(params, trace, rank.dLogits.map((g) => (lambda * g) / steps.length), want)
        })
        grad.forEach((g, i) => expect(g).toBeCloseTo(want[i] as number, 10))
      }),
      { numRuns: 40 }
    )
  })
})

describe("ppoFactorBatch (per-factor credit)", () => {
  /** Random steps with per-factor behaviour (offsets within or beyond the clip) and advantages. */
  const stepsArb = fc.tuple(
    fc.array(caseArb(2), { minLength: 1, maxLength: 4 }),
    fc.integer({ min: 0, max: 10_000 }),
    fc.constantFrom<"sum" | "normalised">("sum", "normalised"),
    fc.constantFrom(1, 0.5, 1.5)
  )

  const build = (cases: ReadonlyArray<{ readonly layout: Layout }>, seed: number, width: number, params: SetScorer.Params, offsets: ReadonlyArray<number>, temperature = 1) => {
    const r = rng(seed + 7)
    return cases.map((c) => {
      const options = choices(c.layout)
      const choice = options[r.int(options.length)] as Choice
      const x = Float64Array.from({ length: c.layout.rows * width }, () => 2 * r.next() - 1)
      // the behaviour is the tempered distribution's (what a rollout at T recorded)
      const fs = TD.factors(c.layout, TD.temper(SetScorer.logits(params, x, c.layout.rows), temperature), choice)
      // |A| ≥ 0.05 and log-ratios away from ±clip: each factor stays on one side of its clip under small perturbations
      const advantages = Float64Array.from(fs, () => (r.next() < 0.5 ? -1 : 1) * (0.05 + r.next()))
      const behaviour = Float64Array.from(fs, (f) => f.logprob - (offsets[r.int(offsets.length)] as number))
      const total = fs.reduce((s, f) => s + f.logprob, 0)
      return { x, layout: c.layout, choice, behaviour, advantages, reference: total + 0.3 }
    })
  }

  it("the batch equals the per-step reference loss, and its gradient matches finite differences of it", () => {
    fc.assert(
      fc.property(stepsArb, ([cases, seed, entropy, temperature]) => {
        const width = 4
        const params = SetScorer.init({ input: width, encoder: { kind: "learned", width: 3 }, hidden: [3] }, seed, 1)
        const steps = build(cases, seed, width, params, [-0.5, -0.05, 0.05, 0.5], temperature)
        const config: PG.PpoConfig = { ...PG.defaultPpo, klCoef: 0.2, entropyCoef: 0.05, entropy, temperature }
        const grad = new Float64Array(params.data.length)
        const out = PG.ppoFactorBatch({ params, steps, config, grad })
        out.forEach((o, i) => expect(o.loss).toBeCloseTo(PG.factorStepLoss({ ...(steps[i] as PG.FactorSample), params, config }), 10))
        const loss = (data: Float64Array) => steps.reduce((s, st) => s + PG.factorStepLoss({ ...st, params: { ...params, data }, config }), 0) / steps.length
        expectGradClose(grad, numericGrad(loss, params.data), "ppoFactorBatch")
        out.forEach((o, i) => {
          expect(o.factors).toBe(steps[i]?.behaviour.length)
          expect(o.clippedFactors).toBeLessThanOrEqual(o.factors)
        })
      }),
      { numRuns: 60 }
    )
  })

  it("with one advantage on every factor and no factor clipped, it has ppoBatch's gradient (the turn-level loss)", () => {
    fc.assert(
      fc.property(stepsArb, ([cases, seed, entropy, temperature]) => {
        const width = 4
        const params = SetScorer.init({ input: width, encoder: { kind: "learned", width: 3 }, hidden: [3] }, seed, 1)
        // behaviour = the current policy: every ratio is 1, nothing is clipped
        const steps = build(cases, seed, width, params, [0], temperature).map((s, i) => ({ ...s, advantages: s.advantages.map(() => (i % 2 === 0 ? 0.7 : -0.4)) }))
        const config: PG.PpoConfig = { ...PG.defaultPpo, klCoef: 0.2, entropyCoef: 0.05, entropy, temperature }
        const factorGrad = new Float64Array(params.data.length)
        const factor = PG.ppoFactorBatch({ params, steps, config, grad: factorGrad })
        const turnGrad = new Float64Array(params.data.length)
        const turn = PG.ppoBatch({
          params,
          steps: steps.map((s) => ({ x: s.x, layout: s.layout, choice: s.choice, behaviour: s.behaviour.reduce((a, b) => a + b, 0), advantage: s.advantages[0] as number, reference: s.reference })),
          config,
          grad: turnGrad
        })
        factor.forEach((f, i) => {
          expect(f.clippedFactors).toBe(0)
          expect(f.ratio).toBeCloseTo(1, 12)
          expect(f.kl).toBeCloseTo((turn[i] as PG.StepLossResult).kl, 12)
          expect(f.entropy).toBeCloseTo((turn[i] as PG.StepLossResult).entropy, 12)
        })
        factorGrad.forEach((g, i) => expect(g).toBeCloseTo(turnGrad[i] as number, 10))
      }),
      { numRuns: 60 }
    )
  })

  it("credits a factor only with its own advantage: a positive advantage on one chosen candidate alone raises that factor's probability", () => {
    const layout: Layout = { kinds: [{ row: 0, start: 1, end: 4, mode: "subset", plan: false }], rows: 4 }
    const width = 4
    // one-hot rows: the MLP can move each row's logit on its own
    const x = Float64Array.from({ length: 4 * width }, (_, i) => (Math.floor(i / width) === i % width ? 1 : 0))
    const params = SetScorer.init({ input: width, encoder: { kind: "learned", width: 3 }, hidden: [6] }, 3, 1)
    const choice: Choice = { kind: 0, selected: [1, 3], plan: false }
    const fs = TD.factors(layout, SetScorer.logits(params, x, 4), choice)
    // factors: kind, first chosen (row 1), row 2 (not chosen), row 3 (chosen); credit only row 3
    expect(fs.map((f) => f.target._tag === "candidate" ? `${f.target.row}${f.target.chosen ? "+" : "-"}` : f.target._tag)).toEqual(["kind", "1+", "2-", "3+"])
    const behaviour = Float64Array.from(fs, (f) => f.logprob)
    const advantages = Float64Array.from([0, 0, 0, 1])
    const adam = PG.adamInit(params.data.length)
    const before = TD.factors(layout, SetScorer.logits(params, x, 4), choice).map((f) => f.logprob)
    for (let i = 0; i < 20; i++) {
      const grad = new Float64Array(params.data.length)
      PG.ppoFactorBatch({ params, steps: [{ x, layout, choice, behaviour, advantages }], config: { ...PG.defaultPpo, entropyCoef: 0, clip: 10 }, grad })
      PG.adamStep(params.data, grad, adam, { ...PG.defaultAdam, lr: 0.01 })
    }
    const after = TD.factors(layout, SetScorer.logits(params, x, 4), choice).map((f) => f.logprob)
    expect(after[3]).toBeGreaterThan((before[3] as number) + 0.05)
  })
})
