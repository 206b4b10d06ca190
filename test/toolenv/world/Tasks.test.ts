import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Json } from "../../../src/domain/Json.ts"
import { type Task } from "../../../src/domain/Task.ts"
import * as Refs from "../../../src/protocol/Refs.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { TaskSource } from "../../../src/toolenv/TaskSource.ts"
import * as TaskSourceModule from "../../../src/toolenv/TaskSource.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../../src/toolenv/world/Tasks.ts"
import * as World from "../../../src/toolenv/world/World.ts"

// A 12k-endpoint world has every category and enough providers for all three levels; it builds in about a second.
const world = World.make({ seed: 7, size: 12_000 })
const generator = Tasks.make(world)
const train = generator.take({ split: "train", count: 90 })
const byLevel = (level: Task["level"]) => train.filter((t) => t.level === level)
const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
const simulatorLayer = Simulator.layer({ faultRate: 0.05 }).pipe(Layer.provide(worldLayer))

const groupOf = (tool: string): string => {
  const t = world.library.get(tool)
  return `${t?.category}/${t?.group}`
}
const roots = (t: Task) => t.gold.filter((c) => c.deps.length === 0)

/** The gold calls grouped into layers: layer = 1 + max layer of deps. */
const layers = (t: Task): Array<Array<Task["gold"][number]>> => {
  const depth = new Map<string, number>()
  for (const c of t.gold) depth.set(c.id, 1 + Math.max(0, ...c.deps.map((d) => depth.get(d) ?? 0)))
  const out: Array<Array<Task["gold"][number]>> = []
  for (const c of t.gold) (out[(depth.get(c.id) ?? 1) - 1] ??= []).push(c)
  return out
}

/** Runs a task's gold DAG layer by layer (calls of a layer concurrently) and returns each call's payload. */
const runGold = (t: Task, faults: boolean) =>
  Effect.gen(function*() {
    const sim = yield* Simulator.Simulator
    const episode = yield* sim.open({ taskId: t.id, seed: 1, request: t.request, faults })
    const outputs = new Map<string, Json>()
    for (const layer of layers(t)) {
      const results = yield* Effect.forEach(layer, (c) => {
        const resolved = Refs.resolveRefs(c.arguments, (id) => outputs.get(id))
        return Effect.map(
          // Retry transient faults as a runtime would: the identical call again.
          Effect.repeat(episode.execute({ id: c.id, tool: c.tool, arguments: resolved.arguments }), {
            until: (x) => x.outcome._tag === "ok" || !["rate_limited", "server_error", "timeout"].includes(x.outcome.error.kind),
            times: 5
          }),
          (x) => [c.id, x] as const
        )
      }, { concurrency: "unbounded" })
      for (const [id, x] of results) if (x.outcome._tag === "ok") outputs.set(id, x.outcome.payload)
    }
    return outputs
  })

const factValue = (outputs: ReadonlyMap<string, Json>, f: Task["facts"][number]): string | undefined => {
  const payload = outputs.get(f.call)
  if (payload === undefined) return undefined
  const r = Refs.select(payload, f.path.split("."))
  return r.ok ? (typeof r.value === "string" ? r.value : JSON.stringify(r.value)) : undefined
}

