import { describe, expect, it } from "@effect/vitest"
import { callId } from "../../src/domain/Ids.ts"
import * as Controller from "../../src/math/Controller.ts"
import * as PlanMath from "../../src/math/PlanDag.ts"
import { defaultRewardConfig } from "../../src/math/Reward.ts"
import { makeStep, makeSteps } from "./fixtures.ts"
import type { StepSpec } from "./fixtures.ts"

const stateAfter = (specs: ReadonlyArray<StepSpec>, options?: Controller.DecideOptions) =>
  Controller.stateBefore(makeSteps(specs), options)

const plan2 = [{ id: "c1", slot: "team" }, { id: "c2", slot: "roster", deps: ["c1"] }]

describe("Controller.decide (Table 8 states)", () => {
  it("starts in Need: there is no plan yet", () => {
    expect(stateAfter([])).toEqual({ state: "Need", reason: "no_plan" })
  })

  it("the final round forces Answer, whatever else holds", () => {
    expect(stateAfter([], { finalRound: true })).toEqual({ state: "Answer", reason: "final_round" })
    expect(stateAfter([{ plan: plan2, searches: [{ slot: "team", hits: ["find_team"] }] }], { finalRound: true }).state)
      .toBe("Answer")
  })

  it("stays in Need while no valid plan was emitted, even when observations are new", () => {
    expect(stateAfter([{ searches: [{ slot: "team", hits: ["find_team"] }] }])).toEqual({ state: "Need", reason: "no_plan" })
    expect(stateAfter([{ plan: [{ id: "a", deps: ["a"] }], searches: [{ slot: "t", hits: ["x"] }] }]).reason).toBe("no_plan")
  })

  it("a runtime-recorded planError makes the plan invalid even if the DAG checks pass", () => {
    expect(stateAfter([{ plan: plan2, validation: { planError: "node tool unknown" } }]).reason).toBe("no_plan")
  })

  it("May after a step that retrieved a tool not seen before", () => {
    expect(stateAfter([{ plan: plan2, searches: [{ slot: "team", hits: ["find_team"] }] }]))
      .toEqual({ state: "May", reason: "new_observation" })
  })

  it("No after a plan-only step, a malformed step, or a step that only repeated what was seen", () => {
    expect(stateAfter([{ plan: plan2 }])).toEqual({ state: "No", reason: "no_new_information" })
    expect(stateAfter([{ plan: plan2, searches: [{ slot: "team", hits: ["find_team"] }] }, { malformed: true }]).state)
      .toBe("No")
    expect(
      stateAfter([
        { plan: plan2, searches: [{ slot: "team", hits: ["find_team"] }] },
        { searches: [{ slot: "team", hits: ["find_team"] }] }
      ]).state
    ).toBe("No")
    const call = { id: "x1", tool: "find_team", args: { q: "Lakers" }, payload: { id: 7 } }
    expect(stateAfter([{ plan: plan2, calls: [call] }]).state).toBe("May")
    expect(stateAfter([{ plan: plan2, calls: [call] }, { calls: [{ ...call, id: "x2" }] }]).state).toBe("No")
    // the same call answering something else is new information
    expect(stateAfter([{ plan: plan2, calls: [call] }, { calls: [{ ...call, id: "x2", payload: { id: 8 } }] }]).state)
      .toBe("May")
  })

  it("May on a new recoverable failure; the same failure again is no new information", () => {
    const failing = { id: "c1", tool: "find_team", args: { q: "Lakerz" }, result: "not_found" as const }
    expect(stateAfter([{ plan: plan2, calls: [failing] }])).toEqual({ state: "May", reason: "recoverable_failure" })
    expect(stateAfter([{ plan: plan2, calls: [failing] }, { calls: [failing] }]).state).toBe("No")
    expect(stateAfter([{ plan: plan2, calls: [failing] }, { calls: [{ ...failing, result: "rate_limited" }] }]).reason)
      .toBe("recoverable_failure")
  })

  it("Need again once every node of the active plan is completed", () => {
    const steps: ReadonlyArray<StepSpec> = [
      { plan: plan2, searches: [{ slot: "team", hits: ["find_team", "team_roster"] }] },
      { calls: [{ id: "c1", tool: "find_team" }] },
      { calls: [{ id: "c2", tool: "team_roster", refs: ["c1"] }] }
    ]
    expect(stateAfter(steps.slice(0, 2)).state).toBe("May")
    expect(stateAfter(steps)).toEqual({ state: "Need", reason: "plan_exhausted" })
  })

  it("a failed call does not complete its node", () => {
    const steps: ReadonlyArray<StepSpec> = [
      { plan: [{ id: "c1" }] },
      { calls: [{ id: "c1", tool: "find_team", result: "server_error" }] }
    ]
    expect(stateAfter(steps).state).toBe("May")
  })
})

