import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Advantage from "../../src/math/Advantage.ts"
import * as Credit from "../../src/math/Credit.ts"
import * as Reward from "../../src/math/Reward.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import { makeSteps, makeTrajectory } from "./fixtures.ts"
import type { StepSpec } from "./fixtures.ts"

/** Needs: gold tools a, b, c; "a2" is an equivalent provider of a. */
const needs: Credit.GoldNeeds = { tools: ["a", "b", "c"], equivalent: (gold, tool) => gold === tool || (gold === "a" && tool === "a2") }

const config = Reward.defaultRewardConfig

/** Scores a trajectory of step specs with the credit terms (counts optional). */
const scored = (specs: ReadonlyArray<StepSpec>, counts?: Credit.AnswerCounts, credit: Reward.CreditConfig = config.credit) => {
  const t = makeTrajectory(specs, { quality: "YES", faithfulness: "YES", utility: "YES" })
  const base = Reward.score(Facts.fromTrajectory(t))
  const progress = Credit.progressOf(t.steps, needs)
  return { base, progress, score: Credit.apply(base, t.steps, progress, counts, { ...config, credit }) }
}

describe("Credit.progressOf (coverage of the gold calls)", () => {
  it("a successful call covers the first open need its tool stands in for; repeats, failures and strangers cover nothing", () => {
    const steps = makeSteps([
      { searches: [{ slot: "s", hits: ["a", "x"] }, { slot: "t", hits: ["b", "a"] }] },
      { calls: [{ id: "c1", tool: "a2" }, { id: "c2", tool: "b", result: "not_found" }, { id: "c3", tool: "x" }] },
      { calls: [{ id: "c4", tool: "a" }, { id: "c5", tool: "b" }, { id: "c6", tool: "b" }] }
    ])
    const p = Credit.progressOf(steps, needs)
    expect(p.needs).toBe(3)
    expect(p.steps[0]).toEqual({ calls: [], searches: [true, true], covered: 0, found: 2 })
    expect(p.steps[1]).toEqual({ calls: [true, false, false], searches: [], covered: 1, found: 0 })
    // a is already covered (by its equivalent a2); b once, the second b has no open need left
    expect(p.steps[2]).toEqual({ calls: [false, true, false], searches: [], covered: 1, found: 0 })
  })

  it("every need is served at most once: the covered and found counts of a trajectory never exceed the needs", () => {
    const tools = ["a", "a2", "b", "c", "x", "y"]
    const stepArb = fc.record({
      searches: fc.array(fc.record({ slot: fc.constantFrom("s", "t"), hits: fc.array(fc.constantFrom(...tools), { maxLength: 3 }) }), { maxLength: 2 }),
      calls: fc.array(fc.record({ tool: fc.constantFrom(...tools), ok: fc.boolean() }), { maxLength: 3 })
    })
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 6 }), (specs) => {
        let k = 0
        const steps = makeSteps(specs.map((s) => ({ searches: s.searches, calls: s.calls.map((c) => ({ id: `c${k++}`, tool: c.tool, result: c.ok ? "ok" as const : "not_found" as const })) })))
        const p = Credit.progressOf(steps, needs)
        const covered = p.steps.reduce((n, s) => n + s.covered, 0)
        const found = p.steps.reduce((n, s) => n + s.found, 0)
        expect(covered).toBeLessThanOrEqual(3)
        expect(found).toBeLessThanOrEqual(3)
        p.steps.forEach((s, i) => {
          expect(s.calls.filter(Boolean).length).toBe(s.covered)
          expect(Credit.stepCoverage(p, i)).toBeGreaterThanOrEqual(0)
          expect(Credit.stepCoverage(p, i)).toBeLessThanOrEqual(1)
        })
      }),
      { numRuns: 300 }
    )
  })
})

