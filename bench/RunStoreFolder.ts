/**
 * Opens the run store of an `npm start` run folder for a benchmark that reads it: refuses a folder without
 * `run.sqlite` (opening would create one) or with other than one run, and reads the run config's training seeds and
 * estimators. Used by `bench/paired-runs.ts` and `bench/kind-credit.ts`; scoped (the store closes with the scope).
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as RunStoreSqlite from "../layers/storage/RunStoreSqlite.ts"

export const open = (folder: string) =>
  Effect.gen(function*() {
    const file = path.join(folder, "run.sqlite")
    // opening creates a missing store: refuse first, a benchmark that reads a run writes nothing
    if (!fs.existsSync(file)) return yield* Effect.fail(new Error(`${file}: no run store (not a run folder of npm start)`))
    const store = yield* RunStoreSqlite.make(file)
    const runs = yield* store.listRuns()
    const run = runs[0]
    if (run === undefined || runs.length !== 1) return yield* Effect.fail(new Error(`${file}: ${runs.length} runs stored, expected one`))
    const pipeline = (run.config as { readonly pipeline?: { readonly seeds?: unknown; readonly estimators?: unknown } } | null)?.pipeline
    const seeds = pipeline?.seeds
    if (!Array.isArray(seeds) || !seeds.every((s) => Number.isInteger(s))) return yield* Effect.fail(new Error(`${file}: the run config names no pipeline seeds`))
    const estimators = Array.isArray(pipeline?.estimators) ? (pipeline.estimators as ReadonlyArray<unknown>).filter((e): e is string => typeof e === "string") : []
    return { file, store, run, seeds: seeds as ReadonlyArray<number>, estimators }
  })
