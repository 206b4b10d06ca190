import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { dataPathIfPresent } from "../../src/io/DataPath.ts"
import { breakHardCycles, infer, singular, tokens } from "../../src/toolenv/DepInference.ts"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import { toolId, toolName } from "../../src/domain/Ids.ts"
import type { JsonSchema } from "../../src/domain/Json.ts"
import type { DepEdge, ToolSpec } from "../../src/domain/Tool.ts"
import { loadDirectory } from "../../src/toolenv/importers/ToolBench.ts"

const toolEnv = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")

interface Param {
  readonly name: string
  readonly required?: boolean
  readonly description?: string
}

const spec = (group: string, apiName: string, params: ReadonlyArray<Param>, response?: JsonSchema, category = "Video_Images"): ToolSpec => ({
  id: toolId(`test:${category}/${group}/${apiName}`),
  name: toolName(`${apiName.replace(/\W+/g, "_").toLowerCase()}_for_${group.toLowerCase()}`),
  group,
  apiName,
  category,
  description: apiName,
  parameters: {
    type: "object",
    properties: Object.fromEntries(params.map((p) => [p.name, { type: "string", ...(p.description !== undefined ? { description: p.description } : {}) }])),
    required: params.filter((p) => p.required !== false).map((p) => p.name)
  },
  ...(response !== undefined ? { response } : {}),
  source: { kind: "toolbench", ref: `${group}/${apiName}` }
})

const obj = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: "object", properties })
const arr = (items: JsonSchema): JsonSchema => ({ type: "array", items })
const str: JsonSchema = { type: "string" }

const edgesOf = (tools: ReadonlyArray<ToolSpec>) => infer(tools).edges.map((e) => `${e.kind}:${e.from}->${e.to}(${e.param}|${e.field ?? "?"}|${e.entity ?? "?"})`)

describe("names", () => {
  it("splits identifiers and singularises", () => {
    expect(tokens("videoId")).toEqual(["video", "id"])
    expect(tokens("video_ids")).toEqual(["video", "id"])
    expect(tokens("HTTPStatusCode")).toEqual(["http", "status", "code"])
    expect(tokens("team1")).toEqual(["team"])
    expect(singular("categories")).toBe("category")
    expect(singular("matches")).toBe("match")
    expect(singular("status")).toBe("status")
    expect(singular("news")).toBe("news")
  })
})

