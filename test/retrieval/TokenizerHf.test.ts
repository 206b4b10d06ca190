import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import * as fc from "fast-check"
import * as TokenizerHf from "../../src/retrieval/TokenizerHf.ts"

/** A BERT-style tokenizer.json over a hand-made vocabulary. */
export const bertVocab: Record<string, number> = {
  "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "un": 4, "##aff": 5, "##able": 6, "hello": 7, ",": 8, "world": 9,
  "!": 10, "##s": 11, "cafe": 12, "run": 13, "##ning": 14, "weather": 15, "in": 16, "paris": 17, "?": 18, "a": 19,
  "##b": 20, "##c": 21, "[MASK]": 22
}

export const bertTokenizerJson = (overrides: Record<string, unknown> = {}) => ({
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
  model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab: bertVocab },
  ...overrides
})

const build = (json: unknown, maxLength?: number) =>
  Effect.runSync(TokenizerHf.parse(JSON.stringify(json), "tokenizer.json", maxLength === undefined ? {} : { maxLength }))

describe("TokenizerHf WordPiece (BERT)", () => {
  const tok = build(bertTokenizerJson())

  it("splits words into the longest vocabulary pieces with ## continuations", () => {
    expect(tok.encode("Unaffable").ids).toEqual([2, 4, 5, 6, 3])
    expect(tok.encode("Unaffable").tokens).toEqual(["[CLS]", "un", "##aff", "##able", "[SEP]"])
    expect(tok.encode("running").ids).toEqual([2, 13, 14, 3])
    expect(tok.encode("abc").ids).toEqual([2, 19, 20, 21, 3])
  })

  it("lowercases, strips accents and isolates punctuation", () => {
    expect(tok.encode("Hello, World!").ids).toEqual([2, 7, 8, 9, 10, 3])
    expect(tok.encode("  CAFÉ  ").ids).toEqual([2, 12, 3])
    expect(tok.encode("Weather in Paris?").ids).toEqual([2, 15, 16, 17, 18, 3])
  })

  it("gives [UNK] for a word with no segmentation, one per word", () => {
    expect(tok.encode("hello xyz world").ids).toEqual([2, 7, 1, 9, 3])
    // "unx": "un" matches but "##x" does not, so the whole word is unknown
    expect(tok.encode("unx").ids).toEqual([2, 1, 3])
  })

  it("removes control characters and spaces out CJK ideographs", () => {
    expect(tok.encode("hello\u0000 world\u200b").ids).toEqual([2, 7, 9, 3])
    expect(tok.encode("hello\u0007world").ids).toEqual([2, 1, 3])
    expect(tok.encode("你好").ids).toEqual([2, 1, 1, 3])
    expect(tok.encode("hello\tworld\n").ids).toEqual([2, 7, 9, 3])
  })

  it("matches added special tokens verbatim before normalisation", () => {
    expect(tok.encode("hello [MASK] world").ids).toEqual([2, 7, 22, 9, 3])
  })

  it("truncates to the maximum length, special tokens included", () => {
    const short = build(bertTokenizerJson(), 4)
    expect(short.encode("hello world hello world").ids).toEqual([2, 7, 9, 3])
    const fromFile = build(bertTokenizerJson({ truncation: { max_length: 5, strategy: "LongestFirst", stride: 0, direction: "Right" } }))
    expect(fromFile.maxLength).toBe(5)
    expect(fromFile.encode("hello world hello world").ids).toEqual([2, 7, 9, 7, 3])
    const left = build(bertTokenizerJson({ truncation: { max_length: 4, direction: "Left" } }))
    expect(left.encode("hello world paris").ids).toEqual([2, 9, 17, 3])
  })

  it("supports BertProcessing and no post-processor", () => {
    const bert = build(bertTokenizerJson({ post_processor: { type: "BertProcessing", sep: ["[SEP]", 3], cls: ["[CLS]", 2] } }))
    expect(bert.encode("hello").ids).toEqual([2, 7, 3])
    expect(bert.encode("hello").typeIds).toEqual([0, 0, 0])
    const none = build(bertTokenizerJson({ post_processor: null }))
    expect(none.encode("hello world").ids).toEqual([7, 9])
  })

  it("keeps accents when the normalizer says strip_accents false", () => {
    const keep = build(bertTokenizerJson({
      normalizer: { type: "BertNormalizer", lowercase: true, strip_accents: false, clean_text: true, handle_chinese_chars: true }
    }))
    expect(keep.encode("café").ids).toEqual([2, 1, 3])
  })

  it("pads with the [PAD] id", () => {
    expect(tok.padId).toBe(0)
  })

  it("every id is in the vocabulary and the output is framed by [CLS] … [SEP] (property)", () => {
    const ids = new Set(Object.values(bertVocab))
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (text) => {
      const enc = tok.encode(text)
      expect(enc.ids[0]).toBe(2)
      expect(enc.ids.at(-1)).toBe(3)
      expect(enc.ids.every((id) => ids.has(id))).toBe(true)
      expect(enc.typeIds.length).toBe(enc.ids.length)
    }))
  })
})

