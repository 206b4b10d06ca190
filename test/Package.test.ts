/**
 * The package as a user gets it: `npm pack` (which builds dist/ through `prepack`), the tarball installed into an
 * empty folder with npm, and consumer scripts compiled with the consumer's own strict tsconfig (not this repository's
 * settings, checking every .d.ts) and run under plain `node`: the Getting-started script (docs/getting-started.md),
 * a script using the layers that bring native code (onnxruntime's shipped policy, a SQLite run store), and the
 * `paraagent-mcp` bin driven by the official MCP SDK's stdio client.
 *
 * No network here: npm installs from its cache (`npm ci --offline`) with a lockfile derived from this repository's
 * (the same versions), with install scripts off (onnxruntime-node's would download CUDA libraries — the consumer's
 * .npmrc carries `onnxruntime-node-install=skip` as docs/library.md says — and better-sqlite3's would download or
 * compile its binary: the one this repository's install built is copied in instead).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { execFile } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { repoRoot } from "../src/io/DataPath.ts"
import { safetyBoundMs } from "./support/Bounds.ts"

interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** An environment without what `npm test` sets for its child processes (npm_config_*, npm_package_*, PARAAGENT_*). */
const cleanEnv = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|PARAAGENT_|OPENAI_)/i.test(k)))

/** Runs a command to its exit (the safety bound only catches a hang). */
const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd, env: cleanEnv(), maxBuffer: 64 * 1024 * 1024, timeout: safetyBoundMs }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout: String(stdout), stderr: String(stderr) })
    })
  })

const ok = (r: Ran, what: string): Ran => {
  assert.strictEqual(r.code, 0, `${what} failed:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-2000)}`)
  return r
}

interface LockEntry {
  readonly version?: string
  readonly dependencies?: Readonly<Record<string, string>>
  readonly peerDependencies?: Readonly<Record<string, string>>
  readonly optionalDependencies?: Readonly<Record<string, string>>
  readonly [key: string]: unknown
}

interface PackageJson {
  readonly version: string
  readonly dependencies: Readonly<Record<string, string>>
  readonly peerDependencies: Readonly<Record<string, string>>
  readonly devDependencies: Readonly<Record<string, string>>
  readonly bin: Readonly<Record<string, string>>
  readonly engines: Readonly<Record<string, string>>
  readonly license: string
}

const repoPackage = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as PackageJson
const repoLock = (JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> }).packages

/** Where npm would find `name` from the package at lock path `from` (its own node_modules, then its ancestors'). */
const resolveIn = (from: string, name: string): string | undefined => {
  for (let at = from; ; at = at.includes("/node_modules/") ? at.slice(0, at.lastIndexOf("/node_modules/")) : "") {
    const candidate = `${at === "" ? "" : `${at}/`}node_modules/${name}`
    if (repoLock[candidate] !== undefined) return candidate
    if (at === "") return undefined
  }
}

/**
 * The consumer's lockfile: the package from the tarball, and the closure of its dependencies and peers exactly as this
 * repository's lockfile resolved them (so `npm ci --offline` finds every tarball in npm's cache).
 */
const consumerLock = (tarball: string, rootDependencies: Readonly<Record<string, string>>) => {
  const packages: Record<string, unknown> = {
    "": { name: "consumer", dependencies: rootDependencies },
    "node_modules/paraagent": {
      version: repoPackage.version,
      resolved: `file:${tarball}`,
      license: repoPackage.license,
      dependencies: repoPackage.dependencies,
      peerDependencies: repoPackage.peerDependencies,
      bin: repoPackage.bin,
      engines: repoPackage.engines
    }
  }
  const todo = [...Object.keys(repoPackage.dependencies), ...Object.keys(repoPackage.peerDependencies)].map((name) => `node_modules/${name}`)
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    if (packages[path] !== undefined) continue
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = repoLock[path] as LockEntry
    packages[path] = entry
    for (const name of Object.keys({ ...entry.dependencies, ...entry.peerDependencies, ...entry.optionalDependencies })) {
      const found = resolveIn(path, name)
      if (found !== undefined) todo.push(found)
    }
  }
  return { name: "consumer", lockfileVersion: 3, requires: true, packages }
}

/** The consumer's own compiler settings: strict, but none of this repository's extra flags; every .d.ts checked. */
const consumerTsconfig = {
  compilerOptions: {
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: false,
    types: ["node"],
    typeRoots: [join(repoRoot, "node_modules", "@types")],
    outDir: "out"
  },
  files: ["getting-started.ts", "extensions.ts"]
}

const root = mkdtempSync(join(tmpdir(), "paraagent-package-"))
const consumer = join(root, "consumer")
let packed: { readonly filename: string; readonly files: ReadonlyArray<string> }
let compiled: Ran

