import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import { infer } from "../../../src/toolenv/DepInference.ts"
import { ToolSpec } from "../../../src/domain/Tool.ts"
import { convertDocument, loadFile } from "../../../src/toolenv/importers/OpenApi.ts"

const specs = dataPathIfPresent("restbench", "specs")
const datasets = dataPathIfPresent("restbench", "datasets")

const petstore = {
  openapi: "3.0.3",
  info: { title: "Pet Shop" },
  paths: {
    "/pets": {
      get: {
        operationId: "listPets",
        summary: "List pets",
        parameters: [{ $ref: "#/components/parameters/Limit" }, { name: "X-Trace", in: "header", schema: { type: "string" } }, { name: "session", in: "cookie", schema: { type: "string" } }],
        responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "array", items: { $ref: "#/components/schemas/Pet" } } } } } }
      },
      post: {
        summary: "Create a pet",
        requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/NewPet" } } } },
        responses: { "201": { $ref: "#/components/responses/OnePet" } }
      }
    },
    "/pets/{petId}": {
      parameters: [{ name: "petId", in: "path", required: true, schema: { type: "string" }, description: "The pet" }],
      get: {
        operationId: "showPetById",
        parameters: [{ name: "petId", in: "path", required: true, schema: { type: "integer" } }],
        responses: { "200": { $ref: "#/components/responses/OnePet" }, "404": { description: "missing" } }
      },
      delete: { operationId: "deletePet", responses: { "204": { description: "gone" } } }
    },
    "/broken": { get: "not an operation" }
  },
  components: {
    parameters: { Limit: { name: "limit", in: "query", schema: { type: "integer", maximum: 100 } } },
    responses: { OnePet: { description: "a pet", content: { "application/json": { schema: { $ref: "#/components/schemas/Pet" }, example: { id: "p1", name: "Rex" } } } } },
    schemas: {
      Pet: {
        allOf: [{ $ref: "#/components/schemas/NewPet" }, { type: "object", required: ["id"], properties: { id: { type: "string" }, parent: { $ref: "#/components/schemas/Pet" } } }]
      },
      NewPet: { type: "object", required: ["name"], properties: { name: { type: "string" }, tag: { type: "string", nullable: true } } }
    }
  }
}

describe("OpenAPI on a hand-written document", () => {
  it("makes one tool per operation with parameters, body properties, 2xx response and resolved refs", () => {
    const result = convertDocument(petstore, "petstore.json")
    expect(result?.tools.map((t) => `${t.method} ${t.name}`)).toEqual(["GET listPets", "POST post_pets", "GET showPetById", "DELETE deletePet"])
    expect(result?.report.skipped).toBe(1)
    expect(result?.report.issues[0]).toEqual({ source: "petstore.json#GET /broken", message: "operation is not an object" })
    const [list, create, show, del] = result?.tools ?? []
    expect(list?.id).toBe("openapi:pet_shop/listPets")
    expect(list?.group).toBe("Pet Shop")
    expect(list?.parameters).toEqual({ type: "object", properties: { limit: { type: "integer", maximum: 100 }, "X-Trace": { type: "string" } }, required: [] })
    // allOf merged, the recursive reference cut with a marker
    const pet = list?.response?.items
    expect(pet?.required).toEqual(["name", "id"])
    expect(Object.keys(pet?.properties ?? {})).toEqual(["name", "tag", "id", "parent"])
    expect(pet?.properties?.["parent"]).toEqual({ type: "object", description: "recursive reference to Pet" })
    expect(create?.parameters).toEqual({ type: "object", properties: { name: { type: "string" }, tag: { type: "string" } }, required: ["name"] })
    expect(create?.example).toEqual({ id: "p1", name: "Rex" })
    // the operation's own parameter overrides the path-level one of the same name
    expect(show?.parameters).toEqual({ type: "object", properties: { petId: { type: "integer" } }, required: ["petId"] })
    expect(del?.parameters.properties["petId"]).toEqual({ type: "string", description: "The pet" })
    expect(del?.response).toBeUndefined()
    const edges = infer(result?.tools ?? []).edges
    expect(edges).toContainEqual({ from: "listPets", to: "showPetById", kind: "hard", param: "petId", field: "[].id", entity: "pet.id" })
  })

  it("reads Swagger 2.0 body, formData and response schemas", () => {
    const swagger = {
      swagger: "2.0",
      info: { title: "Legacy" },
      paths: {
        "/orders": {
          post: {
            operationId: "placeOrder",
            parameters: [
              { name: "body", in: "body", required: true, schema: { $ref: "#/definitions/Order" } },
              { name: "dry_run", in: "query", type: "boolean", default: false }
            ],
            responses: { "200": { description: "ok", schema: { $ref: "#/definitions/Order" } } }
          }
        }
      },
      definitions: { Order: { type: "object", required: ["item"], properties: { item: { type: "string" }, qty: { type: "integer" }, order_id: { type: "string" } } } }
    }
    const tool = convertDocument(swagger, "legacy.json")?.tools[0]
    expect(tool?.parameters).toEqual({ type: "object", properties: { dry_run: { type: "boolean", default: false }, item: { type: "string" }, qty: { type: "integer" }, order_id: { type: "string" } }, required: ["item"] })
    expect(tool?.response?.properties?.["order_id"]).toEqual({ type: "string" })
  })

  it("is not fooled by a reference cycle between parameters", () => {
    const doc = { openapi: "3.1.0", info: { title: "Loop" }, paths: { "/x": { get: { operationId: "x", parameters: [{ $ref: "#/components/parameters/A" }], responses: {} } } }, components: { parameters: { A: { $ref: "#/components/parameters/B" }, B: { $ref: "#/components/parameters/A" } } } }
    const result = convertDocument(doc, "loop.json")
    expect(result?.tools[0]?.parameters.properties).toEqual({})
    expect(result?.report.issues[0]?.message).toContain("parameter dropped")
  })

  it("returns undefined for a document with no paths", () => {
    expect(convertDocument({ openapi: "3.0.0" }, "x.json")).toBeUndefined()
  })
})

