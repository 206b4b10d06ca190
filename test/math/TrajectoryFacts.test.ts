import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { callId, toolName } from "../../src/domain/Ids.ts"
import * as Controller from "../../src/math/Controller.ts"
import * as Facts from "../../src/math/TrajectoryFacts.ts"
import * as Reward from "../../src/math/Reward.ts"
import { depLookup, makeSteps, makeTrajectory } from "./fixtures.ts"
import type { StepSpec } from "./fixtures.ts"

const deps = depLookup(["find_team>team_roster", "team_roster~player_stats"])

/** Plan, search both slots in one round, call the producer, then the consumer through a $ref, answer. */
const clean: ReadonlyArray<StepSpec> = [
  {
    controller: "Need",
    plan: [{ id: "c1", slot: "team" }, { id: "c2", slot: "roster", deps: ["c1"] }],
    searches: [{ slot: "team", hits: ["find_team", "search_league"] }, { slot: "roster", hits: ["team_roster"] }]
  },
  { calls: [{ id: "c1", tool: "find_team", args: { name: "Lakers" }, payload: { id: 7 } }] },
  { calls: [{ id: "c2", tool: "team_roster", args: { team_id: 7 }, refs: ["c1"] }] },
  { answer: "LeBron James, Anthony Davis" }
]

/** Malformed first turn; unseen tools; a consumer fired alongside its producer; a repeat; an unresolved $ref; a plan with the answer. */
const flawed: ReadonlyArray<StepSpec> = [
  { malformed: true },
  {
    calls: [
      { id: "c1", tool: "find_team", args: { name: "Lakers" }, payload: { id: 7 } },
      { id: "c2", tool: "team_roster", args: { team_id: 99 }, result: "not_found" }
    ],
    validation: { unseenTools: ["c1", "c2"].map(callId) }
  },
  {
    calls: [
      { id: "c3", tool: "find_team", args: { name: "Lakers" }, payload: { id: 7 } },
      { id: "c4", tool: "team_roster", args: { team_id: { $ref: "c5.id" } }, result: "not_run" }
    ],
    validation: { repeatedCalls: [callId("c3")], unresolvedRefs: [{ callId: callId("c4"), ref: "c5.id" }] }
  },
  { answer: "I could not find the roster.", plan: [{ id: "a1" }] }
]

describe("Facts phases", () => {
  it("calls make a step execute, searches alone explore; other steps join the phase before; the first defaults to explore", () => {
    const steps = makeSteps([
      { malformed: true },
      { searches: [{ slot: "s", hits: ["t"] }] },
      { plan: [{ id: "x" }] },
      { calls: [{ id: "x", tool: "t" }], searches: [{ slot: "u", hits: ["v"] }] },
      { answer: "done" },
      { searches: [{ slot: "s", hits: ["t"] }] }
    ])
    expect(Facts.phasesOf(steps)).toEqual(["explore", "explore", "explore", "execute", "execute", "explore"])
    expect(Facts.segment(steps)).toEqual([
      { kind: "explore", start: 0, end: 3 },
      { kind: "execute", start: 3, end: 5 },
      { kind: "explore", start: 5, end: 6 }
    ])
    expect(Facts.segment([])).toEqual([])
    expect(Facts.segment(makeSteps([{ answer: "at once" }]))).toEqual([{ kind: "explore", start: 0, end: 1 }])
  })

  it("a recorded step's phase counts what ran as well as what the turn asked, for every combination", () => {
    const [base] = makeSteps([{ answer: "x" }])
    if (base === undefined) throw new Error("fixture")
    const [withCall] = makeSteps([{ calls: [{ id: "c1", tool: "t" }] }])
    const [withSearch] = makeSteps([{ searches: [{ slot: "s", hits: ["t"] }] }])
    const observation = withCall?.observations[0]
    const search = withSearch?.searches[0]
    if (observation === undefined || search === undefined) throw new Error("fixture")
    for (const turnCalls of [undefined, false, true]) {
      for (const turnSearches of [false, true]) {
        for (const ran of [false, true]) {
          for (const searched of [false, true]) {
            for (const previous of [undefined, "explore", "execute"] as const) {
              const step = {
                ...base,
                ...(turnCalls === undefined ? { turn: undefined } : {
                  turn: {
                    searches: turnSearches ? [{ slot: "s", query: "q" }] : [],
                    calls: turnCalls ? [{ id: callId("c1"), tool: toolName("t"), arguments: {} }] : []
                  }
                }),
                observations: ran ? [observation] : [],
                searches: searched ? [search] : []
              } as typeof base
              const expected = turnCalls === true || ran
                ? "execute"
                : (turnCalls !== undefined && turnSearches) || searched
                ? "explore"
                : previous ?? "explore"
              expect(Facts.phaseOfStep(step, previous)).toBe(expected)
            }
          }
        }
      }
    }
  })
})

