import { describe, expect, it } from "@effect/vitest"
import type { Task } from "../../src/domain/Task.ts"
import * as Evaluation from "../../src/math/Evaluation.ts"
import { makeTrajectory } from "./fixtures.ts"

const outcome = (success: boolean, path = 1, rounds = 2, calls = 3, searches = 1, truncated = false, unjudged = false): Evaluation.Outcome => ({
  success,
  path,
  pathEquivalent: path,
  rounds,
  calls,
  searches,
  truncated,
  unjudged,
  machineryFaults: 0
})

describe("Evaluation.aggregate", () => {
  it("averages each task's rollouts first, pass@k unbiased per task, a single rollout's pass@2 equal to its pass@1", () => {
    const cell = Evaluation.aggregate([
      [outcome(true, 1, 2, 4, 2), outcome(false, 0.5, 4, 2, 0), outcome(false, 0, 2, 2, 2), outcome(false, 0.5, 4, 4, 0)],
      [outcome(true, 1, 3, 3, 1)],
      []
    ])
    expect(cell.pass1).toBeCloseTo((0.25 + 1) / 2, 12)
    // task 1: 1 − C(3,2)/C(4,2) = 0.5; task 2: one rollout, pass@2 = pass@1 = 1
    expect(cell.pass2).toBeCloseTo((0.5 + 1) / 2, 12)
    expect(cell.path).toBeCloseTo((0.5 + 1) / 2, 12)
    expect(cell.rounds).toBeCloseTo((3 + 3) / 2, 12)
    expect(cell.calls).toBeCloseTo((3 + 3) / 2, 12)
    expect(cell.searches).toBeCloseTo((1 + 1) / 2, 12)
    expect(cell.tasks).toBe(2)
    expect(cell.rollouts).toBe(5)
  })

  it("reports the truncation rate over rollouts and counts unjudged rollouts", () => {
    const cell = Evaluation.aggregate([
      [outcome(true), outcome(false, 0, 12, 3, 1, true)],
      [outcome(false, 0, 12, 3, 1, true, true), outcome(false, 0, 2, 3, 1, false, true)]
    ])
    expect(cell.truncation).toBe(0.5)
    expect(cell.unjudged).toBe(2)
    expect(cell.machineryFaults).toBe(0)
  })
})

describe("Evaluation.solved: success means evidence (issue 24)", () => {
  const grades = ["YES", "PARTIAL", "NO"] as const
  it("only Quality, Faithfulness and Utility all YES is solved: a complete, faithful answer the calls did not evidence (110) is not", () => {
    for (const quality of grades) {
      for (const faithfulness of grades) {
        for (const utility of grades) {
          const want = quality === "YES" && faithfulness === "YES" && utility === "YES"
          expect(Evaluation.solved({ quality, faithfulness, utility }), `${quality} ${faithfulness} ${utility}`).toBe(want)
        }
      }
    }
    expect(Evaluation.solved(undefined)).toBe(false)
  })

  it("outcomeOf counts a rollout as a success by the same rule", () => {
    const trajectory = (utility: "YES" | "NO") => ({
      id: "t", taskId: "x", paradigm: "ParaAct", policy: "p", seed: 0, steps: [], phases: [], stop: "answer", startedAt: 0, durationMs: 1,
      verdict: { quality: "YES", faithfulness: "YES", utility, judge: "rule" }
    }) as unknown as Parameters<typeof Evaluation.outcomeOf>[1]
    const task = { gold: [] } as unknown as Parameters<typeof Evaluation.outcomeOf>[0]
    expect(Evaluation.outcomeOf(task, trajectory("YES")).success).toBe(true)
    expect(Evaluation.outcomeOf(task, trajectory("NO")).success).toBe(false)
  })
})

describe("Evaluation.outcomeOf: Path with an equivalent provider", () => {
  const task = { gold: [{ tool: "a" }, { tool: "b" }, { tool: "a" }], facts: [] } as unknown as Task
  // "a2" does a's operation on a's entity type at another provider; "b" fails; "x" is unrelated
  const trajectory = makeTrajectory([{ calls: [{ id: "c1", tool: "a2" }, { id: "c2", tool: "b", result: "not_found" }, { id: "c3", tool: "x" }] }])
  const equivalent = (gold: string, tool: string) => gold === tool || (gold === "a" && tool === "a2")

  it("counts a distinct gold tool as reached when an equivalent was called successfully; the exact Path does not", () => {
    const exact = Evaluation.outcomeOf(task, trajectory)
    expect([exact.path, exact.pathEquivalent]).toEqual([0, 0])
    const withEquivalents = Evaluation.outcomeOf(task, trajectory, { equivalent })
    expect(withEquivalents.path).toBe(0)
    expect(withEquivalents.pathEquivalent).toBe(0.5)
  })

  it("is never below the exact Path", () => {
    const direct = makeTrajectory([{ calls: [{ id: "c1", tool: "a" }, { id: "c2", tool: "b" }] }])
    const o = Evaluation.outcomeOf(task, direct, { equivalent: () => false })
    expect([o.path, o.pathEquivalent]).toEqual([1, 1])
  })
})
