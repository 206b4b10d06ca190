import { describe, expect, it } from "vitest"
import type { Step } from "../../src/domain/Trajectory.ts"
import type * as TurnDistribution from "../../src/math/TurnDistribution.ts"
import * as Trainer from "../../src/training/Trainer.ts"

/** A call turn's factors: the kind, the chosen call (first chosen), an unchosen candidate, the plan bit. */
const factors: ReadonlyArray<TurnDistribution.Factor> = [
  { logprob: -0.1, target: { _tag: "kind" } },
  { logprob: -0.2, target: { _tag: "candidate", row: 3, chosen: true, position: 0 } },
  { logprob: -0.3, target: { _tag: "candidate", row: 4, chosen: false, position: -1 } },
  { logprob: -0.4, target: { _tag: "plan" } }
]

const callStep = (advantage: Step["advantage"]) =>
  ({
    advantage,
    decision: { version: 4, kind: "call", kindIndex: 1, selected: [3], plan: true, rows: 6, digest: "00000000" },
    turn: { calls: [{}], searches: [] }
  }) as unknown as Pick<Step, "advantage" | "decision" | "turn">

describe("Trainer.factorAdvantages", () => {
  it("the kind factor takes the estimator's kind advantage when it gives one; the chosen call its action's, the plan bit the plan's, the rest the step's", () => {
    const advantage = { traj: 0.5, phase: -1, step: -1, combined: 0.1, actions: [0.7], plan: 0.3, kind: 0.5 }
    expect(Array.from(Trainer.factorAdvantages(factors, callStep(advantage)))).toEqual([0.5, 0.7, 0.1, 0.3])
  })

  it("without a kind advantage the kind factor takes the step's combined advantage", () => {
    const advantage = { traj: 0.5, phase: -1, step: -1, combined: 0.1, actions: [0.7], plan: 0.3 }
    expect(Array.from(Trainer.factorAdvantages(factors, callStep(advantage)))).toEqual([0.1, 0.7, 0.1, 0.3])
  })

  it("a group whose only advantage is a kind advantage carries signal (dynamic sampling's `signal`)", () => {
    const trajectory = (kind: number) => ({ steps: [{ advantage: { traj: 0, phase: 0, step: 0, combined: 0, kind } }] }) as never
    expect(Trainer.carriesSignal([trajectory(0.2)])).toBe(true)
    expect(Trainer.carriesSignal([trajectory(0)])).toBe(false)
  })
})
