import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { CallOutcome, ToolCall } from "../../../src/domain/Call.ts"
import { callId, taskId, toolName } from "../../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../../src/domain/Json.ts"
import { conforms } from "../../../src/toolenv/JsonSchemaValidate.ts"
import * as Refs from "../../../src/protocol/Refs.ts"
import { Engine } from "../../../src/toolenv/simulator/Engine.ts"
import * as Faults from "../../../src/toolenv/simulator/Faults.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../../src/toolenv/world/Tasks.ts"
import { actionFor } from "../../../src/toolenv/world/Entities.ts"
import { paramOf } from "../../../src/toolenv/world/Ops.ts"
import * as World from "../../../src/toolenv/world/World.ts"

const world = World.make({ seed: 7, size: 12_000 })
const u = world.universe
const tasks = Tasks.make(world).take({ split: "train", count: 120 })
const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
const simulator = (config: Partial<Simulator.SimulatorConfig> = {}) => Simulator.layer(config).pipe(Layer.provide(worldLayer))

/** Every gold call of the sampled tasks, with arguments resolved from a fault-free run. */
const goldCalls: ReadonlyArray<{ readonly task: string; readonly request: string; readonly call: ToolCall; readonly prior: ReadonlyArray<ToolCall> }> = (() => {
  const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
  const out: Array<{ task: string; request: string; call: ToolCall; prior: Array<ToolCall> }> = []
  for (const t of tasks) {
    const state = engine.open({ taskId: t.id, seed: 0, request: t.request, faults: false })
    const outputs = new Map<string, Json>()
    const prior: Array<ToolCall> = []
    for (const c of t.gold) {
      const call: ToolCall = { id: c.id, tool: c.tool, arguments: Refs.resolveRefs(c.arguments, (id) => outputs.get(id)).arguments }
      const r = engine.run(state, call)
      if (r.outcome._tag === "ok") outputs.set(c.id, r.outcome.payload)
      out.push({ task: t.id, request: t.request, call, prior: [...prior] })
      prior.push(call)
    }
  }
  return out
})()

const teamSearch = world.library.tools.find((t) => world.ops.get(t.name)?.kind === "search" && world.ops.get(t.name)?.type === "team")
const teamDetails = world.library.tools.find((t) => world.ops.get(t.name)?.kind === "details" && world.ops.get(t.name)?.type === "team")
const queryParam = Object.entries(teamSearch?.parameters.properties ?? {}).find(([, s]) => s["x-entity"] === "team.name")?.[0] ?? "query"
const idParam = Object.keys(teamDetails?.parameters.properties ?? {})[0] ?? "id"

const call = (tool: string, args: JsonObject, id = "c1"): ToolCall => ({ id: callId(id), tool: toolName(tool), arguments: args })

/** Runs calls in order in a fresh episode (faults off) and returns the outcomes. */
const runAll = (calls: ReadonlyArray<ToolCall>, request = "", faults = false) =>
  Effect.gen(function*() {
    const sim = yield* Simulator.Simulator
    const episode = yield* sim.open({ taskId: taskId("t-sim"), seed: 3, request, faults })
    const out: Array<CallOutcome> = []
    for (const c of calls) out.push((yield* episode.execute(c)).outcome)
    return out
  })

const errorOf = (o: CallOutcome | undefined) => (o?._tag === "error" ? o.error : undefined)

