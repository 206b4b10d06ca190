import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import type { JsonSchema } from "../../../src/domain/Json.ts"
import { ToolSpec } from "../../../src/domain/Tool.ts"
import { categories, categoryQuotas, libraryTarget, ourCategories } from "../../../src/toolenv/world/Catalog.ts"
import * as World from "../../../src/toolenv/world/World.ts"

// The full 50,011-endpoint world, built once for the file.
const world = World.make({ seed: 7 })
const tools = world.library.tools
const stats = DepGraph.stats(tools, world.library.graph)

/** The schema at a G_dep field path (`results[].team_id`, `data.city_id`, `[].id`) of a response schema. */
const schemaAt = (root: JsonSchema | undefined, path: string): JsonSchema | undefined => {
  let cur = root
  for (const part of path.split(".")) {
    if (cur === undefined) return undefined
    const array = part.endsWith("[]")
    const key = array ? part.slice(0, -2) : part
    if (key !== "") cur = cur.properties?.[key]
    if (array) cur = cur?.items
  }
  return cur
}

describe("generated world: size and long tail", () => {
  it("has at least 50,011 interfaces in 52 categories", () => {
    expect(tools.length).toBe(libraryTarget)
    expect(stats.apis).toBe(50_011)
    expect(stats.categories).toBe(52)
    expect(world.library.categories.length).toBe(52)
  })

  it("gives the four largest categories (Sports, Data, Finance, Social) about 41% of the library", () => {
    const top4 = stats.perCategory.slice(0, 4)
    expect(top4.map((c) => c.category)).toEqual(["Sports", "Data", "Finance", "Social"])
    const share = top4.reduce((a, c) => a + c.apis, 0) / stats.apis
    expect(share).toBeGreaterThan(0.39)
    expect(share).toBeLessThan(0.43)
  })

  it("meets every category's quota exactly and keeps a long tail", () => {
    const quotas = new Map(categoryQuotas())
    for (const c of stats.perCategory) expect(c.apis).toBe(quotas.get(c.category))
    const counts = stats.perCategory.map((c) => c.apis)
    expect(Math.min(...counts)).toBeGreaterThan(100)
    expect(counts[4]).toBeLessThan(counts[3] as number)
    expect(categories.map((c) => c.name)).toEqual(expect.arrayContaining([...ourCategories]))
  })

  it("groups interfaces under providers like RapidAPI tools (several APIs each on average)", () => {
    expect(stats.tools).toBeGreaterThan(8000)
    expect(stats.apis / stats.tools).toBeGreaterThan(2.5)
    expect(stats.apis / stats.tools).toBeLessThan(6)
  })

  it("names every interface uniquely and validly for OpenAI function calling", () => {
    const names = new Set(tools.map((t) => t.name))
    expect(names.size).toBe(tools.length)
    for (const t of tools) expect(t.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
    expect(new Set(tools.map((t) => t.id)).size).toBeGreaterThan(tools.length * 0.99)
  })

  it("produces ToolSpecs that decode with the domain schema", () => {
    const decode = Schema.decodeUnknownSync(ToolSpec)
    for (let i = 0; i < tools.length; i += 97) expect(decode(JSON.parse(JSON.stringify(tools[i])))).toEqual(tools[i])
  })

  it("writes varied descriptions: many distinct texts and near-duplicate providers per entity type", () => {
    const descriptions = new Set(tools.map((t) => t.description))
    expect(descriptions.size).toBeGreaterThan(tools.length * 0.3)
    const teamDetails = tools.filter((t) => world.ops.get(t.name)?.kind === "details" && world.ops.get(t.name)?.type === "team")
    expect(teamDetails.length).toBeGreaterThan(50)
    // Near-twins: the same capability (a team's details) returning different subsets of facts.
    const fieldSets = new Set(teamDetails.map((t) => (world.ops.get(t.name)?.fields ?? []).map((f) => (f.source.kind === "attr" ? f.source.key : "")).sort().join(",")))
    expect(fieldSets.size).toBeGreaterThan(teamDetails.length / 3)
  })
})

describe("generated world: G_dep by construction", () => {
  it("has hard and soft edges and most tools depend on something", () => {
    expect(stats.hardEdges).toBeGreaterThan(50_000)
    expect(stats.softEdges).toBeGreaterThan(20_000)
    expect(stats.toolsWithDeps / stats.apis).toBeGreaterThan(0.4)
  })

  it("every hard edge names a required parameter and a response field carrying the same entity with the same type", () => {
    // Collected, then asserted once: 100k+ edges through `expect` one by one would take seconds.
    const bad: Array<string> = []
    let checked = 0
    for (const e of world.library.graph.edges) {
      if (e.kind !== "hard") continue
      checked++
      const from = world.library.get(e.from)
      const to = world.library.get(e.to)
      const param = to?.parameters.properties[e.param ?? ""]
      const field = schemaAt(from?.response, e.field ?? "")
      const ok = from !== undefined && to !== undefined && e.from !== e.to &&
        param?.["x-entity"] === e.entity && to.parameters.required.includes(e.param ?? "") &&
        field !== undefined && field["x-entity"] === e.entity && field.type === param?.type
      if (!ok) bad.push(`${e.from} -> ${e.to} (${e.param} <- ${e.field})`)
    }
    expect(bad.slice(0, 5)).toEqual([])
    expect(checked).toBe(stats.hardEdges)
  })

  it("every soft edge feeds an optional id, a name, or a public id (currency / country code)", () => {
    const bad: Array<string> = []
    for (const e of world.library.graph.edges) {
      if (e.kind !== "soft") continue
      const to = world.library.get(e.to)
      const param = to?.parameters.properties[e.param ?? ""]
      const optionalId = e.entity?.endsWith(".id") === true && !(to?.parameters.required.includes(e.param ?? "") ?? true)
      const publicId = e.entity === "currency.id" || e.entity === "country.id"
      if (param?.["x-entity"] !== e.entity || !(optionalId || publicId || e.entity?.endsWith(".name") === true)) bad.push(`${e.from} -> ${e.to} (${e.param})`)
    }
    expect(bad.slice(0, 5)).toEqual([])
  })

  it("links providers across categories (cross-category hard edges exist for I3 tasks)", () => {
    const cross = world.library.graph.edges.filter((e) => e.kind === "hard" && world.library.get(e.from)?.category !== world.library.get(e.to)?.category)
    expect(cross.length).toBeGreaterThan(5000)
  })
})

describe("generated world: determinism", () => {
  it("the same seed gives the identical library; another seed a different one", () => {
    const a = World.make({ seed: 11, size: 3000 })
    const b = World.make({ seed: 11, size: 3000 })
    const c = World.make({ seed: 12, size: 3000 })
    expect(a.fingerprint()).toBe(b.fingerprint())
    expect(a.fingerprint()).not.toBe(c.fingerprint())
    expect(a.library.tools.length).toBe(3000)
    expect(a.library.tools.map((t) => t.name)).toEqual(b.library.tools.map((t) => t.name))
  })

  it("records how long the build took (the speed itself is measured by bench/world-build.ts, not by a test)", () => {
    expect(Number.isFinite(world.buildMs) && world.buildMs > 0).toBe(true)
  })
})
