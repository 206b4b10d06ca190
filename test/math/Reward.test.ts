import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Grade } from "../../src/domain/Trajectory.ts"
import type { PlanStatus } from "../../src/math/Controller.ts"
import type { CallFact, PhaseFacts, SearchFact, StepFacts } from "../../src/math/TrajectoryFacts.ts"
import * as Evaluation from "../../src/math/Evaluation.ts"
import * as Reward from "../../src/math/Reward.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import { makeTrajectory } from "./fixtures.ts"

const callArb: fc.Arbitrary<CallFact> = fc.record({
  id: fc.constantFrom("c1", "c2", "c3"),
  tool: fc.constantFrom("a", "b", "c"),
  step: fc.nat({ max: 10 }),
  result: fc.constantFrom("ok", "ok", "not_found", "invalid_arguments", "rate_limited", "not_run"),
  repeated: fc.boolean(),
  grounded: fc.boolean(),
  outOfOrder: fc.boolean(),
  layer: fc.integer({ min: 1, max: 6 })
})

const searchArb: fc.Arbitrary<SearchFact> = fc.record({
  step: fc.nat({ max: 10 }),
  slot: fc.constantFrom("team", "roster"),
  hits: fc.nat({ max: 3 }),
  newTools: fc.nat({ max: 3 }),
  usedLater: fc.boolean(),
  layer: fc.integer({ min: 1, max: 4 })
})

/** Phase facts, consistent or not: the reward must stay in range either way. */
const phaseArb: fc.Arbitrary<PhaseFacts> = fc.record({
  kind: fc.constantFrom("explore" as const, "execute" as const),
  start: fc.constant(0),
  end: fc.constant(1),
  rounds: fc.nat({ max: 8 }),
  calls: fc.array(callArb, { maxLength: 8 }),
  searches: fc.array(searchArb, { maxLength: 8 }),
  dependencies: fc.record({
    declared: fc.nat({ max: 6 }),
    supported: fc.nat({ max: 6 }),
    required: fc.nat({ max: 6 }),
    recalled: fc.nat({ max: 6 })
  })
})

/** Four non-negative weights that sum to 1. */
const simplexArb = fc.tuple(fc.nat({ max: 100 }), fc.nat({ max: 100 }), fc.nat({ max: 100 }), fc.integer({ min: 1, max: 100 }))
  .map(([a, b, c, d]) => {
    const total = a + b + c + d
    const w1 = a / total
    const w2 = b / total
    const w3 = c / total
    return { w1, w2, w3, w4: 1 - w1 - w2 - w3 }
  })

const configured = (patch: Reward.RewardConfigPatch): Reward.RewardConfig => {
  const result = Reward.configure(patch)
  return result._tag === "Ok" ? result.config : expect.unreachable(JSON.stringify(result.issues))
}

const call = (over: Partial<CallFact>): CallFact => ({
  id: "c1",
  tool: "a",
  step: 0,
  result: "ok",
  repeated: false,
  grounded: true,
  outOfOrder: false,
  layer: 1,
  ...over
})
const search = (over: Partial<SearchFact>): SearchFact => ({
  step: 0,
  slot: "s",
  hits: 3,
  newTools: 1,
  usedLater: true,
  layer: 1,
  ...over
})
const phase = (over: Partial<PhaseFacts>): PhaseFacts => ({
  kind: "execute",
  start: 0,
  end: 1,
  rounds: 1,
  calls: [],
  searches: [],
  dependencies: { declared: 0, supported: 0, required: 0, recalled: 0 },
  ...over
})

