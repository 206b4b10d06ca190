/**
 * `npm start` run twice gives byte-identical tables; killed with SIGKILL while RL is under way and `--resume`d, it ends
 * exactly where an uninterrupted run ends: table.md bytes, summary, run store (no rollout lost or stored twice, weights
 * bit-exact). A finished run resumes without training; a folder without a store, or an existing run as --out, is refused.
 */
import { afterAll, assert, beforeAll, describe, expect, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { createHash } from "node:crypto"
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { spawnKilled, spawnProgram } from "../support/Spawn.ts"

const main = "programs/main.ts"
/** The tiny pipeline: 2 seeds, 40 training tasks, no DAgger (its cost overran the 120 s per-program net on a loaded machine; test/training/Dagger.test.ts covers it), 3 RL iterations of 4 tasks × G=2, 18 held-out tasks (~20 s alone). */
const tiny = ["--seeds", "1,2", "--train-tasks", "40", "--tasks", "6", "--rl-iterations", "3", "--rl-tasks", "4", "--group", "2", "--sft-epochs", "3", "--dagger-rounds", "0", "--world-size", "5000", "--workers", "1"]

const root = mkdtempSync(join(tmpdir(), "paraagent-resume-"))
const dirA = join(root, "a")
const dirB = join(root, "b")
const dirC = join(root, "c")
const storeOf = (dir: string) => join(dir, "run.sqlite")

/** Wall-clock fields: they differ between any two runs and feed no reported number. */
const timingKeys = new Set(["startMs", "endMs", "policyMs", "durationMs", "startedAt"])
const withoutTimings = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutTimings)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([k]) => !timingKeys.has(k)).map(([k, v]) => [k, withoutTimings(v)]))
    : value

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex").slice(0, 16)

/** What a run store holds, read-only and in a canonical order (put order depends on which concurrent group ends first). */
interface StoreView {
  readonly integrity: string
  /** Stage → trajectories stored. */
  readonly trajectories: Readonly<Record<string, number>>
  /** `stage@iteration` → groups stored. */
  readonly groups: Readonly<Record<string, number>>
  /** Stage → `key#position body` of every trajectory, timings dropped. */
  readonly bodies: Readonly<Record<string, ReadonlyArray<string>>>
  /** `stage@iteration params-hash optimiser-hashes state`. */
  readonly checkpoints: ReadonlyArray<string>
  readonly metrics: ReadonlyArray<string>
  /** Finished stages with their results (timings dropped). */
  readonly finished: ReadonlyArray<string>
}

const viewStore = (file: string): StoreView => {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const rows = <T>(sql: string) => db.prepare(sql).all() as Array<T>
    const json = (text: string) => JSON.stringify(withoutTimings(JSON.parse(text)))
    const trajectories: Record<string, number> = {}
    const bodies: Record<string, Array<string>> = {}
    for (const r of rows<{ stage: string; key: string; position: number; body: string }>(
      "SELECT g.stage, g.key, t.position, t.body FROM trajectories t JOIN trajectory_groups g ON t.group_seq = g.seq ORDER BY g.stage, g.key, t.position"
    )) {
      trajectories[r.stage] = (trajectories[r.stage] ?? 0) + 1
      ;(bodies[r.stage] ??= []).push(`${r.key}#${r.position} ${json(r.body)}`)
    }
    const groups = Object.fromEntries(
      rows<{ at: string; n: number }>("SELECT stage || '@' || iteration AS at, count(*) AS n FROM trajectory_groups GROUP BY stage, iteration ORDER BY stage, iteration")
        .map((r) => [r.at, r.n])
    )
    const slots = rows<{ at: string; data: Uint8Array }>("SELECT stage || '@' || iteration AS at, data FROM checkpoint_optimiser ORDER BY stage, iteration, slot")
    const checkpoints = rows<{ at: string; params: Uint8Array; state: string }>(
      "SELECT stage || '@' || iteration AS at, params, state FROM checkpoints ORDER BY stage, iteration"
    ).map((r) => `${r.at} ${sha(r.params)} [${slots.filter((s) => s.at === r.at).map((s) => sha(s.data)).join(",")}] ${r.state}`)
    return {
      integrity: String(db.pragma("integrity_check", { simple: true })),
      trajectories,
      groups,
      bodies,
      checkpoints,
      metrics: rows<{ at: string; body: string }>("SELECT stage || '@' || iteration AS at, body FROM metrics ORDER BY stage, iteration").map((r) => `${r.at} ${r.body}`),
      finished: rows<{ stage: string; result: string }>("SELECT stage, result FROM stages ORDER BY stage").map((r) => `${r.stage} ${json(r.result)}`)
    }
  } finally {
    db.close()
  }
}

