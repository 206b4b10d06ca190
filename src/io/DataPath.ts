/**
 * Where the real public datasets live: `PARAAGENT_DATA`, default `../shared/data` beside the repository.
 * Nothing is copied into the repo; tests that need a file skip with a reason when it is absent.
 */
import { existsSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The nearest folder at or above `dir` that holds a package.json (`dir` itself when none does). */
const packageRootOf = (dir: string): string => {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, "package.json"))) return at
    if (path.dirname(at) === at) return dir
  }
}

/**
 * The package root (the folder holding package.json, `models/` and, in a clone, `.git`): the repository when run from
 * the TypeScript sources (`src/io/`) or from the build (`dist/src/io/`), `node_modules/paraagent` where installed.
 */
export const repoRoot: string = packageRootOf(path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", ".."))

/** The data folder: `$PARAAGENT_DATA`, else `../shared/data` beside the repository. */
export const dataDir = (): string => process.env["PARAAGENT_DATA"] ?? path.resolve(repoRoot, "../shared/data")

/** The absolute path of a file or folder inside the data folder. */
export const dataPath = (...parts: ReadonlyArray<string>): string => path.join(dataDir(), ...parts)

/** The path of a data file when it exists, else undefined (for tests that skip without it). */
export const dataPathIfPresent = (...parts: ReadonlyArray<string>): string | undefined => {
  const p = dataPath(...parts)
  return existsSync(p) ? p : undefined
}