describe("Controller.completedNodes", () => {
  const active = (nodes: ReadonlyArray<{ id: string; tool?: string; deps?: ReadonlyArray<string> }>, emittedAt: number) => {
    const plan = makeStep(0, { plan: nodes }).turn?.plan ?? { nodes: [] }
    const result = PlanMath.validate(plan)
    if (result._tag !== "Valid") return expect.unreachable("fixture plan must be valid")
    return { plan, dag: result.dag, emittedAt }
  }
  const ok = (id: string, tool: string, step: number): Controller.Success => ({ id: callId(id), tool, step })

  it("completes a node by a successful call with its id, at any time, if the tool matches when bound", () => {
    const a = active([{ id: "c1", tool: "find_team" }, { id: "c2" }], 3)
    expect([...Controller.completedNodes(a, [ok("c1", "find_team", 0), ok("c2", "anything", 1)])].sort()).toEqual(["c1", "c2"])
    expect([...Controller.completedNodes(a, [ok("c1", "other_tool", 4)])]).toEqual([])
  })

  it("falls back to a call of the node's tool made from the plan's step on, one call per node", () => {
    const a = active([{ id: "n1", tool: "weather" }, { id: "n2", tool: "weather" }, { id: "n3", tool: "news" }], 2)
    expect([...Controller.completedNodes(a, [ok("x", "weather", 1)])]).toEqual([])
    expect([...Controller.completedNodes(a, [ok("x", "weather", 2)])]).toEqual(["n1"])
    expect([...Controller.completedNodes(a, [ok("x", "weather", 2), ok("y", "weather", 3)])]).toEqual(["n1", "n2"])
    // a call named after a node never completes another node by tool
    expect([...Controller.completedNodes(a, [ok("n3", "weather", 2)])]).toEqual([])
  })
})

describe("Controller.classifyPlan", () => {
  const classify = (history: ReadonlyArray<StepSpec>, next: StepSpec) =>
    Controller.classifyPlan(Controller.remember(makeSteps(history)), makeStep(history.length, next))

  it("none, invalid, new, repeated, stale", () => {
    expect(classify([], {})).toBe("none")
    expect(classify([], { malformed: true, plan: plan2 })).toBe("none")
    expect(classify([], { plan: [{ id: "a", deps: ["b"] }] })).toBe("invalid")
    expect(classify([], { plan: plan2 })).toBe("new")
    expect(classify([{ plan: plan2 }], { plan: [...plan2].reverse() })).toBe("repeated")
    expect(classify([{ plan: [{ id: "a", deps: ["b"] }] }], { plan: [{ id: "a", deps: ["b"] }] })).toBe("invalid")
    const done: ReadonlyArray<StepSpec> = [{ plan: plan2, calls: [{ id: "c1", tool: "t1" }] }, { calls: [{ id: "c2", tool: "t2" }] }]
    expect(classify(done, { plan: plan2 })).toBe("stale")
    expect(classify(done, { plan: [...plan2, { id: "c3", deps: ["c2"] }] })).toBe("new")
  })
})

describe("r_plan (Table 8) through the credit table", () => {
  const credit = defaultRewardConfig.planCredit
  const cases: ReadonlyArray<readonly [Parameters<typeof Controller.rPlan>[1], Controller.PlanStatus, number]> = [
    ["Need", "new", 1],
    ["Need", "repeated", 1],
    ["Need", "none", 0],
    ["Need", "invalid", 0],
    ["Need", "stale", 0],
    ["May", "none", 1],
    ["May", "new", 1],
    ["May", "repeated", 0],
    ["May", "invalid", 0],
    ["May", "stale", 0],
    ["No", "none", 1],
    ["No", "repeated", 0],
    ["No", "new", 0],
    ["No", "invalid", 0],
    ["No", "stale", 0],
    ["Answer", "none", 0],
    ["Answer", "new", 0],
    ["Answer", "repeated", 0],
    ["Answer", "invalid", 0],
    ["Answer", "stale", 0]
  ]
  it.each(cases)("%s with plan %s earns %d", (state, status, expected) => {
    expect(Controller.rPlan(credit, state, status)).toBe(expected)
  })

  it("the answering step is scored in the Answer state whatever the controller decided", () => {
    for (const state of Controller.states) expect(Controller.scoredState(state, true)).toBe("Answer")
    expect(Controller.scoredState("May", false)).toBe("May")
  })
})
