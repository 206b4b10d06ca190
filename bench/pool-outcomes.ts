/**
 * Pools `bench/learning-validation.ts --outcomes <file>` files — runs of other seeds, or of other estimators on the same
 * seeds — over the same validation tasks: per model, its greedy Pass@1 per seed and the mean; then for each requested
 * pair B − A the paired difference over every (seed, task) both models hold, with the bootstrap 95% interval
 * learning-validation prints (`Stats.pairedBootstrap`, seeds and tasks resampled, seeded). A model named in two files
 * for the same seed must have the same per-task outcomes there (a deterministic run repeated: the DAgger start of every
 * run of one seed); anything else is refused. `DAgger` is the start RL begins from. `<file>=<tag>` names that file's
 * RL models `<model>@<tag>` (a run of the same estimator under other settings, e.g. `--lambda-phase 0`); with
 * `--tag-starts` a tag names its SFT and DAgger models too (runs whose starts differ: another feature schema).
 * `--cluster category` resamples the tasks by their categories (the files' `clusters`, written by learning-validation
 * since 2026-12-05 16:20): tasks of one category, whose providers and entity types they share, pass or fail together,
 * and the interval then counts them as one draw (`Stats.pairedBootstrap`'s `clusters`).
 * Run: `npx tsx bench/pool-outcomes.ts <file>[=<tag>]... --pairs grpo-DAgger,paraagent_attributed-grpo [--tag-starts] [--cluster none|category] [--json]`.
 */
import * as fs from "node:fs"
import { Argument, Flag } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import * as Stats from "../src/math/Stats.ts"
import * as Pipeline from "../src/training/Pipeline.ts"

const flags = await BenchFlags.parse("pool-outcomes", "pooled paired Pass@1 differences over learning-validation --outcomes files", {
  files: Argument.String("file").pipe(Argument.withDescription("--outcomes files of bench/learning-validation.ts"), Argument.variadic({ min: 1 })),
  pairs: Flag.String("pairs").pipe(Flag.withDescription("comma-separated B-A model pairs (B − A), e.g. grpo-DAgger")),
  tagStarts: Flag.Boolean("tag-starts").pipe(Flag.withDescription("a file's tag also names its SFT and DAgger models (runs whose starts differ)"), Flag.withDefault(false)),
  cluster: Flag.Literals("cluster", ["none", "category"]).pipe(Flag.withDescription("resample single tasks (none) or whole categories of tasks (category; the files must hold learning-validation's clusters)"), Flag.withDefault("none")),
  json: Flag.Boolean("json").pipe(Flag.withDescription("print one JSON line instead of the table"), Flag.withDefault(false))
})

interface Outcomes {
  readonly tasks: ReadonlyArray<string>
  /** Each task's categories, joined (learning-validation since 2026-12-05 16:20). */
  readonly clusters?: ReadonlyArray<string>
  readonly successes: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<ReadonlyArray<number>>>>>>
}

const fail = (message: string): never => {
  console.error(`bench/pool-outcomes: ${message}`)
  process.exit(1)
}

const read = (file: string): Outcomes => {
  let parsed: unknown
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"))
  } catch (e) {
    return fail(`${file}: ${e instanceof Error ? e.message : String(e)}`)
  }
  const o = parsed as Partial<Outcomes> | null
  if (o === null || !Array.isArray(o.tasks) || typeof o.successes !== "object" || o.successes === null) return fail(`${file}: not an --outcomes file of bench/learning-validation.ts`)
  return o as Outcomes
}