describe("R_ans (Table 9)", () => {
  const grade = (bit: string): Grade => (bit === "1" ? "YES" : "NO")
  const table: ReadonlyArray<readonly [Reward.AnswerPattern, number]> = [
    ["000", -0.5],
    ["010", -0.5],
    ["100", -0.5],
    ["001", 0],
    ["101", 0],
    ["011", 0.5],
    ["110", 0.5],
    ["111", 1.5]
  ]
  it.each(table)("pattern %s gives %d", (pattern, expected) => {
    const [q, f, u] = pattern.split("")
    const verdict = { quality: grade(q ?? ""), faithfulness: grade(f ?? ""), utility: grade(u ?? "") }
    expect(Reward.answerReward(verdict)).toEqual({ pattern, rAns: expected })
  })

  it("a bit is 1 only for YES: PARTIAL counts as NO, for all 27 grade triples", () => {
    const grades: ReadonlyArray<Grade> = ["YES", "PARTIAL", "NO"]
    for (const quality of grades) {
      for (const faithfulness of grades) {
        for (const utility of grades) {
          const pattern = [quality, faithfulness, utility].map((g) => (g === "YES" ? "1" : "0")).join("")
          expect(Reward.answerReward({ quality, faithfulness, utility }).pattern).toBe(pattern)
        }
      }
    }
  })

  it("a trajectory without a verdict is masked by default (R_ans 0, pattern none), or charged the opt-in penalty", () => {
    expect(Reward.defaultRewardConfig.answer.unjudged).toBe("mask")
    expect(Reward.answerReward(undefined)).toEqual({ pattern: "none", rAns: 0 })
    expect(Reward.answerReward(undefined, configured({ answer: { unjudged: { penalty: -1 } } }))).toEqual({ pattern: "none", rAns: -1 })
    expect(Reward.score({ steps: [], phases: [], verdict: undefined }).masked).toBe(true)
    expect(Reward.score({ steps: [], phases: [], verdict: undefined }, configured({ answer: { unjudged: { penalty: -0.5 } } })).masked).toBe(false)
    expect(Reward.score({ steps: [], phases: [], verdict: { quality: "NO", faithfulness: "NO", utility: "NO" } }).masked).toBe(false)
  })

  it("answer.unjudged accepts \"mask\" or { penalty: <finite number> } and names the field otherwise", () => {
    const masked = configured({ answer: { unjudged: { penalty: -0.5 } } })
    const back = Reward.configure({ answer: { unjudged: "mask" } }, masked)
    expect(back._tag === "Ok" ? back.config.answer.unjudged : undefined).toBe("mask")
    for (const bad of [-0.5, "drop", {}, { penalty: Number.NaN }, { penalty: 1, extra: 2 }, { penalty: "1" }]) {
      const result = Reward.configure({ answer: { unjudged: bad } } as unknown as Reward.RewardConfigPatch)
      expect(result._tag === "InvalidRewardConfig" ? result.issues.map((i) => i.field) : []).toEqual(["answer.unjudged"])
    }
  })
})

