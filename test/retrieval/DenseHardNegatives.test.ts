import { describe, expect, it } from "@effect/vitest"
import { rng } from "../../src/math/Random.ts"
import * as Bm25 from "../../src/retrieval/Bm25.ts"
import * as DenseCorpus from "../../src/retrieval/DenseCorpus.ts"
import * as DenseHardNegatives from "../../src/retrieval/DenseHardNegatives.ts"
import * as DenseTrain from "../../src/retrieval/DenseTrain.ts"
import * as World from "../../src/toolenv/world/World.ts"

const world = World.make({ size: 800 })
const tools = world.library.tools
const corpusOptions: DenseCorpus.CorpusOptions = {
  ...DenseCorpus.defaultCorpusOptions,
  dim: 16,
  buckets: 512,
  heldOut: 0.2,
  minCount: 2,
  wordnetPairs: 0,
  hardNegatives: 3
}
const built = DenseCorpus.build(tools, undefined, corpusOptions, rng(3))

describe("DenseHardNegatives.mine", () => {
  it("keeps the best BM25 documents that are not answers, in BM25 order, skipping ineligible ones", () => {
    const index = Bm25.build(tools, Bm25.apiConfig)
    const canonical = Int32Array.from(tools, (_, i) => i)
    const target = tools[10]
    expect(target).toBeDefined()
    const query = { query: target?.description ?? "", positives: [10] }
    const ranked = Bm25.search(index, query.query, 20).map((h) => h.doc)
    const blocked = ranked.find((d) => d !== 10)
    const [mined] = DenseHardNegatives.mine(tools, [query], canonical, (d) => d !== blocked, 4)
    const expected = ranked.filter((d) => d !== 10 && d !== blocked).slice(0, 4)
    expect([...(mined ?? [])]).toEqual(expected)
    expect(expected.length).toBe(4)
  })

  it("never returns a document with a positive's text (canonical duplicates)", () => {
    const canonical = Int32Array.from(tools, (_, i) => i)
    // pretend document 11 is a copy of document 10
    canonical[11] = 10
    const [mined] = DenseHardNegatives.mine(tools, [{ query: `${tools[10]?.description} ${tools[11]?.description}`, positives: [10] }], canonical, () => true, 5)
    expect(mined?.includes(10)).toBe(false)
    expect(mined?.includes(11)).toBe(false)
  })

  it("0 per query mines nothing", () => {
    const out = DenseHardNegatives.mine(tools, [{ query: "weather", positives: [0] }], new Int32Array(tools.length), () => true, 0)
    expect(out.map((m) => m.length)).toEqual([0])
  })
})

describe("DenseCorpus.build with hardNegatives", () => {
  it("mines one list per training query, with no positive and no held-out document", () => {
    const mined = built.corpus.hardNegatives ?? []
    expect(mined.length).toBe(built.corpus.queries.length)
    const held = new Set(built.validation.flatMap((q) => q.positives))
    let nonEmpty = 0
    built.corpus.queries.forEach((q, i) => {
      const list = [...(mined[i] ?? [])]
      if (list.length > 0) nonEmpty++
      expect(list.length).toBeLessThanOrEqual(3)
      for (const d of list) {
        expect(q.positives.map((p) => built.corpus.canonical[p])).not.toContain(built.corpus.canonical[d])
        expect(held.has(d)).toBe(false)
      }
    })
    expect(nonEmpty).toBeGreaterThan(0.9 * built.corpus.queries.length)
  })

  it("training with mined negatives is deterministic, differs from training without, and still learns", () => {
    const config: DenseTrain.TrainConfig = { ...DenseTrain.defaultTrainConfig, dim: 16, steps: 60, batchSize: 32, seed: 5, hardNegativeRate: 1 }
    const run = (c: DenseTrain.TrainConfig) => {
      const trainer = DenseTrain.makeTrainer(built.corpus, c)
      const losses: Array<number> = []
      for (let i = 0; i < c.steps; i++) losses.push(trainer.step())
      return { model: trainer.model, losses }
    }
    const a = run(config)
    const b = run(config)
    const off = run({ ...config, hardNegativeRate: 0 })
    expect(b.losses).toEqual(a.losses)
    expect(Buffer.from(b.model.embeddings.buffer).equals(Buffer.from(a.model.embeddings.buffer))).toBe(true)
    expect(off.losses).not.toEqual(a.losses)
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((s, x) => s + x, 0) / xs.length
    expect(mean(a.losses.slice(-10))).toBeLessThan(mean(a.losses.slice(0, 10)))
  })
})