describe("simulator: L2 consistency and determinism", () => {
  it.effect("answers identically to a repeated call, and counts attempts of identical calls", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("t-rep"), seed: 1, request: "", faults: false })
      const search = call(teamSearch?.name ?? "", { [queryParam]: u.name("team", 3) })
      const a = yield* episode.execute(search)
      const b = yield* episode.execute(search)
      expect(a.outcome._tag).toBe("ok")
      expect(b.outcome).toEqual(a.outcome)
      expect([a.attempt, b.attempt]).toEqual([1, 2])
    }).pipe(Effect.provide(simulator())))

  it("is deterministic across independent simulators: same calls, same outcomes", () => {
    const run = () => {
      const engine = new Engine(world.library, world, { seed: 5, faultRate: 0.05, latency: undefined })
      const outcomes: Array<string> = []
      let state = engine.open({ taskId: taskId(""), seed: 9, request: "", faults: true })
      for (const g of goldCalls) {
        if (g.prior.length === 0) {
          state = engine.open({ taskId: taskId(g.task), seed: 9, request: g.request, faults: true })
        }
        outcomes.push(JSON.stringify(engine.run(state, g.call)))
      }
      return outcomes
    }
    const first = run()
    expect(run()).toEqual(first)
    expect(first.length).toBeGreaterThan(250)
  })

  it.effect("facts about an entity agree across providers (search, details of the same team)", () =>
    Effect.gen(function*() {
      const team = 17
      const providers = world.library.tools.filter((t) => world.ops.get(t.name)?.kind === "details" && world.ops.get(t.name)?.type === "team").slice(0, 12)
      const seen = new Map<string, Array<string>>()
      for (const p of providers) {
        const param = Object.keys(p.parameters.properties)[0] ?? "id"
        const [o] = yield* runAll([call(p.name, { [param]: u.id("team", team) })], `about ${u.id("team", team)}`)
        expect(o?._tag).toBe("ok")
        const payload = o?._tag === "ok" ? JSON.stringify(o.payload) : ""
        expect(payload).toContain(u.id("team", team))
        for (const key of ["name", "coach", "founded", "stadium", "wins", "city"] as const) {
          const m = new RegExp(`"${key}":("[^"]*"|\\d+)`).exec(payload)
          if (m !== null) seen.set(key, [...(seen.get(key) ?? []), m[1] ?? ""])
        }
      }
      for (const [key, values] of seen) {
        expect(new Set(values).size, key).toBe(1)
        expect(values[0]).toBe(JSON.stringify(u.attr("team", team, key)))
      }
      expect(seen.size).toBeGreaterThan(2)
    }).pipe(Effect.provide(simulator())))

  it.effect("an id no call produced and the request does not contain is a 404; the same id after a search is found", () =>
    Effect.gen(function*() {
      const id = u.id("team", 42)
      const details = call(teamDetails?.name ?? "", { [idParam]: id })
      const [before] = yield* runAll([details])
      expect(errorOf(before)).toMatchObject({ kind: "not_found", status: 404 })
      const [, after] = yield* runAll([call(teamSearch?.name ?? "", { [queryParam]: u.name("team", 42) }), details])
      expect(after?._tag).toBe("ok")
      const [mentioned] = yield* runAll([details], `Tell me about team ${id}`)
      expect(mentioned?._tag).toBe("ok")
      const [fake] = yield* runAll([call(teamDetails?.name ?? "", { [idParam]: "TM-00000X" })], "team TM-00000X")
      expect(errorOf(fake)?.kind).toBe("not_found")
    }).pipe(Effect.provide(simulator())))

  it("keeps every produced id known however many calls produced them (few ids scanned, many moved into a set)", () => {
    // Team searches by league word return up to 50 teams each: well over the few ids the episode scans before it
    // moves them into its set. Every team of every search stays known, before and after a miss triggers the move.
    const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
    const state = engine.open({ taskId: taskId("t-known"), seed: 0, request: "", faults: false })
    const limitParam = Object.keys(teamSearch?.parameters.properties ?? {}).find((p) => world.ops.get(teamSearch?.name ?? "")?.params.find((x) => x.name === p)?.role === "limit")
    const found: Array<string> = []
    for (const word of ["united", "city", "rovers"]) {
      const r = engine.run(state, call(teamSearch?.name ?? "", { [queryParam]: word, ...(limitParam === undefined ? {} : { [limitParam]: 50 }) }))
      const text = r.outcome._tag === "ok" ? JSON.stringify(r.outcome.payload) : ""
      found.push(...[...text.matchAll(/"(TM-\d+)"/g)].map((m) => m[1] ?? ""))
    }
    expect(found.length).toBeGreaterThan(64)
    const details = (id: string) => engine.run(state, call(teamDetails?.name ?? "", { [idParam]: id })).outcome
    expect(details(found[0] ?? "")._tag).toBe("ok")
    expect(errorOf(details("TM-00000X"))?.kind).toBe("not_found")
    for (const id of [found[0] ?? "", found[40] ?? "", found[found.length - 1] ?? ""]) expect(details(id)._tag, id).toBe("ok")
    expect(errorOf(details("TM-00000Y"))?.kind).toBe("not_found")
  })
})

