/**
 * Spawns a program or benchmark as a user runs it (`node --import tsx <file> ...`), a few at a time, with a clean
 * environment (no PARAAGENT_* / OPENAI_* of the test runner), and returns its exit code and output once it exits — or
 * kills it with SIGKILL at a chosen line of its stderr, the way a crash would. Nothing here waits on the clock: a
 * program is only killed for time past the suite's safety bound (test/support/Bounds.ts), and then says so.
 */
import { execFile, spawn } from "node:child_process"
import { repoRoot } from "../../src/io/DataPath.ts"
import { safetyBoundMs } from "./Bounds.ts"

/** The result of one spawned program. */
interface Ran {
  /** The exit code (1 when the process was killed by a signal). */
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * The environment of a spawned program: this one's without any PARAAGENT_* / OPENAI_* setting nor the npm_* variables
 * `npm test` sets (a user's shell has none), plus `extra`.
 */
const cleanEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PARAAGENT_") && !k.startsWith("OPENAI_") && !k.startsWith("npm_"))),
  ...extra
})

// spawned tsx processes cost ~1 s of CPU each (more on a busy machine): a few at a time
let running = 0
const waiting: Array<() => void> = []
const slot = async (): Promise<void> => {
  if (running < 3) {
    running++
    return
  }
  await new Promise<void>((resolve) => waiting.push(resolve))
}
const release = (): void => {
  const next = waiting.shift()
  if (next === undefined) running--
  else next()
}

/** Runs `node --import tsx <file> ...args` in the repository (as `npm run` / `npx tsx` would). */
export const spawnProgram = async (file: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<Ran> => {
  await slot()
  return new Promise<Ran>((resolve) => {
    execFile(process.execPath, ["--import", "tsx", file, ...args], { cwd: repoRoot, env: cleanEnv(env), maxBuffer: 16 * 1024 * 1024, timeout: safetyBoundMs }, (error, stdout, stderr) => {
      release()
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      const hung = error !== null && error.killed === true ? `\n[test/support/Spawn.ts: killed after the ${safetyBoundMs / 60_000}-minute safety bound]` : ""
      resolve({ code, stdout: String(stdout), stderr: String(stderr) + hung })
    })
  })
}


/** A program killed at a line of its stderr, or (when no line matched) its exit. */
interface Killed {
  /** The stderr line the kill was sent at; undefined when the program ended first. */
  readonly line: string | undefined
  readonly signal: NodeJS.Signals | null
  readonly code: number | null
  readonly stderr: string
}

/** Runs `node --import tsx <file> ...args` and SIGKILLs it at the first whole stderr line `killAt` accepts. */
export const spawnKilled = async (file: string, args: ReadonlyArray<string>, killAt: (line: string) => boolean): Promise<Killed> => {
  await slot()
  return new Promise<Killed>((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", file, ...args], { cwd: repoRoot, env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    let pending = ""
    let line: string | undefined
    const guard = setTimeout(() => {
      stderr += `\n[test/support/Spawn.ts: killed after the ${safetyBoundMs / 60_000}-minute safety bound]`
      child.kill("SIGKILL")
    }, safetyBoundMs)
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
      pending += chunk
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      if (line === undefined) {
        line = lines.find(killAt)
        if (line !== undefined) child.kill("SIGKILL")
      }
    })
    child.on("close", (code, signal) => {
      clearTimeout(guard)
      release()
      resolve({ line, signal, code, stderr })
    })
  })
}
