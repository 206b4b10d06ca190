import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { StepAdvantage } from "../../src/domain/Trajectory.ts"
import * as Advantage from "../../src/math/Advantage.ts"
import { defaultRewardConfig } from "../../src/math/Reward.ts"
import * as Stats from "../../src/math/Stats.ts"
import * as StepKind from "../../src/math/StepKind.ts"
import { loopEstimate } from "./AdvantageLoop.ts"
import { makeTrajectory } from "./fixtures.ts"

const config = defaultRewardConfig.advantage

/** Rewards on a 1/8 grid (distinct values differ by ≥ 0.125, so a non-degenerate pool has a sizeable std). */
const reward = fc.integer({ min: -16, max: 16 }).map((k) => k / 8)

/**
 * A rollout: phases of 1–4 steps each; `minPhases` 0 allows a rollout with no step at all. Each step has a
 * step-pool key (a step kind, 0–3); with `masks`, about one rollout in five is masked.
 */
const rolloutArb = (minPhases: number, masks = false, credit = false): fc.Arbitrary<Advantage.RolloutRewards> =>
  fc.array(fc.integer({ min: 1, max: 4 }), { minLength: minPhases, maxLength: 5 }).chain((sizes) => {
    const n = sizes.reduce((a, b) => a + b, 0)
    const action = fc.record({ reward, pool: fc.integer({ min: 0, max: 1 }) })
    return fc.record({
      traj: reward,
      phases: fc.array(reward, { minLength: sizes.length, maxLength: sizes.length }),
      steps: fc.array(reward, { minLength: n, maxLength: n }),
      stepPhase: fc.constant(sizes.flatMap((k, p) => Array<number>(k).fill(p))),
      stepPool: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: n, maxLength: n }),
      masked: masks ? fc.integer({ min: 0, max: 4 }).map((k) => k === 0) : fc.constant(false),
      phaseKind: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: sizes.length, maxLength: sizes.length }),
      ...(credit
        ? {
          actions: fc.array(fc.array(action, { maxLength: 3 }), { minLength: n, maxLength: n }),
          plans: fc.array(fc.option(fc.record({ reward: fc.constantFrom(0, 1), pool: fc.integer({ min: 0, max: 2 }) }), { nil: undefined }), { minLength: n, maxLength: n }),
          kinds: fc.array(fc.option(fc.record({ reward: fc.constantFrom(0, 1), pool: fc.integer({ min: 0, max: 1 }) }), { nil: undefined }), { minLength: n, maxLength: n })
        }
        : {})
    })
  })

const groupArb = (minPhases: number, masks = false, credit = false) => fc.array(rolloutArb(minPhases, masks, credit), { minLength: 1, maxLength: 8 })

const names = ["grpo", "paraagent", "paraagent_single_pool", "grpo_per_index", "paraagent_phase_kind", "paraagent_credit", "paraagent_credit_stop", "paraagent_attributed", "paraagent_attributed_stop", "zero"] as const

const run = (name: string, rollouts: ReadonlyArray<Advantage.RolloutRewards>, cfg = config) => {
  const result = Advantage.compute(name, rollouts, cfg)
  return result._tag === "Ok" ? result.advantages : expect.unreachable(JSON.stringify(result))
}

/** A step's levels, its kind advantage (estimators that give one) checked to be 0 too. */
const zeroLevels = ({ kind, ...levels }: StepAdvantage) => {
  expect(kind ?? 0).toBe(0)
  return levels
}

const close = (a: number, b: number, tolerance = 1e-9) => Math.abs(a - b) <= tolerance * (1 + Math.abs(a) + Math.abs(b))

/** Per level, one value per pooled item: A_traj per rollout (with steps), A_phase per phase, A_step per step. */
const levels = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, adv: ReadonlyArray<ReadonlyArray<StepAdvantage>>) => ({
  traj: adv.flatMap((steps) => (steps[0] === undefined ? [] : [steps[0].traj])),
  phase: rollouts.flatMap((r, g) => r.phases.map((_, p) => adv[g]?.[r.stepPhase.indexOf(p)]?.phase ?? NaN)),
  step: adv.flatMap((steps) => steps.map((s) => s.step))
})

describe("Advantage estimators agree with the loop implementation", () => {
  for (const name of names) {
    it(`${name}: optimised == loop on random ragged groups with step pools, masked rollouts and tolerances`, () => {
      fc.assert(
        // tolerance 0.3 on a 1/8 grid: pools spread by 0.125 or 0.25 count as constant, wider ones do not
        fc.property(fc.boolean().chain((credit) => groupArb(0, true, credit)), fc.constantFrom(config.tolerance, 0, 0.3), (rollouts, tolerance) => {
          const cfg = { ...config, tolerance }
          const fast = run(name, rollouts, cfg)
          const slow = loopEstimate(name, rollouts, cfg)
          expect(fast.map((r) => r.length)).toEqual(slow.map((r) => r.length))
          fast.forEach((steps, g) =>
            steps.forEach((a, i) => {
              const b = slow[g]?.[i] as StepAdvantage
              for (const key of ["traj", "phase", "step", "combined"] as const) {
                if (!close(a[key], b[key])) expect.unreachable(`${name} g=${g} i=${i} ${key}: ${a[key]} vs ${b[key]}`)
              }
              expect(a.actions?.length).toBe(b.actions?.length)
              a.actions?.forEach((x, j) => {
                if (!close(x, b.actions?.[j] ?? NaN)) expect.unreachable(`${name} g=${g} i=${i} action ${j}: ${x} vs ${b.actions?.[j]}`)
              })
              if (a.plan !== undefined || b.plan !== undefined) expect(close(a.plan ?? NaN, b.plan ?? NaN)).toBe(true)
              if (a.kind !== undefined || b.kind !== undefined) expect(close(a.kind ?? NaN, b.kind ?? NaN)).toBe(true)
            })
          )
        }),
        { numRuns: 300 }
      )
    })
  }
})