describe("simulator: actions and utilities across providers", () => {
  const byKind = (kind: string, key: (op: NonNullable<ReturnType<typeof world.ops.get>>) => string | undefined) => {
    const groups = new Map<string, Array<string>>()
    for (const t of world.library.tools) {
      const op = world.ops.get(t.name)
      if (op?.kind !== kind) continue
      const k = key(op)
      if (k === undefined) continue
      groups.set(k, [...(groups.get(k) ?? []), t.name])
    }
    return [...groups.values()].find((names) => names.length >= 2) ?? []
  }
  /** The same arguments renamed to each tool's own parameter names, by input key. */
  const argsFor = (tool: string, values: Record<string, Json>): JsonObject => {
    const op = world.ops.get(tool)
    const out: Record<string, Json> = {}
    for (const p of op?.params ?? []) if (p.key !== undefined && values[p.key] !== undefined) out[p.name] = values[p.key] as Json
    return out
  }

  it.effect("the same standalone action through two providers creates the same record; each provider's status tool reads it", () =>
    Effect.gen(function*() {
      const [a, b] = byKind("action", (op) => (op.params.some((p) => p.role === "id") ? undefined : op.action))
      expect(b).toBeDefined()
      const op = world.ops.get(a ?? "")
      const values: Record<string, Json> = {}
      for (const p of op?.params ?? []) if (p.key !== undefined && p.required) values[p.key] = p.schema.type === "number" || p.schema.type === "integer" ? 2 : p.schema.format === "email" ? "ada@example.com" : p.schema.format === "uri" ? "https://example.com/x" : "hello"
      const [x, y] = yield* runAll([call(a ?? "", argsFor(a ?? "", values)), call(b ?? "", argsFor(b ?? "", values), "c2")])
      const idOf = (o: CallOutcome | undefined): string => (o?._tag === "ok" ? JSON.stringify(o.payload).match(/"(?:id|[a-zA-Z_]*_id|[a-zA-Z]*Id)":"([^"]+)"/)?.[1] ?? "" : "")
      expect(idOf(x)).not.toBe("")
      expect(idOf(y)).toBe(idOf(x))
    }).pipe(Effect.provide(simulator())))

  it.effect("every action endpoint acts on its own target type, also when two actions share a verb (book a flight / a hotel)", () =>
    Effect.gen(function*() {
      const seen = new Set<string>()
      const cases: Array<{ readonly tool: string; readonly creates: string; readonly args: JsonObject; readonly id: string }> = []
      for (const t of world.library.tools) {
        const op = world.ops.get(t.name)
        const entry = op?.kind === "action" ? actionFor(op.action, op.type) : undefined
        const idParam = op === undefined ? undefined : paramOf(op, "id")
        if (op === undefined || entry?.target === undefined || idParam === undefined || seen.has(op.type)) continue
        seen.add(op.type)
        const id = u.id(entry.target, 5)
        const args: Record<string, Json> = { [idParam.name]: id }
        for (const p of op.params) {
          const input = p.role === "input" && p.required ? entry.action.inputs.find((i) => i.key === p.key) : undefined
          if (input !== undefined) args[p.name] = input.example(11)
        }
        cases.push({ tool: t.name, creates: op.type, args, id })
      }
      expect(cases.map((c) => c.creates)).toEqual(expect.arrayContaining(["flight_booking", "hotel_booking"]))
      for (const c of cases) {
        const [outcome] = yield* runAll([call(c.tool, c.args)], `Please use ${c.id}.`)
        expect({ creates: c.creates, outcome: outcome?._tag, error: errorOf(outcome)?.message }).toEqual({ creates: c.creates, outcome: "ok", error: undefined })
      }
    }).pipe(Effect.provide(simulator())))

  it.effect("the same utility input gives the same answer through two providers", () =>
    Effect.gen(function*() {
      const [a, b] = byKind("utility", (op) => (op.utility === "sentiment" ? op.utility : undefined))
      const values = { text: "The launch looks great and the results are excellent." }
      const [x, y] = yield* runAll([call(a ?? "", argsFor(a ?? "", values)), call(b ?? "", argsFor(b ?? "", values), "c2")])
      const score = (o: CallOutcome | undefined) => (o?._tag === "ok" ? JSON.stringify(o.payload).match(/"sentiment":"(\w+)"/)?.[1] : undefined)
      expect(score(x)).toBe("positive")
      expect(score(y)).toBe("positive")
    }).pipe(Effect.provide(simulator())))
})