describe("R_ans of a truncated rollout (answer.truncation) [ours]", () => {
  const gradeArb: fc.Arbitrary<Grade> = fc.constantFrom("YES", "PARTIAL", "NO")
  const verdictArb = fc.record({ quality: gradeArb, faithfulness: gradeArb, utility: gradeArb })
  const maybeVerdictArb = fc.option(verdictArb, { nil: undefined })
  // −0 + 0 = 0: a cap of −0 and a reward of 0 are the same number, but toBe tells them apart
  const capArb = fc.double({ min: -3, max: 3, noNaN: true }).map((x) => x + 0)
  const unjudgedArb: fc.Arbitrary<Reward.UnjudgedPolicy> = fc.oneof(fc.constant("mask" as const), fc.record({ penalty: capArb }))
  const worst = Math.min(...Reward.answerPatterns.map((p) => Reward.defaultRewardConfig.answer.table[p]))
  const withPolicy = (truncation: Reward.TruncationPolicy, unjudged: Reward.UnjudgedPolicy = "mask") => configured({ answer: { truncation, unjudged } })

  it("the default scores a truncated rollout's answer like any other (Table 9 as written)", () => {
    expect(Reward.defaultRewardConfig.answer.truncation).toBe("score")
    fc.assert(fc.property(maybeVerdictArb, unjudgedArb, (verdict, unjudged) => {
      const config = withPolicy("score", unjudged)
      expect(Reward.answerReward(verdict, config, true)).toEqual(Reward.answerReward(verdict, config, false))
    }))
  })

  it("a rollout that was not truncated earns the same R_ans under every policy", () => {
    fc.assert(fc.property(maybeVerdictArb, unjudgedArb, capArb, (verdict, unjudged, cap) => {
      expect(Reward.answerReward(verdict, withPolicy({ cap }, unjudged), false)).toEqual(Reward.answerReward(verdict, withPolicy("score", unjudged), false))
    }))
  })

  it("{ cap }: a truncated rollout earns min(R_ans, cap), keeps its verdict's pattern, never more than untruncated", () => {
    fc.assert(fc.property(verdictArb, capArb, (verdict, cap) => {
      const capped = Reward.answerReward(verdict, withPolicy({ cap }), true)
      const plain = Reward.answerReward(verdict, withPolicy({ cap }), false)
      expect(capped.pattern).toBe(plain.pattern)
      expect(capped.rAns).toBe(Math.min(plain.rAns, cap))
      expect(capped.rAns).toBeLessThanOrEqual(plain.rAns)
    }), { numRuns: 300 })
  })

  it("capped at the worst verdict, no truncated rollout out-earns any answered one, and every truncated rollout earns the same", () => {
    const config = withPolicy({ cap: worst })
    fc.assert(fc.property(verdictArb, verdictArb, (a, b) => {
      const truncated = Reward.answerReward(a, config, true)
      expect(truncated.rAns).toBe(worst)
      expect(truncated.rAns).toBeLessThanOrEqual(Reward.answerReward(b, config, false).rAns)
    }), { numRuns: 300 })
  })

  it("the cap is monotone: a lower cap never pays a truncated rollout more", () => {
    fc.assert(fc.property(verdictArb, capArb, capArb, (verdict, c1, c2) => {
      const [lo, hi] = c1 <= c2 ? [c1, c2] : [c2, c1]
      expect(Reward.answerReward(verdict, withPolicy({ cap: lo }), true).rAns).toBeLessThanOrEqual(Reward.answerReward(verdict, withPolicy({ cap: hi }), true).rAns)
    }))
  })

  it("an unjudged rollout stays masked whatever its length; a penalty is capped like a verdict's R_ans", () => {
    fc.assert(fc.property(capArb, capArb, (cap, penalty) => {
      const masked = configured({ answer: { truncation: { cap } } })
      expect(Reward.score({ steps: [], phases: [], verdict: undefined, truncated: true }, masked)).toMatchObject({ answer: { pattern: "none", rAns: 0 }, masked: true })
      const charged = withPolicy({ cap }, { penalty })
      expect(Reward.score({ steps: [], phases: [], verdict: undefined, truncated: true }, charged)).toMatchObject({ answer: { pattern: "none", rAns: Math.min(penalty, cap) }, masked: false })
    }))
  })

  it("Reward.score reads the facts' truncation; fromTrajectory sets it for stop max_rounds only", () => {
    const stops = ["answer", "max_rounds", "policy_error", "interrupted"] as const
    const task = { gold: [] } as unknown as Parameters<typeof Evaluation.outcomeOf>[0]
    fc.assert(fc.property(fc.constantFrom(...stops), verdictArb, (stop, verdict) => {
      const trajectory = { ...makeTrajectory([{}, {}], verdict), stop }
      const facts = Facts.fromTrajectory(trajectory)
      expect(facts.truncated === true).toBe(stop === "max_rounds")
      const scored = Reward.score(facts, withPolicy({ cap: worst }))
      const table = Reward.answerReward(verdict).rAns
      expect(scored.answer.rAns).toBe(stop === "max_rounds" ? worst : table)
      // the verdict, and so Pass@1 (Evaluation.solved), is the judge's either way
      expect(Evaluation.outcomeOf(task, Reward.attach(trajectory, scored)).success).toBe(Evaluation.solved(verdict))
    }))
  })

  it("answer.truncation accepts \"score\" or { cap: <finite number> } and names the field otherwise", () => {
    const capped = configured({ answer: { truncation: { cap: -0.5 } } })
    expect(capped.answer.truncation).toEqual({ cap: -0.5 })
    const back = Reward.configure({ answer: { truncation: "score" } }, capped)
    expect(back._tag === "Ok" ? back.config.answer.truncation : undefined).toBe("score")
    for (const bad of [-0.5, "cap", {}, { cap: Number.NaN }, { cap: 1, extra: 2 }, { cap: "-0.5" }, { penalty: -0.5 }]) {
      const result = Reward.configure({ answer: { truncation: bad } } as unknown as Reward.RewardConfigPatch)
      expect(result._tag === "InvalidRewardConfig" ? result.issues.map((i) => i.field) : []).toEqual(["answer.truncation"])
    }
  })

  it("the command-line spelling round-trips (score, cap:<x>) and refuses anything else", () => {
    fc.assert(fc.property(fc.oneof(fc.constant("score" as const), fc.record({ cap: capArb })), (policy) => {
      expect(Reward.parseTruncation(Reward.showTruncation(policy))).toEqual(policy)
    }))
    expect(Reward.parseTruncation("cap:-0.5")).toEqual({ cap: -0.5 })
    for (const bad of ["", "cap", "cap:", "cap:x", "worst", "score:1", "cap:-0.5:1"]) expect(Reward.parseTruncation(bad)).toBeUndefined()
  })
})

