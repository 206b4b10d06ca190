/**
 * A behaviour lock on the simulator's hot path: thousands of calls over hundreds of tasks (gold calls, retries,
 * coerced, unknown, missing and ill-typed arguments, unknown ids, an empty request, 5% and 30% faults) hashed outcome
 * by outcome, through the core and through `Episode.execute`, plus the tasks themselves and the world's fingerprint.
 * Performance work must leave every hash unchanged; a deliberate change of behaviour updates them in the same commit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { CallOutcome, ToolCall } from "../../../src/domain/Call.ts"
import { type TaskId, toolName } from "../../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../../src/domain/Json.ts"
import type { ToolSpec } from "../../../src/domain/Tool.ts"
import { conforms } from "../../../src/toolenv/JsonSchemaValidate.ts"
import { canonicalJson } from "../../../src/math/CanonicalJson.ts"
import { hash32 } from "../../../src/math/Random.ts"
import * as Refs from "../../../src/protocol/Refs.ts"
import { Engine } from "../../../src/toolenv/simulator/Engine.ts"
import * as Simulator from "../../../src/toolenv/Simulator.ts"
import * as Tasks from "../../../src/toolenv/world/Tasks.ts"
import * as World from "../../../src/toolenv/world/World.ts"

/** The expected hashes, recorded before the hot-path work of the simulator (see docs/toolenv.md §7). */
const expected = {
  fingerprint: "02217ffe3a656c9c",
  tasks: "bb760e3387b376ee",
  outcomes: "57a69140e8750c8d",
  strict: "2b14e3c3073d20ba"
}

/** A 64-bit running hash of texts (two chained 32-bit lanes). */
class Digest {
  private a = 0x9e3779b9
  private b = 0x85ebca6b
  add(text: string): void {
    this.a = hash32(text, this.a)
    this.b = hash32(text, this.b ^ this.a)
  }
  hex(): string {
    return this.a.toString(16).padStart(8, "0") + this.b.toString(16).padStart(8, "0")
  }
}

const world = World.make({ seed: World.defaultSeed })
const generator = Tasks.make(world)
const tasks = [
  ...generator.take({ split: "train", count: 240 }),
  ...generator.take({ split: "validation", count: 60 }),
  ...generator.take({ split: "test", count: 60, seed: 3 })
]

interface Prepared {
  readonly id: TaskId
  readonly request: string
  readonly calls: ReadonlyArray<ToolCall>
}

/** Each task's gold calls with `$ref`s resolved from a fault-free run. */
const prepared: ReadonlyArray<Prepared> = tasks.map((t) => {
  const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
  const state = engine.open({ taskId: t.id, seed: 0, request: t.request, faults: false })
  const outputs = new Map<string, Json>()
  const calls = t.gold.map((c) => {
    const call: ToolCall = { id: c.id, tool: c.tool, arguments: Refs.resolveRefs(c.arguments, (id) => outputs.get(id)).arguments }
    const r = engine.run(state, call)
    if (r.outcome._tag === "ok") outputs.set(c.id, r.outcome.payload)
    return call
  })
  return { id: t.id, request: t.request, calls }
})

const withArgs = (call: ToolCall, args: JsonObject): ToolCall => ({ ...call, arguments: args })

/** Numbers and booleans sent as text, the way a query string carries them. */
const asText = (args: JsonObject): JsonObject => {
  const out: { [key: string]: Json } = {}
  for (const [k, v] of Object.entries(args)) out[k] = typeof v === "number" || typeof v === "boolean" ? String(v) : v
  return out
}

/** The variants of a gold call an agent might send: each exercises another branch of L1 or L2. */
const variants = (spec: ToolSpec | undefined, call: ToolCall): ReadonlyArray<ToolCall> => {
  const args = call.arguments
  const out: Array<ToolCall> = [call, withArgs(call, asText(args)), withArgs(call, { ...args, bogus_limit: 5 })]
  const required = spec?.parameters.required ?? []
  const first = required[0]
  if (first !== undefined) {
    const { [first]: _dropped, ...rest } = args
    out.push(withArgs(call, rest))
    out.push(withArgs(call, { ...args, [first]: { nested: [1, "two"] } }))
  }
  for (const [param, schema] of Object.entries(spec?.parameters.properties ?? {})) {
    const v = args[param]
    if (schema["x-entity"]?.endsWith(".id") === true && typeof v === "string") out.push(withArgs(call, { ...args, [param]: `${v}9` }))
  }
  // Only the required arguments (an unfiltered list, a default limit), and every absent optional filter given.
  const properties = spec?.parameters.properties ?? {}
  const requiredOnly: { [key: string]: Json } = {}
  const filled: { [key: string]: Json } = { ...args }
  for (const [param, schema] of Object.entries(properties)) {
    const v = args[param]
    if (required.includes(param)) {
      if (v !== undefined) requiredOnly[param] = v
    } else if (v === undefined) {
      if (schema.enum !== undefined && schema.enum.length > 1) filled[param] = schema.enum[1] as Json
      else if (schema.type === "integer" || schema.type === "number") filled[param] = 3
    }
  }
  out.push(withArgs(call, requiredOnly), withArgs(call, filled))
  out.push({ ...call, tool: toolName(`${call.tool}_v2`) })
  return out
}

