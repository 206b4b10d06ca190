import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import * as Advantage from "../../src/math/Advantage.ts"
import * as StepKind from "../../src/math/StepKind.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import * as Reward from "../../src/math/Reward.ts"
import { makeSteps, makeTrajectory } from "./fixtures.ts"
import type { StepSpec } from "./fixtures.ts"

/**
 * Step credit that cannot be bought (issue 24 §3): a malformed turn is scored against well-formed turns of the group
 * (never in a pool of its own, where it got exactly 0), and a call repeated within one turn is a repeat.
 */

const tools = ["find_team", "team_roster", "player_stats", "league_table"]

/** One well-formed, valid step: a search for a new slot, or calls with fresh arguments (no repeats). */
const wellFormed = fc.oneof(
  fc.constant<"search">("search"),
  fc.integer({ min: 1, max: 3 }).map((n) => ({ calls: n }))
)

/** A rollout: a search that retrieves every tool, then well-formed steps, then the answer. */
const rolloutArb = fc.array(wellFormed, { minLength: 0, maxLength: 6 })

const specsOf = (g: number, body: ReadonlyArray<"search" | { readonly calls: number }>): Array<StepSpec> => {
  const specs: Array<StepSpec> = [{ searches: [{ slot: `s${g}-0`, hits: tools }] }]
  body.forEach((b, i) => {
    if (b === "search") specs.push({ searches: [{ slot: `s${g}-${i + 1}`, hits: [tools[i % tools.length] as string] }] })
    else {
      specs.push({
        calls: Array.from({ length: b.calls }, (_, k) => ({ id: `c${g}_${i}_${k}`, tool: tools[k % tools.length] as string, args: { q: `${g}-${i}-${k}` } }))
      })
    }
  })
  specs.push({ answer: "done" })
  return specs
}

const verdictArb = fc.constantFrom("YES", "PARTIAL", "NO").chain((q) =>
  fc.constantFrom("YES", "NO").map((f) => ({ quality: q as "YES" | "PARTIAL" | "NO", faithfulness: f as "YES" | "NO", utility: "YES" as const }))
)

const groupArb = fc.record({
  rollouts: fc.array(fc.record({ body: rolloutArb, verdict: verdictArb }), { minLength: 2, maxLength: 6 }),
  malformedIn: fc.nat(),
  at: fc.nat()
})

type VerdictSpec = Parameters<typeof makeTrajectory>[1]

const scoreGroup = (specs: ReadonlyArray<ReadonlyArray<StepSpec>>, verdicts: ReadonlyArray<VerdictSpec>, estimator: string) => {
  const trajectories = specs.map((s, g) => makeTrajectory(s, verdicts[g]))
  const scores = trajectories.map((t) => Reward.score(Facts.fromTrajectory(t)))
  const rollouts = scores.map((s, g) => Advantage.fromScore(s, trajectories[g]?.steps ?? []))
  const result = Advantage.compute(estimator, rollouts, Reward.defaultRewardConfig.advantage)
  if (result._tag !== "Ok") throw new Error(JSON.stringify(result))
  return { scores, advantages: result.advantages }
}

