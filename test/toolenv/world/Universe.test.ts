import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { entityDefs } from "../../../src/toolenv/world/Entities.ts"
import { tokens, Universe } from "../../../src/toolenv/world/Universe.ts"
import * as V from "../../../src/toolenv/world/Values.ts"

const u = new Universe(7, entityDefs)
const other = new Universe(8, entityDefs)

describe("universe: one consistent world per seed", () => {
  it("recomputes the same attribute values, ids and names; another seed differs", () => {
    const again = new Universe(7, entityDefs)
    for (const type of ["team", "hotel", "stock", "user", "movie"]) {
      for (const i of [0, 17, 123]) {
        expect(again.id(type, i)).toBe(u.id(type, i))
        expect(again.name(type, i)).toBe(u.name(type, i))
        for (const a of entityDefs.get(type)?.attrs ?? []) expect(again.attr(type, i, a.key)).toEqual(u.attr(type, i, a.key))
      }
    }
    expect([0, 1, 2, 3].map((i) => other.name("team", i))).not.toEqual([0, 1, 2, 3].map((i) => u.name("team", i)))
  })

  it("gives every entity of a type a distinct id, and finds it back by id", () => {
    for (const type of ["city", "team", "player", "product", "airport", "stock", "book", "chemical"]) {
      const n = u.size(type)
      const ids = new Set(Array.from({ length: n }, (_, i) => u.id(type, i)))
      expect(ids.size).toBe(n)
      for (const i of [0, Math.floor(n / 2), n - 1]) expect(u.indexOf(type, u.id(type, i))).toBe(i)
      expect(u.indexOf(type, "no-such-id")).toBe(-1)
    }
  })

  it("keeps names unique where the type asks for it (people, places, companies, titles)", () => {
    for (const type of ["city", "player", "company", "hotel", "restaurant", "movie", "user", "chemical"]) {
      const n = u.size(type)
      const names = new Set(Array.from({ length: n }, (_, i) => u.name(type, i).toLowerCase()))
      expect(names.size / n, type).toBeGreaterThan(0.97)
    }
  })

  it("finds an entity by its exact name first, and by some of its words", () => {
    for (const i of [3, 99, 1500]) {
      const name = u.name("team", i)
      expect(u.search("team", name, 5).matches[0]).toBe(i)
      const word = name.split(" ").slice(-1)[0] ?? ""
      const r = u.search("team", word, 1000)
      expect(r.matches).toContain(i)
      expect(r.total).toBe(r.matches.length)
    }
    expect(u.search("team", "zzzz qqqq", 5)).toEqual({ matches: [], total: 0 })
  })

  it("matches exactly the names holding every query word, however many words repeat (property, against a scan)", () => {
    const type = "player"
    const n = u.size(type)
    const words = Array.from({ length: n }, (_, i) => new Set(tokens(u.name(type, i))))
    fc.assert(fc.property(fc.nat(n - 1), fc.nat(n - 1), fc.nat(3), fc.boolean(), (a, b, take, repeat) => {
      // Words of one player's name, possibly mixed with a word of another's: long and short posting lists meet.
      const own = [...(words[a] ?? [])].slice(0, take + 1)
      const query = [...own, ...(take === 3 ? [...(words[b] ?? [])].slice(0, 1) : []), ...(repeat ? own.slice(0, 1) : [])]
      const expected: Array<number> = []
      for (let i = 0; i < n; i++) if (query.every((w) => words[i]?.has(w) === true)) expected.push(i)
      const r = u.search(type, query.join(" "), n)
      expect(r.total).toBe(expected.length)
      expect([...r.matches].sort((x, y) => x - y)).toEqual(expected)
    }), { numRuns: 60 })
  })

  it("keeps relations consistent both ways: block children, references and their inverses", () => {
    for (const team of [0, 10, 200]) {
      const c = u.children("player", team)
      expect(c.count).toBeGreaterThanOrEqual(14)
      for (let k = c.start; k < c.start + c.count; k++) expect(u.attr("player", k, "team_id")).toBe(u.id("team", team))
      expect(u.attr("team", team, "squad_size")).toBe(c.count)
    }
    const city = u.refIndex("hotel", 42, "city_id")
    expect(u.referrers("hotel", "city_id", city)).toContain(42)
    for (const h of u.referrers("hotel", "city_id", city)) expect(u.attr("hotel", h, "city")).toBe(u.name("city", city))
    // A team's matches: home and away references unioned.
    const team = u.refIndex("match", 5, "home_team_id")
    expect(u.inverse("match", "matches", "team", team)).toContain(5)
  })

  it("derives facts consistently: points from wins and draws, ranks as standings, order totals from product prices", () => {
    for (const t of [0, 1, 2]) expect(u.attr("team", t, "points")).toBe(3 * (u.attr("team", t, "wins") as number) + (u.attr("team", t, "draws") as number))
    const league = u.children("team", 0)
    const ranks = Array.from({ length: league.count }, (_, k) => u.attr("team", league.start + k, "rank")).sort((a, b) => (a as number) - (b as number))
    expect(ranks).toEqual(Array.from({ length: league.count }, (_, k) => k + 1))
    const ids = u.attr("order", 7, "product_ids") as ReadonlyArray<string>
    const sum = ids.reduce((a, id) => a + (u.attr("product", u.indexOf("product", id), "price") as number), 0)
    expect(u.attr("order", 7, "total")).toBeCloseTo(sum, 2)
  })

  it("serves a series range equal to its days one by one", () => {
    const range = u.seriesRange("stock", 3, "close", V.today - 9, V.today)
    expect(range).toEqual(Array.from({ length: 10 }, (_, k) => u.seriesValue("stock", 3, "close", V.today - 9 + k)))
    expect(u.attr("stock", 3, "price")).toBe(range[9])
  })
})

describe("values", () => {
  it("turns day numbers into ISO dates and back (property)", () => {
    fc.assert(fc.property(fc.integer({ min: -200_000, max: 200_000 }), (day) => {
      const iso = V.isoDate(day)
      expect(V.dayNumber(iso)).toBe(day)
      expect(iso).toBe(new Date(day * 86_400_000).toISOString().slice(0, 10))
    }))
  })

  it("keeps generated amounts finite and in range, also for ranges that start at 0 (property)", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 1, max: 100_000 }), (h, min, span) => {
      const x = V.logUniform(h, min, min + span)
      expect(Number.isFinite(x)).toBe(true)
      expect(x).toBeGreaterThanOrEqual(min - 1e-9)
      expect(x).toBeLessThanOrEqual(min + span + 1e-9)
    }))
  })

  it("makes ISBN-13s with valid check digits", () => {
    for (let h = 1; h < 2000; h += 37) {
      const isbn = V.isbn13(h)
      const sum = [...isbn].reduce((a, d, i) => a + Number(d) * (i % 2 === 0 ? 1 : 3), 0)
      expect(isbn).toMatch(/^\d{13}$/)
      expect(sum % 10).toBe(0)
    }
  })
})
