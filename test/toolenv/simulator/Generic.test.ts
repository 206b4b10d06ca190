import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { dataPathIfPresent } from "../../../src/io/DataPath.ts"
import * as DepGraph from "../../../src/toolenv/DepGraph.ts"
import type { ToolCall } from "../../../src/domain/Call.ts"
import { callId, taskId, toolId, toolName } from "../../../src/domain/Ids.ts"
import type { Json, JsonObject, JsonSchema } from "../../../src/domain/Json.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { conforms } from "../../../src/toolenv/JsonSchemaValidate.ts"
import { Engine } from "../../../src/toolenv/simulator/Engine.ts"
import { inferSchema, responseShape } from "../../../src/toolenv/simulator/Generic.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { makeLibrary, ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as ToolLibraryFiles from "../../../layers/files/ToolLibraryFiles.ts"

// Hand-written tools in the shape the importers produce for a RapidAPI video provider (annotated by DepInference).
const tool = (name: string, parameters: ToolSpec["parameters"], extra: Partial<ToolSpec> = {}): ToolSpec => ({
  id: toolId(`toolbench:Video_Images/clipstore/${name}`),
  name: toolName(name),
  group: "ClipStore",
  apiName: name,
  category: "Video_Images",
  description: `${name} of ClipStore`,
  parameters,
  source: { kind: "toolbench", ref: `Video_Images/clipstore.json#${name}` },
  ...extra
})

const videoItem: JsonSchema = {
  type: "object",
  properties: {
    video_id: { type: "string", "x-entity": "video.id" },
    title: { type: "string", "x-entity": "video.title" },
    views: { type: "integer", "x-entity": "video.views" },
    published: { type: "string", format: "date" }
  },
  required: ["video_id", "title", "views"]
}
const search = tool("search_videos", { type: "object", properties: { q: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: 20 } }, required: ["q"] }, {
  response: { type: "object", properties: { items: { type: "array", items: videoItem }, next_page: { type: "string" } }, required: ["items"] }
})
const details = tool("video_details", { type: "object", properties: { video_id: { type: "string", "x-entity": "video.id" } }, required: ["video_id"] }, {
  response: { type: "object", properties: { video: videoItem, status: { type: "string", enum: ["ok"] } }, required: ["video", "status"] }
})
const example = tool("channel_stats", { type: "object", properties: { channel: { type: "string" } }, required: ["channel"] }, {
  response: { type: "object" },
  example: { status: "success", channel: { name: "Daily Clips", subscribers: 120500, verified: true, created: "2016-03-02", url: "https://clips.example.com/daily" }, tags: ["fun", "news"] }
})
const bare = tool("ping", { type: "object", properties: {}, required: [] }, { response: { type: "object" } })
const library = makeLibrary("hand-written", [search, details, example, bare], DepGraph.empty)
const layer = Simulator.layer({ faultRate: 0, seed: 3 }).pipe(Layer.provide(Layer.succeed(ToolLibrary, library)))

const call = (name: string, args: JsonObject, id = "c1"): ToolCall => ({ id: callId(id), tool: toolName(name), arguments: args })
const ok = (o: Simulator.Execution): Json => (o.outcome._tag === "ok" ? o.outcome.payload : null)
const at = (v: Json, ...keys: ReadonlyArray<string | number>): Json | undefined => {
  let cur: Json | undefined = v
  for (const k of keys) cur = cur !== null && typeof cur === "object" ? (cur as Record<string, Json>)[k as string] : undefined
  return cur
}

