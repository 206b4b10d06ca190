/**
 * Paired differences between two runs of `bench/learning-validation.ts --outcomes <file>` on the same validation tasks
 * and rollout seeds: per seed and model (SFT, DAgger), B's Pass@1 minus A's in points, with a bootstrap 95% interval
 * over tasks (10,000 resamples of the tasks, each task's rollouts kept together; seeded), and the tasks B passes more
 * often than A and the reverse. Refuses files whose task lists differ.
 * Run: `npx tsx bench/paired-outcomes.ts <a.json> <b.json>`.
 */
import * as fs from "node:fs"
import { Argument } from "effect/cli"
import * as BenchFlags from "./BenchFlags.ts"
import { rng } from "../src/math/Random.ts"

const flags = await BenchFlags.parse("paired-outcomes", "paired Pass@1 differences between two learning-validation runs", {
  files: Argument.String("file").pipe(Argument.withDescription("two --outcomes files: A then B"), Argument.variadic({ min: 2, max: 2 }))
})

interface Outcomes {
  readonly scorer: string
  readonly label: string
  readonly tasks: ReadonlyArray<string>
  readonly successes: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<ReadonlyArray<number>>>>>>
}

const read = (file: string): Outcomes => JSON.parse(fs.readFileSync(file, "utf8")) as Outcomes
const [fa, fb] = flags.files as unknown as [string, string]
const a = read(fa)
const b = read(fb)
if (a.tasks.length !== b.tasks.length || a.tasks.some((t, i) => t !== b.tasks[i])) {
  console.error(`bench/paired-outcomes: ${fa} and ${fb} hold different validation tasks: not paired`)
  process.exit(1)
}
const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length)
console.log(`A = ${fa} (scorer ${a.scorer}, labels ${a.label}); B = ${fb} (scorer ${b.scorer}, labels ${b.label}); ${a.tasks.length} tasks`)
for (const seed of Object.keys(a.successes).filter((s) => b.successes[s] !== undefined)) {
  for (const model of Object.keys(a.successes[seed] ?? {}).filter((m) => b.successes[seed]?.[m] !== undefined)) {
    const xa = (a.successes[seed] ?? {})[model] ?? []
    const xb = (b.successes[seed] ?? {})[model] ?? []
    const d = xa.map((r, i) => mean(xb[i] ?? []) - mean(r))
    const r = rng(20261203)
    const boots: Array<number> = []
    for (let k = 0; k < 10_000; k++) {
      let s = 0
      for (let i = 0; i < d.length; i++) s += d[Math.floor(r.next() * d.length)] as number
      boots.push(s / d.length)
    }
    boots.sort((x, y) => x - y)
    const pa = mean(xa.map(mean))
    const pb = mean(xb.map(mean))
    console.log(`seed ${seed} ${model.padEnd(7)} A ${(100 * pa).toFixed(1)}%  B ${(100 * pb).toFixed(1)}%  B − A ${(100 * mean(d)).toFixed(1)} points ` +
      `[${(100 * (boots[249] as number)).toFixed(1)}, ${(100 * (boots[9749] as number)).toFixed(1)}]; tasks B better ${d.filter((x) => x > 0).length}, A better ${d.filter((x) => x < 0).length}`)
  }
}