describe("r_base and R_step", () => {
  const clean: Reward.StepInput = {
    state: "May",
    parsed: true,
    answered: false,
    plan: "none",
    violations: { unseenTools: 0, invalidArguments: 0, repeatedCalls: 0, unresolvedRefs: 0 }
  }

  it("r_base is 1 for a clean step and 0 for each kind of violation", () => {
    expect(Reward.rBase(clean)).toBe(1)
    expect(Reward.rBase({ ...clean, parsed: false })).toBe(0)
    expect(Reward.rBase({ ...clean, plan: "invalid" })).toBe(0)
    for (const key of ["unseenTools", "invalidArguments", "repeatedCalls", "unresolvedRefs"] as const) {
      expect(Reward.rBase({ ...clean, violations: { ...clean.violations, [key]: 1 } })).toBe(0)
    }
  })

  it("in the Answer state r_base needs an answer and no plan", () => {
    expect(Reward.rBase({ ...clean, state: "Answer", answered: true })).toBe(1)
    expect(Reward.rBase({ ...clean, state: "Answer", answered: false })).toBe(0)
    expect(Reward.rBase({ ...clean, state: "Answer", answered: true, plan: "new" })).toBe(0)
  })

  it("R_step = ½·r_base + ½·r_plan; a malformed turn earns 0", () => {
    expect(Reward.stepReward(clean)).toEqual({ rBase: 1, rPlan: 1, rStep: 1 })
    expect(Reward.stepReward({ ...clean, state: "Need" })).toEqual({ rBase: 1, rPlan: 0, rStep: 0.5 })
    expect(Reward.stepReward({ ...clean, state: "No", plan: "repeated" })).toEqual({ rBase: 1, rPlan: 0, rStep: 0.5 })
    expect(Reward.stepReward({ ...clean, state: "Need", plan: "invalid" })).toEqual({ rBase: 0, rPlan: 0, rStep: 0 })
    expect(Reward.stepReward({ ...clean, state: "No", parsed: false })).toEqual({ rBase: 0, rPlan: 0, rStep: 0 })
  })

  it("Table 8 through stepReward: every state x plan status", () => {
    const expected: Record<string, Record<PlanStatus, number>> = {
      Need: { none: 0, invalid: 0, stale: 0, repeated: 1, new: 1 },
      May: { none: 1, invalid: 0, stale: 0, repeated: 0, new: 1 },
      No: { none: 1, invalid: 0, stale: 0, repeated: 0, new: 0 },
      Answer: { none: 0, invalid: 0, stale: 0, repeated: 0, new: 0 }
    }
    for (const [state, row] of Object.entries(expected)) {
      for (const [plan, rPlan] of Object.entries(row)) {
        const step = { ...clean, state: state as StepFacts["state"], plan: plan as PlanStatus, answered: state === "Answer" }
        expect(Reward.stepReward(step).rPlan).toBe(rPlan)
      }
    }
  })
})