interface SummaryFile {
  readonly ablation: unknown
  readonly paradigms: unknown
  readonly sampled: unknown
  readonly paired: unknown
  readonly pairedLevels: unknown
  readonly pairedByCategory: unknown
  readonly training: { readonly demonstrations: number; readonly kept: number; readonly sft: unknown; readonly rl: unknown }
  readonly run: unknown
}

/** A run folder's outputs and store at one moment. */
interface Snapshot {
  readonly dir: string
  readonly table: Buffer
  readonly summary: SummaryFile
  readonly store: StoreView
  readonly files: ReadonlyArray<string>
}

const snapshot = (dir: string): Snapshot => ({
  dir,
  table: readFileSync(join(dir, "table.md")),
  summary: JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")) as SummaryFile,
  store: viewStore(storeOf(dir)),
  files: readdirSync(dir).sort()
})

const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "")
/** Progress lines of finished SFT runs (one per seed trained in this process). */
const sftRuns = (stderr: string) => lines(stderr).filter((l) => /^sft epochs \[#+\] 3\/3 /.test(l)).length

/** The same run, compared on everything but wall-clock time. */
const expectSameRun = (got: Snapshot, want: Snapshot) => {
  expect(got.table.equals(want.table), `${got.dir}/table.md differs from ${want.dir}/table.md`).toBe(true)
  expect(got.summary.ablation).toStrictEqual(want.summary.ablation)
  expect(got.summary.paradigms).toStrictEqual(want.summary.paradigms)
  expect(got.summary.sampled).toStrictEqual(want.summary.sampled)
  expect(got.summary.paired).toStrictEqual(want.summary.paired)
  expect(got.summary.pairedLevels).toStrictEqual(want.summary.pairedLevels)
  expect(got.summary.pairedByCategory).toStrictEqual(want.summary.pairedByCategory)
  expect(got.summary.training.rl).toStrictEqual(want.summary.training.rl)
  expect(withoutTimings(got.summary.training)).toStrictEqual(withoutTimings(want.summary.training))
  expect(got.summary.run).toStrictEqual(want.summary.run)
  expect(got.store.integrity).toBe("ok")
  expect(got.store.trajectories).toStrictEqual(want.store.trajectories)
  expect(got.store.groups).toStrictEqual(want.store.groups)
  expect(got.store.checkpoints).toStrictEqual(want.store.checkpoints)
  expect(got.store.metrics).toStrictEqual(want.store.metrics)
  expect(got.store.finished).toStrictEqual(want.store.finished)
  expect(got.store.bodies).toStrictEqual(want.store.bodies)
}

const killLine = /^rl paraagent_attributed_stop seed 1 \[[#-]+\] 1\/3 /

type Ran = Awaited<ReturnType<typeof spawnProgram>>

/** Everything the tests look at, run as a graph of processes (spawnProgram keeps 3 at a time). */
interface Runs {
  readonly a: Ran
  readonly c: Ran
  readonly killed: Awaited<ReturnType<typeof spawnKilled>>
  readonly atKill: StoreView
  readonly resumed: Ran
  readonly afterResume: Snapshot
  readonly again: Ran
  readonly afterAgain: Snapshot
  /** A copy of A with SFT's stage mark of seed 2 deleted (a crash between the checkpoint and the mark), resumed. */
  readonly sftUnmarked: Ran
  readonly empty: string
  readonly aBefore: Snapshot
  readonly noStore: Ran
  readonly existing: Ran
}

const runAll = async (): Promise<Runs> => {
  const dirD = join(root, "d")
  const empty = join(root, "empty")
  mkdirSync(empty)
  const a = spawnProgram(main, [...tiny, "--out", dirA])
  // C: the same configuration with seed 2 on a worker thread (the default mode): the same bytes as A's one thread
  const c = spawnProgram(main, [...tiny.slice(0, -2), "--workers", "2", "--out", dirC])
  // B: killed once RL of seed 1's second estimator has checkpointed its first iteration, resumed, resumed again
  const b = spawnKilled(main, [...tiny, "--out", dirB], (l) => killLine.test(l)).then(async (killed) => {
    const atKill = viewStore(storeOf(dirB))
    const resumed = await spawnProgram(main, ["--resume", dirB, "--workers", "1"])
    const afterResume = snapshot(dirB)
    const again = await spawnProgram(main, ["--resume", dirB, "--workers", "1"])
    return { killed, atKill, resumed, afterResume, again, afterAgain: snapshot(dirB) }
  })
  const afterA = a.then(async (ranA) => {
    const aBefore = snapshot(dirA)
    cpSync(dirA, dirD, { recursive: true })
    const db = new Database(storeOf(dirD), { fileMustExist: true })
    db.prepare("DELETE FROM stages WHERE stage = 'sft/seed2'").run()
    db.close()
    const [sftUnmarked, noStore, existing] = await Promise.all([
      spawnProgram(main, ["--resume", dirD, "--workers", "1"]),
      spawnProgram(main, ["--resume", empty]),
      spawnProgram(main, [...tiny, "--out", dirA])
    ])
    return { a: ranA, aBefore, sftUnmarked, noStore, existing }
  })
  const [ranC, fromB, fromA] = await Promise.all([c, b, afterA])
  return { c: ranC, ...fromB, ...fromA, empty }
}

let runs: Runs

describe("the pipeline: same seed, same bytes; killed during RL and resumed, the same run", () => {
  // ~100 s of CPU over 8 processes: ~60 s of wall time on 2 idle cores, several times that on a crowded machine — every
  // step waits on a process's exit or a line of its stderr, never on the clock (test/support/Bounds.ts)
  beforeAll(async () => {
    runs = await runAll()
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("two uninterrupted runs of one configuration (one on a single thread, one with a worker): byte-identical table.md, equal summaries and stores", () => {
    expect(runs.a.code, runs.a.stderr).toBe(0)
    expect(runs.c.code, runs.c.stderr).toBe(0)
    // Table 2 (title, head, 16 rows, 4 ceiling rows), Table 1 (title, head, 4 paradigms × I2 / I3 / Avg), the paired differences (title, head, 4 pairs)
    expect(lines(runs.aBefore.table.toString("utf8"))).toHaveLength(23 + 15 + 7)
    expectSameRun(snapshot(dirC), runs.aBefore)
    // every stage is stored: demonstrations, and per seed 2 RL runs, 4 ablation rows greedy and sampled, the ceiling, 3 other paradigms
    expect(Object.keys(runs.aBefore.store.trajectories)).toHaveLength(1 + 2 * (2 + 4 * 2 + 1 + 3))
  })

  it("progress a person can plan by: the run folder first, a counter with an estimate per stage, a metrics line per RL iteration; the command run recorded; rl-metrics.csv and trajectories.html in the folder", () => {
    const stderr = lines(runs.a.stderr)
    // the run folder is announced before any work: before the first stage, before the first progress bar
    const announced = stderr.indexOf(`paraagent: run folder ${dirA} (config.json and run.sqlite now; table.md, summary.json, report.html, trajectories.html, rl-metrics.csv when done)`)
    assert.isAtLeast(announced, 0, runs.a.stderr.slice(0, 2000))
    assert.isTrue(stderr.slice(0, announced).every((l) => !l.startsWith("[") && !l.includes(" [#") && !l.includes(" [-")), stderr.slice(0, announced + 1).join("\n"))
    // 1 demonstrations stage + per seed: SFT, RL ×2, 4 evaluated rows greedy and then sampled, the ceiling, 3 other paradigms (--dagger-rounds 0: no DAgger stage)
    const counted = stderr.filter((l) => /^\[\d+\/31 · /.test(l))
    expect(counted.map((l) => Number(/^\[(\d+)\//.exec(l)?.[1]))).toStrictEqual(Array.from({ length: 31 }, (_, i) => i + 1))
    const time = "(\\d+ s|\\d+ min \\d\\d s|\\d+ h \\d\\d min)"
    expect(counted[0]).toMatch(new RegExp(`^\\[1/31 · ${time} elapsed · ETA after the first timed stage\\] teacher demonstrations: `))
    for (const l of counted.slice(1)) expect(l).toMatch(new RegExp(` · ${time} elapsed · ETA ${time}\\] `))
    expect(stderr.filter((l) => l.startsWith("paraagent: done in "))).toHaveLength(1)
    // 2 seeds × 2 estimators × 3 iterations, each as it lands
    const metrics = stderr.filter((l) => / · iteration \d\/3 · R_ans /.test(l))
    expect(metrics).toHaveLength(12)
    expect(metrics[0]).toMatch(/^rl grpo seed 1 · iteration 1\/3 · R_ans -?\d\.\d{3} · Pass@1 \d+\.\d% · rounds \d+\.\d\d · calls \d+\.\d\d · KL -?\d\.\d{4} · clip \d+\.\d% · entropy \d+\.\d{3} \(training split\)$/)
    const csv = readFileSync(join(dirA, "rl-metrics.csv"), "utf8").trim().split("\n")
    expect(csv[0]).toMatch(/^seed,estimator,iteration,version,rAns,pass1,rounds,calls,/)
    expect(csv.slice(1).map((r) => r.split(",").slice(0, 3).join(","))).toStrictEqual(
      [1, 2].flatMap((seed) => ["grpo", "paraagent_attributed_stop"].flatMap((e) => [0, 1, 2].map((i) => `${seed},${e},${i}`)))
    )
    const command = `npx tsx programs/main.ts ${[...tiny, "--out", dirA].join(" ")}`
    expect((JSON.parse(readFileSync(join(dirA, "config.json"), "utf8")) as { command: string }).command).toBe(command)
    expect((JSON.parse(readFileSync(join(dirA, "model", "paraagent-policy.json"), "utf8")) as { provenance: { command: string } }).provenance.command).toBe(command)
    expect(readFileSync(join(dirA, "report.md"), "utf8")).toContain(command)
    expect(readFileSync(join(dirA, "trajectories.html"), "utf8").match(/<tr class="entry"/g)).toHaveLength(2 * (4 * (2 + 1) + 3 * 2) * 18)
  })

  it("SIGKILL during RL, then --resume: A's table, summary and store, finished stages not redone", () => {
    const { killed, atKill, resumed } = runs
    // the kill landed in RL: a checkpoint of seed 1's paraagent_attributed_stop run, which is unfinished; the store intact
    expect(killed.signal, killed.stderr).toBe("SIGKILL")
    expect(killed.line).toMatch(killLine)
    expect(atKill.integrity).toBe("ok")
    expect(atKill.finished.map((f) => f.split(" ")[0])).toStrictEqual(["rl/grpo/seed1", "sft/seed1"])
    const checkpointed = atKill.checkpoints.filter((c) => c.startsWith("rl/paraagent_attributed_stop/seed1@")).map((c) => Number(c.split(/[@ ]/)[1]))
    expect(checkpointed.length).toBeGreaterThan(0)

    expect(resumed.code, resumed.stderr).toBe(0)
    expectSameRun(runs.afterResume, runs.aBefore)
    // seed 1's SFT and GRPO were not redone, its paraagent_attributed_stop RL went on after the last checkpoint, seed 2 trained here
    // (every run here passes --workers 1: a worker's stages draw no progress bars, and the bars are what is counted)
    const stderr = lines(resumed.stderr)
    expect(stderr.filter((l) => l.startsWith("rl grpo seed 1 "))).toStrictEqual([])
    expect(stderr.find((l) => l.startsWith("rl paraagent_attributed_stop seed 1 "))).toMatch(new RegExp(` ${Math.max(...checkpointed) + 1}/3 `))
    expect(sftRuns(resumed.stderr)).toBe(1)
    expect(sftRuns(runs.a.stderr)).toBe(2)
  })

  it("a second --resume of the finished run trains nothing, writes no row, and gives the same table", () => {
    const { again } = runs
    expect(again.code, again.stderr).toBe(0)
    expect(lines(again.stderr).filter((l) => l.startsWith("sft ") || l.startsWith("rl "))).toStrictEqual([])
    expect(runs.afterAgain.store).toStrictEqual(runs.afterResume.store)
    expectSameRun(runs.afterAgain, runs.aBefore)
  })

  it("a crash between SFT's checkpoint and its stage mark: --resume redoes that SFT and ends as A", () => {
    const { sftUnmarked } = runs
    expect(sftUnmarked.code, sftUnmarked.stderr).toBe(0)
    expect(sftRuns(sftUnmarked.stderr)).toBe(1)
    expectSameRun(snapshot(join(root, "d")), runs.aBefore)
  })

  it("--resume of a folder without a run store, and --out of a run folder: one typed line, exit ≠ 0, nothing written", () => {
    const { noStore, existing, empty } = runs
    for (const [r, names] of [[noStore, `--resume ${empty}: no run store`], [existing, `--out ${dirA}: ${dirA} already holds`]] as const) {
      expect(r.code, r.stderr).not.toBe(0)
      expect(lines(r.stderr), r.stderr).toHaveLength(1)
      expect(r.stderr).toContain(names)
      expect(r.stdout + r.stderr).not.toContain("    at ")
    }
    expect(readdirSync(empty)).toStrictEqual([])
    const aAfter = snapshot(dirA)
    expect(aAfter.files).toStrictEqual(runs.aBefore.files)
    expectSameRun(aAfter, runs.aBefore)
  })
})