describe("TokenizerHf Unigram", () => {
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

  it("picks the segmentation with the highest total score", () => {
    const tok = build(unigramJson)
    expect(tok.encode("Hello world").tokens).toEqual(["\u2581hello", "\u2581world", "</s>"])
    expect(tok.encode("Hello world").ids).toEqual([4, 10, 1])
    expect(tok.encode("hello").ids).toEqual([4, 1])
  })

  it("fuses consecutive unknown characters into one <unk>", () => {
    const tok = build(unigramJson)
    expect(tok.encode("hezz").ids).toEqual([5, 6, 7, 0, 1])
    const ids = tok.encode("hezzlo").ids
    expect(ids.filter((id) => id === 0).length).toBe(1)
    expect(ids.at(-1)).toBe(1)
  })
})

describe("TokenizerHf Sequence pre-tokenizer", () => {
  it("applies its children in order", () => {
    const tok = build(bertTokenizerJson({
      normalizer: { type: "Lowercase" },
      pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "Punctuation" }] }
    }))
    expect(tok.encode("Hello, world!").tokens).toEqual(["[CLS]", "hello", ",", "world", "!", "[SEP]"])
  })

  it("Punctuation alone isolates punctuation but keeps whitespace inside a piece; BertPreTokenizer also splits there", () => {
    const punctuation = build(bertTokenizerJson({ normalizer: { type: "Lowercase" }, pre_tokenizer: { type: "Punctuation" } }))
    expect(punctuation.encode("hello world,hello").tokens).toEqual(["[CLS]", "[UNK]", ",", "hello", "[SEP]"])
    const bert = build(bertTokenizerJson({ normalizer: { type: "Lowercase" } }))
    expect(bert.encode("hello world,hello").tokens).toEqual(["[CLS]", "hello", "world", ",", "hello", "[SEP]"])
  })
})

describe("TokenizerHf errors", () => {
  const error = (text: string) =>
    Effect.runSync(Effect.flip(TokenizerHf.parse(text, "models/x/tokenizer.json")))

  it("names an unsupported model type", () => {
    const e = error(JSON.stringify(bertTokenizerJson({ model: { type: "OddModel", vocab: { a: 0 } } })))
    expect(e._tag).toBe("TokenizerError")
    expect(e.source).toBe("models/x/tokenizer.json")
    expect(e.message).toContain("\"OddModel\"")
  })

  it("names an unsupported normalizer and pre-tokenizer", () => {
    expect(error(JSON.stringify(bertTokenizerJson({ normalizer: { type: "Weird" } }))).message).toMatch(/normalizer type:? "?Weird/i)
    expect(error(JSON.stringify(bertTokenizerJson({ pre_tokenizer: { type: "Odd" } }))).message).toMatch(/pre-?_?tokenizer type:? "?Odd/i)
  })

  it("names the first unsupported child of a Sequence normalizer or pre-tokenizer", () => {
    const normalizers = [{ type: "Lowercase" }, { type: "Weird" }, { type: "Odd" }]
    const n = error(JSON.stringify(bertTokenizerJson({ normalizer: { type: "Sequence", normalizers } }))).message
    expect(n).toContain("Weird")
    expect(n).not.toContain("Odd")
    const pretokenizers = [{ type: "WhitespaceSplit" }, { type: "Strange" }, { type: "Other" }]
    const p = error(JSON.stringify(bertTokenizerJson({ pre_tokenizer: { type: "Sequence", pretokenizers } }))).message
    expect(p).toContain("Strange")
    expect(p).not.toContain("Other")
  })

  it("rejects text that is not JSON or lacks the model", () => {
    expect(error("{ nope").source).toBe("models/x/tokenizer.json")
    expect(error(JSON.stringify({ normalizer: null })).message).toContain("model")
  })

  it("fromJson reports a WordPiece model whose vocab is a list", () => {
    const r = TokenizerHf.fromJson({ model: { type: "WordPiece", vocab: [["a", 0]] } })
    expect(Result.isFailure(r)).toBe(true)
  })
})