describe("simulator: L1 interface errors", () => {
  const limitTool = world.library.tools.find((t) => {
    const op = world.ops.get(t.name)
    return op?.kind === "search" && op.params.some((p) => p.role === "limit") && op.params.some((p) => p.role === "eq" && p.schema.enum !== undefined)
  })
  const props = Object.entries(limitTool?.parameters.properties ?? {})
  const q = props.find(([, s]) => s["x-entity"]?.endsWith(".name"))?.[0] ?? "query"
  const limit = props.find(([, s]) => s.maximum === 50)?.[0] ?? "limit"
  const enumParam = props.find(([, s]) => s.enum !== undefined)?.[0] ?? "filter"

  it.effect("rejects an unknown tool, missing / ill-typed / out-of-enum / out-of-range / unknown arguments like an API", () =>
    Effect.gen(function*() {
      const name = limitTool?.name ?? ""
      const outcomes = yield* runAll([
        call("no_such_endpoint_for_anyone", {}),
        call(name, {}),
        call(name, { [q]: "x", [limit]: "ten" }),
        call(name, { [q]: "x", [enumParam]: "not-a-value" }),
        call(name, { [q]: "x", [limit]: 500 }),
        call(name, { [q]: "x", hallucinated_param: 1 }),
        call(name, { [q]: "x", [limit]: "5" })
      ])
      expect(errorOf(outcomes[0])).toMatchObject({ kind: "unknown_tool", status: 404 })
      for (const [i, needle] of [[1, `Missing required parameter '${q}'`], [2, `'${limit}': expected integer, got string "ten"`], [3, `'${enumParam}': "not-a-value" is not one of`], [4, `'${limit}': must be <= 50, got 500`], [5, "Unknown parameter 'hallucinated_param'"]] as const) {
        expect(errorOf(outcomes[i])).toMatchObject({ kind: "invalid_arguments", status: 400 })
        expect(errorOf(outcomes[i])?.message).toContain(needle)
      }
      expect(outcomes[6]?._tag).toBe("ok")
    }).pipe(Effect.provide(simulator())))
})

describe("simulator: L3 rendering", () => {
  it("renders payloads that conform to each tool's response schema (all gold calls of 120 tasks)", () => {
    const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
    const kinds = new Set<string>()
    let checked = 0
    for (const g of goldCalls) {
      if (g.prior.length === 0) continue
      const state = engine.open({ taskId: taskId(g.task), seed: 0, request: g.request, faults: false })
      for (const p of g.prior) engine.run(state, p)
      const r = engine.run(state, g.call)
      const spec = world.library.get(g.call.tool)
      if (r.outcome._tag !== "ok" || spec?.response === undefined) continue
      expect(conforms(spec.response, r.outcome.payload)).toEqual([])
      kinds.add(world.ops.get(g.call.tool)?.kind ?? "")
      checked++
    }
    expect(checked).toBeGreaterThan(100)
    expect(kinds.size).toBeGreaterThanOrEqual(8)
  })

  it("answers every task's first call and renders it conformingly", () => {
    const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
    let checked = 0
    for (const g of goldCalls.filter((x) => x.prior.length === 0)) {
      const state = engine.open({ taskId: taskId(g.task), seed: 0, request: g.request, faults: false })
      const r = engine.run(state, g.call)
      const spec = world.library.get(g.call.tool)
      expect(r.outcome._tag).toBe("ok")
      if (r.outcome._tag === "ok" && spec?.response !== undefined) expect(conforms(spec.response, r.outcome.payload)).toEqual([])
      checked++
    }
    expect(checked).toBe(tasks.length)
  })
})

