import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { defaultOptions, makeTokenizer, plainOptions, stopWords, tokenize } from "../../src/retrieval/Tokenize.ts"

describe("Text.tokenize", () => {
  it("plain: lowercase runs of letters and digits, nothing removed", () => {
    expect(tokenize("Random_Word_API - Get Word by Length, v1/status", plainOptions)).toEqual([
      "random", "word", "api", "get", "word", "by", "length", "v1", "status"
    ])
    expect(tokenize("getWordByLength I'd", plainOptions)).toEqual(["getwordbylength", "i", "d"])
  })

  it("splits camelCase, acronyms and letter/digit boundaries", () => {
    const split = { ...plainOptions, splitIdentifiers: true }
    expect(tokenize("getWordByLength", split)).toEqual(["get", "word", "by", "length"])
    expect(tokenize("HTMLParser XMLHttpRequest", split)).toEqual(["html", "parser", "xml", "http", "request"])
    expect(tokenize("covid19 mp3 v1", split)).toEqual(["covid", "19", "mp", "3", "v", "1"])
    expect(tokenize("snake_case_name", split)).toEqual(["snake", "case", "name"])
    expect(tokenize("IDs of URLs", split)).toEqual(["ids", "of", "urls"])
  })

  it("keeps the whole run beside its parts when asked", () => {
    expect(tokenize("getWord plain", { ...plainOptions, splitIdentifiers: true, keepCompounds: true })).toEqual([
      "get", "word", "getword", "plain"
    ])
  })

  it("drops stop words and clitics, then stems (Porter)", () => {
    expect(tokenize("I'd like the user's weather forecasts for these cities", defaultOptions)).toEqual([
      "user", "weather", "forecast", "citi"
    ])
    expect(tokenize("Get exchange rates of currencies", defaultOptions)).toEqual(["exchang", "rate", "currenc"])
    expect(stopWords.has("the")).toBe(true)
    expect(stopWords.has("weather")).toBe(false)
  })

  it("leaves digits and non-English letters intact, unless numbers are dropped", () => {
    expect(tokenize("Café 98765", defaultOptions)).toEqual(["café", "98765"])
    expect(tokenize("Café 98765 v1", { ...defaultOptions, dropNumbers: true })).toEqual(["café", "v"])
  })

  it("every token is a non-empty lowercase run of letters/digits, never a stop word (property)", () => {
    const stemming = makeTokenizer(defaultOptions)
    const unstemmed = makeTokenizer({ ...defaultOptions, stem: false })
    const words = fc.constantFrom("The", "user's", "getWordByLength", "API", "v1", "Weather", "and", "I'd", "_", "-", " ", "é", "42")
    fc.assert(fc.property(fc.array(fc.oneof(fc.string({ maxLength: 6 }), words), { maxLength: 12 }), (parts) => {
      const s = parts.join("")
      for (const t of stemming.tokens(s)) {
        expect(t).toMatch(/^[\p{L}\p{M}\p{N}]+$/u)
        expect(t).toBe(t.toLowerCase())
      }
      for (const t of unstemmed.tokens(s)) expect(stopWords.has(t)).toBe(false)
    }))
  })

  it("plain tokens are exactly the lowercase words that were joined (property)", () => {
    fc.assert(fc.property(fc.array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { maxLength: 10 }), (words) => {
      expect(tokenize(words.join(" - "), plainOptions)).toEqual(words)
    }))
  })
})
