import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { hash32 } from "../../src/math/Random.ts"
import * as TokenizerStatic from "../../src/retrieval/TokenizerStatic.ts"

const vocab: TokenizerStatic.StaticVocab = {
  format: "paraagent-static-encoder",
  version: 1,
  text: { splitIdentifiers: true, keepCompounds: false, stopWords: true, stem: true },
  dropNumbers: true,
  vocab: ["weather", "forecast", "citi", "get"],
  buckets: 100,
  ngramMin: 3,
  ngramMax: 4,
  hashSeed: 9,
  maxTokens: 8,
  dim: 4
}
const tok = TokenizerStatic.make(vocab)

describe("TokenizerStatic", () => {
  it("maps vocabulary stems to their rows, with term frequency as mass", () => {
    const e = tok.encode("Weather forecasts for these cities; weather!")
    expect([...e.ids]).toEqual([0, 1, 2])
    expect([...e.mass]).toEqual([2, 1, 1])
    expect(tok.rows).toBe(104)
  })

  it("splits identifiers and drops stop words and numbers", () => {
    const e = tok.encode("getCityWeather 2024 the of")
    // "get" is an English stop word in the shared list; "city" stems to "citi"
    expect([...e.ids]).toEqual([2, 0])
  })

  it("spreads an unseen stem's unit mass over its hashed n-grams", () => {
    expect(TokenizerStatic.ngrams("vimeo", 3, 4)).toEqual(["<vi", "vim", "ime", "meo", "eo>", "<vim", "vime", "imeo", "meo>", "<vimeo>"])
    expect(TokenizerStatic.ngrams("ab", 3, 4)).toEqual(["<ab", "ab>", "<ab>"])
    const ids = tok.ngramIds("vimeo")
    expect(ids).toEqual(TokenizerStatic.ngrams("vimeo", 3, 4).map((g) => 4 + (hash32(g, 9) % 100)))
    const wide = TokenizerStatic.make({ ...vocab, maxTokens: 64 })
    const e = wide.encode("vimeo")
    expect(e.ids.length).toBe(new Set(ids).size)
    const total = [...e.mass].reduce((a, b) => a + b, 0)
    expect(total).toBeCloseTo(1, 6)
    expect([...e.ids].every((id) => id >= 4 && id < 104)).toBe(true)
  })

  it("keeps at most maxTokens distinct ids, the first in reading order", () => {
    const e = tok.encode("weather zzzqqq forecast yyyxxx city")
    expect(e.ids.length).toBe(8)
    expect(e.ids[0]).toBe(0)
  })

  it("pads a batch to its longest text with mass 0", () => {
    const b = TokenizerStatic.pad([tok.encode("weather forecast"), tok.encode(""), tok.encode("city")])
    expect(b.size).toBe(3)
    expect(b.length).toBe(2)
    expect([...b.ids]).toEqual([0n, 1n, 0n, 0n, 2n, 0n])
    expect([...b.mass]).toEqual([1, 1, 0, 0, 1, 0])
    expect(TokenizerStatic.pad([tok.encode("")]).length).toBe(1)
  })

  it("scales mass by idf: rare rows weigh more, absent rows most", () => {
    const docs = [tok.encode("weather forecast"), tok.encode("weather city"), tok.encode("weather")]
    const idf = TokenizerStatic.inverseDocumentFrequency(docs, tok.rows)
    expect(idf[0]).toBeCloseTo(Math.log(1 + 0.5 / 3.5), 6)
    expect(idf[1]).toBeCloseTo(Math.log(1 + 2.5 / 1.5), 6)
    expect(idf[3]).toBeCloseTo(Math.log(1 + 3.5 / 0.5), 6)
    const weighted = TokenizerStatic.weightByIdf(tok.encode("weather weather forecast"), idf, 1)
    expect(weighted.mass[0]).toBeCloseTo(2 * (idf[0] ?? 0), 6)
    expect(TokenizerStatic.weightByIdf(docs[0] as TokenizerStatic.StaticEncoding, idf, 0)).toBe(docs[0])
  })

  it("chooses the vocabulary by count, then code-point order, above a minimum", () => {
    const chosen = TokenizerStatic.chooseVocab(
      ["weather weather city", "city forecast", "zebra"],
      { text: vocab.text, dropNumbers: true, minCount: 2, maxSize: 10 },
      new Map([["zebra", 1]])
    )
    expect(chosen).toEqual(["citi", "weather", "zebra"])
  })

  it("every id is a row of the model (property)", () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (text) => {
      const e = tok.encode(text)
      expect([...e.ids].every((id) => id >= 0 && id < tok.rows)).toBe(true)
      expect([...e.mass].every((m) => m > 0)).toBe(true)
      expect(new Set(e.ids).size).toBe(e.ids.length)
    }))
  })

  it("rejects a vocabulary file with a wrong field or inconsistent sizes, naming the file", () => {
    const bad = Effect.runSync(Effect.flip(TokenizerStatic.parse(JSON.stringify({ ...vocab, format: "other" }), "m.vocab.json")))
    expect(bad._tag).toBe("VocabError")
    expect(bad.source).toBe("m.vocab.json")
    const sizes = Effect.runSync(Effect.flip(TokenizerStatic.parse(JSON.stringify({ ...vocab, ngramMin: 5, ngramMax: 3 }), "m.vocab.json")))
    expect(sizes.message).toContain("ngram=[5,3]")
    const ok = Effect.runSync(TokenizerStatic.parse(JSON.stringify(vocab), "m.vocab.json"))
    expect(ok.rows).toBe(104)
  })
})