describe("step credit: a malformed turn loses against the well-formed turns of its group", () => {
  it("property: a group with one malformed turn gives it R_step 0 and a negative A_step (paraagent, the single pool, phases by kind, per-action credit)", () => {
    fc.assert(
      fc.property(groupArb, ({ rollouts, malformedIn, at }) => {
        const g = malformedIn % rollouts.length
        const specs = rollouts.map((r, k) => specsOf(k, r.body))
        const target = specs[g] as Array<StepSpec>
        // anywhere before the answer: a retry follows it, or (first position) the search it failed to be
        const position = at % target.length
        target.splice(position, 0, { malformed: true })
        for (const estimator of ["paraagent", "paraagent_single_pool", "paraagent_phase_kind", "paraagent_credit"]) {
          const { scores, advantages } = scoreGroup(specs, rollouts.map((r) => r.verdict), estimator)
          expect(scores[g]?.steps[position]?.rStep).toBe(0)
          const a = advantages[g]?.[position]?.step ?? 0
          expect(a).toBeLessThan(0)
        }
      }),
      { numRuns: 150 }
    )
  })

  it("the pool it lands in: the kind of its retry (the next parsed step), else the step before, else other", () => {
    const steps = makeSteps([
      { malformed: true },
      { searches: [{ slot: "s", hits: ["find_team"] }] },
      { malformed: true },
      { malformed: true },
      { calls: [{ id: "c1", tool: "find_team" }] },
      { answer: "x" },
      { malformed: true }
    ])
    expect(StepKind.stepPools(steps)).toEqual([0, 0, 1, 1, 1, 2, 2])
    expect(StepKind.stepPools(makeSteps([{ malformed: true }]))).toEqual([StepKind.stepPoolKey("other")])
  })

  it("before the rule, the same group gave the malformed turn a pool of its own and exactly 0", () => {
    const specs = [specsOf(0, [{ calls: 1 }]), specsOf(1, [{ calls: 2 }])]
    ;(specs[0] as Array<StepSpec>).splice(1, 0, { malformed: true })
    const trajectories = specs.map((s) => makeTrajectory(s, { quality: "YES", faithfulness: "YES", utility: "YES" }))
    const scores = trajectories.map((t) => Reward.score(Facts.fromTrajectory(t)))
    const own = scores.map((s, g) => ({ ...Advantage.fromScore(s, trajectories[g]?.steps ?? []), stepPool: (trajectories[g]?.steps ?? []).map((st) => StepKind.stepPoolKey(StepKind.stepKind(st))) }))
    const before = Advantage.compute("paraagent", own, Reward.defaultRewardConfig.advantage)
    const after = Advantage.compute("paraagent", scores.map((s, g) => Advantage.fromScore(s, trajectories[g]?.steps ?? [])), Reward.defaultRewardConfig.advantage)
    if (before._tag !== "Ok" || after._tag !== "Ok") throw new Error("unexpected")
    expect(before.advantages[0]?.[1]?.step).toBe(0)
    expect(after.advantages[0]?.[1]?.step).toBeLessThan(-1)
  })
})

describe("step credit: a call repeated within one turn is a repeat", () => {
  const callsArb = fc.uniqueArray(fc.record({ tool: fc.constantFrom(...tools), q: fc.string({ maxLength: 6 }) }), {
    minLength: 1,
    maxLength: 5,
    selector: (c) => `${c.tool}|${c.q}`
  })

  const factsOf = (calls: ReadonlyArray<{ readonly tool: string; readonly q: string }>) =>
    Facts.fromSteps(
      makeSteps([
        { searches: [{ slot: "all", hits: tools }] },
        { calls: calls.map((c, k) => ({ id: `c${k}`, tool: c.tool, args: { q: c.q } })) }
      ]),
      undefined
    )

  it("property: duplicating one call of a clean turn (same tool and arguments, another id) drops r_base to 0 and marks the copy repeated", () => {
    fc.assert(
      fc.property(callsArb, fc.nat(), (calls, pick) => {
        const clean = factsOf(calls)
        expect(Reward.rBase(clean.steps[1] as Facts.StepFacts)).toBe(1)
        const copy = calls[pick % calls.length] as { readonly tool: string; readonly q: string }
        const duplicated = factsOf([...calls, copy])
        const step = duplicated.steps[1] as Facts.StepFacts
        expect(step.violations.repeatedCalls).toBe(1)
        expect(Reward.rBase(step)).toBe(0)
        expect(Reward.stepReward(step).rStep).toBeLessThan(Reward.stepReward(clean.steps[1] as Facts.StepFacts).rStep)
        expect(step.calls.map((c) => c.repeated)).toEqual([...calls.map(() => false), true])
        // L4 counts the copy as a call that did not move the plan forward
        const phase = duplicated.phases.find((p) => p.kind === "execute")
        expect(Reward.phaseComponents(phase as Facts.PhaseFacts).l4).toBeLessThan(1)
      }),
      { numRuns: 300 }
    )
  })

  it("two calls of one tool with different arguments are not repeats", () => {
    const facts = factsOf([{ tool: "find_team", q: "a" }, { tool: "find_team", q: "b" }])
    expect(facts.steps[1]?.violations.repeatedCalls).toBe(0)
  })
})
