import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as RunStoreSqlite from "../../../layers/storage/RunStoreSqlite.ts"
import { repoRoot } from "../../../src/io/DataPath.ts"
import { RunStore } from "../../../src/training/RunStore.ts"
import type { RunStoreError } from "../../../src/training/RunStore.ts"
import { sameBits } from "../../support/Bits.ts"
import { checkpointOf, edgeValues, groupOf, metricsOf, randomFloats } from "./fixtures/RunStoreData.ts"

// The run store on real SQLite files in a temp folder (and `:memory:` where the file does not matter): every operation
// read back, blobs compared bit by bit, damaged rows and foreign files refused with a RunStoreError, and a writer
// killed with SIGKILL mid-loop whose file must hold whole groups and an intact latest checkpoint with its metrics.

const tempDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), "runstore-"))

/** Opens the store at `file`, runs `f`, closes it. */
const withStore = <A, E>(file: string, f: (store: RunStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(RunStoreSqlite.make(file), f))

/** Runs raw SQL on a closed store file (a teammate's sqlite3 shell, a bad disk). */
const rawSql = (file: string, sql: string): void => {
  const db = new Database(file)
  db.exec(sql)
  db.close()
}

const inMemory = <A, E>(effect: Effect.Effect<A, E, RunStore>) => Effect.provide(effect, RunStoreSqlite.layerMemory)

const assertMentions = (error: RunStoreError, ...parts: ReadonlyArray<string>): void => {
  assert.strictEqual(error._tag, "RunStoreError")
  for (const part of parts) assert.include(error.message, part)
}

describe("RunStoreSqlite", () => {
  it.effect("runs: create, read, set status, list; a duplicate id and an unknown run are typed errors", () =>
    inMemory(Effect.gen(function*() {
      const store = yield* RunStore
      yield* TestClock.adjust(1_234)
      const a = yield* store.createRun("run-a", { lr: 0.001, stages: ["sft", "rl"], nested: { seed: 7, flag: null } })
      yield* TestClock.adjust(10)
      yield* store.createRun("run-b", {})
      assert.deepStrictEqual(a, { id: "run-a", config: { lr: 0.001, stages: ["sft", "rl"], nested: { seed: 7, flag: null } }, createdAt: 1_234, status: "running" })
      assert.deepStrictEqual(yield* store.getRun("run-a"), a)
      assert.isUndefined(yield* store.getRun("run-z"))

      yield* store.setStatus("run-a", "done")
      yield* store.setStatus("run-b", "failed")
      const runs = yield* store.listRuns()
      assert.deepStrictEqual(runs.map((r) => [r.id, r.status, r.createdAt]), [["run-a", "done", 1_234], ["run-b", "failed", 1_244]])

      assertMentions(yield* Effect.flip(store.createRun("run-a", { other: true })), "run-a", "exists")
      assert.deepStrictEqual((yield* store.getRun("run-a"))?.config, a.config, "the failed create replaced nothing")
      assertMentions(yield* Effect.flip(store.setStatus("run-z", "done")), "run-z", "does not exist")
      assertMentions(yield* Effect.flip(store.createRun("run-nan", { lr: Number.NaN })), "run-nan", "not JSON")
      assert.isUndefined(yield* store.getRun("run-nan"))
    })))

  it.effect("trajectories: groups in put order with their iteration; puts are idempotent per (run, stage, key)", () =>
    inMemory(Effect.gen(function*() {
      const store = yield* RunStore
      yield* store.createRun("r", {})
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "task-2", 0, groupOf("task-2", 3)), "inserted")
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "task-1", 0, groupOf("task-1", 2)), "inserted")
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "task-3", 1, groupOf("task-3", 4)), "inserted")
      assert.strictEqual(yield* store.putTrajectories("r", "sft", "task-1", 0, groupOf("sft-1", 1)), "inserted", "another stage, same key")

      const all = yield* store.trajectories("r", "rl")
      assert.deepStrictEqual(all, [...groupOf("task-2", 3), ...groupOf("task-1", 2), ...groupOf("task-3", 4)])
      assert.deepStrictEqual(yield* store.trajectories("r", "rl", { iteration: 1 }), groupOf("task-3", 4))
      assert.deepStrictEqual(yield* store.trajectories("r", "rl", { iteration: 7 }), [])
      assert.deepStrictEqual(yield* store.trajectories("r", "sft"), groupOf("sft-1", 1))
      assert.deepStrictEqual(yield* store.groups("r", "rl"), [
        { key: "task-2", iteration: 0, size: 3 },
        { key: "task-1", iteration: 0, size: 2 },
        { key: "task-3", iteration: 1, size: 4 }
      ])
      assert.deepStrictEqual(yield* store.groups("r", "rl", { iteration: 0 }), [{ key: "task-2", iteration: 0, size: 3 }, { key: "task-1", iteration: 0, size: 2 }])

      // re-putting a stored key (other trajectories, other iteration) writes nothing and says so
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "task-1", 5, groupOf("other", 6)), "existed")
      assert.deepStrictEqual(yield* store.trajectories("r", "rl"), all)
      assert.deepStrictEqual((yield* store.groups("r", "rl")).map((g) => g.iteration), [0, 0, 1])
      // an empty group is a group
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "empty", 1, []), "inserted")
      assert.deepStrictEqual((yield* store.groups("r", "rl", { iteration: 1 })).map((g) => [g.key, g.size]), [["task-3", 4], ["empty", 0]])

      assertMentions(yield* Effect.flip(store.putTrajectories("nope", "rl", "k", 0, groupOf("k", 1))), "nope", "does not exist")
      assertMentions(yield* Effect.flip(store.putTrajectories("r", "rl", "k", -1, [])), "iteration", "-1")
      assertMentions(yield* Effect.flip(store.putTrajectories("r", "rl", "k", 1.5, [])), "iteration", "1.5")
      assertMentions(yield* Effect.flip(store.trajectories("r", "rl", { iteration: Number.NaN })), "filter.iteration")
      // a trajectory that cannot round-trip (a NaN where the schema wants a finite number) is refused whole
      const [first] = groupOf("bad", 1)
      const bad = first === undefined ? [] : [first, { ...first, durationMs: Number.NaN }]
      assertMentions(yield* Effect.flip(store.putTrajectories("r", "rl", "bad", 1, bad)), "trajectory 1", "bad/t0", "does not encode")
      assert.deepStrictEqual((yield* store.groups("r", "rl")).map((g) => g.key), ["task-2", "task-1", "task-3", "empty"])
      assert.deepStrictEqual(yield* store.trajectories("nope", "rl"), [], "reads of an unknown run find nothing")
    })))

  it.effect("metrics: ordered by iteration, the last write of an iteration wins", () =>
    inMemory(Effect.gen(function*() {
      const store = yield* RunStore
      yield* store.createRun("r", {})
      yield* store.putMetrics("r", "rl", 2, { loss: 0.5 })
      yield* store.putMetrics("r", "rl", 0, { loss: 2, reward: [1, 2.5] })
      yield* store.putMetrics("r", "rl", 1, { loss: 1 })
      yield* store.putMetrics("r", "rl", 2, { loss: 0.25 })
      yield* store.putMetrics("r", "sft", 0, { loss: 9 })
      assert.deepStrictEqual(yield* store.metrics("r", "rl"), [
        { iteration: 0, metrics: { loss: 2, reward: [1, 2.5] } },
        { iteration: 1, metrics: { loss: 1 } },
        { iteration: 2, metrics: { loss: 0.25 } }
      ])
      assertMentions(yield* Effect.flip(store.putMetrics("r", "rl", 3, { loss: Number.POSITIVE_INFINITY })), "metrics of r/rl at iteration 3", "not JSON")
      assertMentions(yield* Effect.flip(store.putMetrics("ghost", "rl", 0, {})), "ghost", "does not exist")
    })))

  it.effect("checkpoints on a file: bit-exact float64 blobs (-0, denormals, ±Infinity, random bit patterns) after reopening", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "nested", "folder", "runs.sqlite")
      const big = randomFloats(11, 50_000)
      // a view into a larger buffer at an odd offset of elements: only its own bytes may be stored
      const window = randomFloats(12, 1_000).subarray(3, 503)
      const first = checkpointOf(0, 64)
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          yield* store.createRun("r", {})
          yield* store.putCheckpoint("r", "rl", 0, first, metricsOf(0))
          yield* store.putCheckpoint("r", "rl", 3, { params: big, optimiser: [window, new Float64Array(0), Float64Array.from(edgeValues)], state: { step: 3 } })
          yield* store.putCheckpoint("r", "sft", 9, { params: new Float64Array(0), optimiser: [], state: null })
          assert.isTrue(fs.existsSync(`${file}-wal`), "WAL journal while open")
        }))
      assert.isTrue(fs.existsSync(file), "the folder was created")
      assert.isFalse(fs.existsSync(`${file}-wal`), "the scope's end closed the connection (the last close folds the WAL in)")
      const check = new Database(file, { readonly: true })
      assert.strictEqual(check.pragma("journal_mode", { simple: true }), "wal")
      check.close()

      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const latest = yield* store.latestCheckpoint("r", "rl")
          assert.strictEqual(latest?.iteration, 3)
          assert.isTrue(latest !== undefined && sameBits(latest.params, big))
          assert.strictEqual(latest?.optimiser.length, 3)
          const [m, empty, edges] = latest?.optimiser ?? []
          assert.isTrue(m !== undefined && sameBits(m, window))
          assert.strictEqual(empty?.length, 0)
          assert.isTrue(edges !== undefined && sameBits(edges, Float64Array.from(edgeValues)))
          assert.isTrue(Object.is(edges?.[1], -0), "-0 stays -0")
          assert.deepStrictEqual(latest?.state, { step: 3 })

          const zero = yield* store.checkpoint("r", "rl", 0)
          assert.isTrue(zero !== undefined && sameBits(zero.params, first.params))
          assert.deepStrictEqual(zero?.optimiser.map((o, i) => sameBits(o, first.optimiser[i] ?? new Float64Array(1))), [true, true])
          assert.deepStrictEqual(zero?.state, first.state)
          assert.deepStrictEqual(yield* store.metrics("r", "rl"), [{ iteration: 0, metrics: metricsOf(0) }], "the checkpoint's metrics landed with it")

          const sft = yield* store.latestCheckpoint("r", "sft")
          assert.deepStrictEqual([sft?.iteration, sft?.params.length, sft?.optimiser.length, sft?.state], [9, 0, 0, null])
          assert.isUndefined(yield* store.checkpoint("r", "rl", 1))
          assert.isUndefined(yield* store.latestCheckpoint("r", "none"))

          // a checkpoint of an iteration put again replaces the old one (its optimiser slots included)
          yield* store.putCheckpoint("r", "rl", 3, { params: Float64Array.of(1, 2), optimiser: [Float64Array.of(-0)], state: { step: 3, again: true } }, { loss: 0.1 })
          const again = yield* store.checkpoint("r", "rl", 3)
          assert.deepStrictEqual([...(again?.params ?? [])], [1, 2])
          assert.strictEqual(again?.optimiser.length, 1)
          assert.isTrue(Object.is(again?.optimiser[0]?.[0], -0))
          assert.deepStrictEqual((yield* store.metrics("r", "rl")).map((m) => m.iteration), [0, 3])

          assertMentions(yield* Effect.flip(store.putCheckpoint("ghost", "rl", 0, first)), "ghost", "does not exist")
          // a checkpoint whose metrics are not JSON is refused whole: neither lands
          assertMentions(yield* Effect.flip(store.putCheckpoint("r", "rl", 4, first, { loss: Number.NaN })), "metrics of r/rl at iteration 4", "not JSON")
          assert.isUndefined(yield* store.checkpoint("r", "rl", 4))
        }))
    }))

  it.effect("stages: a finished stage's result; deleteAfter drops the later iterations of one stage only", () =>
    inMemory(Effect.gen(function*() {
      const store = yield* RunStore
      yield* store.createRun("r", {})
      assert.isUndefined(yield* store.stageResult("r", "sft"))
      yield* store.markStage("r", "sft", { loss: 0.3, steps: 100 })
      assert.deepStrictEqual(yield* store.stageResult("r", "sft"), { loss: 0.3, steps: 100 })
      yield* store.markStage("r", "sft", { loss: 0.2 })
      assert.deepStrictEqual(yield* store.stageResult("r", "sft"), { loss: 0.2 })
      assertMentions(yield* Effect.flip(store.markStage("ghost", "sft", {})), "ghost", "does not exist")

      for (let iteration = 0; iteration < 4; iteration++) {
        yield* store.putTrajectories("r", "rl", `g${iteration}a`, iteration, groupOf(`g${iteration}a`, 2))
        yield* store.putTrajectories("r", "rl", `g${iteration}b`, iteration, groupOf(`g${iteration}b`, 3))
        yield* store.putCheckpoint("r", "rl", iteration, checkpointOf(iteration, 8), metricsOf(iteration))
      }
      yield* store.putTrajectories("r", "sft", "s5", 5, groupOf("s5", 1))
      yield* store.putMetrics("r", "sft", 5, { loss: 1 })
      yield* store.markStage("r", "rl", { done: false })

      assert.deepStrictEqual(yield* store.deleteAfter("r", "rl", 1), { groups: 4, trajectories: 10, metrics: 2, checkpoints: 2 })
      assert.deepStrictEqual((yield* store.groups("r", "rl")).map((g) => g.key), ["g0a", "g0b", "g1a", "g1b"])
      assert.deepStrictEqual(yield* store.trajectories("r", "rl"), [...groupOf("g0a", 2), ...groupOf("g0b", 3), ...groupOf("g1a", 2), ...groupOf("g1b", 3)])
      assert.deepStrictEqual((yield* store.metrics("r", "rl")).map((m) => m.iteration), [0, 1])
      assert.strictEqual((yield* store.latestCheckpoint("r", "rl"))?.iteration, 1)
      assert.deepStrictEqual(yield* store.stageResult("r", "rl"), { done: false }, "the stage result is kept")
      assert.deepStrictEqual(yield* store.trajectories("r", "sft"), groupOf("s5", 1), "another stage is untouched")
      assert.deepStrictEqual((yield* store.metrics("r", "sft")).map((m) => m.iteration), [5])
      // a deleted key can be put again (the redone iteration)
      assert.strictEqual(yield* store.putTrajectories("r", "rl", "g2a", 2, groupOf("g2a", 2)), "inserted")
      // -1: no checkpoint yet, drop every iteration
      assert.deepStrictEqual(yield* store.deleteAfter("r", "rl", -1), { groups: 5, trajectories: 12, metrics: 2, checkpoints: 2 })
      assert.deepStrictEqual(yield* store.trajectories("r", "rl"), [])
      assertMentions(yield* Effect.flip(store.deleteAfter("r", "rl", -2)), "iteration", "-2")
    })))

  it.effect("a row that does not decode is a RunStoreError naming the row; the store stays usable", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "runs.sqlite")
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          yield* store.createRun("r", { ok: true })
          yield* store.createRun("r2", {})
          yield* store.putTrajectories("r", "rl", "g1", 0, groupOf("g1", 2))
          yield* store.putTrajectories("r", "rl", "g2", 0, groupOf("g2", 2))
          yield* store.putCheckpoint("r", "rl", 0, checkpointOf(0, 4), metricsOf(0))
          yield* store.markStage("r", "sft", { ok: 1 })
        }))
      rawSql(file, [
        `UPDATE trajectories SET body = '{"id": "g2/t1", "steps": [' WHERE seq = 4`,
        `UPDATE runs SET config = 'not json' WHERE id = 'r2'`,
        `UPDATE metrics SET body = '{"loss": ' WHERE iteration = 0`,
        `UPDATE checkpoints SET params = x'0102030405' WHERE iteration = 0`,
        `UPDATE stages SET result = '' WHERE stage = 'sft'`
      ].join(";\n"))
      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          assertMentions(yield* Effect.flip(store.trajectories("r", "rl")), "trajectories row (seq=4, key=\"g2\") does not decode: column body = \"{\\\"id\\\": \\\"g2/t1\\\"")
          assert.deepStrictEqual(yield* store.trajectories("r", "rl", { iteration: 1 }), [])
          assertMentions(yield* Effect.flip(store.getRun("r2")), "runs row (id=\"r2\") does not decode: column config = \"not json\"")
          assertMentions(yield* Effect.flip(store.listRuns()), "runs row (id=\"r2\")")
          assert.deepStrictEqual((yield* store.getRun("r"))?.config, { ok: true }, "other rows still read")
          assertMentions(yield* Effect.flip(store.metrics("r", "rl")), "metrics row (iteration=0)", "does not decode")
          assertMentions(yield* Effect.flip(store.latestCheckpoint("r", "rl")), "checkpoints row (iteration=0)", "column params = a blob of 5 bytes", "not a multiple of 8")
          assertMentions(yield* Effect.flip(store.stageResult("r", "sft")), "stages row", "does not decode")
          assert.strictEqual(yield* store.putTrajectories("r", "rl", "g3", 1, groupOf("g3", 1)), "inserted", "writes still work")
        }))
      // a status outside the three a run can have
      rawSql(file, `UPDATE runs SET status = 'paused' WHERE id = 'r'`)
      const paused = yield* Effect.flip(withStore(file, (store) => store.getRun("r")))
      assertMentions(paused, "runs row (id=\"r\") does not decode: column status = \"paused\"", "running")
    }))

  it.effect("opening a file of another schema version, a foreign SQLite file or a non-SQLite file is a RunStoreError", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "runs.sqlite")
      yield* withStore(file, (store) => store.createRun("r", {}))
      rawSql(file, `UPDATE meta SET value = '2' WHERE key = 'schema_version'`)
      const newer = yield* Effect.flip(withStore(file, (store) => store.listRuns()))
      assertMentions(newer, "schema version 2", `version ${RunStoreSqlite.schemaVersion}`)
      assert.strictEqual(newer.path, file)

      rawSql(file, `DELETE FROM meta`)
      assertMentions(yield* Effect.flip(withStore(file, (store) => store.listRuns())), "schema_version")

      const foreign = path.join(dir, "other.sqlite")
      rawSql(foreign, `CREATE TABLE renders (tool TEXT)`)
      assertMentions(yield* Effect.flip(withStore(foreign, (store) => store.listRuns())), "not a run store", "renders")

      const text = path.join(dir, "notes.sqlite")
      fs.writeFileSync(text, "these are not the pages you are looking for ".repeat(200))
      const notDb = yield* Effect.flip(withStore(text, (store) => store.listRuns()))
      assertMentions(notDb, "open", "SQLITE_NOTADB")
      assert.strictEqual(notDb.path, text)

      const blocked = path.join(dir, "a-file")
      fs.writeFileSync(blocked, "")
      assertMentions(yield* Effect.flip(withStore(path.join(blocked, "runs.sqlite"), (store) => store.listRuns())), "create the folder")
    }))

  it.effect("kill -9 mid-loop: the file passes integrity_check, holds whole groups only, every reported commit, and the latest checkpoint with its metrics", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir(), "runs.sqlite")
      const [groups, size, params] = [3, 8, 20_000]
      const writer = path.join(repoRoot, "test", "layers", "storage", "fixtures", "RunStoreWriter.ts")
      const ran = yield* Effect.promise(() => killAfter(writer, [file, "crash", String(groups), String(size), String(params), "500"], 4))
      assert.strictEqual(ran.signal, "SIGKILL", ran.stderr)
      const reportedGroups = ran.lines.filter((l) => l.startsWith("group ")).map((l) => l.slice(6))
      const reportedCheckpoints = ran.lines.filter((l) => l.startsWith("checkpoint ")).map((l) => Number(l.slice(11)))
      assert.isAtLeast(reportedCheckpoints.length, 4)

      // integrity first, on a plain connection (which also replays the WAL the killed writer left)
      const db = new Database(file)
      assert.strictEqual(db.pragma("integrity_check", { simple: true }), "ok")
      db.close()

      yield* withStore(file, (store) =>
        Effect.gen(function*() {
          const stored = yield* store.groups("crash", "rl")
          const keys = stored.map((g) => g.key)
          // the writer's order, without a gap; at most one commit more than it had reported when it died
          const expected = Array.from({ length: keys.length }, (_, n) => `i${Math.floor(n / groups)}-g${n % groups}`)
          assert.deepStrictEqual(keys, expected)
          assert.deepStrictEqual(keys.slice(0, reportedGroups.length), reportedGroups, "every reported group is stored")
          assert.isAtMost(keys.length - reportedGroups.length, 1)
          // whole groups only: each holds its size, and its trajectories are exactly the writer's
          assert.deepStrictEqual(stored.filter((g) => g.size !== size), [])
          const trajectories = yield* store.trajectories("crash", "rl")
          assert.strictEqual(trajectories.length, keys.length * size)
          assert.deepStrictEqual(trajectories, keys.flatMap((k) => groupOf(k, size)))

          const latest = yield* store.latestCheckpoint("crash", "rl")
          const last = reportedCheckpoints.at(-1) ?? -1
          assert.isTrue(latest !== undefined && (latest.iteration === last || latest.iteration === last + 1), `latest ${latest?.iteration}, reported ${last}`)
          const iteration = latest?.iteration ?? -1
          const want = checkpointOf(iteration, params)
          assert.isTrue(latest !== undefined && sameBits(latest.params, want.params))
          assert.deepStrictEqual(latest?.optimiser.map((o, i) => sameBits(o, want.optimiser[i] ?? new Float64Array(1))), [true, true])
          assert.deepStrictEqual(latest?.state, want.state)
          const metrics = yield* store.metrics("crash", "rl")
          assert.deepStrictEqual(metrics, Array.from({ length: iteration + 1 }, (_, i) => ({ iteration: i, metrics: metricsOf(i) })))
          // every iteration up to the checkpoint has all its groups; after it, only whole groups of the next one
          const after = stored.filter((g) => g.iteration > iteration)
          assert.strictEqual(stored.length - after.length, (iteration + 1) * groups)
          assert.isAtMost(after.length, groups)

          // what a resume does: drop the interrupted iteration, then redo it
          const dropped = yield* store.deleteAfter("crash", "rl", iteration)
          assert.deepStrictEqual([dropped.groups, dropped.trajectories, dropped.metrics, dropped.checkpoints], [after.length, after.length * size, 0, 0])
          assert.strictEqual((yield* store.groups("crash", "rl")).length, (iteration + 1) * groups)
          assert.strictEqual((yield* store.getRun("crash"))?.status, "running")
        }))
    }))
})

/** What a killed writer printed before it died, and how it ended. */
interface Killed {
  readonly lines: ReadonlyArray<string>
  readonly signal: string | null
  readonly stderr: string
}

/**
 * Spawns the writer (`node --import tsx`) and SIGKILLs it as soon as it has reported `checkpoints` checkpoints and one
 * group of the next iteration (so it dies inside the loop, most likely inside the next group's encoding or commit).
 */
const killAfter = (script: string, args: ReadonlyArray<string>, checkpoints: number): Promise<Killed> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    const lines: Array<string> = []
    let partial = ""
    let stderr = ""
    let seen = 0
    child.stdout.setEncoding("utf8")
    child.stderr.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n")
      partial = parts.pop() ?? ""
      for (const line of parts) {
        lines.push(line)
        if (line.startsWith("checkpoint ")) seen++
        if (seen >= checkpoints && line.startsWith("group ") && !child.killed) child.kill("SIGKILL")
      }
    })
    child.stderr.on("data", (chunk: string) => void (stderr += chunk))
    child.on("close", (_code, signal) => resolve({ lines, signal, stderr }))
  })