describe("infer on hand-made tools", () => {
  const search = spec("Tube", "Search Videos", [{ name: "q" }], obj({ items: arr(obj({ id: str, title: str })) }))
  const details = spec("Tube", "Get Video Details", [{ name: "video_id", description: "the video" }], obj({ title: str, channelId: str }))

  it("an id produced by a search API feeds a details API: hard edge with the right param, field and entity", () => {
    const result = infer([search, details])
    expect(result.edges).toEqual([
      { from: search.name, to: details.name, kind: "hard", param: "video_id", field: "items[].id", entity: "video.id" }
    ])
    expect(result.rules).toEqual(["field"])
    const [s, d] = result.tools
    expect(d?.parameters.properties["video_id"]?.["x-entity"]).toBe("video.id")
    expect(s?.response?.properties?.["items"]?.items?.properties?.["id"]?.["x-entity"]).toBe("video.id")
    // untouched parts stay as they were
    expect(s?.response?.properties?.["items"]?.items?.properties?.["title"]).toEqual(str)
  })

  it("matches camelCase, snake_case and glued names and a bare id of an API about that entity", () => {
    const channel = spec("Tube", "Channel Info", [{ name: "channelid" }], obj({ name: str }))
    const byBareId = spec("Tube", "Get Video", [{ name: "id" }])
    const vocabulary = [0, 1, 2].map((i) => spec("Other", `Channel Stats ${i}`, [{ name: "channel" }]))
    const edges = edgesOf([search, details, channel, byBareId, ...vocabulary])
    expect(edges).toContain(`hard:${details.name}->${channel.name}(channelid|channelId|channel.id)`)
    expect(edges).toContain(`hard:${search.name}->${byBareId.name}(id|items[].id|video.id)`)
  })

  it("an optional parameter, or a producer that itself needs the entity, gives a soft edge", () => {
    const related = spec("Tube", "Related Videos", [{ name: "video_id" }], obj({ videos: arr(obj({ id: str })) }))
    const comments = spec("Tube", "Comments", [{ name: "videoId", required: false }])
    const edges = edgesOf([related, details, comments])
    expect(edges).toContain(`soft:${related.name}->${details.name}(video_id|videos[].id|video.id)`)
    expect(edges).toContain(`soft:${related.name}->${comments.name}(videoId|videos[].id|video.id)`)
    expect(edges.filter((e) => e.startsWith("hard"))).toEqual([])
  })

  it("a description naming another API of the provider gives an edge even without a response schema", () => {
    const teams = spec("League", "List Teams", [])
    const roster = spec("League", "Roster", [{ name: "team_id", description: "The value of id returned by List Teams endpoint" }])
    const result = infer([teams, roster])
    expect(result.edges).toEqual([{ from: teams.name, to: roster.name, kind: "hard", param: "team_id", entity: "team.id" }])
    expect(result.rules).toEqual(["mention"])
  })

  it("a list API with no known response comes before a detail API of its subject (soft)", () => {
    const teams = spec("League", "List Teams", [])
    const detail = spec("League", "Team Details", [{ name: "team_id" }])
    const result = infer([teams, detail])
    expect(result.edges).toEqual([{ from: teams.name, to: detail.name, kind: "soft", param: "team_id", entity: "team.id" }])
    expect(result.rules).toEqual(["list-before-detail"])
  })

  it("ids stay within their provider; universal keys cross providers of one category as soft edges", () => {
    const otherTube = spec("OtherTube", "Video Details", [{ name: "video_id" }])
    const search2 = spec("Movies A", "Search Titles", [{ name: "q" }], obj({ results: arr(obj({ imdb_id: str })) }), "Movies")
    const plot = spec("Movies B", "Plot", [{ name: "tconst" }], undefined, "Movies")
    const elsewhere = spec("Data C", "Plot", [{ name: "tconst" }], undefined, "Data")
    const edges = edgesOf([search, otherTube, search2, plot, elsewhere])
    expect(edges).toEqual([`soft:${search2.name}->${plot.name}(tconst|results[].imdb_id|imdb.id)`])
  })

  it("never links an API to itself and breaks hard cycles", () => {
    const a = spec("P", "Get Alpha", [{ name: "beta_id" }], obj({ alpha_id: str }))
    const b = spec("P", "Get Beta", [{ name: "alpha_id" }], obj({ beta_id: str }))
    const self = spec("P", "Echo", [{ name: "echo_id" }], obj({ echo_id: str }))
    const result = infer([a, b, self])
    expect(result.edges.map((e) => `${e.kind}:${e.from}->${e.to}`).sort()).toEqual([`soft:${a.name}->${b.name}`, `soft:${b.name}->${a.name}`].sort())
  })

  it("breakHardCycles downgrades exactly the hard edges inside a cycle", () => {
    const e = (from: string, to: string, kind: "hard" | "soft" = "hard"): DepEdge => ({ from: toolName(from), to: toolName(to), kind })
    const out = breakHardCycles([e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d"), e("d", "a", "soft")])
    expect(out.map((x) => `${x.from}${x.to}:${x.kind}`)).toEqual(["ab:soft", "bc:soft", "ca:soft", "cd:hard", "da:soft"])
  })
})

// random tools over a small vocabulary, so that names collide and edges appear
const nouns = ["video", "team", "user", "order", "item", "city", "match", "data"]
const attrs = ["id", "Id", "_id", "name", "token", "slug", "code", ""]
const fieldName = fc.tuple(fc.constantFrom(...nouns, ""), fc.constantFrom(...attrs)).map(([n, a]) => (n.length === 0 ? (a.replace(/^_/, "") || "id") : `${n}${a}`))
const schemaArb: fc.Arbitrary<JsonSchema> = fc.letrec<{ s: JsonSchema }>((tie) => ({
  s: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(str),
    fc.dictionary(fieldName, tie("s"), { maxKeys: 4 }).map((properties) => ({ type: "object" as const, properties })),
    tie("s").map((items) => ({ type: "array" as const, items }))
  )
})).s
const toolArb = fc.record({
  group: fc.constantFrom("P1", "P2", "P3"),
  verb: fc.constantFrom("Get", "List", "Search", "Find", "Update"),
  noun: fc.constantFrom(...nouns),
  params: fc.array(fc.record({ name: fieldName, required: fc.boolean() }), { maxLength: 4 }),
  response: fc.option(schemaArb, { nil: undefined })
})

const hasPath = (s: JsonSchema | undefined, path: string): boolean => {
  if (s === undefined) return false
  const parts = path.split(".")
  let node: JsonSchema | undefined = s
  for (const part of parts) {
    let key = part
    while (node !== undefined && key.startsWith("[]")) {
      node = node.items
      key = key.slice(2)
    }
    if (node === undefined) return false
    const arrays = (key.match(/\[\]/g) ?? []).length
    const bare = key.replace(/\[\]/g, "")
    if (bare.length > 0) node = node.properties?.[bare]
    for (let i = 0; i < arrays; i++) node = node?.items
  }
  return node !== undefined
}

describe("infer properties", () => {
  it("no self edges; hard edges acyclic; params and fields exist; deterministic", () => {
    fc.assert(fc.property(fc.array(toolArb, { maxLength: 12 }), (raw) => {
    const tools = raw.map((t, i) => spec(t.group, `${t.verb} ${t.noun} ${i}`, t.params, t.response))
    const a = infer(tools)
    const b = infer(tools)
    expect(b).toEqual(a)
    const byName = new Map(a.tools.map((t) => [t.name as string, t]))
    for (const e of a.edges) {
      expect(e.from).not.toBe(e.to)
      const to = byName.get(e.to)
      expect(e.param !== undefined && to?.parameters.properties[e.param] !== undefined).toBe(true)
      if (e.field !== undefined) expect(hasPath(byName.get(e.from)?.response, e.field)).toBe(true)
    }
    // the hard subgraph is a DAG: repeatedly peel nodes with no incoming hard edge
    const hard = a.edges.filter((e) => e.kind === "hard")
    let remaining = [...hard]
    for (;;) {
      const targets = new Set(remaining.map((e) => e.to as string))
      const next = remaining.filter((e) => targets.has(e.from))
      if (next.length === remaining.length) break
      remaining = next
    }
    expect(remaining).toEqual([])
    expect(a.rules.length).toBe(a.edges.length)
    }), { numRuns: 200 })
  })
})

describe.skipIf(toolEnv === undefined)("G_dep of ToolEnv2404 (needs ../shared/data/toolenv2404)", () => {
  it.effect("infers hard and soft edges with their statistics and known edges", () =>
    Effect.gen(function* () {
      const loaded = yield* loadDirectory(toolEnv ?? "")
      const result = infer(loaded.tools)
      const graph = DepGraph.make(result.edges)
      const stats = DepGraph.stats(result.tools, graph)
      expect(stats.apis).toBe(46803)
      expect(stats.hardEdges).toBe(4741)
      expect(stats.softEdges).toBe(20399)
      expect(stats.toolsWithDeps).toBe(7787)
      const pet = result.edges.find((e) => e.to === "showpetbyid_for_sample" && e.kind === "hard")
      expect(pet).toEqual({ from: "listpets_for_sample", to: "showpetbyid_for_sample", kind: "hard", param: "petId", field: "[].id", entity: "pet.id" })
      const show = result.tools.find((t) => t.name === "showpetbyid_for_sample")
      expect(show?.parameters.properties["petId"]?.["x-entity"]).toBe("pet.id")
    }))
})
