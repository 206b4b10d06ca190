import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataDir, dataPathIfPresent } from "../../src/io/DataPath.ts"
import { rng } from "../../src/math/Random.ts"
import * as DensePairs from "../../src/retrieval/DensePairs.ts"
import * as DenseSources from "../../src/retrieval/DenseSources.ts"
import * as Document from "../../src/retrieval/Document.ts"
import * as StableToolBench from "../../src/toolenv/importers/StableToolBench.ts"

describe("DenseSources", () => {
  it("converts the public-apis table: one tool per row, duplicates dropped, bad rows named", () => {
    const rows = [
      { API: "Cat Facts", Description: "Daily cat facts", Category: "Animals", Auth: "No" },
      { API: "Cat Facts", Description: "Daily cat facts", Category: "Animals" },
      { API: "Open Meteo", Description: "Global weather forecast API", Category: "Weather" }
    ]
    const ok = DenseSources.convertPublicApis(rows, "table.json")
    if (Result.isFailure(ok)) return expect.unreachable(ok.failure.message)
    expect(ok.success.map((t) => [t.group, t.category, t.description])).toEqual([
      ["Cat Facts", "Animals", "Daily cat facts"],
      ["Open Meteo", "Weather", "Global weather forecast API"]
    ])
    expect(new Set(ok.success.map((t) => t.name)).size).toBe(2)
    const bad = DenseSources.convertPublicApis([{ API: "X", Category: "Y" }], "table.json")
    if (Result.isSuccess(bad)) return expect.unreachable("a row without Description decoded")
    expect(bad.failure._tag).toBe("ImportError")
    expect(bad.failure.source).toBe("table.json")
    expect(bad.failure.message).toContain("Description")
  })

  it.effect("a missing source file is an ImportError naming it", () =>
    Effect.gen(function*() {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), "dense-sources-"))
      const error = yield* Effect.flip(DenseSources.loadAll(root, ["public-apis"]))
      expect(error._tag).toBe("ImportError")
      expect(error.source).toContain(path.join(root, "public-apis", "public_apis_table.json"))
    }))

  it("lists documentation files only: no StableToolBench, BFCL or API-Bank query / test folder", () => {
    for (const s of DenseSources.sources) {
      const rel = s.path.join("/")
      expect(rel).not.toMatch(/stabletoolbench|solvable_queries|test_query_ids|bfcl|test-data|training-data|lv1-lv2|lv3|dev\.jsonl|test_/)
    }
  })

  const queryDir = dataPathIfPresent("stabletoolbench", "solvable_queries", "test_instruction")
  const haveSources = DenseSources.sources.every((s) => fs.existsSync(path.join(dataDir(), ...s.path)))
  it.skipIf(queryDir === undefined || !haveSources)(
    "no sentence of a StableToolBench test query appears in the training texts built from the sources (skipped without the data folder)",
    async () => {
      const dir = queryDir as string
      const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json")).map((f) => path.join(dir, f))
      const queries = (await Effect.runPromise(Effect.forEach(files, (f) => StableToolBench.loadQueryFile(f))))
        .flatMap((r) => r.queries.map((q) => q.query))
      expect(queries.length).toBeGreaterThan(400)
      // a benchmark sentence of 8+ words, normalised: copying a query, or any long part of one, would show here
      const normalise = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()
      const sentences = (text: string) => text.split(/(?<=[.!?])\s+/).map(normalise).filter((s) => s.split(" ").length >= 8)
      const benchmark = new Set(queries.flatMap(sentences))
      const whole = new Set(queries.map(normalise))
      expect(benchmark.size).toBeGreaterThan(400)

      const loaded = await Effect.runPromise(DenseSources.loadAll(dataDir()))
      const tools = loaded.flatMap((d) => d.tools)
      expect(tools.length).toBeGreaterThan(50_000)
      // the texts the trainer sees: every tool document, and pseudo-queries (made only of frame words and the tool's own
      // text, so a tenth of the tools, evenly spaced, checks the generator adds nothing else)
      const sample = tools.filter((_, i) => i % 10 === 0)
      const pairs = DensePairs.libraryPairs(sample, rng(7).fork("pairs"), DensePairs.defaultPairConfig)
      const texts = [...tools.map((t) => Document.toolText(t, Document.fieldNames)), ...pairs.map((p) => p.query)]
      const leaks = texts.filter((t) => whole.has(normalise(t)) || sentences(t).some((s) => benchmark.has(s)))
      expect(leaks.slice(0, 3)).toEqual([])
    },
    120_000
  )
})