describe("Credit.apply: coverage so that doing less no longer pays", () => {
  // two rollouts of the same plan: one calls every gold tool in one clean round, the other calls only one (also clean)
  const more: ReadonlyArray<StepSpec> = [
    { searches: [{ slot: "s", hits: ["a", "b", "c"] }], controller: "Need", plan: [{ id: "p1" }] },
    { calls: [{ id: "c1", tool: "a" }, { id: "c2", tool: "b" }, { id: "c3", tool: "c" }], controller: "Need", plan: [{ id: "c1" }, { id: "c2" }, { id: "c3" }] },
    { answer: "x", controller: "Answer" }
  ]
  const less: ReadonlyArray<StepSpec> = [
    { searches: [{ slot: "s", hits: ["a", "b", "c"] }], controller: "Need", plan: [{ id: "p1" }] },
    { calls: [{ id: "c1", tool: "a" }], controller: "Need", plan: [{ id: "c1" }] },
    { answer: "x", controller: "Answer" }
  ]

  it("without coverage the precision-only rewards pay both the same; with it, the rollout that did more scores higher at the step and the phase", () => {
    const paper = [scored(more, undefined, Credit.paperCredit).score, scored(less, undefined, Credit.paperCredit).score]
    expect(paper[0]?.steps[1]?.rStep).toBe(paper[1]?.steps[1]?.rStep)
    expect(paper[0]?.phases[1]?.rPhase).toBeCloseTo(paper[1]?.phases[1]?.rPhase ?? NaN, 12)
    const ours = [scored(more).score, scored(less).score]
    expect(ours[0]?.steps[1]?.rStep).toBeGreaterThan(ours[1]?.steps[1]?.rStep ?? Infinity)
    expect(ours[0]?.phases[1]?.rPhase).toBeGreaterThan(ours[1]?.phases[1]?.rPhase ?? Infinity)
    expect(ours[0]?.phases[1]?.coverage).toBe(1)
    expect(ours[1]?.phases[1]?.coverage).toBeCloseTo(1 / 3, 12)
  })

  it("the mix: R = (1 − w)·paper + w·coverage for any weights in [0, 1]; the answer step keeps its own rule", () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (wp, ws) => {
        const credit = { ...config.credit, phaseCoverage: wp, stepCoverage: ws, answerStep: 0 }
        const { base, progress, score } = scored(more, undefined, credit)
        score.phases.forEach((p, i) => {
          expect(p.rPhase).toBeCloseTo((1 - wp) * (base.phases[i]?.rPhase ?? NaN) + wp * Credit.phaseCoverage(progress, p), 12)
          expect(p.rPhase).toBeGreaterThanOrEqual(0)
          expect(p.rPhase).toBeLessThanOrEqual(1)
        })
        for (const i of [0, 1]) expect(score.steps[i]?.rStep).toBeCloseTo((1 - ws) * (base.steps[i]?.rStep ?? NaN) + ws * Credit.stepCoverage(progress, i), 12)
        expect(score.steps[2]).toEqual(base.steps[2])
      }),
      { numRuns: 100 }
    )
  })

  it("the paper's credit leaves the step and phase rewards exactly as Reward.score gave them", () => {
    const { base, score } = scored(more, { facts: 2, stated: 1, unrequested: 3 }, Credit.paperCredit)
    expect(score.steps).toEqual(base.steps)
    expect(score.phases.map((p) => p.rPhase)).toEqual(base.phases.map((p) => p.rPhase))
  })
})

describe("Credit.answerScore and the answer step", () => {
  it("is the F1 of stated against missing and unrequested facts: 1 for all and nothing else, 0 for none, monotone", () => {
    expect(Credit.answerScore({ facts: 3, stated: 3, unrequested: 0 })).toBe(1)
    expect(Credit.answerScore({ facts: 3, stated: 0, unrequested: 0 })).toBe(0)
    expect(Credit.answerScore({ facts: 2, stated: 1, unrequested: 1 })).toBeCloseTo(0.5, 12)
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.nat(10), fc.nat(10), (facts, s, u) => {
        const stated = Math.min(s, facts)
        const score = Credit.answerScore({ facts, stated, unrequested: u })
        expect(score).toBeGreaterThanOrEqual(0)
        expect(score).toBeLessThanOrEqual(1)
        // stating one more requested fact never lowers it; one more unrequested claim never raises it
        if (stated < facts) expect(Credit.answerScore({ facts, stated: stated + 1, unrequested: u })).toBeGreaterThan(score)
        expect(Credit.answerScore({ facts, stated, unrequested: u + 1 })).toBeLessThanOrEqual(score)
      })
    )
  })

  it("replaces the constant: two clean answers that state different shares of the facts now differ in R_step (they were both 0.5)", () => {
    const answer: ReadonlyArray<StepSpec> = [{ answer: "x", controller: "Answer" }]
    const full = scored(answer, { facts: 2, stated: 2, unrequested: 0 })
    const half = scored(answer, { facts: 2, stated: 1, unrequested: 2 })
    expect(full.base.steps[0]?.rStep).toBe(0.5)
    expect(half.base.steps[0]?.rStep).toBe(0.5)
    expect(full.score.steps[0]).toMatchObject({ rStep: 1, answer: 1 })
    expect(half.score.steps[0]?.rStep).toBeCloseTo(0.5 + 0.5 * Credit.answerScore({ facts: 2, stated: 1, unrequested: 2 }), 12)
    // a broken answer step keeps r_base 0; without counts (a judge that does not count) the step is the paper's
    const broken = scored([{ answer: "x", controller: "Answer", plan: [{ id: "p" }] }], { facts: 2, stated: 2, unrequested: 0 })
    expect(broken.score.steps[0]?.rStep).toBe(0.5)
    expect(scored(answer).score.steps[0]).toEqual(scored(answer).base.steps[0])
  })
})