/** The call sequence of one episode: every variant of every gold call, then the gold calls again (retries). */
const sequence = (p: Prepared): ReadonlyArray<ToolCall> => {
  const calls: Array<ToolCall> = []
  for (const c of p.calls) calls.push(...variants(world.library.get(c.tool), c))
  calls.push(...p.calls)
  return calls
}

/** The configurations replayed: the bench's 5% faults over two rollout seeds, 30% faults, and an empty request. */
const runs = [
  { engine: { seed: 0, faultRate: 0.05 }, seed: 0, blankRequest: false },
  { engine: { seed: 0, faultRate: 0.05 }, seed: 1, blankRequest: false },
  { engine: { seed: 11, faultRate: 0.3 }, seed: 5, blankRequest: false },
  { engine: { seed: 0, faultRate: 0.05 }, seed: 2, blankRequest: true }
] as const

const record = (digest: Digest, counts: Map<string, number>, outcome: CallOutcome, attempt: number): void => {
  digest.add(`${attempt}|${canonicalJson(outcome)}`)
  const kind = outcome._tag === "ok" ? "ok" : outcome.error.kind
  counts.set(kind, (counts.get(kind) ?? 0) + 1)
}

describe("simulator: behaviour lock (hashes of outcomes, tasks and the library)", () => {
  it("the library and G_dep are unchanged", () => {
    expect(world.fingerprint()).toBe(expected.fingerprint)
  })

  it("the tasks (requests, gold DAGs, facts) are unchanged", () => {
    const digest = new Digest()
    for (const t of tasks) digest.add(canonicalJson(t))
    expect(tasks.length).toBe(360)
    expect(digest.hex()).toBe(expected.tasks)
  })

  it("outcomes and attempts of the core and of Episode.execute are unchanged", () => {
    const core = new Digest()
    const viaEffect = new Digest()
    const counts = new Map<string, number>()
    let total = 0
    for (const run of runs) {
      const engine = new Engine(world.library, world, { ...run.engine, latency: undefined })
      const service = Simulator.fromEngine(engine)
      for (const p of prepared) {
        const spec = { taskId: p.id, seed: run.seed, request: run.blankRequest ? "" : p.request, faults: true }
        const calls = sequence(p)
        const state = engine.open(spec)
        for (const c of calls) {
          const r = engine.run(state, c)
          record(core, counts, r.outcome, r.attempt)
        }
        total += calls.length
        Effect.runSync(Effect.gen(function*() {
          const episode = yield* service.open(spec)
          for (const c of calls) {
            const r = yield* episode.execute(c)
            viaEffect.add(`${r.attempt}|${canonicalJson(r.outcome)}`)
          }
        }))
      }
    }
    // Every branch is exercised many times over.
    expect(total).toBeGreaterThan(20_000)
    for (const kind of ["ok", "invalid_arguments", "not_found", "unknown_tool", "rate_limited", "server_error", "timeout"]) {
      expect(counts.get(kind) ?? 0, kind).toBeGreaterThan(100)
    }
    expect(viaEffect.hex()).toBe(core.hex())
    expect(core.hex()).toBe(expected.outcomes)
  })

  it("strict payload checks report the same issues", () => {
    const engine = new Engine(world.library, world, { seed: 0, faultRate: 0, latency: undefined })
    const digest = new Digest()
    let checked = 0
    for (const p of prepared) {
      const state = engine.open({ taskId: p.id, seed: 0, request: p.request, faults: false })
      for (const c of p.calls) {
        const r = engine.run(state, c)
        const schema = world.library.get(c.tool)?.response
        if (r.outcome._tag !== "ok" || schema === undefined) continue
        expect(conforms(schema, r.outcome.payload)).toEqual([])
        // The same payload with every string turned into a number and every number into a string must fail.
        const flipped = JSON.parse(JSON.stringify(r.outcome.payload, (_k, v: unknown) =>
          typeof v === "string" ? v.length : typeof v === "number" ? String(v) : v)) as Json
        for (const issue of conforms(schema, flipped)) digest.add(`${issue.path}|${issue.kind}|${issue.message}`)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(1000)
    expect(digest.hex()).toBe(expected.strict)
  })
})