describe.skipIf(specs === undefined || datasets === undefined)("RestBench specs (needs ../shared/data/restbench)", () => {
  const goldCoverage = (file: string, tools: ReadonlyArray<{ readonly name: string; readonly source: { readonly ref: string } }>, graph: DepGraph.DepGraph) => {
    const byOperation = new Map(tools.map((t) => [t.source.ref.split("#")[1] ?? "", t.name]))
    const gold = JSON.parse(fs.readFileSync(`${datasets}/${file}`, "utf8")) as ReadonlyArray<{ readonly solution: ReadonlyArray<string> }>
    let pairs = 0
    let linked = 0
    for (const q of gold) {
      for (let i = 1; i < q.solution.length; i++) {
        const a = byOperation.get(q.solution[i - 1] ?? "")
        const b = byOperation.get(q.solution[i] ?? "")
        if (a === undefined || b === undefined || !(q.solution[i] ?? "").includes("{")) continue
        pairs++
        if (graph.kind(a, b) !== undefined) linked++
      }
    }
    return { pairs, linked }
  }

  it.effect("TMDB (OpenAPI 3.0): 54 operations; G_dep links 90 of the 117 id-passing steps of RestBench's gold solutions", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadFile(`${specs}/tmdb_oas.json`)
      expect(tools.length).toBe(54)
      expect(report.issueCount).toBe(0)
      expect(tools[0]?.group).toBe("tmdb")
      const graph = DepGraph.make(infer(tools).edges)
      expect(goldCoverage("tmdb.json", tools, graph)).toEqual({ pairs: 117, linked: 90 })
    }))

  it.effect("Spotify (OpenAPI 3.0.3): 40 operations; G_dep links 32 of the 43 id-passing gold steps", () =>
    Effect.gen(function* () {
      const { tools, report } = yield* loadFile(`${specs}/spotify_oas.json`)
      expect(tools.length).toBe(40)
      expect(report.skipped).toBe(0)
      const decode = Schema.decodeUnknownExit(ToolSpec)
      expect(infer(tools).tools.filter((t) => decode(t)._tag === "Failure").map((t) => t.id)).toEqual([])
      const graph = DepGraph.make(infer(tools).edges)
      expect(goldCoverage("spotify.json", tools, graph)).toEqual({ pairs: 43, linked: 32 })
    }))
})
