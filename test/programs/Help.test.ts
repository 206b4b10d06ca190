/**
 * `npm start -- --help` as a person reads it: every flag that has a default shows it, the run folder's included; and
 * every program's `--version` is the package's.
 */
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "../../src/io/DataPath.ts"
import * as Provenance from "../../src/io/Provenance.ts"
import * as McpTools from "../../src/service/McpTools.ts"
import { spawnProgram } from "../support/Spawn.ts"

describe("npm start -- --help", () => {
  it("lists every flag with its default, the --out default being the pipeline's folder pattern; exit 0", async () => {
    const r = await spawnProgram("programs/main.ts", ["--help"])
    expect(r.code, r.stderr).toBe(0)
    const flags = r.stdout.split("\n").filter((l) => /^\s+--[a-z-]+ /.test(l)).map((l) => l.trim())
    const byName = new Map(flags.map((l) => [/^--([a-z-]+)/.exec(l)?.[1] ?? "", l]))
    const shown = (name: string) => /\(default: ([^)]*)\)$/.exec(byName.get(name) ?? "")?.[1]
    const want: ReadonlyArray<readonly [string, string]> = [
      ["seeds", "1,2,3"], ["seed", "1"], ["train-tasks", "240"], ["tasks", "50"], ["levels", "I1,I2,I3"], ["paradigms", "ParaAct,ReAct,ExploreThenExecute,DFSDT"],
      ["sft-epochs", "10"], ["rl-iterations", "8"], ["rl-tasks", "8"], ["group", "8"], ["world-seed", "7"], ["world-size", "50011"],
      ["concurrency", "8"], ["workers", "1"], ["out", "runs/<UTC date-time>-pipeline"]
    ]
    expect(want.map(([name]) => [name, shown(name)])).toStrictEqual(want)
    expect(r.stdout).not.toContain("-seed<seed>")
  })
})

describe("--version", () => {
  it("every program and bench states the package's version (package.json), never a copy of it", () => {
    const files = [
      ...readdirSync(join(repoRoot, "programs")).filter((f) => f.endsWith(".ts")).map((f) => join("programs", f)),
      join("bench", "BenchFlags.ts")
    ]
    const runs = files.flatMap((f) => [...readFileSync(join(repoRoot, f), "utf8").matchAll(/Cli\.run\(([^\n]*)/g)].map((m) => [f, m[1] ?? ""] as const))
    expect(runs.length).toBeGreaterThan(10)
    for (const [file, call] of runs) expect(call, file).toContain("Provenance.packageVersion()")
    expect(McpTools.serverInfo.version).toBe(Provenance.packageVersion())
    expect(Provenance.packageVersion()).toBe((JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version)
  })
})