describe("Advantage properties (paraagent)", () => {
  it("each level has mean ≈ 0 over its pool: the trajectories, all phases, the steps of each step pool", () => {
    fc.assert(
      fc.property(groupArb(1), (rollouts) => {
        const { traj, phase, step } = levels(rollouts, run("paraagent", rollouts))
        for (const xs of [traj, phase, step]) expect(Math.abs(Stats.mean(xs))).toBeLessThan(1e-9)
        const keys = rollouts.flatMap((r) => r.stepPool ?? [])
        for (const k of [0, 1, 2, 3]) {
          const pool = step.filter((_, i) => keys[i] === k)
          if (pool.length > 0) expect(Math.abs(Stats.mean(pool))).toBeLessThan(1e-9)
        }
      }),
      { numRuns: 300 }
    )
  })

  const shiftLevel = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, level: "traj" | "phases" | "steps", f: (x: number) => number) =>
    rollouts.map((r) =>
      level === "traj" ? { ...r, traj: f(r.traj) } : level === "phases" ? { ...r, phases: r.phases.map(f) } : { ...r, steps: r.steps.map(f) }
    )

  it("adding a constant to every reward of a level changes no advantage (any estimator, masked rollouts, the tolerance)", () => {
    fc.assert(
      fc.property(groupArb(0, true), fc.constantFrom(...names), fc.constantFrom("traj" as const, "phases" as const, "steps" as const), fc.double({ min: -100, max: 100, noNaN: true }), (rollouts, name, level, c) => {
        const before = run(name, rollouts)
        const after = run(name, shiftLevel(rollouts, level, (x) => x + c))
        const unchanged = before.every((steps, g) =>
          steps.every((a, i) => {
            const b = after[g]?.[i] as StepAdvantage
            return (["traj", "phase", "step", "combined"] as const).every((key) => close(a[key], b[key]))
          })
        )
        expect(unchanged).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("scaling a level by a positive factor (and the tolerance with it) changes its advantages only through ε (exactly none with ε = 0)", () => {
    fc.assert(
      fc.property(groupArb(1), fc.constantFrom("traj" as const, "phases" as const, "steps" as const), fc.double({ min: 0.01, max: 100, noNaN: true }), (rollouts, level, a) => {
        const key = level === "traj" ? "traj" : level === "phases" ? "phase" : "step"
        // each item's pool (steps are pooled by step-pool key) and that pool's size and std
        const items = level === "traj"
          ? rollouts.map((r) => ({ value: r.traj, pool: 0 }))
          : level === "phases"
          ? rollouts.flatMap((r) => r.phases.map((value) => ({ value, pool: 0 })))
          : rollouts.flatMap((r) => r.steps.map((value, i) => ({ value, pool: r.stepPool?.[i] ?? 0 })))
        const bounds = (epsilon: number) =>
          items.map(({ pool }) => {
            const xs = items.filter((it) => it.pool === pool).map((it) => it.value)
            const s = Stats.std(xs)
            // z = d/(s + ε) vs d/(s + ε/a): they differ by at most sqrt(n)·ε·|1 − 1/a|/s
            return s === 0 ? 0 : (Math.sqrt(xs.length) * epsilon * Math.abs(1 - 1 / a)) / s
          })
        for (const epsilon of [config.epsilon, 0]) {
          const before = levels(rollouts, run("paraagent", rollouts, { ...config, epsilon }))[key]
          const after = levels(rollouts, run("paraagent", shiftLevel(rollouts, level, (x) => a * x), { ...config, epsilon, tolerance: a * config.tolerance }))[key]
          const bound = bounds(epsilon)
          before.forEach((z, i) => expect(Math.abs(z - (after[i] ?? NaN))).toBeLessThanOrEqual((bound[i] ?? 0) + 1e-9 * (1 + Math.abs(z))))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("a degenerate level (all equal, or one member) gives exactly 0", () => {
    fc.assert(
      fc.property(groupArb(1), reward, (rollouts, c) => {
        const flat = rollouts.map((r) => ({ ...r, traj: c, phases: r.phases.map(() => c), steps: r.steps.map(() => c) }))
        for (const name of names) {
          for (const steps of run(name, flat)) for (const a of steps) expect(zeroLevels(a)).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
        }
        const credited = flat.map((r) => ({ ...r, actions: r.steps.map(() => [{ reward: c, pool: 0 }]), plans: r.steps.map(() => ({ reward: c, pool: 1 })) }))
        for (const steps of run("paraagent_credit", credited)) {
          for (const a of steps) expect(a).toEqual({ traj: 0, phase: 0, step: 0, combined: 0, actions: [0], plan: 0 })
        }
        const single = run("paraagent", rollouts.slice(0, 1))
        for (const a of single[0] ?? []) expect(a.traj).toBe(0)
      })
    )
  })

  it("ragged groups (different lengths, rollouts with no step, a lone rollout) give finite values", () => {
    fc.assert(
      fc.property(groupArb(0, true), (rollouts) => {
        for (const name of names) {
          const adv = run(name, rollouts)
          expect(adv.map((steps) => steps.length)).toEqual(rollouts.map((r) => r.steps.length))
          const finite = adv.every((steps) => steps.every((a) => [a.traj, a.phase, a.step, a.combined].every(Number.isFinite)))
          expect(finite).toBe(true)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("combines the levels with λτ, λp, λs from the config; GRPO ignores them", () => {
    fc.assert(
      fc.property(groupArb(1), fc.double({ min: 0, max: 2, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true }), fc.double({ min: 0, max: 2, noNaN: true }), (rollouts, lt, lp, ls) => {
        const cfg = { ...config, lambdaTraj: lt, lambdaPhase: lp, lambdaStep: ls }
        for (const steps of run("paraagent", rollouts, cfg)) {
          for (const a of steps) expect(close(a.combined, lt * a.traj + lp * a.phase + ls * a.step)).toBe(true)
        }
        for (const steps of run("grpo", rollouts, cfg)) for (const a of steps) expect(a.combined).toBe(a.traj)
      })
    )
  })
})

describe("Pooled versus per-index normalisation", () => {
  // A stops after one good step; B takes two, the second mediocre
  const group: ReadonlyArray<Advantage.RolloutRewards> = [
    { traj: 1, phases: [1], steps: [1], stepPhase: [0] },
    { traj: 0, phases: [0, 0.5], steps: [0, 0.5], stepPhase: [0, 1] }
  ]

  it("pooled: B's second step is compared with every step of the group", () => {
    const s = Math.sqrt(1 / 6)
    const adv = run("paraagent", group)
    expect(adv[0]?.[0]?.step).toBeCloseTo(0.5 / (s + 1e-6), 9)
    expect(adv[1]?.map((a) => a.step)).toEqual([expect.closeTo(-0.5 / (s + 1e-6), 9), 0])
  })

  it("per index: a position only one rollout reached is compared with nothing and gets 0", () => {
    const adv = run("grpo_per_index", group)
    expect(adv[0]?.[0]?.step).toBeCloseTo(0.5 / (0.5 + 1e-6), 9)
    expect(adv[1]?.map((a) => a.step)).toEqual([expect.closeTo(-0.5 / (0.5 + 1e-6), 9), 0])
    expect(adv[1]?.[1]?.phase).toBe(0)
  })
})

describe("Advantage registry and inputs", () => {
  it("names the known estimators when asked for an unknown one", () => {
    expect(Advantage.lookup("ppo")).toEqual({ _tag: "UnknownEstimator", name: "ppo", known: [...names] })
    expect(Advantage.compute("ppo", [], config)).toEqual({ _tag: "UnknownEstimator", name: "ppo", known: [...names] })
    expect(Advantage.defaultEstimator).toBe("paraagent")
  })

  it("a registered estimator is found by name without touching the built-in registry", () => {
    const half: Advantage.Estimator = (group) => ({
      traj: new Float64Array(group.stepReward.length),
      phase: new Float64Array(group.stepReward.length),
      step: new Float64Array(group.stepReward.length),
      combined: new Float64Array(group.stepReward.length).fill(0.5),
      stepOffsets: group.stepOffsets
    })
    const registry = Advantage.register(Advantage.estimators, "mine", half)
    expect(Advantage.compute("mine", [{ traj: 1, phases: [1], steps: [1], stepPhase: [0] }], config, registry))
      .toEqual({ _tag: "Ok", advantages: [[{ traj: 0, phase: 0, step: 0, combined: 0.5 }]] })
    expect(Advantage.lookup("mine")._tag).toBe("UnknownEstimator")
  })

  it("rejects non-finite rewards and steps pointing at missing phases, naming the rollout", () => {
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [], steps: [], stepPhase: [] }, { traj: Number.NaN, phases: [], steps: [], stepPhase: [] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 1, message: "trajectory reward is NaN" })
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1], stepPhase: [1] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 0, message: "step 0 points at phase 1, but the rollout has 1 phases" })
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1, 2], stepPhase: [0] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 0, message: "2 step rewards but 1 step-to-phase entries" })
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1, 2], stepPhase: [0, 0], stepPool: [0] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 0, message: "2 step rewards but 1 step-pool keys" })
    for (const key of [-1, 1.5, Advantage.maxStepPools]) {
      expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1], stepPhase: [0], stepPool: [key] }], config))
        .toEqual({ _tag: "InvalidGroup", rollout: 0, message: `step 0 has step-pool key ${key}; keys are integers in [0, ${Advantage.maxStepPools})` })
    }
  })

  it("an empty group gives no advantages", () => {
    expect(run("paraagent", [])).toEqual([])
  })

  it("attach writes each step's advantage into the trajectory", () => {
    const trajectory = makeTrajectory([{}, {}])
    const advantages = [{ traj: 1, phase: 0.5, step: -1, combined: 1 }, { traj: 1, phase: 0, step: 0, combined: 1 }]
    expect(Advantage.attach(trajectory, advantages).steps.map((s) => s.advantage)).toEqual(advantages)
  })
})