describe("R_phase and L1-L4", () => {
  it("every L is in [0, 1] and R_phase is the weighted sum, for any facts and any valid weights", () => {
    fc.assert(
      fc.property(phaseArb, simplexArb, fc.double({ min: 0, max: 1, noNaN: true }), (facts, weights, order) => {
        const config = configured({ phase: { ...weights, l3Order: order, l3Batching: 1 - order } })
        const r = Reward.phaseReward(facts, config)
        for (const l of [r.l1, r.l2, r.l3, r.l4]) {
          expect(l).toBeGreaterThanOrEqual(0)
          expect(l).toBeLessThanOrEqual(1)
        }
        expect(r.rPhase).toBeCloseTo(weights.w1 * r.l1 + weights.w2 * r.l2 + weights.w3 * r.l3 + weights.w4 * r.l4, 12)
        expect(r.rPhase).toBeGreaterThanOrEqual(-1e-12)
        expect(r.rPhase).toBeLessThanOrEqual(1 + 1e-12)
      }),
      { numRuns: 500 }
    )
  })

  it("the default weights are Table 7's 0.1 / 0.2 / 0.2 and ours 0.5", () => {
    const r = Reward.phaseReward(phase({
      calls: [call({ grounded: false }), call({ id: "c2" })],
      rounds: 1,
      dependencies: { declared: 2, supported: 1, required: 1, recalled: 1 }
    }))
    // L1 = 1/2; L2 = F1(1/2, 1) = 2/3; L3 = ½·1 + ½·1; L4 = 1
    expect(r.l1).toBe(0.5)
    expect(r.l2).toBeCloseTo(2 / 3, 12)
    expect(r.l3).toBe(1)
    expect(r.l4).toBe(1)
    expect(r.rPhase).toBeCloseTo(0.1 * 0.5 + 0.2 * (2 / 3) + 0.2 * 1 + 0.5 * 1, 12)
  })

  it("a phase that issued no search and no call earns 0 on every L", () => {
    fc.assert(
      fc.property(phaseArb, (facts) => {
        expect(Reward.phaseReward({ ...facts, calls: [], searches: [] })).toEqual({ l1: 0, l2: 0, l3: 0, l4: 0, rPhase: 0 })
      })
    )
  })

  it("execute phase: L1 grounded calls, L3 order and batching, L4 fresh successes", () => {
    const facts = phase({
      rounds: 3,
      calls: [
        call({ id: "c1", layer: 1 }),
        call({ id: "c2", layer: 2, grounded: false }),
        call({ id: "c3", layer: 2, outOfOrder: true, result: "not_found" }),
        call({ id: "c4", layer: 1, repeated: true })
      ]
    })
    const r = Reward.phaseComponents(facts)
    expect(r.l1).toBe(3 / 4)
    expect(r.l3).toBeCloseTo(0.5 * (3 / 4) + 0.5 * (2 / 3), 12)
    expect(r.l4).toBe(2 / 4)
    // no declaration needed, none made
    expect(r.l2).toBe(1)
  })

  it("explore phase: L1 searches that led to a later successful call, L4 searches that found a new tool", () => {
    const facts = phase({
      kind: "explore",
      rounds: 2,
      searches: [search({}), search({ slot: "t", usedLater: false }), search({ newTools: 0, layer: 2 })]
    })
    const r = Reward.phaseComponents(facts)
    expect(r.l1).toBe(2 / 3)
    expect(r.l4).toBe(2 / 3)
    // no calls: order is vacuous; two layers over two rounds
    expect(r.l3).toBe(1)
  })

  it("L2 is the F1 of declared-edge precision and required-edge recall", () => {
    const l2 = (declared: number, supported: number, required: number, recalled: number) =>
      Reward.phaseComponents(phase({ calls: [call({})], dependencies: { declared, supported, required, recalled } })).l2
    expect(l2(0, 0, 0, 0)).toBe(1)
    expect(l2(0, 0, 2, 0)).toBe(0)
    expect(l2(3, 0, 0, 0)).toBe(0)
    expect(l2(4, 2, 2, 2)).toBeCloseTo(2 / 3, 12)
    expect(l2(2, 2, 4, 1)).toBeCloseTo(0.4, 12)
  })

  it("batching is the number of dependency layers over the rounds the phase acted in, capped at 1", () => {
    const batching = (layers: ReadonlyArray<number>, rounds: number) =>
      2 * Reward.phaseComponents(phase({ rounds, calls: layers.map((layer) => call({ layer })) })).l3 - 1
    expect(batching([1, 1, 1], 1)).toBe(1)
    expect(batching([1, 1, 1], 3)).toBeCloseTo(1 / 3, 12)
    expect(batching([1, 2, 3], 3)).toBe(1)
    expect(batching([1, 2], 4)).toBe(0.5)
  })
})

