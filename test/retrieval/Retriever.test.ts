import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Retriever, maxPagedRank, pageOf, searchPage } from "../../src/retrieval/Retriever.ts"
import * as World from "../../src/toolenv/world/World.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"

const world = World.make({ seed: 7, size: 1_500 })
const provide = <A, E>(effect: Effect.Effect<A, E, Retriever>) =>
  effect.pipe(Effect.provide(Retriever.layerBm25), Effect.provideService(ToolLibrary, world.library))

/** Queries of the kinds agents send: tool descriptions' words, request-like phrases, one word. */
const queries = [
  "sentiment analysis of a text", "weather stations in a city", "books by genre", "search company by name",
  "the page count of the first book", "recipe calories", "flights from an airport", "stock price history",
  "translate text", "domain monthly visits"
]

describe("Retriever paging [ours]", () => {
  it("pageOf counts earlier searches of the same query text on the path, and earlier in the turn", () => {
    const step = (...qs: Array<string>) => ({ searches: qs.map((query) => ({ query })) })
    assert.strictEqual(pageOf([], "a"), 0)
    assert.strictEqual(pageOf([step("a", "b"), step("b"), step("a")], "a"), 2)
    assert.strictEqual(pageOf([step("a", "b"), step("b")], "b", 1), 3)
    assert.strictEqual(pageOf([step("a ")], "a"), 0)
  })

  it.effect("page p is ranks p·k+1 … (p+1)·k of the deeper ranking: pages are disjoint, in rank order, and end at maxPagedRank", () =>
    provide(Effect.gen(function*() {
      const retriever = yield* Retriever
      for (const query of queries) {
        const deep = (yield* retriever.search([query], maxPagedRank))[0]!
        // a top-k is a prefix of a deeper top-k (what makes a page well defined)
        for (const k of [1, 3, 5, 10]) assert.deepStrictEqual((yield* retriever.search([query], k))[0], deep.slice(0, k), `${query} k=${k}`)
        const pages: Array<string> = []
        for (let page = 0; page < 20; page++) {
          const hits = yield* searchPage(retriever.search, query, 3, page)
          assert.deepStrictEqual(hits, deep.slice(page * 3, Math.min((page + 1) * 3, maxPagedRank)))
          pages.push(...hits.map((h) => h.tool))
        }
        assert.strictEqual(new Set(pages).size, pages.length, "no tool on two pages")
        assert.deepStrictEqual(pages, deep.map((h) => h.tool), "the pages, in order, are the ranking to maxPagedRank")
      }
    })))

  it.effect("a page past the deepest rank is empty; a bad page or k is a RetrieverError naming it", () =>
    provide(Effect.gen(function*() {
      const retriever = yield* Retriever
      assert.deepStrictEqual(yield* searchPage(retriever.search, "books by genre", 3, Math.ceil(maxPagedRank / 3)), [])
      const badPage = yield* Effect.flip(searchPage(retriever.search, "books by genre", 3, -1))
      assert.strictEqual(badPage._tag, "RetrieverError")
      assert.include(badPage.message, "page must be a non-negative integer, got -1")
      const badK = yield* Effect.flip(searchPage(retriever.search, "books by genre", 0, 1))
      assert.include(badK.message, "k must be a positive integer, got 0")
    })))

  it.effect("property: for any k and page, the page is a contiguous slice of the ranking", () =>
    provide(Effect.gen(function*() {
      const retriever = yield* Retriever
      const cases = fc.sample(fc.record({ q: fc.constantFrom(...queries), k: fc.integer({ min: 1, max: 12 }), page: fc.integer({ min: 0, max: 8 }) }), { numRuns: 60, seed: 17 })
      for (const { q, k, page } of cases) {
        const deep = (yield* retriever.search([q], maxPagedRank))[0]!
        const start = Math.min(page * k, maxPagedRank)
        assert.deepStrictEqual(yield* searchPage(retriever.search, q, k, page), deep.slice(start, Math.min((page + 1) * k, maxPagedRank)))
      }
    })))
})