describe("Facts of a clean ParaAct trajectory", () => {
  const facts = Facts.fromTrajectory(makeTrajectory(clean, { quality: "YES", faithfulness: "YES", utility: "YES" }), { deps })

  it("recomputes the controller before every step and scores the answering step as Answer", () => {
    expect(facts.steps.map((s) => s.decision)).toEqual([
      { state: "Need", reason: "no_plan" },
      { state: "May", reason: "new_observation" },
      { state: "May", reason: "new_observation" },
      { state: "Need", reason: "plan_exhausted" }
    ])
    expect(facts.steps.map((s) => s.state)).toEqual(["Need", "May", "May", "Answer"])
    expect(facts.steps.map((s) => s.plan)).toEqual(["new", "none", "none", "none"])
    expect(facts.steps.map((s) => s.seenBefore)).toEqual([
      [],
      ["find_team", "search_league", "team_roster"],
      ["find_team", "search_league", "team_roster"],
      ["find_team", "search_league", "team_roster"]
    ])
  })

  it("the decisions agree with Controller.stateBefore on every prefix", () => {
    const steps = makeSteps(clean)
    facts.steps.forEach((s, k) => expect(s.decision).toEqual(Controller.stateBefore(steps.slice(0, k))))
  })

  it("explore phase: both slots searched in one round, each search led to a later call", () => {
    const explore = facts.phases[0]
    expect(explore).toEqual({
      kind: "explore",
      start: 0,
      end: 1,
      rounds: 1,
      calls: [],
      searches: [
        { step: 0, slot: "team", hits: 2, newTools: 2, usedLater: true, layer: 1 },
        { step: 0, slot: "roster", hits: 1, newTools: 1, usedLater: true, layer: 1 }
      ],
      dependencies: { declared: 1, supported: 1, required: 1, recalled: 1 }
    })
  })

  it("execute phase: the consumer sits one layer above its producer, in order, grounded", () => {
    const execute = facts.phases[1]
    expect(execute?.start).toBe(1)
    expect(execute?.end).toBe(4)
    expect(execute?.rounds).toBe(2)
    expect(execute?.calls).toEqual([
      { id: "c1", tool: "find_team", step: 1, result: "ok", repeated: false, grounded: true, outOfOrder: false, layer: 1 },
      { id: "c2", tool: "team_roster", step: 2, result: "ok", repeated: false, grounded: true, outOfOrder: false, layer: 2 }
    ])
  })

  it("scores 1 on every phase, 1 on each acting step, ½ on the answer step, 1.5 for the answer", () => {
    const scored = Reward.score(facts)
    expect(scored.steps.map((s) => s.rStep)).toEqual([1, 1, 1, 0.5])
    expect(scored.phases.map((p) => p.rPhase)).toEqual([1, 1])
    expect(scored.stepPhase).toEqual([0, 1, 1, 1])
    expect(scored.answer).toEqual({ pattern: "111", rAns: 1.5 })
  })
})

