/**
 * Where RL's advantage on the **kind decision** falls (go on with a search or a call, or answer), for each RL stage of
 * an `npm start` run folder (`rl/<estimator>/seed<s>` in its `run.sqlite`): `KindCredit.kindCredit` over its stored
 * groups at the default advantage tolerance — the mean advantage the trainer gave the kind factor, split by what was
 * decided and when (the rollout's last three turns or earlier), with A_traj, A_phase and A_step beside it
 * (docs/reward.md §11).
 * Run: `npx tsx bench/kind-credit.ts <run folder> [--json]`.
 */
import { Effect } from "effect"
import { Argument, Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunStoreFolder from "./RunStoreFolder.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as Reward from "../src/math/Reward.ts"
import * as KindCredit from "../src/training/KindCredit.ts"

const flags = await BenchFlags.parse("kind-credit", "the kind decision's RL advantage by decision and position, per RL stage of a run", {
  folder: Argument.String("run-folder").pipe(Argument.withDescription("a run folder of npm start (with run.sqlite)")),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print one JSON line instead of the table"), Flag.withDefault(false))
})

const program = Effect.scoped(Effect.gen(function*() {
  const folder = flags.folder
  const { file, store, run, seeds, estimators } = yield* RunStoreFolder.open(folder)
  const tolerance = Reward.defaultRewardConfig.advantage.tolerance
  const rows: Array<{ readonly estimator: string; readonly result: KindCredit.KindCredit }> = []
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
    if (groups.length > 0) rows.push({ estimator, result: KindCredit.kindCredit(groups, tolerance) })
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
    for (const k of KindCredit.cells) {
      const c = r.result.cells[k]
      console.log(`| ${r.estimator} | ${r.result.trained} of ${r.result.groups} | ${k} | ${c.decisions} | ${f(c.kind)} | ${f(c.traj)} | ${f(c.phase)} | ${f(c.step)} |`)
    }
  }
}))

Effect.runPromise(program).catch((e: unknown) => {
  console.error(`bench/kind-credit: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
