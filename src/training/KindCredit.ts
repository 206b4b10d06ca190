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
  const sums = new Map<Cell, { n: number; kind: number; traj: number; phase: number; step: number }>(
    cells.map((c) => [c, { n: 0, kind: 0, traj: 0, phase: 0, step: 0 }])
  )
  let trained = 0
  for (const group of groups) {
    if (!outcomesDiffer(group, tolerance)) continue
    trained++
    for (const t of group) {
      const n = t.steps.length
      t.steps.forEach((s, i) => {
        const a = s.advantage
        if (a === undefined || s.decision === undefined) return
        const cell: Cell = s.decision.kind === "answer" ? "answer" : i >= n - late ? "go on, last turns" : "go on, earlier"
        const c = sums.get(cell) as { n: number; kind: number; traj: number; phase: number; step: number }
        c.n++
        c.kind += a.kind ?? a.combined
        c.traj += a.traj
        c.phase += a.phase
        c.step += a.step
      })
    }
  }
  const means = (cell: Cell): CellMeans => {
    const c = sums.get(cell) as { n: number; kind: number; traj: number; phase: number; step: number }
    const d = Math.max(1, c.n)
    return { decisions: c.n, kind: c.kind / d, traj: c.traj / d, phase: c.phase / d, step: c.step / d }
  }
  return { groups: groups.length, trained, cells: { "go on, earlier": means("go on, earlier"), "go on, last turns": means("go on, last turns"), answer: means("answer") } }
}
