/**
 * What a run folder records about the code that produced it: the package version and the git commit
 * (`"unknown"` when git or the repository is missing, e.g. an installed package: a run never fails for want of git).
 */
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "./DataPath.ts"

/** The code a run came from. */
export interface Provenance {
  readonly version: string
  readonly commit: string
}

/** The version in the package's package.json (`"unknown"` when it cannot be read). */
export const packageVersion = (): string => {
  const text = ((): string => {
    try {
      return readFileSync(join(repoRoot, "package.json"), "utf8")
    } catch {
      return "{}"
    }
  })()
  const parsed: unknown = JSON.parse(text)
  const version = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["version"] : undefined
  return typeof version === "string" ? version : "unknown"
}

/** `git rev-parse HEAD` in the repository, or `"unknown"` (also for an installed package, which is no checkout: git
 * would answer with the commit of whatever repository holds its node_modules). */
const gitCommit: Effect.Effect<string> = Effect.callback<string>((resume) => {
  if (!existsSync(join(repoRoot, ".git"))) return resume(Effect.succeed("unknown"))
  execFile("git", ["rev-parse", "HEAD"], { cwd: repoRoot, timeout: 5_000 }, (error, stdout) => {
    const commit = String(stdout).trim()
    resume(Effect.succeed(error === null && /^[0-9a-f]{40}$/.test(commit) ? commit : "unknown"))
  })
})

/** The package version and git commit of this checkout. */
export const read: Effect.Effect<Provenance> = Effect.map(gitCommit, (commit) => ({ version: packageVersion(), commit }))

/** A word of a shell command, single-quoted when it holds anything but plain characters. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/**
 * The command line this process was started with, as a person would type it again: `npm start -- <args>` (or
 * `npm run <script> -- <args>`) under npm, `npx tsx <file> <args>` for a TypeScript entry point, else `node <file> <args>`.
 * Paths inside the package are given relative to its root.
 */
export const commandLine = (argv: ReadonlyArray<string> = process.argv, env: NodeJS.ProcessEnv = process.env): string => {
  const args = argv.slice(2).map(shellWord)
  const tail = args.length === 0 ? "" : ` -- ${args.join(" ")}`
  const file = argv[1] ?? ""
  const shown = file.startsWith(`${repoRoot}/`) ? file.slice(repoRoot.length + 1) : file
  // npm's variables are inherited by every process below a script: they name this one only when the script runs this file
  const event = env["npm_lifecycle_event"]
  const script = env["npm_lifecycle_script"] ?? ""
  if (event !== undefined && event !== "" && event !== "npx" && shown !== "" && script.includes(shown)) {
    return event === "start" || event === "test" ? `npm ${event}${tail}` : `npm run ${event}${tail}`
  }
  return [file.endsWith(".ts") ? "npx tsx" : "node", shellWord(shown), ...args].join(" ")
}