describe("Step pools by action kind", () => {
  const [search, call, answer] = [StepKind.stepPoolKey("search"), StepKind.stepPoolKey("call"), StepKind.stepPoolKey("answer")]

  /**
   * Rollouts that differ only in length: rollout g takes the first `lengths[g]` steps of one shared sequence of
   * search / call steps, then answers with the shared answer reward; trajectory and phase rewards are shared too.
   */
  const sameBehaviourArb = fc.record({
    prefix: fc.array(fc.record({ pool: fc.constantFrom(search, call), reward: fc.constantFrom(0, 0.5, 1) }), { minLength: 1, maxLength: 11 }),
    answerReward: fc.constantFrom(0, 0.5),
    traj: reward,
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 8 })
  }).map(({ prefix, answerReward, traj, cuts }): ReadonlyArray<Advantage.RolloutRewards> =>
    cuts.map((u) => {
      const length = Math.round(u * prefix.length)
      const steps = [...prefix.slice(0, length).map((s) => s.reward), answerReward]
      return { traj, phases: [0.9], steps, stepPhase: steps.map(() => 0), stepPool: [...prefix.slice(0, length).map((s) => s.pool), answer] }
    })
  )

  const answerSteps = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, name: string) =>
    run(name, rollouts).flatMap((steps, g) => steps.filter((_, i) => rollouts[g]?.stepPool?.[i] === answer).map((a) => a.step))

  it("groups whose rollouts differ only in length give the answer steps A_step = 0 (mean 0)", () => {
    fc.assert(
      fc.property(sameBehaviourArb, (rollouts) => {
        const a = answerSteps(rollouts, "paraagent")
        expect(a.length).toBe(rollouts.length)
        expect(a.every((x) => x === 0)).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("the single pool (today's behaviour, kept as paraagent_single_pool) pushes every answer down when the other steps score higher", () => {
    // the npm-start pattern: searches and calls earn R_step 1, an answer at most 0.5 (r_plan is 0 in the Answer state)
    const group: ReadonlyArray<Advantage.RolloutRewards> = [
      { traj: 0.5, phases: [0.9], steps: [1, 1, 0.5], stepPhase: [0, 0, 0], stepPool: [search, call, answer] },
      { traj: 0.5, phases: [0.9], steps: [1, 1, 1, 0.5], stepPhase: [0, 0, 0, 0], stepPool: [search, call, call, answer] }
    ]
    expect(answerSteps(group, "paraagent")).toEqual([0, 0])
    const single = answerSteps(group, "paraagent_single_pool")
    expect(single.every((x) => x < -1)).toBe(true)
    // and all other steps are compared only with their kind: identical searches and calls give 0 too
    for (const steps of run("paraagent", group)) for (const a of steps) expect(a.step).toBe(0)
  })

  it("a better answer step still beats a worse one within the answer pool", () => {
    const group: ReadonlyArray<Advantage.RolloutRewards> = [
      { traj: 0, phases: [0.9], steps: [1, 0.5], stepPhase: [0, 0], stepPool: [search, answer] },
      { traj: 0, phases: [0.9], steps: [1, 0], stepPhase: [0, 0], stepPool: [search, answer] }
    ]
    const adv = run("paraagent", group)
    expect(adv[0]?.[1]?.step).toBeCloseTo(1, 5)
    expect(adv[1]?.[1]?.step).toBeCloseTo(-1, 5)
    expect(adv[0]?.[0]?.step).toBe(0)
  })

  it("without step-pool keys every step is in one pool (paraagent == paraagent_single_pool)", () => {
    fc.assert(
      fc.property(groupArb(0), (rollouts) => {
        const bare = rollouts.map(({ stepPool: _, ...r }) => r)
        expect(run("paraagent", bare)).toEqual(run("paraagent_single_pool", rollouts))
      }),
      { numRuns: 100 }
    )
  })
})

describe("Tolerance: a pool whose rewards differ by less than advantage.tolerance is constant", () => {
  const pair = (a: number, b: number): ReadonlyArray<Advantage.RolloutRewards> => [
    { traj: a, phases: [a], steps: [a], stepPhase: [0], stepPool: [0] },
    { traj: b, phases: [b], steps: [b], stepPool: [0], stepPhase: [0] }
  ]

  it("the default tolerance is 0.02", () => {
    expect(config.tolerance).toBe(0.02)
  })

  it("two rewards closer than the tolerance give 0 at every level; farther apart, ±1 as before (any shift)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -10, max: 10, noNaN: true }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        fc.double({ min: 1.01, max: 50, noNaN: true }),
        fc.constantFrom(...names.filter((n) => n !== "zero")),
        (base, below, above, name) => {
          for (const steps of run(name, pair(base, base + below * config.tolerance))) {
            for (const a of steps) expect(zeroLevels(a)).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
          }
          const d = above * config.tolerance
          const far = run(name, pair(base, base + d))
          // G = 2: std = d/2, so A = ∓(d/2)/(d/2 + ε)
          const unit = d / 2 / (d / 2 + config.epsilon)
          expect(far[0]?.[0]?.traj).toBeCloseTo(-unit, 6)
          expect(far[1]?.[0]?.traj).toBeCloseTo(unit, 6)
          if (name !== "grpo" && name !== "paraagent_attributed" && name !== "paraagent_attributed_stop") {
            // (paraagent_attributed and its stop variant have no phase or step level: their own tests)
            expect(far[0]?.[0]?.phase).toBeCloseTo(-unit, 6)
            expect(far[1]?.[0]?.step).toBeCloseTo(unit, 6)
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it("the issue's case: R_phase 0.9 vs 0.901 (G = 2) was ±1, is now 0", () => {
    const group: ReadonlyArray<Advantage.RolloutRewards> = [
      { traj: 1.5, phases: [0.9], steps: [1], stepPhase: [0], stepPool: [0] },
      { traj: 1.5, phases: [0.901], steps: [1], stepPhase: [0], stepPool: [0] }
    ]
    expect(run("paraagent", group, { ...config, tolerance: 0 })[0]?.[0]?.phase).toBeCloseTo(-1, 2)
    expect(run("paraagent", group)[0]?.[0]?.phase).toBe(0)
  })

  it("a large pool with a single outlier a full reward step (0.5) away keeps its signal", () => {
    // std = 0.5·√(n−1)/n ≈ 0.035 for n = 200: a floor on the std of 0.05 would erase it, the spread tolerance does not
    const steps = Array.from({ length: 200 }, (_, i) => (i === 0 ? 0.5 : 1))
    const adv = run("paraagent", [{ traj: 0, phases: [1], steps, stepPhase: steps.map(() => 0), stepPool: steps.map(() => 0) }])
    expect(adv[0]?.[0]?.step).toBeLessThan(-10)
  })
})

describe("Masked rollouts (unjudged trajectories)", () => {
  it("a masked rollout gets 0 at every level and the others get what they get in the group without it", () => {
    fc.assert(
      fc.property(groupArb(0), rolloutArb(0), fc.nat(), fc.constantFrom(...names), (rollouts, extra, at, name) => {
        const position = at % (rollouts.length + 1)
        const withMasked = [...rollouts.slice(0, position), { ...extra, masked: true }, ...rollouts.slice(position)]
        const adv = run(name, withMasked)
        expect(adv.length).toBe(withMasked.length)
        for (const a of adv[position] ?? []) expect(zeroLevels(a)).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
        expect([...adv.slice(0, position), ...adv.slice(position + 1)]).toEqual(run(name, rollouts))
      }),
      { numRuns: 300 }
    )
  })

  it("a masked rollout's rewards do not matter (the traj reward may even be anything finite)", () => {
    const judged: Advantage.RolloutRewards = { traj: 1.5, phases: [1], steps: [1], stepPhase: [0], stepPool: [0] }
    const other: Advantage.RolloutRewards = { traj: 0, phases: [0], steps: [0], stepPhase: [0], stepPool: [0] }
    const a = run("paraagent", [judged, other, { traj: -0.5, phases: [0.2], steps: [0], stepPhase: [0], stepPool: [0], masked: true }])
    const b = run("paraagent", [judged, other, { traj: 99, phases: [1], steps: [1], stepPhase: [0], stepPool: [0], masked: true }])
    expect(a).toEqual(b)
    expect(a[0]?.[0]?.traj).toBeCloseTo(1, 5)
  })
})

describe("Hand-computed groups", () => {
  // three rollouts of 3, 1 and 2 steps; steps pooled by kind (search 0, call 1, answer 2)
  const group: ReadonlyArray<Advantage.RolloutRewards> = [
    { traj: 1.5, phases: [1, 0], steps: [1, 1, 0.5], stepPhase: [0, 0, 1], stepPool: [0, 1, 2] },
    { traj: 0.5, phases: [0.5], steps: [0], stepPhase: [0], stepPool: [2] },
    { traj: 1.0, phases: [0.5], steps: [0, 0.5], stepPhase: [0, 0], stepPool: [0, 2] }
  ]
  const eps = 1e-6
  // trajectories 1.5, 0.5, 1: mean 1, population std √(1/6)
  const t = 0.5 / (Math.sqrt(1 / 6) + eps)
  // phases 1, 0, 0.5, 0.5: mean 0.5, std √(1/8)
  const p = 0.5 / (Math.sqrt(1 / 8) + eps)
  // search pool 1, 0: mean 0.5, std 0.5; call pool {1}: one member, 0; answer pool 0.5, 0, 0.5: mean 1/3, std √(1/18)
  const search = 0.5 / (0.5 + eps)
  const answer = 1 / 6 / (Math.sqrt(1 / 18) + eps)
  const levels = [
    [[t, p, search], [t, p, 0], [t, -p, answer]],
    [[-t, 0, -2 * answer]],
    [[0, 0, -search], [0, 0, answer]]
  ]

  const expectAdvantages = (actual: ReadonlyArray<ReadonlyArray<StepAdvantage>>, expected: ReadonlyArray<ReadonlyArray<StepAdvantage>>) => {
    expect(actual.map((r) => r.length)).toEqual(expected.map((r) => r.length))
    actual.forEach((steps, g) =>
      steps.forEach((a, i) => {
        const e = expected[g]?.[i] as StepAdvantage
        for (const k of ["traj", "phase", "step", "combined"] as const) {
          if (!close(a[k], e[k], 1e-12)) expect.unreachable(`rollout ${g} step ${i} ${k}: ${a[k]}, expected ${e[k]}`)
        }
      })
    )
  }

  it("the paper's λ are 1.0, 0.5, 0.25 and ε 1e-6", () => {
    expect([config.lambdaTraj, config.lambdaPhase, config.lambdaStep, config.epsilon]).toEqual([1.0, 0.5, 0.25, 1e-6])
  })

  it("paraagent: every level by hand, combined = 1.0·A_traj + 0.5·A_phase + 0.25·A_step", () => {
    const expected = levels.map((steps) => steps.map(([traj = 0, phase = 0, step = 0]) => ({ traj, phase, step, combined: 1.0 * traj + 0.5 * phase + 0.25 * step })))
    expectAdvantages(run("paraagent", group), expected)
    // spot values: √6/2, √2 and √2/2 up to ε
    expect(t).toBeCloseTo(Math.sqrt(6) / 2, 5)
    expect(p).toBeCloseTo(Math.SQRT2, 5)
    expect(answer).toBeCloseTo(Math.SQRT2 / 2, 5)
  })

  it("grpo: only the trajectory level, broadcast to every step of the rollout, combined = A_traj", () => {
    const expected = levels.map((steps) => steps.map(([traj = 0]) => ({ traj, phase: 0, step: 0, combined: traj })))
    expectAdvantages(run("grpo", group), expected)
  })

  it("a group whose rewards are all equal gives exactly 0 everywhere", () => {
    const flat = group.map((r) => ({ ...r, traj: 0.7, phases: r.phases.map(() => 0.7), steps: r.steps.map(() => 0.7) }))
    for (const name of ["grpo", "paraagent"]) {
      for (const steps of run(name, flat)) for (const a of steps) expect(zeroLevels(a)).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
    }
  })
})

describe("Phases pooled by kind and per-action credit (paraagent_phase_kind, paraagent_credit)", () => {
  const phaseAdvantages = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, adv: ReadonlyArray<ReadonlyArray<StepAdvantage>>) =>
    rollouts.flatMap((r, g) => r.phases.flatMap((_, p) => {
      const i = r.stepPhase.indexOf(p)
      return i < 0 ? [] : [{ kind: r.phaseKind?.[p] ?? 0, value: adv[g]?.[i]?.phase ?? NaN }]
    }))

  it("pool by kind: every phase kind's advantages have mean 0 on their own (phases that hold a step)", () => {
    fc.assert(
      fc.property(groupArb(1), (rollouts) => {
        // every phase holds a step here (sizes ≥ 1), so each phase's advantage is visible
        const phases = phaseAdvantages(rollouts, run("paraagent_phase_kind", rollouts))
        for (const k of [0, 1]) {
          const pool = phases.filter((p) => p.kind === k).map((p) => p.value)
          if (pool.length > 0) expect(Math.abs(Stats.mean(pool))).toBeLessThan(1e-9)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("pool by kind: shifting every explore phase's reward by a constant changes no advantage (the kind offset is gone); with one pool it does", () => {
    fc.assert(
      fc.property(groupArb(1), fc.double({ min: 0.5, max: 6, noNaN: true }), (rollouts, c) => {
        const shifted = rollouts.map((r) => ({ ...r, phases: r.phases.map((x, p) => (r.phaseKind?.[p] === 0 ? x + c : x)) }))
        const before = run("paraagent_phase_kind", rollouts)
        const after = run("paraagent_phase_kind", shifted)
        before.forEach((steps, g) => steps.forEach((a, i) => expect(close(a.phase, after[g]?.[i]?.phase ?? NaN)).toBe(true)))
        // one pool of both kinds: when each kind is present, the explore phases now all sit above the execute phases
        const kinds = new Set(rollouts.flatMap((r) => r.phaseKind ?? []))
        if (kinds.size === 2 && c > 4.01) {
          const mixed = phaseAdvantages(shifted, run("paraagent", shifted))
          const explore = mixed.filter((p) => p.kind === 0).map((p) => p.value)
          const execute = mixed.filter((p) => p.kind === 1).map((p) => p.value)
          expect(Math.min(...explore)).toBeGreaterThan(Math.max(...execute))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("per-action credit: A_action = λτ·A_traj + λp·A_phase + λs·z(action | its pool); each pool's z has mean 0; shifting a pool changes nothing", () => {
    fc.assert(
      fc.property(groupArb(1, false, true), fc.double({ min: -5, max: 5, noNaN: true }), (rollouts, c) => {
        const adv = run("paraagent_credit", rollouts)
        const z: Array<{ pool: number; value: number }> = []
        rollouts.forEach((r, g) =>
          r.steps.forEach((_, i) => {
            const a = adv[g]?.[i] as StepAdvantage
            const shared = config.lambdaTraj * a.traj + config.lambdaPhase * a.phase
            ;(r.actions?.[i] ?? []).forEach((act, j) => z.push({ pool: act.pool, value: ((a.actions?.[j] ?? NaN) - shared) / config.lambdaStep }))
            if (r.plans?.[i] === undefined) expect(a.plan).toBe(a.combined)
          })
        )
        for (const k of [0, 1]) {
          const pool = z.filter((x) => x.pool === k).map((x) => x.value)
          if (pool.length > 0) expect(Math.abs(Stats.mean(pool))).toBeLessThan(1e-7)
        }
        const shifted = rollouts.map((r) => (r.actions === undefined ? r : { ...r, actions: r.actions.map((acts) => acts.map((a) => (a.pool === 0 ? { ...a, reward: a.reward + c } : a))) }))
        const after = run("paraagent_credit", shifted)
        adv.forEach((steps, g) => steps.forEach((a, i) => a.actions?.forEach((x, j) => expect(close(x, after[g]?.[i]?.actions?.[j] ?? NaN)).toBe(true))))
      }),
      { numRuns: 300 }
    )
  })

  it("paraagent_credit_stop: paraagent_credit's advantages, and the kind decision judged by the outcome only (λτ·A_traj)", () => {
    fc.assert(
      fc.property(groupArb(0, true, true), (rollouts) => {
        const credit = run("paraagent_credit", rollouts)
        const stop = run("paraagent_credit_stop", rollouts)
        stop.forEach((steps, g) =>
          steps.forEach((a, i) => {
            const { kind, ...rest } = a
            expect(rest).toEqual(credit[g]?.[i])
            expect(kind).toBe(config.lambdaTraj * a.traj)
          })
        )
      }),
      { numRuns: 200 }
    )
  })

  it("paraagent_attributed: no phase or step level — changing any phase or step reward changes no advantage; the rest is λτ·A_traj", () => {
    fc.assert(
      fc.property(groupArb(1, true, true), fc.double({ min: -3, max: 3, noNaN: true }), fc.nat(), (rollouts, c, pick) => {
        const adv = run("paraagent_attributed", rollouts)
        // move one rollout's phase and step rewards anywhere: a late phase scoring below an early one changes nothing
        const g0 = pick % rollouts.length
        const moved = rollouts.map((r, g) => (g === g0 ? { ...r, phases: r.phases.map((p, k) => p + c * (k + 1)), steps: r.steps.map((s, k) => s - c * k) } : r))
        expect(run("paraagent_attributed", moved)).toEqual(adv)
        adv.forEach((steps) =>
          steps.forEach((a) => {
            expect(a.phase).toBe(0)
            expect(a.step).toBe(0)
            expect(a.combined).toBe(config.lambdaTraj * a.traj)
          })
        )
      }),
      { numRuns: 200 }
    )
  })

  it("paraagent_attributed: a chosen action gets λτ·A_traj + λs·z(its reward | its pool) — each pool's z has mean 0 — and equals GRPO (×λτ) without action or plan rewards", () => {
    fc.assert(
      fc.property(groupArb(1, false, true), (rollouts) => {
        const adv = run("paraagent_attributed", rollouts)
        const z: Array<{ pool: number; value: number }> = []
        rollouts.forEach((r, g) =>
          r.steps.forEach((_, i) => {
            const a = adv[g]?.[i] as StepAdvantage
            ;(r.actions?.[i] ?? []).forEach((act, j) => z.push({ pool: act.pool, value: ((a.actions?.[j] ?? NaN) - a.combined) / config.lambdaStep }))
          })
        )
        for (const k of [0, 1]) {
          const pool = z.filter((x) => x.pool === k).map((x) => x.value)
          if (pool.length > 0) expect(Math.abs(Stats.mean(pool))).toBeLessThan(1e-7)
        }
        const bare = rollouts.map(({ actions: _a, plans: _p, ...r }) => r)
        const grpo = run("grpo", bare)
        run("paraagent_attributed", bare).forEach((steps, g) =>
          steps.forEach((a, i) => expect(close(a.combined, config.lambdaTraj * (grpo[g]?.[i]?.combined ?? NaN))).toBe(true))
        )
      }),
      { numRuns: 200 }
    )
  })

  it("paraagent_attributed_stop: paraagent_attributed's advantages, and the kind decision λτ·A_traj + λs·z(r_kind | its pool) — each pool's z has mean 0; without kind rewards the kind is the combined advantage", () => {
    fc.assert(
      fc.property(groupArb(1, true, true), (rollouts) => {
        const attributed = run("paraagent_attributed", rollouts)
        const stop = run("paraagent_attributed_stop", rollouts)
        const z: Array<{ pool: number; value: number }> = []
        stop.forEach((steps, g) =>
          steps.forEach((a, i) => {
            const { kind, ...rest } = a
            expect(rest).toEqual(attributed[g]?.[i])
            const k = rollouts[g]?.kinds?.[i]
            if (k === undefined || rollouts[g]?.masked === true) expect(kind).toBe(a.combined)
            else z.push({ pool: k.pool, value: ((kind ?? NaN) - a.combined) / config.lambdaStep })
          })
        )
        for (const k of [0, 1]) {
          const pool = z.filter((x) => x.pool === k).map((x) => x.value)
          if (pool.length > 0) expect(Math.abs(Stats.mean(pool))).toBeLessThan(1e-7)
        }
        const bare = rollouts.map(({ kinds: _k, ...r }) => r)
        run("paraagent_attributed_stop", bare).forEach((steps, g) =>
          steps.forEach((a, i) => expect(a.kind).toBe(run("paraagent_attributed", bare)[g]?.[i]?.combined))
        )
      }),
      { numRuns: 200 }
    )
  })

  it("paraagent_attributed_stop: a go-on decision made when the evidence was complete gets less on the kind than the group's other kind decisions", () => {
    const group: ReadonlyArray<Advantage.RolloutRewards> = [
      // answered as soon as the evidence was in
      { traj: 1.5, phases: [0.5], steps: [0.5, 0.5, 0.5], stepPhase: [0, 0, 0], kinds: [{ reward: 1, pool: 0 }, { reward: 1, pool: 0 }, { reward: 1, pool: 0 }] },
      // the same outcome, two more rounds after the evidence was in, then T_max forced the answer
      { traj: 1.5, phases: [0.5], steps: [0.5, 0.5, 0.5, 0.5, 0.5], stepPhase: [0, 0, 0, 0, 0], kinds: [{ reward: 1, pool: 0 }, { reward: 1, pool: 0 }, { reward: 0, pool: 0 }, { reward: 0, pool: 0 }, undefined] }
    ]
    const adv = run("paraagent_attributed_stop", group)
    // equal outcomes: A_traj is 0 everywhere, and only the wasted rounds' kind decisions are pushed down
    expect(adv.flat().every((a) => a.traj === 0)).toBe(true)
    expect(adv[1]?.[2]?.kind).toBeLessThan(0)
    expect(adv[1]?.[3]?.kind).toBeLessThan(0)
    expect(adv[0]?.[2]?.kind).toBeGreaterThan(0)
    expect(adv[1]?.[4]?.kind).toBe(0)
    // the zero-advantage GRPO sees nothing here
    expect(run("grpo", group).flat().every((a) => a.combined === 0)).toBe(true)
  })

  it("a call that did better than the group's other calls gets a higher advantage than they do, inside the same step", () => {
    const group: ReadonlyArray<Advantage.RolloutRewards> = [
      { traj: 0, phases: [0.5], steps: [0.5], stepPhase: [0], actions: [[{ reward: 1, pool: 0 }, { reward: 0, pool: 0 }]] },
      { traj: 0, phases: [0.5], steps: [0.5], stepPhase: [0], actions: [[{ reward: 0, pool: 0 }]] }
    ]
    const adv = run("paraagent_credit", group)
    const [good, bad] = adv[0]?.[0]?.actions ?? []
    expect(good).toBeGreaterThan(0)
    expect(bad).toBeLessThan(0)
    expect(adv[0]?.[0]?.combined).toBe(0)
  })

  it("zero gives 0 at every level for every step", () => {
    fc.assert(
      fc.property(groupArb(0, true), (rollouts) => {
        for (const steps of run("zero", rollouts)) for (const a of steps) expect(zeroLevels(a)).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
      })
    )
  })

  it("flatten refuses credit that does not fit the steps, naming the rollout", () => {
    const base = { traj: 0, phases: [0], steps: [0, 1], stepPhase: [0, 0] }
    for (const [bad, message] of [
      [{ ...base, actions: [[]] }, "2 step rewards but 1 steps of action rewards"],
      [{ ...base, plans: [undefined] }, "2 step rewards but 1 plan rewards"],
      [{ ...base, phaseKind: [0, 1] }, "1 phase rewards but 2 phase-kind keys"],
      [{ ...base, actions: [[{ reward: NaN, pool: 0 }], []] }, "step 0 action 0 reward is NaN"],
      [{ ...base, actions: [[{ reward: 1, pool: -2 }], []] }, "step 0 action 0 has pool key -2"]
    ] as const) {
      const result = Advantage.compute("paraagent_credit", [base, bad], config)
      expect(result._tag).toBe("InvalidGroup")
      if (result._tag === "InvalidGroup") {
        expect(result.rollout).toBe(1)
        expect(result.message).toContain(message)
      }
    }
  })
})
