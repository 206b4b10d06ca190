import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { StepAdvantage } from "../../src/domain/Trajectory.ts"
import * as Advantage from "../../src/math/Advantage.ts"
import { defaultRewardConfig } from "../../src/math/Reward.ts"
import * as Stats from "../../src/math/Stats.ts"
import { loopEstimate } from "./AdvantageLoop.ts"
import { makeTrajectory } from "./fixtures.ts"

const config = defaultRewardConfig.advantage

/** Rewards on a 1/8 grid (distinct values differ by ≥ 0.125, so a non-degenerate pool has a sizeable std). */
const reward = fc.integer({ min: -16, max: 16 }).map((k) => k / 8)

/** A rollout: phases of 1–4 steps each; `minPhases` 0 allows a rollout with no step at all. */
const rolloutArb = (minPhases: number): fc.Arbitrary<Advantage.RolloutRewards> =>
  fc.array(fc.integer({ min: 1, max: 4 }), { minLength: minPhases, maxLength: 5 }).chain((sizes) =>
    fc.record({
      traj: reward,
      phases: fc.array(reward, { minLength: sizes.length, maxLength: sizes.length }),
      steps: fc.array(reward, { minLength: sizes.reduce((a, b) => a + b, 0), maxLength: sizes.reduce((a, b) => a + b, 0) }),
      stepPhase: fc.constant(sizes.flatMap((n, p) => Array<number>(n).fill(p)))
    })
  )

const groupArb = (minPhases: number) => fc.array(rolloutArb(minPhases), { minLength: 1, maxLength: 8 })

const run = (name: string, rollouts: ReadonlyArray<Advantage.RolloutRewards>, cfg = config) => {
  const result = Advantage.compute(name, rollouts, cfg)
  return result._tag === "Ok" ? result.advantages : expect.unreachable(JSON.stringify(result))
}

const close = (a: number, b: number, tolerance = 1e-9) => Math.abs(a - b) <= tolerance * (1 + Math.abs(a) + Math.abs(b))

/** Per level, one value per pooled item: A_traj per rollout (with steps), A_phase per phase, A_step per step. */
const levels = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, adv: ReadonlyArray<ReadonlyArray<StepAdvantage>>) => ({
  traj: adv.flatMap((steps) => (steps[0] === undefined ? [] : [steps[0].traj])),
  phase: rollouts.flatMap((r, g) => r.phases.map((_, p) => adv[g]?.[r.stepPhase.indexOf(p)]?.phase ?? NaN)),
  step: adv.flatMap((steps) => steps.map((s) => s.step))
})

describe("Advantage estimators agree with the loop implementation", () => {
  for (const name of ["grpo", "paraagent", "grpo_per_index"] as const) {
    it(`${name}: optimised == loop on random ragged groups`, () => {
      fc.assert(
        fc.property(groupArb(0), (rollouts) => {
          const fast = run(name, rollouts)
          const slow = loopEstimate(name, rollouts, config)
          expect(fast.map((r) => r.length)).toEqual(slow.map((r) => r.length))
          fast.forEach((steps, g) =>
            steps.forEach((a, i) => {
              const b = slow[g]?.[i] as StepAdvantage
              for (const key of ["traj", "phase", "step", "combined"] as const) {
                if (!close(a[key], b[key])) expect.unreachable(`${name} g=${g} i=${i} ${key}: ${a[key]} vs ${b[key]}`)
              }
            })
          )
        }),
        { numRuns: 300 }
      )
    })
  }
})

