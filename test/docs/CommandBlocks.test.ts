/**
 * Every command block of the README and docs/ is kept true by a test: the block's entry in test/docs/Blocks.ts says
 * how (run as written, run reduced, its usage checked against --help, or the named test that runs it). A block with
 * no entry, or an entry whose block is gone, fails here. The curl session of docs/service.md runs as written against a
 * fresh server, each answer compared with the one printed; the Getting-started script is the file the test runs.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "../../src/io/DataPath.ts"
import { safetyBoundMs } from "../support/Bounds.ts"
import { spawnProgram } from "../support/Spawn.ts"
import * as Blocks from "./Blocks.ts"

const blocks = Blocks.commandBlocks(repoRoot)
const key = (b: { readonly file: string; readonly first: string }) => `${b.file}: ${b.first}`

describe("the command blocks of the README and docs/", () => {
  it("every command block has an entry, and every entry a block", () => {
    const entries = new Set(Blocks.entries.map(key))
    expect(blocks.filter((b) => !entries.has(key(b))).map((b) => `${b.file}:${b.line} ${b.first}`), "blocks without an entry in test/docs/Blocks.ts").toStrictEqual([])
    const present = new Set(blocks.map(key))
    expect(Blocks.entries.filter((e) => !present.has(key(e))).map(key), "entries whose block is gone").toStrictEqual([])
  })

  it("a block mapped to a test names a test that exists; one CI runs is in .ci/run", () => {
    for (const { file, first, how } of Blocks.entries) {
      if (how.kind === "test") {
        assert.isTrue(existsSync(join(repoRoot, how.test)), `${file}: ${first} → ${how.test}`)
        assert.isAbove(how.name.length, 0, `${file}: ${first} names no test`)
        assert.include(readFileSync(join(repoRoot, how.test), "utf8"), how.name, `${file}: ${first} → ${how.test} has no "${how.name}"`)
        assert.isAbove(how.why.length, 0)
      }
      if (how.kind === "ci") assert.include(readFileSync(join(repoRoot, ".ci/run"), "utf8"), how.command)
      if (how.kind === "serves") assert.isTrue(blocks.some((b) => b.file === file && b.first === how.transcript), `${file}: no transcript "${how.transcript}"`)
    }
  })

  it("docs/getting-started.md shows examples/getting-started.ts as it is (the file the tests type-check and run)", () => {
    const doc = Blocks.blocksOf("docs/getting-started.md", readFileSync(join(repoRoot, "docs/getting-started.md"), "utf8"))
    const script = readFileSync(join(repoRoot, "examples/getting-started.ts"), "utf8").trimEnd()
    assert.isTrue(doc.some((b) => b.lang === "ts" && b.text === script), "the doc's ts block differs from examples/getting-started.ts")
    assert.isBelow(script.split("\n").length, 30)
  })

  const synopses = Blocks.entries.flatMap((e) => (e.how.kind === "synopsis" ? [{ ...e, how: e.how }] : []))
  it.each(synopses)("usage line of $file: every flag it names is in --help", async ({ file, first, how }) => {
    const block = blocks.find((b) => b.file === file && b.first === first)!
    const helps = await Promise.all((how.subcommands ?? [undefined]).map((sub) => spawnProgram(how.program, [...(sub === undefined ? [] : [sub]), "--help"])))
    for (const r of helps) expect(r.code, r.stderr).toBe(0)
    const help = helps.map((r) => r.stdout).join("\n")
    const named = [...new Set(block.text.match(/--[a-z][a-z0-9-]*/g) ?? [])]
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((flag) => !new RegExp(`${flag}(?![a-z0-9-])`).test(help)), `${how.program} --help lacks`).toStrictEqual([])
  })

  const transcripts = Blocks.entries.flatMap((e) => (e.how.kind === "transcript" ? [{ ...e, how: e.how }] : []))
  it.each(transcripts)("transcript of $file, run as written: every command's output is the one printed", async ({ file, first, how }) => {
    const block = blocks.find((b) => b.file === file && b.first === first)!
    const server = how.serve === undefined ? undefined : await serve(how.serve)
    try {
      // commands and the lines printed under each
      const steps: Array<{ command: string; expected: Array<string> }> = []
      for (const line of block.text.split("\n")) {
        if (line.startsWith("$ ")) steps.push({ command: line.slice(2), expected: [] })
        else if (line.trim() !== "") steps.at(-1)?.expected.push(line)
      }
      // one shell, so `ID=$(…)` carries to the later lines; a marker before each command splits the output
      const script = steps.map((s, i) => `echo; echo "@@@${i}"\n${s.command}`).join("\n")
      const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_"))), ...(server !== undefined ? { U: server.url } : {}) }
      const out = await new Promise<string>((resolve, reject) => {
        execFile("bash", ["-c", script], { cwd: repoRoot, env, timeout: safetyBoundMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
          error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`)))
      })
      const got = out.split(/^@@@(\d+)\n/m).slice(1)
      expect(got.length / 2).toBe(steps.length)
      for (let i = 0; i < got.length; i += 2) {
        const step = steps[Number(got[i])]!
        expect((got[i + 1] ?? "").split("\n").filter((l) => l.trim() !== ""), `$ ${step.command}`).toStrictEqual(step.expected)
      }
    } finally {
      server?.child.kill("SIGTERM")
    }
  })
})

/** `npm run serve -- <args>` as a child process, once it prints its listening line (the event waited on). */
const serve = (args: ReadonlyArray<string>): Promise<{ readonly child: ChildProcess; readonly url: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "programs/serve.ts", ...args], { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    const timer = setTimeout(() => reject(new Error(`serve did not start within the safety bound: ${err}`)), safetyBoundMs)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const m = /toolenv listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ child, url: m[1] as string })
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (err += chunk))
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${err}`)))
  })
