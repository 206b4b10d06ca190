/**
 * A run folder: where a job writes its trajectories (JSONL, appended as they finish so nothing is lost on a crash)
 * and its reports (written to a temporary file and renamed, so a reader never sees half a file).
 */
import { Effect, FileSystem, Path, Schema } from "effect"
import type { PlatformError } from "effect/PlatformError"
import * as AtomicWrite from "./AtomicWrite.ts"

/** A folder the job writes into. */
export interface RunFolder {
  readonly dir: string
  /** The absolute path of a file of the folder. */
  readonly file: (name: string) => string
  /** Appends values as JSON lines (one write per call, so concurrent appends never interleave within a line). */
  readonly appendJsonl: (name: string, values: ReadonlyArray<unknown>) => Effect.Effect<void, PlatformError>
  /** Writes a file atomically: a temporary sibling, then a rename. */
  readonly writeText: (name: string, text: string) => Effect.Effect<void, PlatformError>
  /** Writes a JSON file atomically (pretty-printed, trailing newline). */
  readonly writeJson: (name: string, value: unknown) => Effect.Effect<void, PlatformError>
}

/** Writes a file atomically: the project's one writer (`AtomicWrite.writeFileAtomicEffect`), temp sibling then rename. */
export const writeFileAtomic = (file: string, text: string): Effect.Effect<void, PlatformError> =>
  AtomicWrite.writeFileAtomicEffect(file, text).pipe(Effect.withSpan("RunFolder.writeFileAtomic"))

/**
 * Fails unless `dir` is absent or an empty folder: a new run never appends to an earlier run's trajectories
 * (which would mix two runs and duplicate trajectory ids under one summary). Resuming is a separate, explicit mode.
 */
export const ensureFresh = Effect.fn("RunFolder.ensureFresh")(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  const exists = yield* fs.exists(dir)
  if (!exists) return
  const entries = yield* fs.readDirectory(dir)
  if (entries.length > 0) {
    return yield* Effect.fail(new RunFolderNotEmpty({ dir, entries: entries.length }))
  }
})

/** The run folder already holds files (from an earlier run). */
export class RunFolderNotEmpty extends Schema.TaggedError<RunFolderNotEmpty>()("RunFolderNotEmpty", {
  dir: Schema.String,
  entries: Schema.Number
}) {
  override get message(): string {
    return `${this.dir} already holds ${this.entries} entr${this.entries === 1 ? "y" : "ies"} of an earlier run: choose a new --out (or remove it)`
  }
}

/** Creates the folder (and its parents) and returns a writer for it. */
export const make = Effect.fn("RunFolder.make")(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = path.resolve(dir)
  yield* fs.makeDirectory(root, { recursive: true })
  const file = (name: string) => path.join(root, name)
  const writeText = (name: string, text: string) => writeFileAtomic(file(name), text)
  const folder: RunFolder = {
    dir: root,
    file,
    appendJsonl: (name, values) =>
      values.length === 0
        ? Effect.void
        : fs.writeFileString(file(name), values.map((v) => JSON.stringify(v)).join("\n") + "\n", { flag: "a" }),
    writeText,
    writeJson: (name, value) => writeText(name, JSON.stringify(value, null, 2) + "\n")
  }
  return folder
})

/**
 * Reads a JSONL file back, decoding each line with `schema`. A line that fails to decode is reported with its
 * number (a crash can leave a truncated last line), never thrown; the rest are returned.
 */
export const readJsonl = Effect.fn("RunFolder.readJsonl")(function*<A, I>(file: string, schema: Schema.Codec<A, I>) {
  const fs = yield* FileSystem.FileSystem
  const text = yield* fs.readFileString(file)
  const decode = Schema.decodeUnknownExit(Schema.fromJsonString(schema))
  const values: Array<A> = []
  const errors: Array<{ readonly line: number; readonly message: string }> = []
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return
    const exit = decode(line)
    if (exit._tag === "Success") values.push(exit.value)
    else errors.push({ line: i + 1, message: String(exit.cause).slice(0, 300) })
  })
  return { values, errors }
})