describe("the package: npm pack, installed into an empty folder, used from plain node", () => {
  beforeAll(async () => {
    const pack = ok(await run("npm", ["pack", "--json", "--pack-destination", root], repoRoot), "npm pack")
    // npm prints the prepack script's output before the JSON report
    const report = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[\n"))) as ReadonlyArray<{ filename: string; files: ReadonlyArray<{ path: string }> }>
    packed = { filename: report[0]!.filename, files: report[0]!.files.map((f) => f.path) }

    mkdirSync(consumer)
    // the peers a consumer shares with the package, at the versions this repository pins
    const peers = Object.fromEntries(Object.keys(repoPackage.peerDependencies).map((name) => [name, repoPackage.devDependencies[name] as string]))
    const dependencies = { paraagent: `file:../${packed.filename}`, ...peers }
    writeFileSync(join(consumer, ".npmrc"), "onnxruntime-node-install=skip\n")
    // undici: @effect/platform-node 4.1 asks for undici 8, which ParaAgent never loads and this offline cache lacks;
    // the consumer pins the undici 7 this repository installs (its own Node 20 override)
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module", dependencies, overrides: { undici: repoLock["node_modules/undici"]?.version } }, null, 2))
    writeFileSync(join(consumer, "package-lock.json"), JSON.stringify(consumerLock(`../${packed.filename}`, dependencies), null, 2))
    ok(await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], consumer), "npm ci in the consumer folder")
    const binary = join("better-sqlite3", "build", "Release", "better_sqlite3.node")
    mkdirSync(dirname(join(consumer, "node_modules", binary)), { recursive: true })
    copyFileSync(join(repoRoot, "node_modules", binary), join(consumer, "node_modules", binary))

    copyFileSync(join(repoRoot, "examples", "getting-started.ts"), join(consumer, "getting-started.ts"))
    copyFileSync(join(repoRoot, "test", "fixtures", "consumer", "extensions.ts"), join(consumer, "extensions.ts"))
    writeFileSync(join(consumer, "tsconfig.json"), JSON.stringify(consumerTsconfig, null, 2))
    const tsc = createRequire(join(repoRoot, "package.json")).resolve("typescript/bin/tsc")
    compiled = await run(process.execPath, [tsc, "-p", "tsconfig.json"], consumer)
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("the tarball holds the built JavaScript with its .d.ts, the bin, the shipped models and the LICENSE — no TypeScript source, test or bench", () => {
    for (const file of ["dist/src/index.js", "dist/src/index.d.ts", "dist/layers/index.js", "dist/layers/index.d.ts", "dist/programs/mcp.js", "models/paraagent-policy.onnx", "models/paraagent-static.onnx", "LICENSE", "README.md", "package.json"]) {
      assert.include(packed.files, file)
    }
    assert.deepStrictEqual(packed.files.filter((f) => /\.ts$/.test(f) && !f.endsWith(".d.ts")), [])
    assert.deepStrictEqual(packed.files.filter((f) => /^(src|test|bench|examples|integrations|docs)\//.test(f)), [])
    assert.strictEqual(readFileSync(join(repoRoot, "dist", "programs", "mcp.js"), "utf8").split("\n")[0], "#!/usr/bin/env node")
  })

  it("effect and @effect/platform-node are peers (one copy, the consumer's), not dependencies; tsx is not needed to run", () => {
    assert.deepStrictEqual(Object.keys(repoPackage.peerDependencies).sort(), ["@effect/platform-node", "effect"])
    for (const name of ["effect", "@effect/platform-node", "tsx"]) assert.notProperty(repoPackage.dependencies, name)
    // one effect in the consumer's tree: the package resolves the consumer's copy
    const installed = (JSON.parse(readFileSync(join(consumer, "package-lock.json"), "utf8")) as { packages: Record<string, unknown> }).packages
    assert.deepStrictEqual(Object.keys(installed).filter((p) => p.endsWith("node_modules/effect")), ["node_modules/effect"])
  })

  it("the consumer's strict tsconfig type-checks both scripts against the package's .d.ts (and effect's), with no error", () => {
    assert.strictEqual(compiled.code, 0, compiled.stdout + compiled.stderr)
  })

  it("docs/getting-started.md's script runs under plain node: a line per task, six tasks", async () => {
    const r = ok(await run(process.execPath, ["out/getting-started.js"], consumer), "the getting-started script")
    const lines = r.stdout.trim().split("\n")
    assert.strictEqual(lines.length, 6, r.stdout)
    for (const line of lines) assert.match(line, /^I[123] gen-7-test-I[123]-\d+: solved [012]\/2, R_ans \S+ \S+, rounds \d+ \d+$/)
  })

  it("the layers with native code work from the install: the shipped policy (onnxruntime, models/), a user's judge and retriever, a SQLite run store, the task-draw worker", async () => {
    const r = ok(await run(process.execPath, ["out/extensions.js"], consumer), "the extensions script")
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1) ?? "") as Record<string, unknown>
    assert.deepStrictEqual(result, { policies: ["paraagent"], judges: ["length"], hitScores: [1, 2, 3], stored: 6, workerDraws: true })
  })

  it("the paraagent-mcp bin speaks MCP over stdio (the official SDK client), starts an episode and exits 0 when stdin closes", async () => {
    const transport = new StdioClientTransport({
      command: join(consumer, "node_modules", ".bin", "paraagent-mcp"),
      args: ["--size", "2000"],
      cwd: consumer,
      stderr: "pipe"
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    const client = new Client({ name: "package-test", version: "1.0.0" })
    const errors: Array<string> = []
    client.onerror = (e) => errors.push(String(e))
    await client.connect(transport)
    const tools = await client.listTools()
    assert.include(tools.tools.map((t) => t.name), "start_episode")
    // an episode starts from the installed package: a task drawn, the library and simulator built from its JavaScript
    const started = await client.callTool({ name: "start_episode", arguments: { split: "test", level: "I1", index: 0, paradigm: "ParaAct" } })
    assert.notStrictEqual(started.isError, true, JSON.stringify(started.content) + stderr)
    assert.match(JSON.stringify(started.content), /gen-7-test-I1-\d+/)
    // end stdin as a client does at a normal close, and wait for the exit (the SDK's close() would SIGTERM after 2 s)
    const child = (transport as unknown as { readonly _process?: ChildProcess })._process
    const code = await new Promise<number | null>((resolve) => {
      if (child === undefined) return resolve(null)
      child.once("exit", (c) => resolve(c))
      child.stdin?.end()
    })
    assert.strictEqual(code, 0, stderr)
    assert.deepStrictEqual(errors, [])
  })
})
