import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { promisify } from "node:util"
import { repoRoot } from "../../src/io/DataPath.ts"

const run = promisify(execFile)

/** Runs `npm run toolenv -- <args>` (as tsx programs/toolenv.ts) and returns its exit code and output. */
const toolenv = async (...args: ReadonlyArray<string>): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", "programs/toolenv.ts", ...args], { cwd: repoRoot, maxBuffer: 32 * 1024 * 1024 })
    return { code: 0, stdout, stderr }
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string }
    return { code: err.code ?? 1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" }
  }
}

describe("npm run toolenv", () => {
  it("stats --json ends with one JSON line of the library statistics", async () => {
    const r = await toolenv("stats", "--json", "--size", "3000")
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split("\n")
    const last = JSON.parse(lines[lines.length - 1] ?? "{}") as Record<string, number>
    expect(Object.keys(last)).toEqual(["tools", "apis", "categories", "hardEdges", "softEdges", "toolsWithDeps", "buildMs"])
    expect(last["tools"]).toBe(3000)
    expect(last["apis"]).toBe(3000)
    expect(last["categories"]).toBe(52)
    expect(last["hardEdges"]).toBeGreaterThan(1000)
    expect(r.stdout).toContain("Sports")
  })

  it("gold runs a task's DAG layer by layer and observes every gold fact", async () => {
    const r = await toolenv("gold", "--size", "6000", "--level", "I3", "--index", "1")
    expect(r.code).toBe(0)
    const summary = /(\d+)\/(\d+) gold facts observed/.exec(r.stdout)
    expect(summary?.[1]).toBe(summary?.[2])
    expect(r.stdout).toContain("layer 2:")
  })

  it("rejects bad input with a message naming it: a too-small --size, arguments that are not a JSON object", async () => {
    const small = await toolenv("stats", "--size", "10")
    expect(small.code).not.toBe(0)
    expect(small.stderr).toContain("Invalid value for flag --size: \"10\". Expected a value between 500 and 200000")
    const bad = await toolenv("call", "whatever", "{not json", "--size", "600")
    expect(bad.code).not.toBe(0)
    expect(bad.stdout + bad.stderr).toContain("arguments must be a JSON object")
  })
})
