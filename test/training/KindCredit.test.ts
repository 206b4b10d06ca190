import { describe, expect, it } from "vitest"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as KindCredit from "../../src/training/KindCredit.ts"

type Adv = { traj: number; phase: number; step: number; combined: number; kind?: number }
const step = (kind: "search" | "call" | "answer", advantage: Adv) => ({ decision: { kind }, advantage })
const rollout = (rAns: number, steps: ReadonlyArray<ReturnType<typeof step>>) =>
  ({ answerReward: { pattern: "111", rAns }, steps }) as unknown as Trajectory

const a = (combined: number, kind?: number): Adv => ({ traj: 0.1, phase: combined, step: 0, combined, ...(kind === undefined ? {} : { kind }) })

describe("KindCredit.kindCredit", () => {
  it("splits the kind factor's advantage by decision and by position, over the groups whose outcomes differ", () => {
    // a rollout of 5 turns: the first two are earlier, the last three late (the answer among them)
    const long = rollout(1.5, [step("search", a(1)), step("call", a(0.5)), step("call", a(-1)), step("search", a(-0.5)), step("answer", a(-2))])
    const short = rollout(-0.5, [step("search", a(0.2)), step("answer", a(0))])
    const same = [rollout(0, [step("call", a(9))]), rollout(0, [step("call", a(9))])] // equal outcomes: not trained
    const r = KindCredit.kindCredit([[long, short], same], 0.02)
    expect(r.groups).toBe(2)
    expect(r.trained).toBe(1)
    // the short rollout's search is among its last three turns
    expect(r.cells["go on, earlier"]).toEqual({ decisions: 2, kind: 0.75, traj: 0.1, phase: 0.75, step: 0 })
    expect(r.cells["go on, last turns"].decisions).toBe(3)
    expect(r.cells["go on, last turns"].kind).toBeCloseTo((-1 - 0.5 + 0.2) / 3, 12)
    expect(r.cells.answer).toEqual({ decisions: 2, kind: -1, traj: 0.1, phase: -1, step: 0 })
  })

  it("reads the estimator's kind advantage when the step carries one, as the trainer does", () => {
    const g = [rollout(1.5, [step("call", a(-3, 0.4)), step("answer", a(0))]), rollout(0, [step("answer", a(0))])]
    const r = KindCredit.kindCredit([g], 0.02, 1)
    expect(r.cells["go on, earlier"]).toMatchObject({ decisions: 1, kind: 0.4, phase: -3 })
  })
})