describe("simulator: transient faults", () => {
  it("injects 4-6% transient faults over 10k calls, of all three kinds, and a retry can succeed", () => {
    const engine = new Engine(world.library, world, { seed: 0, faultRate: Faults.defaultFaultRate, latency: undefined })
    const kinds = new Map<string, number>()
    let faults = 0
    let retried = 0
    let recovered = 0
    const n = 10_000
    for (let i = 0; i < n; i++) {
      const state = engine.open({ taskId: taskId(`t${i % 50}`), seed: Math.floor(i / 50), request: "", faults: true })
      const c = call(teamSearch?.name ?? "", { [queryParam]: u.name("team", i % u.size("team")) })
      const first = engine.run(state, c)
      if (first.outcome._tag === "error") {
        faults++
        kinds.set(first.outcome.error.kind, (kinds.get(first.outcome.error.kind) ?? 0) + 1)
        retried++
        const second = engine.run(state, c)
        expect(second.attempt).toBe(2)
        if (second.outcome._tag === "ok") recovered++
      }
    }
    expect(faults / n).toBeGreaterThanOrEqual(0.04)
    expect(faults / n).toBeLessThanOrEqual(0.06)
    expect([...kinds.keys()].sort()).toEqual(["rate_limited", "server_error", "timeout"])
    expect(recovered / retried).toBeGreaterThan(0.85)
  })

  it("replays identically: the same (seed, task, call, attempt) faults the same way", () => {
    const engine = new Engine(world.library, world, { seed: 0, faultRate: 0.3, latency: undefined })
    const pattern = () => {
      const state = engine.open({ taskId: taskId("replay"), seed: 4, request: "", faults: true })
      return Array.from({ length: 200 }, (_, i) => engine.run(state, call(teamSearch?.name ?? "", { [queryParam]: u.name("team", i % 20) })).outcome._tag)
    }
    const a = pattern()
    expect(pattern()).toEqual(a)
    expect(a.filter((x) => x === "error").length).toBeGreaterThan(20)
  })

  it.effect("faults can be switched off per episode", () =>
    Effect.gen(function*() {
      const outcomes = yield* runAll(Array.from({ length: 40 }, () => call(teamSearch?.name ?? "", { [queryParam]: u.name("team", 1) })), "", false)
      expect(outcomes.every((o) => o._tag === "ok")).toBe(true)
    }).pipe(Effect.provide(simulator({ faultRate: 1 }))))

  it.effect("rejects a configuration out of range with a ConfigError naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Simulator.decodeConfig({ faultRate: 1.5 }))
      expect(error._tag).toBe("ConfigError")
      expect(error.message).toContain("faultRate")
      const llm = yield* Effect.flip(Layer.build(simulator({ render: "llm" })).pipe(Effect.scoped))
      expect(llm.field).toBe("render")
    }))
})

describe("simulator: latency model", () => {
  const latency = { minMs: 100, maxMs: 400, jitter: 0.2, timeoutMs: 5000 }

  it.effect("a call completes after its latency; ids it returns are unknown to calls that start before it ends", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("t-lat"), seed: 1, request: "", faults: false })
      const search = call(teamSearch?.name ?? "", { [queryParam]: u.name("team", 9) })
      const fiber = yield* Effect.forkChild(episode.execute(search))
      yield* TestClock.adjust(50)
      expect(fiber.pollUnsafe()).toBeUndefined()
      // A parallel call that uses the id the search will return: not known yet.
      const early = yield* Effect.forkChild(episode.execute(call(teamDetails?.name ?? "", { [idParam]: u.id("team", 9) }, "c2")))
      yield* TestClock.adjust(1000)
      const done = yield* Fiber.join(fiber)
      expect(done.outcome._tag).toBe("ok")
      expect(errorOf((yield* Fiber.join(early)).outcome)?.kind).toBe("not_found")
      const late = episode.execute(call(teamDetails?.name ?? "", { [idParam]: u.id("team", 9) }, "c3"))
      const lateFiber = yield* Effect.forkChild(late)
      yield* TestClock.adjust(1000)
      expect((yield* Fiber.join(lateFiber)).outcome._tag).toBe("ok")
    }).pipe(Effect.provide(simulator({ faultRate: 0, latency }))))

  it.effect("a timeout fault takes the model's timeout before its 504 arrives", () =>
    Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("t-timeout"), seed: 1, request: "", faults: true })
      // With every attempt faulted, find (with a probe core of the same configuration) a call whose first attempt times out.
      const probe = new Engine(world.library, world, { seed: 0, faultRate: 1, latency: undefined })
      const i = Array.from({ length: 400 }, (_, k) => k).find((k) => {
        const state = probe.open({ taskId: taskId("t-timeout"), seed: 1, request: "", faults: true })
        return errorOf(probe.run(state, call(teamSearch?.name ?? "", { [queryParam]: `x${k}` })).outcome)?.kind === "timeout"
      }) ?? 0
      const fiber = yield* Effect.forkChild(episode.execute(call(teamSearch?.name ?? "", { [queryParam]: `x${i}` })))
      yield* TestClock.adjust(latency.timeoutMs - 1)
      expect(fiber.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(1)
      const x = yield* Fiber.join(fiber)
      expect(errorOf(x.outcome)).toMatchObject({ kind: "timeout", status: 504 })
    }).pipe(Effect.provide(simulator({ faultRate: 1, latency }))))
})

