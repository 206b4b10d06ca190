/**
 * Where RL's advantage on the **kind decision** falls **[ours]**: over the groups dynamic sampling trains (their
 * outcomes differ, `Trainer.outcomesDiffer`), the mean advantage the trainer gives the kind factor — the estimator's
 * kind advantage when it gives one, else the step's combined advantage, as `Trainer.factorAdvantages` does — split by
 * what was decided (go on with a search or a call, or answer) and when (among the rollout's last `late` turns, or
 * earlier), with the level components beside it. A kind advantage that is positive early and negative late for the
 * same decision prices *when* a step is taken, not what it did: a policy trained on it learns to stop sooner
 * (docs/reward.md §11). Pure: read by `bench/kind-credit.ts` over a run's stored RL groups.
 */
import type { Trajectory } from "../domain/Trajectory.ts"
import { outcomesDiffer } from "./Trainer.ts"

/** The three cells a decision falls in. */
export const cells = ["go on, earlier", "go on, last turns", "answer"] as const
export type Cell = (typeof cells)[number]

/** Mean advantages of one cell's decisions. */
export interface CellMeans {
  readonly decisions: number
  readonly kind: number
  readonly traj: number
  readonly phase: number
  readonly step: number
}

/** What {@link kindCredit} found. */
export interface KindCredit {
  readonly groups: number
  readonly trained: number
  readonly cells: Readonly<Record<Cell, CellMeans>>
}

/** The kind factor's mean advantage by decision and position, over the groups whose outcomes differ by `tolerance`. */
export const kindCredit = (groups: ReadonlyArray<ReadonlyArray<Trajectory>>, tolerance: number, late = 3): KindCredit => {
  const zero = (): CellMeans => ({ decisions: 0, kind: 0, traj: 0, phase: 0, step: 0 })
  const sums: Record<Cell, CellMeans> = { "go on, earlier": zero(), "go on, last turns": zero(), answer: zero() }
  let trained = 0
  for (const group of groups) {
    if (!outcomesDiffer(group, tolerance)) continue
    trained++
    for (const t of group) {
      t.steps.forEach((s, i) => {
        const a = s.advantage
        if (a === undefined || s.decision === undefined) return
        const cell: Cell = s.decision.kind === "answer" ? "answer" : i >= t.steps.length - late ? "go on, last turns" : "go on, earlier"
        const c = sums[cell]
        sums[cell] = { decisions: c.decisions + 1, kind: c.kind + (a.kind ?? a.combined), traj: c.traj + a.traj, phase: c.phase + a.phase, step: c.step + a.step }
      })
    }
  }
  const mean = (c: CellMeans): CellMeans => {
    const d = Math.max(1, c.decisions)
    return { decisions: c.decisions, kind: c.kind / d, traj: c.traj / d, phase: c.phase / d, step: c.step / d }
  }
  return { groups: groups.length, trained, cells: { "go on, earlier": mean(sums["go on, earlier"]), "go on, last turns": mean(sums["go on, last turns"]), answer: mean(sums.answer) } }
}
