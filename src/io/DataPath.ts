/**
 * Where the real public datasets live: `PARAAGENT_DATA`, default `../shared/data` beside the repository.
 * Nothing is copied into the repo; tests that need a file skip with a reason when it is absent.
 */
import { existsSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root (the folder holding package.json). */
export const repoRoot: string = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/** The data folder: `$PARAAGENT_DATA`, else `../shared/data` beside the repository. */
export const dataDir = (): string => process.env["PARAAGENT_DATA"] ?? path.resolve(repoRoot, "../shared/data")

/** The absolute path of a file or folder inside the data folder. */
export const dataPath = (...parts: ReadonlyArray<string>): string => path.join(dataDir(), ...parts)

/** The path of a data file when it exists, else undefined (for tests that skip without it). */
export const dataPathIfPresent = (...parts: ReadonlyArray<string>): string | undefined => {
  const p = dataPath(...parts)
  return existsSync(p) ? p : undefined
}