describe("RewardConfig", () => {
  it("the defaults validate", () => {
    expect(Reward.configure({})).toEqual({ _tag: "Ok", config: Reward.defaultRewardConfig })
  })

  it("rejects phase weights that do not sum to 1, naming the field and the values", () => {
    const result = Reward.configure({ phase: { w1: 0.5 } })
    expect(result).toEqual({
      _tag: "InvalidRewardConfig",
      issues: [{ field: "phase", value: "[0.5,0.2,0.2,0.5]", message: "w1 + w2 + w3 + w4 must equal 1" }]
    })
  })

  it("rejects unknown fields, unknown answer patterns, non-numbers, NaN and negative weights", () => {
    const bad = Reward.configure({
      phase: { w5: 0.1 },
      answer: { table: { "1111": 2 } },
      advantage: { epsilon: -1, lambdaStep: Number.NaN, tolerance: -0.1 },
      step: { baseWeight: "half" }
    } as unknown as Reward.RewardConfigPatch)
    expect(bad._tag).toBe("InvalidRewardConfig")
    const fields = bad._tag === "InvalidRewardConfig" ? bad.issues.map((i) => i.field) : []
    expect(fields).toEqual(["step.baseWeight", "phase.w5", "answer.table.1111", "advantage.lambdaStep", "advantage.epsilon", "advantage.tolerance"])
  })

  /** Every numeric leaf of the default config, as a path. */
  const leaves = (value: unknown, path: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> =>
    typeof value === "number"
      ? [path]
      : typeof value === "object" && value !== null
      ? Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => leaves(v, [...path, k]))
      : []
  const patchAt = (path: ReadonlyArray<string>, value: number): Record<string, unknown> =>
    path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>
  const get = (config: unknown, path: ReadonlyArray<string>): unknown =>
    path.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], config)
  // the phase weights sum to 1; the credit weights are mixes in [0, 1] (checked below)
  const constrained = new Set(["phase.w1", "phase.w2", "phase.w3", "phase.w4", "phase.l3Order", "phase.l3Batching", "credit.phaseCoverage", "credit.stepCoverage", "credit.actionCoverage", "credit.answerStep", "credit.earlyAnswer"])

  it("overriding one coefficient changes exactly that coefficient", () => {
    const all = leaves(Reward.defaultRewardConfig).filter((p) => !constrained.has(p.join(".")))
    // planCredit 4×5, answer table 8, step weights 2, advantage λτ λp λs ε tolerance 5 (answer.unjudged is a choice)
    expect(all.length).toBe(4 * 5 + 8 + 2 + 5)
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.double({ min: 0, max: 10, noNaN: true }), (path, value) => {
        const config = configured(patchAt(path, value) as Reward.RewardConfigPatch)
        for (const other of leaves(Reward.defaultRewardConfig)) {
          const expected = other.join(".") === path.join(".") ? value : get(Reward.defaultRewardConfig, other)
          expect(get(config, other)).toBe(expected)
        }
      }),
      { numRuns: 300 }
    )
  })

  it("the credit weights are mixes: any value in [0, 1] is taken as it is, one outside is refused naming the field", () => {
    fc.assert(
      fc.property(fc.constantFrom("phaseCoverage", "stepCoverage", "actionCoverage", "answerStep", "earlyAnswer"), fc.double({ min: 0, max: 1, noNaN: true }), (field, value) => {
        expect(configured({ credit: { [field]: value } }).credit).toEqual({ ...Reward.defaultRewardConfig.credit, [field]: value })
      })
    )
    expect(Reward.configure({ credit: { stepCoverage: 1.5 } })).toEqual({
      _tag: "InvalidRewardConfig",
      issues: [{ field: "credit.stepCoverage", value: "1.5", message: "must be in [0, 1]" }]
    })
  })

  it("moving weight between two phase components keeps the rest and changes R_phase accordingly", () => {
    const config = configured({ phase: { w1: 0.3, w4: 0.3 } })
    expect(config.phase).toEqual({ w1: 0.3, w2: 0.2, w3: 0.2, w4: 0.3, l3Order: 0.5, l3Batching: 0.5 })
    const facts = phase({ calls: [call({ grounded: false })] })
    // L1 = 0, L2 = L3 = L4 = 1
    expect(Reward.phaseReward(facts).rPhase).toBeCloseTo(0.9, 12)
    expect(Reward.phaseReward(facts, config).rPhase).toBeCloseTo(0.7, 12)
  })

  it("overriding one answer pattern changes R_ans for that pattern only", () => {
    const config = configured({ answer: { table: { "101": 0.25 } } })
    expect(Reward.answerReward({ quality: "YES", faithfulness: "NO", utility: "YES" }, config).rAns).toBe(0.25)
    expect(Reward.answerReward({ quality: "YES", faithfulness: "YES", utility: "YES" }, config).rAns).toBe(1.5)
  })

  it("builds on a base config other than the defaults", () => {
    const base = configured({ advantage: { lambdaStep: 0 } })
    const result = Reward.configure({ advantage: { lambdaPhase: 0 } }, base)
    expect(result._tag === "Ok" ? result.config.advantage : undefined).toEqual({
      lambdaTraj: 1,
      lambdaPhase: 0,
      lambdaStep: 0,
      epsilon: 1e-6,
      tolerance: 0.02
    })
  })
})