const files = flags.files as unknown as ReadonlyArray<string>
const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length)
let tasks: ReadonlyArray<string> | undefined
let clusterKeys: ReadonlyArray<string> | undefined
/** model → seed → each task's success rate over its rollouts */
const rates = new Map<string, Map<string, ReadonlyArray<number>>>()
for (const argument of files) {
  const [file, tag, ...extra] = argument.split("=") as [string, ...Array<string>]
  if (extra.length > 0 || tag === "") fail(`${argument}: not <file> or <file>=<tag>`)
  const o = read(file)
  if (tasks !== undefined && (tasks.length !== o.tasks.length || tasks.some((t, i) => t !== o.tasks[i]))) fail(`${file} holds other validation tasks than ${files[0]}: not paired`)
  tasks = o.tasks
  if (flags.cluster === "category") {
    if (!Array.isArray(o.clusters) || o.clusters.length !== o.tasks.length) fail(`${file}: --cluster category needs the file's clusters (one per task), which learning-validation writes since 2026-12-05 16:20`)
    if (clusterKeys !== undefined && clusterKeys.some((k, i) => k !== o.clusters?.[i])) fail(`${file}: its tasks' clusters differ from ${files[0]}'s`)
    clusterKeys = o.clusters
  }
  for (const [seed, models] of Object.entries(o.successes)) {
    for (const [name, rows] of Object.entries(models)) {
      const model = tag === undefined || (!flags.tagStarts && (name === "SFT" || name === "DAgger")) ? name : `${name}@${tag}`
      if (rows.length !== o.tasks.length) fail(`${file}: seed ${seed} ${model} has ${rows.length} tasks, the file ${o.tasks.length}`)
      const r = rows.map(mean)
      const bySeed = rates.get(model) ?? new Map<string, ReadonlyArray<number>>()
      const known = bySeed.get(seed)
      if (known !== undefined && known.some((x, i) => x !== r[i])) fail(`${file}: seed ${seed} ${model} differs from the same model and seed in an earlier file`)
      bySeed.set(seed, r)
      rates.set(model, bySeed)
    }
  }
}

const pairs = flags.pairs.split(",").filter((p) => p !== "").map((p) => {
  const [b, a, ...rest] = p.split("-") as [string | undefined, string | undefined, ...Array<string>]
  if (b === undefined || a === undefined || rest.length > 0 || b === "" || a === "") return fail(`--pairs: "${p}" is not B-A`)
  for (const m of [b, a]) if (!rates.has(m)) fail(`--pairs: no model ${m} in the files (models: ${[...rates.keys()].join(", ")})`)
  return { b, a }
})
if (pairs.length === 0) fail("--pairs: no pair given")

const seedsOf = (model: string) => [...(rates.get(model)?.keys() ?? [])].sort((x, y) => Number(x) - Number(y))
const models = [...rates.keys()].map((model) => {
  const seeds = seedsOf(model)
  const perSeed = seeds.map((s) => 100 * mean(rates.get(model)?.get(s) ?? []))
  return { model, seeds, perSeed, mean: mean(perSeed) }
})
/** Each task's category set as a cluster index (in order of first appearance), when --cluster category. */
const clusters = clusterKeys === undefined ? undefined : Stats.clusterIndex(clusterKeys)
const clusterCount = new Set(clusterKeys ?? []).size
const paired = pairs.map(({ b, a }) => {
  const seeds = seedsOf(b).filter((s) => rates.get(a)?.has(s))
  if (seeds.length === 0) return fail(`--pairs: ${b} and ${a} share no seed`)
  const diffs = seeds.map((s) => {
    const xb = rates.get(b)?.get(s) ?? []
    const xa = rates.get(a)?.get(s) ?? []
    return xb.map((x, i) => 100 * (x - (xa[i] ?? NaN)))
  })
  return { pair: `${b} − ${a}`, seeds, ...Stats.pairedBootstrap(diffs, { seed: 1, ...(clusters === undefined ? {} : { clusters }) }) }
})

if (flags.json) {
  console.log(JSON.stringify({ tasks: tasks?.length ?? 0, clusters: clusterCount, models, paired }))
} else {
  console.log(`${files.length} files, ${tasks?.length ?? 0} validation tasks; greedy Pass@1 per seed, %:`)
  for (const m of models) console.log(`  ${m.model.padEnd(24)} ${m.seeds.map((s, i) => `seed ${s} ${(m.perSeed[i] ?? NaN).toFixed(1)}`).join(", ")}; mean ${m.mean.toFixed(1)}`)
  console.log(`paired differences, points of Pass@1, mean [bootstrap 95% CI] over (seed, ${clusters === undefined ? "task" : `category: ${clusterCount} category sets`}):`)
  for (const p of paired) console.log(`  ${p.pair.padEnd(44)} ${Pipeline.formatPaired(p)} (seeds ${p.seeds.join(", ")})`)
}
