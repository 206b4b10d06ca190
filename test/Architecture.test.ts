import { assert, describe, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"
import { repoRoot } from "../src/io/DataPath.ts"

/**
 * The layout's rules (docs/ARCHITECTURE.md), checked on the source: stages in order, a lower stage never imports a
 * higher one, no import cycle (type imports included), src/math pure, no two modules with one file name, layers/ in
 * its dependency rooms, and bench/ and studies/ imported by no library or program code.
 */
const stages = ["domain", "math", "io", "protocol", "toolenv", "retrieval", "agent", "runtime", "judge", "eval", "benchmarks", "service", "training"]
/** The rank of a stage: math and io are siblings (io is infrastructure any stage may use; neither imports the other). */
const rank = (stage: string): number => (stage === "io" ? 1 : stages.indexOf(stage) - (stages.indexOf(stage) > 2 ? 1 : 0))

/**
 * The rooms of layers/, one per dependency a layer brings (docs/ARCHITECTURE.md): an OpenAI-compatible model, storage
 * (SQLite, PostgreSQL, Parquet), the HTTP/MCP server, onnxruntime, data folders on disk. At the root: the composed
 * layers and what every program shares.
 */
const layerRooms = ["model", "storage", "server", "onnx", "files"]
const layerRoot = ["App.ts", "BfclRun.ts", "Otlp.ts", "PipelineWorkers.ts", "index.ts"]

const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [join(dir, e.name)] : []
  )

interface Import {
  readonly from: string
  readonly to: string
  readonly typeOnly: boolean
  readonly module: string
}

const importsOf = (file: string): Array<Import> => {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")
  const out: Array<Import> = []
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?["']([^"']+)["']/g)) {
    const spec = m[2] as string
    out.push({ from: file, to: spec.startsWith(".") ? resolve(dirname(file), spec) : spec, typeOnly: m[1] !== undefined, module: spec })
  }
  return out
}

const src = join(repoRoot, "src")
const sourceFiles = filesUnder(src)
const stageOf = (file: string): string => relative(src, file).split("/")[0] as string

describe("architecture", () => {
  it("every module of src/ sits in a known stage folder (index.ts aside)", () => {
    const strays = sourceFiles.filter((f) => relative(src, f) !== "index.ts" && !stages.includes(stageOf(f)))
    assert.deepStrictEqual(strays.map((f) => relative(repoRoot, f)), [])
  })

  it("no module imports a module of a higher stage", () => {
    const violations = sourceFiles.filter((f) => relative(src, f) !== "index.ts").flatMap((f) =>
      importsOf(f).filter((i) => i.to.startsWith(src)).filter((i) => rank(stageOf(i.to)) > rank(stageOf(f)))
        .map((i) => `${relative(src, f)} -> ${relative(src, i.to)}`)
    )
    assert.deepStrictEqual(violations, [])
  })

  it("src/math imports no Effect, no node: module and nothing but src/math and src/domain types", () => {
    const bad = sourceFiles.filter((f) => stageOf(f) === "math").flatMap((f) =>
      importsOf(f).filter((i) =>
        !(i.to.startsWith(join(src, "math"))) && !(i.to.startsWith(join(src, "domain")) && i.typeOnly)
      ).map((i) => `${relative(src, f)} -> ${i.module}`)
    )
    assert.deepStrictEqual(bad, [])
  })

  it("no import cycle among src, layers, programs, bench and studies (type imports included)", () => {
    const files = ["src", "layers", "programs", "bench", "studies"].flatMap((d) => filesUnder(join(repoRoot, d)))
    const graph = new Map(files.map((f) => [f, importsOf(f).map((i) => (i.to.endsWith(".ts") ? i.to : `${i.to}.ts`)).filter((t) => t.startsWith(repoRoot))]))
    const state = new Map<string, "open" | "done">()
    const cycles: Array<string> = []
    const visit = (f: string, trail: Array<string>): void => {
      if (state.get(f) === "done") return
      if (state.get(f) === "open") {
        cycles.push([...trail.slice(trail.indexOf(f)), f].map((x) => relative(repoRoot, x)).join(" -> "))
        return
      }
      state.set(f, "open")
      for (const t of graph.get(f) ?? []) visit(t, [...trail, f])
      state.set(f, "done")
    }
    for (const f of files) visit(f, [])
    assert.deepStrictEqual(cycles, [])
  })

  it("no two modules of src/ and layers/ share a file name", () => {
    const names = ["src", "layers"].flatMap((d) => filesUnder(join(repoRoot, d))).map((f) => basename(f)).filter((n) => n !== "index.ts")
    const twice = [...new Set(names.filter((n, i) => names.indexOf(n) !== i))]
    assert.deepStrictEqual(twice, [])
  })

  it("every module of layers/ sits in a dependency room or is one of the composed root modules", () => {
    const layers = join(repoRoot, "layers")
    const strays = filesUnder(layers).map((f) => relative(layers, f)).filter((f) =>
      f.includes("/") ? !layerRooms.includes(f.split("/")[0] as string) || f.split("/").length > 2 : !layerRoot.includes(f)
    )
    assert.deepStrictEqual(strays, [])
  })

  it("src/, layers/ and programs/ import nothing from bench/ or studies/ (and bench/ nothing from studies/)", () => {
    const bad = ["src", "layers", "programs", "bench"].flatMap((d) => filesUnder(join(repoRoot, d))).flatMap((f) =>
      importsOf(f).filter((i) =>
        i.to.startsWith(join(repoRoot, "studies")) || (i.to.startsWith(join(repoRoot, "bench")) && !f.startsWith(join(repoRoot, "bench")))
      ).map((i) => `${relative(repoRoot, f)} -> ${i.module}`)
    )
    assert.deepStrictEqual(bad, [])
  })
})

/**
 * Paths of other projects' files the docs cite (not this repository's), and the placeholder names the docs use for
 * "a new module here" — the only repo-looking paths that need not exist.
 */
const foreignPaths = new Set(["src/openenv/core/env_server/http_server.py"])
const placeholder = /(^|\/)(x|X|XJudge|JudgeX|PolicyX|index\.d)\.ts$/

const textFilesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    ["node_modules", "dist", "fixtures", "__pycache__"].includes(e.name)
      ? []
      : e.isDirectory()
      ? textFilesUnder(join(dir, e.name))
      : /\.(ts|md|py|mjs)$/.test(e.name)
      ? [join(dir, e.name)]
      : []
  )

describe("references", () => {
  it("every repository path the README, docs and code name exists (a move updates its mentions)", () => {
    const files = [join(repoRoot, "README.md"), ...["docs", "src", "layers", "programs", "bench", "studies", "test", "integrations"].flatMap((d) => textFilesUnder(join(repoRoot, d)))]
    const stale = files.flatMap((f) =>
      [...readFileSync(f, "utf8").matchAll(/(?<![\w./-])((?:src|layers|programs|bench|studies|test|integrations|docs)\/[\w./-]+\.(?:ts|py|md|mjs))(?![\w/-])/g)]
        .map((m) => m[1] as string)
        .filter((p) => !foreignPaths.has(p) && !placeholder.test(p) && !existsSync(join(repoRoot, p)))
        .map((p) => `${relative(repoRoot, f)}: ${p}`)
    )
    assert.deepStrictEqual([...new Set(stale)], [])
  })
})