describe("Reward.score and attach", () => {
  it("scores a trajectory's facts at the three levels and writes them into the trajectory", () => {
    const trajectory = makeTrajectory([{}, {}], { quality: "YES", faithfulness: "YES", utility: "PARTIAL" })
    const stepFacts = (index: number): StepFacts => ({
      index,
      phase: "execute",
      decision: { state: "May", reason: "new_observation" },
      state: index === 1 ? "Answer" : "May",
      parsed: true,
      answered: index === 1,
      plan: "none",
      violations: { unseenTools: 0, invalidArguments: 0, repeatedCalls: 0, unresolvedRefs: 0 },
      seenBefore: [],
      dropped: 0,
      machineryFaults: 0,
      calls: [],
      searches: []
    })
    const scored = Reward.score({
      steps: [stepFacts(0), stepFacts(1)],
      phases: [phase({ start: 0, end: 2, calls: [call({})] })],
      verdict: { quality: "YES", faithfulness: "YES", utility: "PARTIAL" }
    })
    expect(scored.steps.map((s) => s.rStep)).toEqual([1, 0.5])
    expect(scored.stepPhase).toEqual([0, 0])
    expect(scored.phases[0]?.rPhase).toBeCloseTo(1, 12)
    expect(scored.answer).toEqual({ pattern: "110", rAns: 0.5 })
    const attached = Reward.attach(trajectory, scored)
    expect(attached.steps.map((s) => s.reward)).toEqual(scored.steps)
    expect(attached.phases).toEqual([{ kind: "execute", start: 0, end: 2, reward: { l1: 1, l2: 1, l3: 1, l4: 1, rPhase: scored.phases[0]?.rPhase } }])
    expect(attached.answerReward).toEqual({ pattern: "110", rAns: 0.5 })
  })
})