describe("Facts of a flawed trajectory", () => {
  const facts = Facts.fromTrajectory(makeTrajectory(flawed, { quality: "NO", faithfulness: "YES", utility: "NO" }), { deps })

  it("marks the consumer fired blind beside its producer and the unresolved $ref as out of order", () => {
    const execute = facts.phases[1]
    expect(execute?.calls.map((c) => [c.id, c.result, c.grounded, c.repeated, c.outOfOrder, c.layer])).toEqual([
      ["c1", "ok", false, false, false, 1],
      ["c2", "not_found", false, false, true, 1],
      ["c3", "ok", false, true, false, 1],
      ["c4", "not_run", false, false, true, 2]
    ])
    expect(execute?.rounds).toBe(2)
    // no plan during the phase (the answer's plan declares nothing about the called tools)
    expect(execute?.dependencies).toEqual({ declared: 0, supported: 0, required: 1, recalled: 0 })
  })

  it("a phase of only a malformed step earns nothing", () => {
    expect(facts.phases[0]).toMatchObject({ kind: "explore", start: 0, end: 1, rounds: 0, calls: [], searches: [] })
    expect(Reward.phaseReward(facts.phases[0] as Facts.PhaseFacts).rPhase).toBe(0)
  })

  it("scores every step 0 and the phases and answer as the definitions give", () => {
    expect(facts.steps.map((s) => [s.state, s.parsed, s.plan])).toEqual([
      ["Need", false, "none"],
      ["Need", true, "none"],
      ["Need", true, "none"],
      ["Answer", true, "new"]
    ])
    const scored = Reward.score(facts)
    expect(scored.steps.map((s) => s.rStep)).toEqual([0, 0, 0, 0])
    const execute = scored.phases[1]
    // L1 = 0 (nothing retrieved); L2 = 0 (a hard edge to declare, no plan); L3 = ½·(2/4) + ½·(2/2); L4 = 1/4
    expect([execute?.l1, execute?.l2, execute?.l3, execute?.l4]).toEqual([0, 0, 0.75, 0.25])
    expect(execute?.rPhase).toBeCloseTo(0.2 * 0.75 + 0.5 * 0.25, 12)
    expect(scored.answer).toEqual({ pattern: "010", rAns: -0.5 })
  })
})

describe("Facts details", () => {
  it("a runtime-forced final round is scored as Answer even when the turn does not answer", () => {
    const facts = Facts.fromSteps(makeSteps([{ plan: [{ id: "c1" }] }, { controller: "Answer", calls: [{ id: "c1", tool: "t" }] }]), undefined)
    expect(facts.steps[1]?.decision.state).toBe("No")
    expect(facts.steps[1]?.state).toBe("Answer")
    expect(Reward.rBase(facts.steps[1] as Facts.StepFacts)).toBe(0)
  })

  it("refining a slot's search is a new layer; searching a forgotten slot later is not", () => {
    const layers = (specs: ReadonlyArray<StepSpec>) => {
      const phase = Facts.fromSteps(makeSteps(specs), undefined).phases[0]
      return { layers: phase?.searches.map((s) => s.layer), rounds: phase?.rounds }
    }
    expect(layers([
      { searches: [{ slot: "team", hits: ["a"] }] },
      { searches: [{ slot: " Team ", hits: ["b"] }, { slot: "roster", hits: ["c"] }] }
    ])).toEqual({ layers: [1, 2, 1], rounds: 2 })
    expect(layers([
      { searches: [{ slot: "team", hits: ["a"] }] },
      { searches: [{ slot: "roster", hits: ["c"] }] }
    ])).toEqual({ layers: [1, 1], rounds: 2 })
  })

  it("new tools count once, even when two searches of one step return the same new tool", () => {
    const facts = Facts.fromSteps(makeSteps([
      { searches: [{ slot: "a", hits: ["x", "y"] }, { slot: "b", hits: ["y", "x"] }, { slot: "c", hits: ["z"] }] }
    ]), undefined)
    expect(facts.steps[0]?.searches.map((s) => s.newTools)).toEqual([2, 0, 1])
  })

  it("a retry after a failure, and a call after its G_dep producer, sit one layer up", () => {
    const facts = Facts.fromSteps(makeSteps([
      {
        plan: [{ id: "c1", tool: "find_team" }, { id: "c2", tool: "team_roster", deps: ["c1"] }],
        searches: [{ slot: "s", hits: ["find_team", "team_roster"] }]
      },
      { calls: [{ id: "c1", tool: "find_team", result: "rate_limited" }] },
      { calls: [{ id: "c1b", tool: "find_team", payload: { id: 7 } }] },
      { calls: [{ id: "c2", tool: "team_roster", args: { team_id: 7 } }] }
    ]), undefined, { deps })
    expect(facts.phases[1]?.calls.map((c) => [c.id, c.layer, c.outOfOrder])).toEqual([
      ["c1", 1, false],
      ["c1b", 2, false],
      // c2's declared dep c1 was completed by c1b (same tool, after the plan): in order
      ["c2", 3, false]
    ])
  })

  it("a call issued before its declared dependency completed is out of order", () => {
    const facts = Facts.fromSteps(makeSteps([
      { plan: [{ id: "c1" }, { id: "c2", deps: ["c1"] }], searches: [{ slot: "s", hits: ["p", "q"] }] },
      { calls: [{ id: "c1", tool: "p" }, { id: "c2", tool: "q" }] }
    ]), undefined)
    expect(facts.phases[1]?.calls.map((c) => c.outOfOrder)).toEqual([false, true])
  })

  it("L2 counts: unsupported declared edges lower precision, an undeclared hard pair lowers recall", () => {
    const facts = Facts.fromSteps(makeSteps([
      {
        plan: [
          { id: "n1", tool: "find_team" },
          { id: "n2", tool: "player_stats", deps: ["n1"] },
          { id: "n3", tool: "team_roster" }
        ],
        searches: [{ slot: "s", hits: ["find_team", "team_roster", "player_stats"] }]
      }
    ]), undefined, { deps })
    // n1 -> n2 is not in G_dep; find_team -> team_roster is hard and undeclared
    expect(facts.phases[0]?.dependencies).toEqual({ declared: 1, supported: 0, required: 1, recalled: 0 })
    const soft = Facts.dependencyFacts(
      { nodes: [{ id: callId("a"), tool: toolName("team_roster"), deps: [] }, { id: callId("b"), tool: toolName("player_stats"), deps: [callId("a")] }] },
      [],
      new Map(),
      deps
    )
    expect(soft).toEqual({ declared: 1, supported: 1, required: 0, recalled: 0 })
  })

  it("a transitive declaration recalls a hard pair", () => {
    const recalled = Facts.dependencyFacts(
      {
        nodes: [
          { id: callId("a"), tool: toolName("find_team"), deps: [] },
          { id: callId("m"), deps: [callId("a")] },
          { id: callId("b"), tool: toolName("team_roster"), deps: [callId("m")] }
        ]
      },
      [],
      new Map(),
      deps
    )
    expect(recalled).toEqual({ declared: 0, supported: 0, required: 1, recalled: 1 })
  })
})

