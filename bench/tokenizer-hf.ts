/**
 * src/retrieval/TokenizerHf.ts against @huggingface/tokenizers (tokenizers.js), side by side on the same inputs. This
 * bench decided the question: our own WordPiece/Unigram pipeline gave identical ids at 0.68–0.75× the library's speed,
 * so TokenizerHf now wraps the library (the ratio it prints today is the wrapper's overhead). Inputs: the
 * tokenizer.json files of test/retrieval/TokenizerHf.test.ts (BERT WordPiece over its hand-made vocabulary, and the
 * Unigram one), plus the BERT one over a vocabulary of the generated world's words, encoding 5,000 tool documents of
 * the world (every 10th) and the tests' edge cases (accents, CJK, control characters, added tokens). It loads the library from a
 * scratch folder, so any version can be measured against the pinned one: install it there (`cd /tmp/libmeasure && npm i @huggingface/tokenizers`), or point
 * LIBMEASURE at another one. Run: `npx tsx bench/tokenizer-hf.ts [seconds-per-measurement]`.
 */
import { Argument } from "effect/cli"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as BenchFlags from "./BenchFlags.ts"
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import * as Document from "../src/retrieval/Document.ts"
import * as TokenizerHf from "../src/retrieval/TokenizerHf.ts"
import * as World from "../src/toolenv/world/World.ts"

const { seconds } = await BenchFlags.parse("tokenizer-hf", "TokenizerHf against @huggingface/tokenizers, side by side", {
  seconds: Argument.Finite("seconds").pipe(
    Argument.withSchema(RunConfig.FiniteIn({ minimum: 0.2, maximum: 600 })),
    Argument.withDescription("seconds per measurement (0.2–600)"),
    Argument.withDefault(1)
  )
})
const scratch = process.env["LIBMEASURE"] ?? "/tmp/libmeasure"

// The slice of tokenizers.js's API the bench uses.
interface HfJsTokenizer {
  readonly encode: (text: string) => { readonly ids: ReadonlyArray<number>; readonly tokens: ReadonlyArray<string> }
}
type HfJsClass = new (tokenizer: object, config: object) => HfJsTokenizer

const loadLibrary = (): { readonly Tokenizer: HfJsClass; readonly version: string } | string => {
  const req = createRequire(path.join(scratch, "package.json"))
  try {
    req.resolve("@huggingface/tokenizers")
  } catch {
    return `skipped: @huggingface/tokenizers is not installed in ${scratch} (cd ${scratch} && npm i @huggingface/tokenizers)`
  }
  const mod = req("@huggingface/tokenizers") as { readonly Tokenizer: HfJsClass }
  // The package's exports do not include its package.json: read it beside the installed module.
  const manifest = path.join(scratch, "node_modules", "@huggingface", "tokenizers", "package.json")
  const version = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as { readonly version: string }).version : "?"
  return { Tokenizer: mod.Tokenizer, version }
}

const loaded = loadLibrary()
if (typeof loaded === "string") {
  console.log(loaded)
  process.exit(0)
}

// ------------------------------------------------------------------------------------------------------------------
// The tokenizer.json files (the BERT and Unigram ones are those of test/retrieval/TokenizerHf.test.ts)

const bertVocab: Record<string, number> = {
  "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "##aff": 5, "##able": 6, "hello": 7, ",": 8, "world": 9,
  "!": 10, "##s": 11, "cafe": 12, "run": 13, "##ning": 14, "weather": 15, "in": 16, "paris": 17, "?": 18, "a": 19,
  "##b": 20, "##c": 21, "[MASK]": 22
}

const bertTokenizerJson = (vocab: Record<string, number>) => ({
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [
    { id: 0, content: "[PAD]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    { id: 1, content: "[UNK]", special: true },
    { id: 2, content: "[CLS]", special: true },
    { id: 3, content: "[SEP]", special: true },
    { id: 22, content: "[MASK]", special: true }
  ],
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: {
    type: "TemplateProcessing",
    single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
    pair: [],
    special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } }
  },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab }
})

const unigramJson = {
  normalizer: { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Lowercase" }] },
  pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true },
  post_processor: {
    type: "TemplateProcessing",
    single: [{ Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } }],
    special_tokens: { "</s>": { id: "</s>", ids: [1], tokens: ["</s>"] } }
  },
  model: {
    type: "Unigram",
    unk_id: 0,
    vocab: [["<unk>", 0], ["</s>", 0], ["\u2581hel", -1], ["lo", -2], ["\u2581hello", -1.5], ["\u2581", -3], ["h", -4],
      ["e", -4], ["l", -4], ["o", -4], ["\u2581world", -2], ["wor", -3], ["ld", -3]]
  }
}

// ------------------------------------------------------------------------------------------------------------------
// Inputs: every tool document of the generated world, plus the tests' edge cases

