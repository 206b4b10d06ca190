import { describe, expect, it } from "@effect/vitest"
import * as Stats from "../../src/math/Stats.ts"
import { rng } from "../../src/math/Random.ts"
import * as PipelineResults from "../../src/training/PipelineResults.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { CellMetrics, LevelTable, Model, Summary } from "../../src/training/PipelineResults.ts"

/** Three seeds' per-task success rates of every ablation row on 12 tasks of two levels and four category sets. */
const tasks: ReadonlyArray<Pick<Task, "level" | "categories">> = Array.from({ length: 12 }, (_, t) => ({
  level: t % 2 === 0 ? "I1" as const : "I2" as const,
  // written unsorted: the category set is the same whatever order a task lists its categories in
  categories: t % 4 === 0 ? ["Finance", "Data"] : t % 4 === 1 ? ["Data", "Finance"] : t % 4 === 2 ? ["Sports"] : ["Media", "Sports"]
}))
const results = [1, 2, 3].map((seed) => {
  const r = rng(seed)
  const rates = () => tasks.map(() => Math.floor(r.next() * 3) / 2)
  const successes: Record<Model, ReadonlyArray<number>> = { Backbone: rates(), SFT: rates(), GRPO: rates(), Ours: rates() }
  return { successes }
})

describe("PipelineResults.pairedDifferences", () => {
  it("gives each pair's A − B in points over every (seed, task), per level, and by category set with whole sets resampled", () => {
    const got = PipelineResults.pairedDifferences(results, tasks, ["I1", "I2"])
    // written out here: the category sets {Data, Finance} (tasks 0, 1, 4, 5, …), {Sports}, {Media, Sports}
    const clusters = tasks.map((_, t) => (t % 4 === 0 || t % 4 === 1 ? 0 : t % 4 === 2 ? 1 : 2))
    for (const [a, b] of PipelineResults.pairs) {
      const key = `${a}-${b}`
      const diffs = results.map((r) => r.successes[a].map((x, t) => 100 * (x - (r.successes[b][t] as number))))
      expect(got.all[key]).toEqual(Stats.pairedBootstrap(diffs, { seed: 1 }))
      expect(got.byCategory[key]).toEqual(Stats.pairedBootstrap(diffs, { seed: 1, clusters }))
      expect(got.byCategory[key]?.mean).toBeCloseTo(got.all[key]?.mean as number, 12)
      const i1 = diffs.map((row) => row.filter((_, t) => tasks[t]?.level === "I1"))
      expect(got.levels["I1"]?.[key]).toEqual(Stats.pairedBootstrap(i1, { seed: 1 }))
    }
    // four tasks a set against single tasks: the category interval is another draw, and here a wider one
    const width = (d: PipelineResults.PairedDifference | undefined) => (d?.hi ?? NaN) - (d?.lo ?? NaN)
    const wider = PipelineResults.pairs.filter(([a, b]) => width(got.byCategory[`${a}-${b}`]) > width(got.all[`${a}-${b}`])).length
    expect(wider).toBeGreaterThan(0)
  })

  it("a category set per task is the task bootstrap draw for draw", () => {
    const own = tasks.map((t, i) => ({ ...t, categories: [`c${i}`] }))
    const got = PipelineResults.pairedDifferences(results, own, ["I1", "I2"])
    expect(got.byCategory).toEqual(got.all)
  })
})

describe("PipelineResults.renderAblation", () => {
  const cell = (x: number): Readonly<Record<keyof CellMetrics, { mean: number; sd: number }>> => ({
    pass1: { mean: x, sd: 0 }, path: { mean: 0, sd: 0 }, pathEquivalent: { mean: 0, sd: 0 }, rounds: { mean: 5, sd: 0 }, calls: { mean: 1, sd: 0 },
    searches: { mean: 1, sd: 0 }, decisions: { mean: 2, sd: 0 }
  })
  const table = (x: number): LevelTable => ({ Avg: cell(x) })
  const paired = PipelineResults.pairedDifferences(results, tasks, ["I1", "I2"])
  const summary = (byCategory: boolean): Summary => ({
    ablation: Object.fromEntries(PipelineResults.models.map((m, i) => [m, table(0.1 * i)])) as Summary["ablation"],
    paradigms: {},
    sampled: {} as Summary["sampled"],
    paired: paired.all,
    pairedLevels: paired.levels,
    ...(byCategory ? { pairedByCategory: paired.byCategory } : {}),
    training: { demonstrations: 0, kept: 0, sft: [], rl: [] },
    run: { seeds: [1, 2, 3], testTasks: 12, trainTasks: 0, library: "test", evalRollouts: 2, evalSampled: 1, evalAnswerThreshold: 0.15, evalAnswerCover: 0 }
  })

  it("adds the by-category interval as the paired table's last column, and leaves a run without it as before", () => {
    const withIt = PipelineResults.renderAblation(summary(true)).split("\n")
    const without = PipelineResults.renderAblation(summary(false)).split("\n")
    const header = withIt.findIndex((l) => l.startsWith("| Pair |"))
    expect(withIt[header]).toBe("| Pair | All | I1 | I2 | All, by category |")
    expect(without[header]).toBe("| Pair | All | I1 | I2 |")
    for (const [a, b] of PipelineResults.pairs) {
      const key = `${a}-${b}`
      const row = withIt.find((l) => l.startsWith(`| ${key} |`)) as string
      expect(row.endsWith(` ${PipelineResults.formatPaired(paired.byCategory[key] as PipelineResults.PairedDifference)} |`)).toBe(true)
      expect(row.startsWith(without.find((l) => l.startsWith(`| ${key} |`)) as string)).toBe(true)
    }
    expect(withIt.filter((_, i) => i !== header && i !== header + 1 && !withIt[i]!.startsWith("| ") && !withIt[i]!.startsWith("Paired"))).toEqual(
      without.filter((_, i) => i !== header && i !== header + 1 && !without[i]!.startsWith("| ") && !without[i]!.startsWith("Paired"))
    )
  })
})