describe("Credit.apply: the attributable rewards", () => {
  it("per step, each call's reward then each search's, in turn order, with their pools; a plan decision per parsed non-answer step", () => {
    const { score, progress } = scored([
      { searches: [{ slot: "s", hits: ["a"] }, { slot: "t", hits: ["x"] }], controller: "Need" },
      { calls: [{ id: "c1", tool: "a" }, { id: "c2", tool: "x" }, { id: "c3", tool: "b", result: "invalid_arguments" }], validation: { invalidArguments: [{ callId: "c3" as never, message: "bad" }] }, controller: "May", plan: [{ id: "c1" }] },
      { malformed: true, controller: "No" },
      { answer: "x", controller: "Answer" }
    ])
    const w = config.credit.actionCoverage
    expect(progress.steps[1]?.calls).toEqual([true, false, false])
    expect(score.actions).toEqual([
      [{ reward: (1 - w) + w, pool: 1 }, { reward: 1 - w, pool: 1 }],
      [{ reward: 1, pool: 0 }, { reward: 1 - w, pool: 0 }, { reward: 0, pool: 0 }],
      [],
      []
    ])
    expect(score.plans).toEqual([
      { reward: score.steps[0]?.rPlan, pool: Credit.planPool("Need") },
      { reward: score.steps[1]?.rPlan, pool: Credit.planPool("May") },
      undefined,
      undefined
    ])
    // the estimator reads them through fromScore
    const rollout = Advantage.fromScore(score, makeTrajectory([]).steps.concat([]))
    expect(rollout.actions).toBe(score.actions)
    expect(rollout.plans).toBe(score.plans)
  })
})

describe("Credit.kindRewards (the stop decision's own reward)", () => {
  it("going on scores 1 before the evidence was complete and 0 after; answering 1 after and earlyAnswer before; no free decision undefined", () => {
    const steps = makeSteps([
      { calls: [{ id: "c1", tool: "a" }] },
      { calls: [{ id: "c2", tool: "b" }] },
      { searches: [{ slot: "s", hits: ["c"] }] },
      { answer: "done" }
    ])
    const complete = [false, false, true, true]
    const early = Reward.defaultRewardConfig.credit.earlyAnswer
    expect(early).toBe(0)
    rewardsAre(Credit.kindRewards(steps, complete, false, early), [1, 1, 0, 1])
    // T_max forced the last answer: it made no free kind decision
    rewardsAre(Credit.kindRewards(steps, complete, true, early), [1, 1, 0, undefined])
    // an answer before the evidence was complete is scored as wrong as a round spent after it; an unparsed turn decides nothing
    rewardsAre(Credit.kindRewards(steps, [false, false, false, false], false, early), [1, 1, 1, 0])
    rewardsAre(Credit.kindRewards(makeSteps([{ malformed: true }, { answer: "x" }]), [true, true], false, early), [undefined, 1])
  })

  it("earlyAnswer scores an answer given before the evidence was complete, and nothing else", () => {
    const steps = makeSteps([{ calls: [{ id: "c1", tool: "a" }] }, { searches: [{ slot: "s", hits: ["c"] }] }, { answer: "done" }])
    for (const early of [0, 0.5, 1]) {
      rewardsAre(Credit.kindRewards(steps, [false, false, false], false, early), [1, 1, early])
      rewardsAre(Credit.kindRewards(steps, [false, true, true], false, early), [1, 0, 1])
      // T_max's forced answer is still no decision
      rewardsAre(Credit.kindRewards(steps, [false, false, false], true, early), [1, 1, undefined])
    }
  })

  it("travels in the score (Credit.apply) into the advantage input (Advantage.fromScore), one entry per step", () => {
    const specs: ReadonlyArray<StepSpec> = [{ calls: [{ id: "c1", tool: "a" }] }, { calls: [{ id: "c2", tool: "b" }] }, { answer: "done" }]
    const t = makeTrajectory(specs, { quality: "YES", faithfulness: "YES", utility: "YES" })
    const kinds = Credit.kindRewards(t.steps, [false, true, true], false, 0)
    const score = Credit.apply(Reward.score(Facts.fromTrajectory(t)), t.steps, Credit.progressOf(t.steps, needs), undefined, config, kinds)
    expect(score.kinds).toEqual(kinds)
    expect(Advantage.fromScore(score, t.steps).kinds).toEqual([{ reward: 1, pool: 0 }, { reward: 0, pool: 0 }, { reward: 1, pool: 0 }])
    // without them the score carries none (the paper's reward and the other estimators read nothing new)
    expect(Credit.apply(Reward.score(Facts.fromTrajectory(t)), t.steps, Credit.progressOf(t.steps, needs), undefined, config).kinds).toBeUndefined()
  })
})

const rewardsAre = (rewards: ReturnType<typeof Credit.kindRewards>, expected: ReadonlyArray<number | undefined>) =>
  expect(rewards.map((r) => (r === undefined ? undefined : r.reward))).toEqual(expected)