const world = World.make({ seed: World.defaultSeed })
// Every 10th tool of the 50k-tool world (5,000 documents): the whole world takes ~25 s per pass per tokenizer.
const documents = world.library.tools.filter((_, i) => i % 10 === 0).map((spec) => Document.toolText(spec))
const edgeCases = [
  "Unaffable", "running", "abc", "Hello, World!", "  CAFÉ  ", "Weather in Paris?", "hello xyz world", "unx",
  "hello\u0000 world\u200b", "hello\u0007world", "你好", "hello\tworld\n", "hello [MASK] world", "Hello world", "hezz", "hezzlo"
]
const texts = [...edgeCases, ...documents]

// A realistic WordPiece vocabulary: the test's, then the world's 8,000 most frequent lower-cased words, then "##"
// pieces for every letter and digit and a few suffixes, so most words split into known pieces.
const worldVocab = ((): Record<string, number> => {
  const vocab: Record<string, number> = { ...bertVocab }
  let next = Math.max(...Object.values(vocab)) + 1
  const counts = new Map<string, number>()
  for (const d of documents) for (const w of d.toLowerCase().match(/[a-z0-9]+/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1)
  const frequent = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 8_000).map(([w]) => w)
  const pieces = [...frequent, ..."abcdefghijklmnopqrstuvwxyz0123456789".split(""),
    ...["s", "es", "ed", "ing", "er", "ly", "tion", ..."abcdefghijklmnopqrstuvwxyz0123456789".split("")].map((s) => `##${s}`),
    ".", "_", "-", ":", ";", "(", ")", "/", "'", "\"", "[", "]", "{", "}"]
  for (const p of pieces) if (vocab[p] === undefined) vocab[p] = next++
  return vocab
})()

const subjects: ReadonlyArray<{ readonly name: string; readonly json: object }> = [
  { name: "BERT WordPiece, test vocabulary (23)", json: bertTokenizerJson(bertVocab) },
  { name: `BERT WordPiece, world vocabulary (${Object.keys(worldVocab).length})`, json: bertTokenizerJson(worldVocab) },
  { name: "Unigram (test vocabulary)", json: unigramJson }
]

// ------------------------------------------------------------------------------------------------------------------

const rate = (encode: (text: string) => unknown): number => {
  let n = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    for (const t of texts) encode(t)
    n += texts.length
  }
  return n / ((performance.now() - start) / 1000)
}

console.log(`node ${process.version}, @huggingface/tokenizers ${loaded.version}, load ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`)
console.log(`${texts.length} texts (${edgeCases.length} edge cases + ${documents.length} tool documents, ${(texts.reduce((a, t) => a + t.length, 0) / 1000).toFixed(0)} k chars)`)
for (const subject of subjects) {
  // No truncation on our side either: tokenizers.js applies none unless asked.
  const ours = Effect.runSync(TokenizerHf.parse(JSON.stringify(subject.json), subject.name, { maxLength: 1_000_000 }))
  // tokenizers.js refuses a file without "decoder" or "added_tokens" (ours accepts one): give it the matching ones.
  const construct = (json: object): HfJsTokenizer | string => {
    try {
      return new loaded.Tokenizer(json, {})
    } catch (e) {
      return e instanceof Error ? e.message : String(e)
    }
  }
  const asIs = construct(subject.json)
  const theirs = typeof asIs !== "string"
    ? asIs
    : construct({ added_tokens: [], ...subject.json, decoder: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true } })
  if (typeof asIs === "string") console.log(`  tokenizers.js rejects the file as it is (${asIs}); measured with a Metaspace decoder and empty added_tokens added`)
  if (typeof theirs === "string") {
    console.log(`${subject.name}: tokenizers.js cannot load it: ${theirs}`)
    continue
  }
  let same = 0
  let firstDiff: string | undefined
  for (const t of texts) {
    const a = ours.encode(t).ids
    const b = theirs.encode(t).ids
    if (a.length === b.length && a.every((id, i) => id === b[i])) same++
    else firstDiff ??= `${JSON.stringify(t.slice(0, 60))}: ours [${a.slice(0, 12).join(",")}${a.length > 12 ? ",…" : ""}] (${a.length}) vs theirs [${b.slice(0, 12).join(",")}${b.length > 12 ? ",…" : ""}] (${b.length})`
  }
  rate((t) => ours.encode(t))
  rate((t) => theirs.encode(t))
  const runs: Array<readonly [number, number]> = []
  for (let r = 0; r < 3; r++) runs.push([rate((t) => ours.encode(t)), rate((t) => theirs.encode(t))])
  const bestOurs = Math.max(...runs.map((r) => r[0]))
  const bestTheirs = Math.max(...runs.map((r) => r[1]))
  console.log(`${subject.name}: identical ids for ${same}/${texts.length} texts; ours ${bestOurs.toFixed(0)} texts/s, tokenizers.js ${bestTheirs.toFixed(0)} texts/s, ours/theirs ${(bestOurs / bestTheirs).toFixed(2)} (runs: ${runs.map(([a, b]) => (a / b).toFixed(2)).join(", ")})`)
  if (firstDiff !== undefined) console.log(`  first difference: ${firstDiff}`)
}
