/**
 * Paired differences between two `npm start` runs on the same held-out rollouts: for every model both runs evaluated
 * (greedy ParaAct, `eval/<model>/seed<s>/ParaAct` in each run folder's `run.sqlite`) and every training seed both hold,
 * B's Pass@1 minus A's in points per task (each task's rollouts averaged; solved = `Evaluation.solved`), then the
 * mean over seeds and tasks with `Stats.pairedBootstrap` (seeds and tasks resampled, 95%). What a change of code or
 * settings did to the held-out numbers, paired as the pipeline pairs its own models — two runs' `table.md` rows are
 * not. Refuses runs whose rollouts are not the same: another task, another environment seed, another rollout count.
 * Run: `npx tsx bench/paired-runs.ts <run folder A> <run folder B> [--json]`.
 */
import { Effect } from "effect"
import { Argument, Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as RunStoreFolder from "./RunStoreFolder.ts"
import type { Trajectory } from "../src/domain/Trajectory.ts"
import * as Evaluation from "../src/math/Evaluation.ts"
import * as Stats from "../src/math/Stats.ts"
import * as Pipeline from "../src/training/Pipeline.ts"

const flags = await BenchFlags.parse("paired-runs", "paired held-out Pass@1 differences between two npm start runs", {
  folders: Argument.String("run-folder").pipe(Argument.withDescription("two run folders (each with run.sqlite): A then B"), Argument.variadic({ min: 2, max: 2 })),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print one JSON line instead of the table"), Flag.withDefault(false))
})

const models = ["Backbone", "SFT", "GRPO", "Ours", "ceiling"] as const

/** Per stage: task id → its rollouts (environment seed, solved), in stored order. */
type Stages = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<{ readonly seed: number; readonly solved: boolean }>>>

const stageOf = (model: string, seed: number) => `eval/${model}/seed${seed}/ParaAct`

/** A run folder's greedy evaluations, and its training seeds (the run config's `pipeline.seeds`). */
const readRun = (folder: string) =>
  Effect.scoped(Effect.gen(function*() {
    const { store, run, seeds } = yield* RunStoreFolder.open(folder)
    const stages = new Map<string, Map<string, Array<{ seed: number; solved: boolean }>>>()
    for (const model of models) {
      for (const seed of seeds) {
        const stage = stageOf(model, seed)
        const trajectories: ReadonlyArray<Trajectory> = yield* store.trajectories(run.id, stage)
        if (trajectories.length === 0) continue
        const byTask = new Map<string, Array<{ seed: number; solved: boolean }>>()
        for (const t of trajectories) {
          const list = byTask.get(t.taskId) ?? []
          list.push({ seed: t.seed, solved: Evaluation.solved(t.verdict) })
          byTask.set(t.taskId, list)
        }
        stages.set(stage, byTask)
      }
    }
    return { seeds, stages: stages as Stages }
  }))

const program = Effect.gen(function*() {
  const [folderA, folderB] = flags.folders as unknown as [string, string]
  const { seeds: seedsA, stages: a } = yield* readRun(folderA)
  const { stages: b } = yield* readRun(folderB)
  const rows: Array<{ readonly model: string; readonly seeds: ReadonlyArray<number>; readonly tasks: number; readonly a: number; readonly b: number; readonly paired: Stats.Interval }> = []
  for (const model of models) {
    const seeds: Array<number> = []
    const diffs: Array<ReadonlyArray<number>> = []
    let tasks: ReadonlyArray<string> | undefined
    const pass = { a: [] as Array<number>, b: [] as Array<number> }
    for (const seed of seedsA) {
      const stage = stageOf(model, seed)
      const sa = a.get(stage)
      const sb = b.get(stage)
      if (sa === undefined || sb === undefined) continue
      const ids = [...sa.keys()].sort()
      const idsB = [...sb.keys()].sort()
      if (ids.join("\u0000") !== idsB.join("\u0000")) return yield* Effect.fail(new Error(`${stage}: the runs evaluated other tasks (${ids.length} against ${idsB.length}): not paired`))
      if (tasks !== undefined && tasks.join("\u0000") !== ids.join("\u0000")) return yield* Effect.fail(new Error(`${stage}: another task set than seed ${seeds[0]}'s`))
      tasks = ids
      const rate = (rs: ReadonlyArray<{ readonly solved: boolean }>) => rs.filter((r) => r.solved).length / Math.max(1, rs.length)
      const row: Array<number> = []
      for (const id of ids) {
        const ra = sa.get(id) ?? []
        const rb = sb.get(id) ?? []
        const envA = ra.map((r) => r.seed).join()
        const envB = rb.map((r) => r.seed).join()
        if (envA !== envB) return yield* Effect.fail(new Error(`${stage} ${id}: rollouts under other environment seeds (${envA} against ${envB}): not paired`))
        pass.a.push(rate(ra))
        pass.b.push(rate(rb))
        row.push(100 * (rate(rb) - rate(ra)))
      }
      seeds.push(seed)
      diffs.push(row)
    }
    if (seeds.length === 0) continue
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length)
    rows.push({ model, seeds, tasks: tasks?.length ?? 0, a: 100 * mean(pass.a), b: 100 * mean(pass.b), paired: Stats.pairedBootstrap(diffs, { seed: 1 }) })
  }
  if (rows.length === 0) return yield* Effect.fail(new Error(`no model evaluated in both ${folderA} and ${folderB}`))
  if (flags.json) {
    console.log(JSON.stringify({ a: folderA, b: folderB, models: Object.fromEntries(rows.map((r) => [r.model, { seeds: r.seeds, tasks: r.tasks, a: r.a, b: r.b, ...r.paired }])) }))
    return
  }
  console.log(`A = ${folderA}\nB = ${folderB}\nheld-out Pass@1 (greedy ParaAct), B − A in points, mean [bootstrap 95% CI] over seeds and tasks:`)
  console.log("| model | seeds | tasks | A % | B % | B − A |\n|---|---|---|---|---|---|")
  for (const r of rows) console.log(`| ${r.model} | ${r.seeds.join(", ")} | ${r.tasks} | ${r.a.toFixed(1)} | ${r.b.toFixed(1)} | ${Pipeline.formatPaired(r.paired)} |`)
})

Effect.runPromise(program).catch((e: unknown) => {
  console.error(`bench/paired-runs: ${e instanceof Error ? e.message : String(e)}`)
  process.exit(1)
})
