import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { rng } from "../../src/math/Random.ts"
import * as DenseCorpus from "../../src/retrieval/DenseCorpus.ts"
import * as DenseModel from "../../src/retrieval/DenseModel.ts"
import * as DenseTrain from "../../src/retrieval/DenseTrain.ts"
import type { StaticEncoding } from "../../src/retrieval/TokenizerStatic.ts"
import * as ToolBench from "../../src/toolenv/importers/ToolBench.ts"
import * as World from "../../src/toolenv/world/World.ts"

/** A small generated library (1,500 tools) and its corpus: 20% of the tool groups held out. */
const world = World.make({ size: 1500 })
const corpusOptions: DenseCorpus.CorpusOptions = {
  ...DenseCorpus.defaultCorpusOptions,
  dim: 32,
  buckets: 1024,
  heldOut: 0.2,
  validationQueriesPerTool: 2,
  minCount: 2,
  wordnetPairs: 0
}
const built = DenseCorpus.build(world.library.tools, undefined, corpusOptions, rng(3))
const trainConfig: DenseTrain.TrainConfig = { ...DenseTrain.defaultTrainConfig, dim: 32, steps: 150, batchSize: 64, seed: 5 }

const train = (config: DenseTrain.TrainConfig) => {
  const trainer = DenseTrain.makeTrainer(built.corpus, config)
  const losses: Array<number> = []
  for (let i = 0; i < config.steps; i++) losses.push(trainer.step())
  return { model: trainer.model, losses }
}

describe("DenseCorpus.build", () => {
  it("holds out whole tool groups: no training query points at a held-out tool", () => {
    const heldOut = new Set(built.validation.flatMap((q) => q.positives))
    expect(built.heldOutTools).toBeGreaterThan(100)
    expect(heldOut.size).toBe(built.heldOutTools)
    expect(built.corpus.queries.every((q) => q.positives.every((p) => !heldOut.has(p)))).toBe(true)
    const heldGroups = new Set([...heldOut].map((i) => world.library.tools[i]?.group))
    const trainGroups = new Set(built.corpus.queries.flatMap((q) => q.positives.map((i) => world.library.tools[i]?.group)))
    expect([...heldGroups].some((g) => trainGroups.has(g))).toBe(false)
    expect(built.corpus.docs.length).toBe(1500)
  })
})

describe("DenseTrain", () => {
  const first = train(trainConfig)

  it("a trained encoder beats an untrained one on held-out pseudo-queries", () => {
    const untrained = DenseTrain.makeTrainer(built.corpus, trainConfig).model
    const before = DenseTrain.validate(untrained, built.corpus.docs, built.validation)
    const after = DenseTrain.validate(first.model, built.corpus.docs, built.validation)
    expect(before.queries).toBeGreaterThan(300)
    expect(after.ndcg5).toBeGreaterThan(before.ndcg5 + 0.15)
    expect(after.recall5).toBeGreaterThan(before.recall5 + 0.15)
    // the loss falls: last 20 steps well under the first 20
    const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
    expect(mean(first.losses.slice(-20))).toBeLessThan(0.7 * mean(first.losses.slice(0, 20)))
  })

  it("retraining from the same seed reproduces the weights exactly; another seed does not", () => {
    const again = train(trainConfig)
    expect(Buffer.from(again.model.embeddings.buffer).equals(Buffer.from(first.model.embeddings.buffer))).toBe(true)
    expect(Buffer.from(again.model.weights.buffer).equals(Buffer.from(first.model.weights.buffer))).toBe(true)
    expect(again.losses).toEqual(first.losses)
    const other = train({ ...trainConfig, seed: 6, steps: 5 })
    expect(Buffer.from(other.model.embeddings.buffer).equals(Buffer.from(first.model.embeddings.buffer))).toBe(false)
  })

  it("pooling weights stay non-negative", () => {
    expect(first.model.weights.every((w) => w >= 0)).toBe(true)
  })
})