describe("Advantage properties (paraagent)", () => {
  it("each level has mean ≈ 0 over its pool", () => {
    fc.assert(
      fc.property(groupArb(1), (rollouts) => {
        const { traj, phase, step } = levels(rollouts, run("paraagent", rollouts))
        for (const xs of [traj, phase, step]) expect(Math.abs(Stats.mean(xs))).toBeLessThan(1e-9)
      }),
      { numRuns: 300 }
    )
  })

  const shiftLevel = (rollouts: ReadonlyArray<Advantage.RolloutRewards>, level: "traj" | "phases" | "steps", f: (x: number) => number) =>
    rollouts.map((r) =>
      level === "traj" ? { ...r, traj: f(r.traj) } : level === "phases" ? { ...r, phases: r.phases.map(f) } : { ...r, steps: r.steps.map(f) }
    )

  it("adding a constant to every reward of a level changes no advantage", () => {
    fc.assert(
      fc.property(groupArb(0), fc.constantFrom("traj" as const, "phases" as const, "steps" as const), fc.double({ min: -100, max: 100, noNaN: true }), (rollouts, level, c) => {
        const before = run("paraagent", rollouts)
        const after = run("paraagent", shiftLevel(rollouts, level, (x) => x + c))
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

  it("scaling a level by a positive factor changes its advantages only through ε (exactly none with ε = 0)", () => {
    fc.assert(
      fc.property(groupArb(1), fc.constantFrom("traj" as const, "phases" as const, "steps" as const), fc.double({ min: 0.01, max: 100, noNaN: true }), (rollouts, level, a) => {
        const key = level === "traj" ? "traj" : level === "phases" ? "phase" : "step"
        const pool = level === "traj" ? rollouts.map((r) => r.traj) : rollouts.flatMap((r) => (level === "phases" ? r.phases : r.steps))
        const n = pool.length
        const s = Stats.std(pool)
        for (const epsilon of [config.epsilon, 0]) {
          const cfg = { ...config, epsilon }
          const before = levels(rollouts, run("paraagent", rollouts, cfg))[key]
          const after = levels(rollouts, run("paraagent", shiftLevel(rollouts, level, (x) => a * x), cfg))[key]
          // z = d/(s + ε) vs d/(s + ε/a): they differ by at most sqrt(n)·ε·|1 − 1/a|/s
          const bound = s === 0 ? 0 : (Math.sqrt(n) * epsilon * Math.abs(1 - 1 / a)) / s
          before.forEach((z, i) => expect(Math.abs(z - (after[i] ?? NaN))).toBeLessThanOrEqual(bound + 1e-9 * (1 + Math.abs(z))))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("a degenerate level (all equal, or one member) gives exactly 0", () => {
    fc.assert(
      fc.property(groupArb(1), reward, (rollouts, c) => {
        const flat = rollouts.map((r) => ({ ...r, traj: c, phases: r.phases.map(() => c), steps: r.steps.map(() => c) }))
        for (const name of ["grpo", "paraagent", "grpo_per_index"]) {
          for (const steps of run(name, flat)) for (const a of steps) expect(a).toEqual({ traj: 0, phase: 0, step: 0, combined: 0 })
        }
        const single = run("paraagent", rollouts.slice(0, 1))
        for (const a of single[0] ?? []) expect(a.traj).toBe(0)
      })
    )
  })

  it("ragged groups (different lengths, rollouts with no step, a lone rollout) give finite values", () => {
    fc.assert(
      fc.property(groupArb(0), (rollouts) => {
        for (const name of ["grpo", "paraagent", "grpo_per_index"]) {
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
    expect(Advantage.lookup("ppo")).toEqual({ _tag: "UnknownEstimator", name: "ppo", known: ["grpo", "paraagent", "grpo_per_index"] })
    expect(Advantage.compute("ppo", [], config)).toEqual({ _tag: "UnknownEstimator", name: "ppo", known: ["grpo", "paraagent", "grpo_per_index"] })
    expect(Advantage.defaultEstimator).toBe("paraagent")
  })

  it("a registered estimator is found by name without touching the built-in registry", () => {
    const zero: Advantage.Estimator = (group) => ({
      traj: new Float64Array(group.stepReward.length),
      phase: new Float64Array(group.stepReward.length),
      step: new Float64Array(group.stepReward.length),
      combined: new Float64Array(group.stepReward.length),
      stepOffsets: group.stepOffsets
    })
    const registry = Advantage.register(Advantage.estimators, "zero", zero)
    expect(Advantage.compute("zero", [{ traj: 1, phases: [1], steps: [1], stepPhase: [0] }], config, registry))
      .toEqual({ _tag: "Ok", advantages: [[{ traj: 0, phase: 0, step: 0, combined: 0 }]] })
    expect(Advantage.lookup("zero")._tag).toBe("UnknownEstimator")
  })

  it("rejects non-finite rewards and steps pointing at missing phases, naming the rollout", () => {
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [], steps: [], stepPhase: [] }, { traj: Number.NaN, phases: [], steps: [], stepPhase: [] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 1, message: "trajectory reward is NaN" })
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1], stepPhase: [1] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 0, message: "step 0 points at phase 1, but the rollout has 1 phases" })
    expect(Advantage.compute("paraagent", [{ traj: 0, phases: [1], steps: [1, 2], stepPhase: [0] }], config))
      .toEqual({ _tag: "InvalidGroup", rollout: 0, message: "2 step rewards but 1 step-to-phase entries" })
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