describe("task generator", () => {
  it("draws all three levels, each with a request, a gold DAG and facts", () => {
    expect(train.length).toBe(90)
    for (const level of ["I1", "I2", "I3"] as const) expect(byLevel(level).length).toBe(30)
    for (const t of train) {
      expect(t.request.length).toBeGreaterThan(20)
      expect(t.gold.length).toBeGreaterThan(0)
      expect(t.facts.length).toBeGreaterThan(0)
      expect(t.split).toBe("train")
      expect(t.source).toBe("generated")
      for (const c of t.gold) expect(world.library.get(c.tool)).toBeDefined()
    }
  })

  it("I1 uses one provider and 1-3 calls", () => {
    for (const t of byLevel("I1")) {
      expect(t.gold.length).toBeGreaterThanOrEqual(1)
      expect(t.gold.length).toBeLessThanOrEqual(3)
      expect(new Set(t.gold.map((c) => groupOf(c.tool))).size).toBe(1)
      expect(t.categories.length).toBe(1)
    }
  })

  it("I2 uses several providers of one category, in parallel branches", () => {
    for (const t of byLevel("I2")) {
      expect(new Set(t.gold.map((c) => groupOf(c.tool))).size).toBeGreaterThanOrEqual(2)
      expect(t.categories.length).toBe(1)
      expect(roots(t).length).toBeGreaterThanOrEqual(2)
    }
  })

  it("I3 spans categories, has parallel branches and a cross-category hard dependency", () => {
    for (const t of byLevel("I3")) {
      expect(t.categories.length).toBeGreaterThanOrEqual(2)
      expect(roots(t).length).toBeGreaterThanOrEqual(2)
      const cross = t.gold.some((c) => c.deps.some((d) => {
        const from = t.gold.find((x) => x.id === d)
        const kind = from === undefined ? undefined : world.library.graph.kind(from.tool, c.tool)
        return kind === "hard" && world.library.get(from?.tool ?? "")?.category !== world.library.get(c.tool)?.category
      }))
      expect(cross).toBe(true)
    }
  })

  it("every dependency of a gold call is an edge of G_dep and every $ref points at an earlier call", () => {
    for (const t of train) {
      const ids = t.gold.map((c) => c.id as string)
      for (const c of t.gold) {
        const refs = Refs.collectRefs(c.arguments)
        expect(refs.length).toBe(c.deps.length)
        for (const d of c.deps) {
          expect(ids.indexOf(d)).toBeLessThan(ids.indexOf(c.id))
          const from = t.gold.find((x) => x.id === d)
          expect(world.library.graph.kind(from?.tool ?? "", c.tool)).toBeDefined()
        }
      }
    }
  })

  it("is deterministic: the same seed draws the same tasks, another seed others", () => {
    const again = Tasks.make(world).take({ split: "train", count: 12 })
    expect(again).toEqual(train.slice(0, 12))
    const other = Tasks.make(world, { seed: 99 }).take({ split: "train", count: 12 })
    expect(other.map((t) => t.request)).not.toEqual(again.map((t) => t.request))
  })

  it("keeps splits apart: no anchor call (first gold call) appears in two splits", () => {
    const test = generator.take({ split: "test", count: 30 })
    expect(test.length).toBe(30)
    const anchor = (t: Task) => `${t.gold[0]?.tool}${JSON.stringify(t.gold[0]?.arguments)}`
    const trainAnchors = new Set(train.map(anchor))
    for (const t of test) expect(trainAnchors.has(anchor(t))).toBe(false)
  })

  it("holds out whole tools: test tasks use no tool any training task uses", () => {
    const held = Tasks.make(world, { holdoutTools: true })
    const trainTools = new Set(held.take({ split: "train", count: 60 }).flatMap((t) => t.gold.map((c) => c.tool as string)))
    const testTasks = held.take({ split: "test", count: 30 })
    expect(testTasks.length).toBe(30)
    for (const t of testTasks) for (const c of t.gold) expect(trainTools.has(c.tool)).toBe(false)
  })

  it.effect("the gold DAG executed layer by layer yields the gold facts when faults are off", () =>
    Effect.gen(function*() {
      let checked = 0
      for (const t of train) {
        const outputs = yield* runGold(t, false)
        expect(outputs.size).toBe(t.gold.length)
        for (const f of t.facts) {
          expect(factValue(outputs, f)).toBe(f.value)
          checked++
        }
      }
      expect(checked).toBeGreaterThan(150)
    }).pipe(Effect.provide(simulatorLayer)))

  it.effect("with 5% faults and retries of the identical call, the gold DAG still yields the gold facts", () =>
    Effect.gen(function*() {
      for (const t of train.slice(0, 45)) {
        const outputs = yield* runGold(t, true)
        for (const f of t.facts) expect(factValue(outputs, f)).toBe(f.value)
      }
    }).pipe(Effect.provide(simulatorLayer)))

  it.effect("a dependent call made before its dependency gets 404", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      let checked = 0
      for (const t of train) {
        // A call fed through a hard edge; its id must not be public (currency codes) or written in the request.
        const dependent = t.gold.find((c) => c.deps.some((d) => world.library.graph.kind(t.gold.find((x) => x.id === d)?.tool ?? "", c.tool) === "hard"))
        if (dependent === undefined) continue
        // Resolve its arguments from a complete run, then call it first in a fresh episode.
        const outputs = yield* runGold(t, false)
        const resolved = Refs.resolveRefs(dependent.arguments, (id) => outputs.get(id))
        const fed = Refs.collectRefs(dependent.arguments).map((site) => site.path[0]).map((p) => String(resolved.arguments[String(p)]))
        if (fed.some((v) => t.request.toLowerCase().includes(v.toLowerCase()))) continue
        const episode = yield* sim.open({ taskId: t.id, seed: 2, request: t.request, faults: false })
        const x = yield* episode.execute({ id: dependent.id, tool: dependent.tool, arguments: resolved.arguments })
        expect(x.outcome._tag === "error" ? x.outcome.error.status : 200).toBe(404)
        checked++
      }
      expect(checked).toBeGreaterThan(40)
    }).pipe(Effect.provide(simulatorLayer)))

  it.effect("TaskSource.layerGenerated serves the same tasks through the service", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const tasks = yield* source.sample({ split: "train", count: 6 })
      expect(tasks).toEqual(train.slice(0, 6))
      const only = yield* source.sample({ split: "validation", count: 4, levels: ["I3"] })
      expect(only.map((t) => t.level)).toEqual(["I3", "I3", "I3", "I3"])
    }).pipe(Effect.provide(TaskSourceModule.layerGenerated().pipe(Layer.provide(worldLayer)))))

  it.effect("drawAt gives the task an id names in one draw: the task `take` finds at that id; sample in slices is `take`", () =>
    Effect.gen(function*() {
      const source = yield* TaskSource
      const drawn = yield* source.sample({ split: "test", count: 12, levels: ["I2"], seed: 11 })
      expect(drawn).toEqual(generator.take({ split: "test", count: 12, levels: ["I2"], seed: 11 }))
      // every id of the draw, and the positions between them that hold no task
      const ids = new Set(drawn.map((t) => t.id as string))
      const last = Number(/-(\d+)$/.exec(drawn[drawn.length - 1]!.id)![1])
      let holes = 0
      for (let index = 0; index <= last; index++) {
        const at = yield* source.drawAt!({ split: "test", level: "I2", index, seed: 11 })
        const id = `gen-11-test-I2-${index}`
        if (at === undefined) holes++
        else expect(at).toEqual(drawn.find((t) => t.id === id))
        expect(at !== undefined).toBe(ids.has(id))
      }
      expect(holes).toBeGreaterThan(0)
    }).pipe(Effect.provide(TaskSourceModule.layerGenerated().pipe(Layer.provide(worldLayer)))))
})
