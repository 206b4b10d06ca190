/**
 * Reads a BFCL data folder (`BFCL_v4_<category>.json` + `possible_answer/BFCL_v4_<category>.json`) and result files
 * from disk into the values of `src/benchmarks/bfcl/BfclScore.ts`; any category laid out that way is accepted.
 */
import { Effect, Result } from "effect"
import * as nodePath from "node:path"
import * as Checker from "../../src/benchmarks/bfcl/BfclChecker.ts"
import * as Score from "../../src/benchmarks/bfcl/BfclScore.ts"
import { BfclInputError } from "../../src/benchmarks/bfcl/BfclScore.ts"
import { isDirectory, listDir, readText } from "../../src/toolenv/importers/Read.ts"
import * as RunConfig from "../../src/eval/RunConfig.ts"

const fromResult = <A>(r: Result.Result<A, BfclInputError>): Effect.Effect<A, BfclInputError> =>
  Result.isSuccess(r) ? Effect.succeed(r.success) : Effect.fail(r.failure)

const read = (file: string): Effect.Effect<string, BfclInputError> =>
  readText(file).pipe(Effect.mapError((e) => new BfclInputError({ file, message: e.message })))

/** The Python AST categories with a test file in `dir`, in name order. */
export const available = Effect.fn("BfclFiles.available")(function*(dir: string) {
  if (!(yield* isDirectory(dir))) return yield* new BfclInputError({ file: dir, message: "not a folder" })
  const entries = yield* listDir(dir).pipe(Effect.mapError((e) => new BfclInputError({ file: dir, message: e.message })))
  return entries.flatMap((e) => {
    const name = e.isDirectory ? undefined : Score.categoryOfFile(e.name)
    return name !== undefined && Checker.checkerOf(name).ok ? [name] : []
  })
})

/**
 * The requested categories (`all` = every Python AST category present), each name may be comma-separated; a
 * category without its test file, or an AST category without its possible answers, is a typed error naming it.
 */
export const expandNames = Effect.fn("BfclFiles.expandNames")(function*(dir: string, requested: ReadonlyArray<string>) {
  const items = requested.map((r) => RunConfig.commaItems(r))
  const empty = requested.find((_, i) => items[i] === undefined)
  if (empty !== undefined) return yield* new BfclInputError({ file: dir, message: `--category ${JSON.stringify(empty)} has an empty item` })
  const names = [...new Set(items.flatMap((i) => i ?? []))]
  if (names.length === 0) return yield* new BfclInputError({ file: dir, message: "no --category given" })
  if (!names.includes("all")) return names
  const present = yield* available(dir)
  if (present.length === 0) return yield* new BfclInputError({ file: dir, message: "no BFCL_v4_<category>.json of a Python AST category here" })
  return [...new Set([...present, ...names.filter((n) => n !== "all")])]
})

/** Loads one category from a data folder. */
export const loadCategory = Effect.fn("BfclFiles.loadCategory")(function*(dir: string, name: string) {
  const files = Score.fileNames(name)
  const entriesFile = nodePath.join(dir, files.entries)
  const checker = Checker.checkerOf(name)
  if (!checker.ok) return yield* new BfclInputError({ file: entriesFile, message: `category ${name} is ${checker.reason}` })
  const entries = yield* read(entriesFile)
  const answersFile = nodePath.join(dir, files.answers)
  const needsAnswers = checker.kind !== "relevance" && checker.kind !== "irrelevance"
  const answers = needsAnswers ? { file: answersFile, text: yield* read(answersFile) } : undefined
  return yield* fromResult(Score.category(name, { file: entriesFile, text: entries }, answers))
})

/** Loads the requested categories (see {@link expandNames}). */
export const loadCategories = Effect.fn("BfclFiles.loadCategories")(function*(dir: string, requested: ReadonlyArray<string>) {
  const names = yield* expandNames(dir, requested)
  return yield* Effect.forEach(names, (name) => loadCategory(dir, name))
})

/** Loads a result file. */
export const loadResults = Effect.fn("BfclFiles.loadResults")(function*(file: string) {
  return yield* fromResult(Score.parseResults(file, yield* read(file)))
})
