/**
 * The training corpus of the static encoder from a tool library (and optionally WordNet): the vocabulary, the
 * tokenised documents and pseudo-queries, dictionary pairs, and held-out tool groups for validation.
 */
import type { ToolSpec } from "../domain/Tool.ts"
import type { Rng } from "../math/Random.ts"
import { unitHash } from "../math/Random.ts"
import type { Corpus, Query } from "./DenseTrain.ts"
import type { WordNet } from "./DenseWordNet.ts"
import * as DenseHardNegatives from "./DenseHardNegatives.ts"
import * as DensePairs from "./DensePairs.ts"
import * as Document from "./Document.ts"
import * as Text from "./Tokenize.ts"
import * as TokenizerStatic from "./TokenizerStatic.ts"

/** How the corpus is built. */
export interface CorpusOptions {
  readonly pairs: DensePairs.PairConfig
  /** Dictionary (WordNet) pairs at most; 0 for none. */
  readonly wordnetPairs: number
  /** Fraction of tool groups held out for validation (their tools get no training queries). */
  readonly heldOut: number
  /** Validation queries per held-out tool. */
  readonly validationQueriesPerTool: number
  /** Document fields embedded. */
  readonly fields: ReadonlyArray<Document.FieldName>
  /** Vocabulary: stems seen at least `minCount` times (WordNet lemmas count once each), at most `maxVocab`. */
  readonly minCount: number
  readonly maxVocab: number
  readonly buckets: number
  readonly ngramMin: number
  readonly ngramMax: number
  readonly hashSeed: number
  readonly maxTokens: number
  readonly dim: number
  /** BM25-mined hard negatives kept per training query (`DenseHardNegatives.mine`); 0 mines none. */
  readonly hardNegatives: number
}

/** The shipped encoder's corpus options. */
export const defaultCorpusOptions: CorpusOptions = {
  pairs: DensePairs.defaultPairConfig,
  wordnetPairs: 120_000,
  heldOut: 0.05,
  validationQueriesPerTool: 1,
  fields: Document.fieldNames,
  minCount: 3,
  maxVocab: 100_000,
  buckets: 32_768,
  ngramMin: 3,
  ngramMax: 5,
  hashSeed: 17,
  maxTokens: 256,
  dim: 128,
  hardNegatives: 0
}

/** The word options of the encoder's tokeniser (shared with the tuned BM25, numbers dropped). */
export const textOptions: Text.TextOptions = { ...Text.defaultOptions, dropNumbers: true }

/** A built corpus. */
export interface Built {
  readonly vocab: TokenizerStatic.StaticVocab
  readonly tokenizer: TokenizerStatic.StaticTokenizer
  readonly corpus: Corpus
  /** Pseudo-queries of held-out tools, scored against every document. */
  readonly validation: ReadonlyArray<Query>
  /** Number of held-out tools. */
  readonly heldOutTools: number
  /** A few generated queries, for logs. */
  readonly samples: ReadonlyArray<string>
}

/** Builds the corpus of a library. Deterministic from `rng`. */
export const build = (
  tools: ReadonlyArray<ToolSpec>,
  wordnet: WordNet | undefined,
  options: CorpusOptions,
  rng: Rng
): Built => {
  const heldSeed = rng.fork("held-out").int(2 ** 31)
  const held = tools.map((t) => unitHash(heldSeed, t.group) < options.heldOut)
  const trainIndex = tools.map((_, i) => i).filter((i) => !held[i])
  const trainTools = trainIndex.map((i) => tools[i] as ToolSpec)
  const pairs = DensePairs.libraryPairs(trainTools, rng.fork("pairs"), options.pairs, wordnet)
    .map((p) => ({ query: p.query, positives: p.positives.map((j) => trainIndex[j] ?? 0) }))
  const validationRng = rng.fork("validation")
  const validationPairs = tools.flatMap((tool, i) =>
    held[i]
      ? DensePairs.toolQueries(tool, options.validationQueriesPerTool, validationRng, options.pairs, wordnet)
        .map((query) => ({ query, positives: [i] }))
      : []
  )
  const dictionary = wordnet !== undefined && options.wordnetPairs > 0
    ? DensePairs.wordnetPairs(wordnet, rng.fork("wordnet"), options.wordnetPairs)
    : []
  const docTexts = tools.map((t) => Document.toolText(t, options.fields))

  const lemmaCounts = new Map<string, number>()
  if (wordnet !== undefined) {
    const words = Text.makeTokenizer(textOptions)
    for (const synset of wordnet.synsets.values()) {
      for (const lemma of synset.words) {
        for (const stem of words.tokens(lemma)) lemmaCounts.set(stem, (lemmaCounts.get(stem) ?? 0) + 1)
      }
    }
  }
  // validation queries are not counted: the vocabulary must not know held-out words
  const vocabList = TokenizerStatic.chooseVocab(
    (function*() {
      for (let i = 0; i < docTexts.length; i++) if (!held[i]) yield docTexts[i] ?? ""
      for (const p of pairs) yield p.query
      for (const p of dictionary) {
        yield p.query
        yield p.doc
      }
    })(),
    { text: textOptions, dropNumbers: true, minCount: options.minCount, maxSize: options.maxVocab },
    lemmaCounts
  )
  const vocab: TokenizerStatic.StaticVocab = {
    format: "paraagent-static-encoder",
    version: 1,
    text: {
      splitIdentifiers: textOptions.splitIdentifiers,
      keepCompounds: textOptions.keepCompounds,
      stopWords: textOptions.stopWords,
      stem: textOptions.stem
    },
    dropNumbers: true,
    vocab: vocabList,
    buckets: options.buckets,
    ngramMin: options.ngramMin,
    ngramMax: options.ngramMax,
    hashSeed: options.hashSeed,
    maxTokens: options.maxTokens,
    dim: options.dim
  }
  const tokenizer = TokenizerStatic.make(vocab)
  const docs = docTexts.map(tokenizer.encode)
  const canonical = new Int32Array(docs.length)
  const firstOfText = new Map<string, number>()
  docTexts.forEach((text, i) => {
    const first = firstOfText.get(text)
    if (first === undefined) firstOfText.set(text, i)
    canonical[i] = first ?? i
  })
  const byGroup = new Map<string, Array<number>>()
  trainIndex.forEach((i) => {
    const group = tools[i]?.group ?? ""
    const list = byGroup.get(group)
    if (list === undefined) byGroup.set(group, [i])
    else list.push(i)
  })
  // held-out documents are never negatives: validation ranks their queries against them
  const hardNegatives = options.hardNegatives > 0
    ? DenseHardNegatives.mine(tools, pairs, canonical, (doc) => held[doc] !== true, options.hardNegatives)
    : undefined
  return {
    vocab,
    tokenizer,
    corpus: {
      ...(hardNegatives === undefined ? {} : { hardNegatives }),
      rows: tokenizer.rows,
      docs,
      canonical,
      queries: pairs.map((p) => ({ encoding: tokenizer.encode(p.query), positives: p.positives })),
      clusters: [...byGroup.values()],
      textPairs: dictionary.map((p) => ({ query: tokenizer.encode(p.query), doc: tokenizer.encode(p.doc) }))
    },
    validation: validationPairs.map((p) => ({ encoding: tokenizer.encode(p.query), positives: p.positives })),
    heldOutTools: held.filter((h) => h).length,
    samples: pairs.slice(0, 6).map((p) => p.query)
  }
}
