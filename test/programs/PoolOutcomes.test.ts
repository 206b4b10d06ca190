import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { spawnProgram } from "../support/Spawn.ts"

const dir = mkdtempSync(join(tmpdir(), "paraagent-pool-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const tasks = ["t1", "t2", "t3", "t4"]
/** An --outcomes file of bench/learning-validation.ts: per seed and model, each task's successes over 2 rollouts. */
const file = (name: string, successes: Record<string, Record<string, ReadonlyArray<ReadonlyArray<number>>>>) => {
  const path = join(dir, name)
  writeFileSync(path, JSON.stringify({ scorer: "mlp", label: "exact", tasks, successes }) + "\n")
  return path
}
const start = [[1, 1], [0, 0], [1, 0], [0, 0]] // 37.5%
const seed1 = file("s1.json", { "1": { DAgger: start, grpo: [[1, 1], [1, 1], [1, 0], [0, 0]] } }) // grpo 62.5%
const seed2 = file("s2.json", { "2": { DAgger: start, grpo: [[1, 1], [0, 0], [1, 0], [0, 0]] } }) // grpo 37.5%
const tagged = file("t1.json", { "1": { DAgger: start, grpo: [[0, 0], [0, 0], [0, 0], [0, 0]] } }) // grpo under other settings: 0%

describe("bench/pool-outcomes.ts", () => {
  it("pools seeds from several files and pairs models over (seed, task); a tagged file's models keep their own name", async () => {
    const r = await spawnProgram("bench/pool-outcomes.ts", [seed1, seed2, `${tagged}=cap`, "--pairs", "grpo-DAgger,grpo@cap-grpo", "--json"])
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as {
      models: ReadonlyArray<{ model: string; seeds: ReadonlyArray<string>; perSeed: ReadonlyArray<number>; mean: number }>
      paired: ReadonlyArray<{ pair: string; seeds: ReadonlyArray<string>; mean: number; lo: number; hi: number }>
    }
    expect(out.models.find((m) => m.model === "grpo")).toMatchObject({ seeds: ["1", "2"], perSeed: [62.5, 37.5], mean: 50 })
    expect(out.models.find((m) => m.model === "grpo@cap")).toMatchObject({ seeds: ["1"], perSeed: [0] })
    const [vsStart, vsCap] = out.paired
    expect(vsStart).toMatchObject({ pair: "grpo − DAgger", seeds: ["1", "2"], mean: 12.5 })
    expect(vsStart?.lo).toBeLessThanOrEqual(12.5)
    expect(vsStart?.hi).toBeGreaterThanOrEqual(12.5)
    expect(vsCap).toMatchObject({ pair: "grpo@cap − grpo", seeds: ["1"], mean: -62.5 })
  })

  it("with --tag-starts a tag names the file's DAgger start too: runs whose starts differ pool beside each other", async () => {
    const otherStart = file("f1.json", { "1": { DAgger: [[0, 0], [0, 0], [0, 0], [1, 1]], grpo: [[0, 0], [0, 0], [1, 1], [1, 1]] } })
    const refused = await spawnProgram("bench/pool-outcomes.ts", [seed1, `${otherStart}=features`, "--pairs", "grpo-DAgger"])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("seed 1 DAgger differs")
    const r = await spawnProgram("bench/pool-outcomes.ts", [seed1, `${otherStart}=features`, "--tag-starts", "--pairs", "DAgger@features-DAgger,grpo@features-DAgger@features", "--json"])
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout.trim().split("\n").at(-1) as string) as { paired: ReadonlyArray<{ pair: string; mean: number }> }
    expect(out.paired).toMatchObject([{ pair: "DAgger@features − DAgger", mean: -12.5 }, { pair: "grpo@features − DAgger@features", mean: 25 }])
  })

  it("refuses a model and seed whose outcomes differ between files, and a pair naming a model no file holds", async () => {
    const clash = await spawnProgram("bench/pool-outcomes.ts", [seed1, tagged, "--pairs", "grpo-DAgger"])
    expect(clash.code).not.toBe(0)
    expect(clash.stderr).toContain("seed 1 grpo differs")
    const unknown = await spawnProgram("bench/pool-outcomes.ts", [seed1, "--pairs", "ours-DAgger"])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain("no model ours")
  })
})