describe("DenseTrain.lossAndGradients", () => {
  // a tiny model where a finite difference is exact enough in float64-backed arithmetic
  const model: DenseModel.StaticModel = DenseModel.init(6, 4, rng(11))
  model.weights.set([1, 0.5, 2, 1.5, 0.8, 1.2])
  const enc = (ids: ReadonlyArray<number>, mass: ReadonlyArray<number>): StaticEncoding => ({
    ids: Int32Array.from(ids),
    mass: Float32Array.from(mass)
  })
  const batch: DenseTrain.Batch = {
    q: [enc([0, 1], [1, 1]), enc([2, 3], [2, 0.5]), enc([1, 4], [1, 1])],
    d: [enc([0, 5], [1, 1]), enc([3], [1]), enc([4, 2], [0.5, 1])],
    target: Int32Array.from([0, 1, 2]),
    rowMask: (i, j) => i === 2 && j === 0
  }
  const loss = () =>
    DenseTrain.lossAndGradients(model, batch, 0.5, new Float32Array(24), new Float32Array(6))

  it("matches central finite differences for embeddings and weights", () => {
    const gradE = new Float32Array(24)
    const gradW = new Float32Array(6)
    const touched = new Set<number>()
    DenseTrain.lossAndGradients(model, batch, 0.5, gradE, gradW, (r) => touched.add(r))
    expect([...touched].sort()).toEqual([0, 1, 2, 3, 4, 5])
    const h = 1e-2
    const check = (params: Float32Array, grads: Float32Array, i: number) => {
      const saved = params[i] ?? 0
      params[i] = saved + h
      const up = loss()
      params[i] = saved - h
      const down = loss()
      params[i] = saved
      expect(grads[i]).toBeCloseTo((up - down) / (2 * h), 2)
    }
    for (const i of [0, 3, 5, 9, 14, 17, 22]) check(model.embeddings, gradE, i)
    for (const i of [0, 2, 4, 5]) check(model.weights, gradW, i)
  })
})

describe("DenseTrain.checkCorpus: an empty or all-bad library is a typed error before training", () => {
  const folder = (files: Record<string, string>): string => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "paraagent-dense-lib-"))
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
      fs.writeFileSync(path.join(root, rel), content)
    }
    return root
  }
  const corpusOf = (dir: string) =>
    Effect.map(ToolBench.loadDirectory(dir), (loaded) => ({ loaded, built: DenseCorpus.build(loaded.tools, undefined, corpusOptions, rng(3)) }))

  it.effect("an empty folder: EmptyLibraryError naming the folder; the trainer steps without a TypeError", () =>
    Effect.gen(function*() {
      const dir = folder({})
      const { loaded, built: empty } = yield* corpusOf(dir)
      const error = yield* Effect.flip(DenseTrain.checkCorpus(empty.corpus, dir, loaded.report))
      expect(error._tag).toBe("EmptyLibraryError")
      expect(error.source).toBe(dir)
      expect(error.message).toBe("the library has no tool to train on (0 APIs loaded, 0 skipped)")
      const trainer = DenseTrain.makeTrainer(empty.corpus, { ...trainConfig, steps: 3 })
      expect([trainer.step(), trainer.step()]).toEqual([0, 0])
    }))

  it.effect("a folder of bad files: the error says how many were skipped and the first reason", () =>
    Effect.gen(function*() {
      const dir = folder({ "Data/broken.json": "{ not json", "Data/empty.json": JSON.stringify({ tool_name: "E", api_list: [] }) })
      const { loaded, built: bad } = yield* corpusOf(dir)
      const error = yield* Effect.flip(DenseTrain.checkCorpus(bad.corpus, dir, loaded.report))
      expect(error.source).toBe(dir)
      expect(error.message).toMatch(/^the library has no tool to train on \(0 APIs loaded, 2 skipped; first issue: Data\/broken\.json: tool file skipped: invalid JSON/)
    }))

  it.effect("a usable library passes the check", () =>
    Effect.gen(function*() {
      yield* DenseTrain.checkCorpus(built.corpus, "generated")
      expect(DenseTrain.trainable(built.corpus)).toBe(true)
    }))
})