describe("Facts on random trajectories", () => {
  const ids = ["c1", "c2", "c3", "c4"]
  const tools = ["find_team", "team_roster", "player_stats", "weather"]
  const stepArb: fc.Arbitrary<StepSpec> = fc.record({
    malformed: fc.constantFrom(false, false, false, true),
    plan: fc.option(fc.array(fc.record({ id: fc.constantFrom(...ids), deps: fc.subarray(ids, { maxLength: 2 }), tool: fc.option(fc.constantFrom(...tools), { nil: undefined }) }), { minLength: 1, maxLength: 4 }), { nil: undefined }),
    searches: fc.array(fc.record({ slot: fc.constantFrom("team", "roster", "Team "), hits: fc.subarray(tools, { maxLength: 3 }) }), { maxLength: 3 }),
    calls: fc.array(fc.record({
      id: fc.constantFrom(...ids),
      tool: fc.constantFrom(...tools),
      args: fc.constantFrom({}, { q: 1 }),
      result: fc.constantFrom("ok" as const, "ok" as const, "not_found" as const, "rate_limited" as const, "not_run" as const),
      refs: fc.subarray(ids, { maxLength: 1 })
    }), { maxLength: 3 }),
    answer: fc.option(fc.constant("done"), { nil: undefined })
  }, { requiredKeys: ["searches", "calls"] }).map((spec) => Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined)) as StepSpec)

  it("phases partition the steps, counts stay consistent, every L is in [0, 1], decisions match the controller", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 8 }), (specs) => {
        const steps = makeSteps(specs)
        const facts = Facts.fromSteps(steps, undefined, { deps })
        let next = 0
        for (const phase of facts.phases) {
          expect(phase.start).toBe(next)
          expect(phase.end).toBeGreaterThan(phase.start)
          expect(phase.rounds).toBeLessThanOrEqual(phase.end - phase.start)
          expect(phase.dependencies.supported).toBeLessThanOrEqual(phase.dependencies.declared)
          expect(phase.dependencies.recalled).toBeLessThanOrEqual(phase.dependencies.required)
          for (const c of phase.calls) expect(c.layer).toBeGreaterThanOrEqual(1)
          next = phase.end
        }
        expect(next).toBe(steps.length)
        const scored = Reward.score(facts)
        for (const p of scored.phases) for (const l of [p.l1, p.l2, p.l3, p.l4]) expect(l >= 0 && l <= 1).toBe(true)
        for (const s of scored.steps) expect([0, 0.5, 1]).toContain(s.rStep)
        facts.steps.forEach((s, k) => expect(s.decision).toEqual(Controller.stateBefore(steps.slice(0, k))))
      }),
      { numRuns: 300 }
    )
  })
})
