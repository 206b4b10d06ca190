/**
 * Where RL's advantage on the **kind decision** falls (go on with a search or a call, or answer): for each RL stage of
 * an `npm start` run folder (`rl/<estimator>/seed<s>` in its `run.sqlite`), over the groups dynamic sampling trained
 * (`Trainer.outcomesDiffer` at the run's advantage tolerance), the mean advantage the trainer gave the kind factor
 * (`Trainer.factorAdvantages`: the estimator's kind advantage, else the step's combined one), split by what was
 * decided and when — the rollout's last three turns or earlier — with the level components (A_traj, A_phase,
 * A_step) beside it. A kind advantage that is positive early and negative late for the same decision prices *when* a
 * step is taken, not what it did: a policy trained on it learns to stop sooner (docs/reward.md §11).
 * Run: `npx tsx bench/kind-credit.ts <run folder> [--json]`.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Argument, Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunStoreSqlite from "../layers/storage/RunStoreSqlite.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as Reward from "../src/math/Reward.ts"
import * as Trainer from "../src/training/Trainer.ts"

const flags = await BenchFlags.parse("kind-credit", "the kind decision's RL advantage by decision and position, per RL stage of a run", {
  folder: Argument.String("run-folder").pipe(Argument.withDescription("a run folder of npm start (with run.sqlite)")),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print one JSON line instead of the table"), Flag.withDefault(false))
})

/** The last `late` turns of a rollout count as late. */
const late = 3

interface Cell {
  n: number
  kind: number
  traj: number
  phase: number
  step: number
}

const cellKeys = ["go on, earlier", "go on, last 3", "answer"] as const
type CellKey = (typeof cellKeys)[number]

/** Per trained group, per step with a decision: its cell and the kind factor's advantage. */
const kindCredit = (groups: ReadonlyArray<ReadonlyArray<Trajectory>>, tolerance: number) => {
  const cells = new Map<CellKey, Cell>(cellKeys.map((k) => [k, { n: 0, kind: 0, traj: 0, phase: 0, step: 0 }]))
  let trained = 0
  for (const group of groups) {
    if (!Trainer.outcomesDiffer(group, tolerance)) continue
    trained++
    for (const t of group) {
      const n = t.steps.length
      t.steps.forEach((s, i) => {
        const a = s.advantage
        if (a === undefined || s.decision === undefined) return
        const key: CellKey = s.decision.kind === "answer" ? "answer" : i >= n - late ? "go on, last 3" : "go on, earlier"
        const c = cells.get(key) as Cell
        c.n++
        c.kind += a.kind ?? a.combined
        c.traj += a.traj
        c.phase += a.phase
        c.step += a.step
      })
    }
  }
  const mean = (c: Cell) => ({ n: c.n, kind: c.kind / Math.max(1, c.n), traj: c.traj / Math.max(1, c.n), phase: c.phase / Math.max(1, c.n), step: c.step / Math.max(1, c.n) })
  return { groups: groups.length, trained, cells: Object.fromEntries(cellKeys.map((k) => [k, mean(cells.get(k) as Cell)])) as Record<CellKey, ReturnType<typeof mean>> }
}

const program = Effect.scoped(Effect.gen(function*() {
  const folder = flags.folder
  const file = path.join(folder, "run.sqlite")
  if (!fs.existsSync(file)) return yield* Effect.fail(new Error(`${file}: no run store (not a run folder of npm start)`))
  const store = yield* RunStoreSqlite.make(file)
  const runs = yield* store.listRuns()
  const run = runs[0]
  if (run === undefined || runs.length !== 1) return yield* Effect.fail(new Error(`${file}: ${runs.length} runs stored, expected one`))
  const config = run.config as { readonly pipeline?: { readonly seeds?: ReadonlyArray<number>; readonly estimators?: ReadonlyArray<string> } } | null
  const seeds = config?.pipeline?.seeds ?? []
  const estimators = config?.pipeline?.estimators ?? []
  const tolerance = Reward.defaultRewardConfig.advantage.tolerance
  const rows: Array<{ readonly estimator: string; readonly result: ReturnType<typeof kindCredit> }> = []
  for (const estimator of estimators) {
    const groups: Array<ReadonlyArray<Trajectory>> = []
    for (const seed of seeds) {
      const stage = `rl/${estimator}/seed${seed}`
      // groups in put order, each group's trajectories in its order: the flat list splits by the groups' sizes
      const trajectories: ReadonlyArray<Trajectory> = yield* store.trajectories(run.id, stage)
      let at = 0
      for (const g of yield* store.groups(run.id, stage)) {
        groups.push(trajectories.slice(at, at + g.size))
        at += g.size
      }
      if (at !== trajectories.length) return yield* Effect.fail(new Error(`${stage}: ${trajectories.length} trajectories but groups of ${at}`))
    }
    if (groups.length > 0) rows.push({ estimator, result: kindCredit(groups, tolerance) })
  }
  if (rows.length === 0) return yield* Effect.fail(new Error(`${file}: no RL stage stored (estimators ${estimators.join(", ") || "none"} × seeds ${seeds.join(", ") || "none"})`))
  if (flags.json) {
    console.log(JSON.stringify(Object.fromEntries(rows.map((r) => [r.estimator, r.result]))))
    return
  }
  console.log(`${folder}: the kind factor's mean advantage in the RL groups dynamic sampling trained (seeds ${seeds.join(", ")})`)
  console.log("| estimator | groups trained | decision | turns | kind factor | A_traj | A_phase | A_step |\n|---|---|---|---|---|---|---|---|")
  const f = (x: number) => (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(3)
  for (const r of rows) {
    for (const k of cellKeys) {
      const c = r.result.cells[k]
      console.log(`| ${r.estimator} | ${r.result.trained} of ${r.result.groups} | ${k} | ${c.n} | ${f(c.kind)} | ${f(c.traj)} | ${f(c.phase)} | ${f(c.step)} |`)
    }
  }
}))

Effect.runPromise(program).catch((e: unknown) => {
  console.error(`bench/kind-credit: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