describe("generic renderer (imported tools)", () => {
  it.effect("renders the declared response schema; annotated facts about an entity agree across tools", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("g1"), seed: 1, request: "", faults: false })
      const found = ok(yield* episode.execute(call("search_videos", { q: "cooking" })))
      expect(conforms(search.response ?? {}, found)).toEqual([])
      const first = at(found, "items", 0)
      const id = at(first ?? null, "video_id")
      expect(typeof id).toBe("string")
      const shown = ok(yield* episode.execute(call("video_details", { video_id: id ?? "" }, "c2")))
      expect(conforms(details.response ?? {}, shown)).toEqual([])
      expect(at(shown, "video", "video_id")).toBe(id)
      expect(at(shown, "video", "title")).toBe(at(first ?? null, "title"))
      expect(at(shown, "video", "views")).toBe(at(first ?? null, "views"))
    }).pipe(Effect.provide(layer)))

  it.effect("refuses an annotated id no call produced (404) and answers a repeated call identically", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("g2"), seed: 1, request: "", faults: false })
      const x = yield* episode.execute(call("video_details", { video_id: "dQw4w9WgXcQ" }))
      expect(x.outcome._tag === "error" ? x.outcome.error.kind : "ok").toBe("not_found")
      const a = yield* episode.execute(call("search_videos", { q: "tennis", limit: 3 }))
      const b = yield* episode.execute(call("search_videos", { limit: 3, q: "tennis" }))
      expect(b.outcome).toEqual(a.outcome)
      const c = yield* episode.execute(call("search_videos", { q: "chess" }))
      expect(c.outcome).not.toEqual(a.outcome)
    }).pipe(Effect.provide(layer)))

  it.effect("shapes a payload after the example response: same keys and types, API vocabulary kept", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("g3"), seed: 1, request: "", faults: false })
      const p = ok(yield* episode.execute(call("channel_stats", { channel: "x" })))
      expect(conforms(inferSchema(example.example ?? null), p)).toEqual([])
      expect(at(p, "status")).toBe("success")
      expect(at(p, "channel", "created")).toMatch(/^\d{4}-\d{2}-\d{2}$/)
      expect(at(p, "channel", "url")).toMatch(/^https:\/\//)
      expect(typeof at(p, "channel", "subscribers")).toBe("number")
    }).pipe(Effect.provide(layer)))

  it.effect("gives an undocumented tool a stable fallback payload (status, data, query echo)", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("g4"), seed: 1, request: "", faults: false })
      const p = ok(yield* episode.execute(call("ping", {})))
      expect(conforms(responseShape(bare).schema, p)).toEqual([])
      expect(at(p, "status")).toBe("success")
      expect(at(p, "query")).toEqual({})
    }).pipe(Effect.provide(layer)))
})

/** A ToolBench folder with only a few categories of ToolEnv2404, linked (not copied) into a temp folder. */
const toolenv = dataPathIfPresent("toolenv2404", "toolenv2404_filtered")

describe.skipIf(toolenv === undefined)("generic renderer over real ToolEnv2404 tools (skipped without ../shared/data)", () => {
  it.effect("answers calls with the required arguments filled, and the payloads conform to the imported schemas", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "toolenv-subset-"))
      for (const c of ["Sports", "Finance", "Weather"]) {
        fs.mkdirSync(path.join(dir, c))
        for (const f of fs.readdirSync(path.join(toolenv ?? "", c))) fs.symlinkSync(path.join(toolenv ?? "", c, f), path.join(dir, c, f))
      }
      const loaded = yield* ToolLibraryFiles.load([{ kind: "toolbench", dir }])
      fs.rmSync(dir, { recursive: true, force: true })
      const tools = loaded.library.tools
      expect(tools.length).toBeGreaterThan(3000)
      const engine = new Engine(loaded.library, undefined, { seed: 0, faultRate: 0, latency: undefined })
      let okCalls = 0
      let notFound = 0
      for (let i = 0; i < tools.length; i += 7) {
        const t = tools[i] as ToolSpec
        const args: Record<string, Json> = {}
        for (const name of t.parameters.required) {
          const s = t.parameters.properties[name]
          args[name] = s?.default ?? (s?.enum?.[0]) ?? (s?.type === "integer" || s?.type === "number" ? 1 : s?.type === "boolean" ? true : "test")
        }
        const state = engine.open({ taskId: taskId(`real-${i}`), seed: 0, request: JSON.stringify(args), faults: false })
        const r = engine.run(state, call(t.name, args))
        if (r.outcome._tag === "ok") {
          okCalls++
          expect(conforms(responseShape(t).schema, r.outcome.payload)).toEqual([])
        } else if (r.outcome.error.kind === "not_found") notFound++
        else expect(r.outcome.error.kind).toBe("invalid_arguments")
      }
      expect(okCalls).toBeGreaterThan(300)
      expect(notFound).toBe(0)
    }))
})
