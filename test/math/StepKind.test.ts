import { describe, expect, it } from "@effect/vitest"
import * as StepKind from "../../src/math/StepKind.ts"
import { makeStep } from "./fixtures.ts"

describe("StepKind", () => {
  const call = { id: "c1", tool: "get_team" }
  const search = { slot: "team", hits: ["get_team"] }

  it("answer wins over calls and searches; calls over searches; a malformed or plan-only turn is other", () => {
    const cases: ReadonlyArray<readonly [StepKind.StepKind, Parameters<typeof makeStep>[1]]> = [
      ["answer", { answer: "42" }],
      ["answer", { answer: "42", calls: [call], searches: [search] }],
      ["call", { calls: [call] }],
      ["call", { calls: [call], searches: [search] }],
      ["search", { searches: [search] }],
      ["other", { malformed: true }],
      ["other", { plan: [{ id: "n1" }] }],
      ["other", {}]
    ]
    for (const [kind, spec] of cases) expect([kind, StepKind.stepKind(makeStep(0, spec))]).toEqual([kind, kind])
  })

  it("pool keys: search 0, call 1, answer 2, other 3, in the order of stepKinds", () => {
    expect(StepKind.stepKinds.map(StepKind.stepPoolKey)).toEqual([0, 1, 2, 3])
    expect(StepKind.stepPools([makeStep(0, { searches: [search] }), makeStep(1, { calls: [call] }), makeStep(2, { answer: "x" })])).toEqual([0, 1, 2])
  })
})
