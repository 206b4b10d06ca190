import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import { errorOutcome } from "../../src/domain/Call.ts"
import type { CallOutcome } from "../../src/domain/Call.ts"
import { callId, taskId, toolName } from "../../src/domain/Ids.ts"
import type { Json, JsonObject } from "../../src/domain/Json.ts"
import type { Plan } from "../../src/domain/Plan.ts"
import type { GoldCall, GoldFact, Task } from "../../src/domain/Task.ts"
import type { Paradigm, Trajectory } from "../../src/domain/Trajectory.ts"
import { callKey } from "../../src/math/CanonicalJson.ts"
import { hashParts, rng, unitHash } from "../../src/math/Random.ts"
import { Policy } from "../../src/agent/Policy.ts"
import * as Refs from "../../src/protocol/Refs.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import { Simulator } from "../../src/toolenv/Simulator.ts"
import * as SimulatorModule from "../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import * as World from "../../src/toolenv/world/World.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import * as DepGraph from "../../src/toolenv/DepGraph.ts"
import { makeLibrary } from "../../src/toolenv/ToolLibrary.ts"
import { segment } from "../../src/math/TrajectoryFacts.ts"
import { libraryLayer, retrieverLayer, tool } from "../support/RolloutKit.ts"

/** The scripted multi-agent teacher through the real rollout runtime, on hand-made tasks. */
const names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]

/**
 * A simulator like a strict API: a call without a string `q` is a 400; a tool listed in `failFirst` answers 500 to
 * its first n calls; `faultRate` adds deterministic 500s per (seed, call id). Success echoes the arguments, or is the
 * tool's entry in `payloads`.
 */
const strictSimulator = (failFirst: Readonly<Record<string, number>> = {}, faultRate = 0, payloads: Readonly<Record<string, Json>> = {}) =>
  Layer.succeed(
    Simulator,
    Simulator.of({
      open: (spec) =>
        Effect.sync(() => {
          const perTool = new Map<string, number>()
          const perCall = new Map<string, number>()
          return {
            execute: (call) =>
              Effect.sync(() => {
                const key = callKey(call.tool, call.arguments)
                const attempt = (perCall.get(key) ?? 0) + 1
                perCall.set(key, attempt)
                const n = (perTool.get(call.tool) ?? 0) + 1
                perTool.set(call.tool, n)
                const outcome: CallOutcome = typeof call.arguments["q"] !== "string"
                  ? errorOutcome("invalid_arguments", "q: a string is required")
                  : n <= (failFirst[call.tool] ?? 0) || unitHash(spec.seed, call.id, key) < faultRate
                  ? errorOutcome("server_error", "scripted failure")
                  : { _tag: "ok", payload: payloads[call.tool] ?? { echo: call.arguments, tool: call.tool } }
                return { outcome, attempt }
              })
          }
        })
    })
  )

const gold = (id: string, tool: string, args: JsonObject, deps: ReadonlyArray<string> = []): GoldCall => ({
  id: callId(id),
  tool: toolName(tool),
  arguments: args,
  deps: deps.map(callId)
})

const fact = (key: string, value: string, call: string): GoldFact => ({ key, value, call: callId(call), path: "echo.q" })

/** c1 alpha → c2 bravo (needs c1's output), c3 charlie independent. */
const chainTask: Task = {
  id: taskId("chain"),
  request: "Find the lakers, their roster, and the weather in paris.",
  level: "I2",
  categories: ["Testing"],
  gold: [
    gold("c1", "alpha", { q: "lakers" }),
    gold("c2", "bravo", { q: { $ref: "c1.echo.q" } }, ["c1"]),
    gold("c3", "charlie", { q: "paris" })
  ],
  facts: [fact("team", "lakers", "c1"), fact("roster", "lakers", "c2"), fact("city", "paris", "c3")],
  split: "train",
  seed: 1,
  source: "test"
}

/** How many explore phases a trajectory has (as the runtime segments it). */
const explorePhases = (t: Trajectory): number => segment(t.steps).filter((p) => p.kind === "explore").length

/** Look-alike tools: `hotel` takes an `id`, not a `q`; `delta` takes a `q`; `golf`'s description does not name it. */
const lookalikeNames = ["alpha", "bravo", "charlie", "delta", "hotel", "golf"]
const lookalikeLibrary = Layer.succeed(
  ToolLibrary,
  ToolLibrary.of(makeLibrary("test", [
    tool("alpha"),
    tool("bravo"),
    tool("charlie"),
    tool("delta"),
    { ...tool("hotel"), parameters: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } },
    tool("golf", "Weather lookups for a city.")
  ], DepGraph.empty))
)

/** Retrieval that returns the tools a query names, with the look-alike `rival` ranked first whenever bravo is named. */
const lookalikeRetriever = (rival: string) =>
  Layer.succeed(
    Retriever,
    Retriever.of({
      name: "lookalike",
      search: (queries, k) =>
        Effect.succeed(queries.map((q) => {
          const named = lookalikeNames.filter((n) => q.includes(n))
          const ranked = named.includes("bravo") ? [rival, ...named.filter((n) => n !== rival)] : named
          return ranked.slice(0, k).map((n) => ({ tool: toolName(n), score: 1 }))
        }))
    })
  )

const lookalikeEnv = { names: lookalikeNames, library: lookalikeLibrary }

/** One call of bravo (a task the planner cannot overlook a part of: it has one node). */
const rosterTask: Task = {
  ...chainTask,
  id: taskId("roster"),
  request: "Find the lakers roster.",
  gold: [gold("c1", "bravo", { q: "lakers" })],
  facts: [fact("roster", "lakers", "c1")]
}

/** c1 alpha → c2 bravo, and c3 golf, whose documentation does not name it. */
const weatherTask: Task = {
  ...chainTask,
  id: taskId("weather"),
  gold: [gold("c1", "alpha", { q: "lakers" }), gold("c2", "bravo", { q: { $ref: "c1.echo.q" } }, ["c1"]), gold("c3", "golf", { q: "paris" })],
  facts: [fact("team", "lakers", "c1"), fact("roster", "lakers", "c2"), fact("weather", "paris", "c3")]
}

/** A rollout of the scripted teacher over the look-alike tools (the rival ranked above bravo: `hotel` by default). */
const runIn = (
  env: typeof lookalikeEnv,
  task: Task,
  paradigm: Paradigm,
  options: Partial<Teacher.TeacherOptions>,
  simulator = strictSimulator(),
  seed = 7,
  rival = "hotel"
) =>
  Effect.gen(function*() {
    const rollout = yield* Rollout.Rollout
    return yield* rollout.run(task, { paradigm, seed })
  }).pipe(
    Effect.provide(Rollout.layer({ faults: false }).pipe(
      Layer.provide(Layer.mergeAll(Teacher.layer(options).pipe(Layer.provide(env.library)), env.library, lookalikeRetriever(rival), simulator))
    )),
    Effect.orDie
  )

const rolloutWith = (
  policy: Layer.Layer<Policy, unknown, never>,
  task: Task,
  paradigm: Paradigm,
  simulator = strictSimulator(),
  seed = 7
) =>
  Effect.gen(function*() {
    const rollout = yield* Rollout.Rollout
    return yield* rollout.run(task, { paradigm, seed })
  }).pipe(
    Effect.provide(Rollout.layer({ faults: false }).pipe(
      Layer.provide(Layer.mergeAll(policy, libraryLayer(names), retrieverLayer(names), simulator))
    )),
    Effect.orDie
  )

const scripted = (options: Partial<Teacher.TeacherOptions> = {}) => Teacher.layer(options).pipe(Layer.provide(libraryLayer(names)))

const run = (task: Task, paradigm: Paradigm, options: Partial<Teacher.TeacherOptions> = {}, simulator = strictSimulator(), seed = 7) =>
  rolloutWith(scripted(options), task, paradigm, simulator, seed)

const policyService = Effect.gen(function*() {
  return yield* Policy
})

const actions = (t: Trajectory): ReadonlyArray<string> =>
  t.steps.map((s) => {
    const turn = s.turn
    if (turn === undefined) return "malformed"
    if (turn.answer !== undefined) return "answer"
    if (turn.searches.length > 0) return `search ${turn.searches.map((q) => q.slot).join(",")}`
    return `call ${turn.calls.map((c) => c.id).join(",")}`
  })

const okCalls = (t: Trajectory): ReadonlyArray<string> =>
  t.steps.flatMap((s) => s.observations.filter((o) => o.outcome._tag === "ok").map((o) => o.callId))

describe("the scripted teacher", () => {
  it.effect("ParaAct: plan and every search at once, then each layer of ready calls at once, then the facts", () =>
    Effect.gen(function*() {
      const t = yield* run(chainTask, "ParaAct", { mistakeRate: 0 })
      assert.deepStrictEqual(actions(t), ["search c1,c2,c3", "call c1,c3", "call c2", "answer"])
      const [explore, first, second] = t.steps
      assert.deepStrictEqual(explore?.turn?.plan, {
        nodes: [
          { id: callId("c1"), tool: toolName("alpha"), slot: "The alpha tool", deps: [] },
          { id: callId("c2"), tool: toolName("bravo"), slot: "The bravo tool", deps: [callId("c1")] },
          { id: callId("c3"), tool: toolName("charlie"), slot: "The charlie tool", deps: [] }
        ]
      })
      assert.deepStrictEqual(explore?.turn?.searches.map((s) => s.query), ["The alpha tool", "The bravo tool", "The charlie tool"])
      assert.strictEqual(explore?.turn?.think, "Looking for 3 tool(s).")
      assert.strictEqual(first?.turn?.think, "Running 2 independent call(s).")
      assert.isUndefined(first?.turn?.plan)
      // the dependent call passes c1's output by reference; the runtime resolved it
      assert.deepStrictEqual(second?.turn?.calls[0]?.arguments, { q: { $ref: "c1.echo.q" } })
      assert.deepStrictEqual(second?.observations[0]?.arguments, { q: "lakers" })
      assert.deepStrictEqual(second?.observations[0]?.refs, [callId("c1")])
      assert.strictEqual(t.stop, "answer")
      assert.strictEqual(t.answer, "Here is what the tools returned. team: lakers; roster: lakers; city: paris.")
      assert.strictEqual(t.policy, "teacher")
      assert.isTrue(t.steps.every((s) => s.usage.promptTokens === 0 && s.usage.completionTokens === 0))
    }))

  it.effect("ReAct: one action per round, in gold order; no plan", () =>
    Effect.gen(function*() {
      const t = yield* run(chainTask, "ReAct", { mistakeRate: 0 })
      assert.deepStrictEqual(actions(t), ["search c1", "call c1", "search c2", "call c2", "search c3", "call c3", "answer"])
      assert.isTrue(t.steps.every((s) => s.turn?.plan === undefined && (s.validation.dropped ?? []).length === 0))
    }))

  it.effect("ExploreThenExecute: every search first, then one call per round", () =>
    Effect.gen(function*() {
      const t = yield* run(chainTask, "ExploreThenExecute", { mistakeRate: 0 })
      assert.deepStrictEqual(actions(t), ["search c1,c2,c3", "call c1", "call c2", "call c3", "answer"])
      assert.isDefined(t.steps[0]?.turn?.plan)
    }))

  it.effect("DFSDT: a failed call is a dead end; the teacher re-expands its parent with a retry and goes on", () =>
    Effect.gen(function*() {
      const t = yield* run(chainTask, "DFSDT", { mistakeRate: 0 }, strictSimulator({ bravo: 1 }))
      assert.deepStrictEqual(actions(t), ["search c1", "call c1", "search c2", "call c2", "call c2_r4", "search c3", "call c3", "answer"])
      // step 3 failed and was abandoned: step 4 expands the same parent (the search for c2), and the path goes on from it
      assert.deepStrictEqual(t.steps.map((s) => s.parent ?? null), [null, 0, 1, 2, 2, 4, 5, 6])
      assert.deepStrictEqual(okCalls(t), ["c1", "c2_r4", "c3"])
      assert.strictEqual(t.answer, "Here is what the tools returned. team: lakers; roster: lakers; city: paris.")
    }))

  it.effect("a transient failure is retried with a fresh call id; out of attempts the node is given up", () =>
    Effect.gen(function*() {
      const once = yield* run(chainTask, "ParaAct", { mistakeRate: 0 }, strictSimulator({ charlie: 1 }))
      assert.deepStrictEqual(actions(once), ["search c1,c2,c3", "call c1,c3", "call c2,c3_r2", "answer"])
      const always = yield* run(chainTask, "ParaAct", { mistakeRate: 0, callAttempts: 2 }, strictSimulator({ charlie: 99 }))
      assert.deepStrictEqual(actions(always), ["search c1,c2,c3", "call c1,c3", "call c2,c3_r2", "answer"])
      assert.include(always.answer ?? "", "I could not obtain city")
    }))

  it.effect("mistakes at rate 1: an overlooked part, a forgotten dep, vague queries, broken arguments, an omitted fact — and the recovery", () =>
    Effect.gen(function*() {
      const t = yield* run(chainTask, "ParaAct", { mistakeRate: 1 })
      assert.deepStrictEqual(actions(t), [
        "search c1,c2",
        "search c1,c2",
        "call c1",
        "call c1_r3",
        "call c2",
        "call c2_r5",
        "search c3",
        "search c3",
        "call c3",
        "call c3_r9",
        "answer"
      ])
      const [explore, rephrase, broken] = t.steps
      // the first plan overlooked c3 (the weather) and forgot c2's dependency on c1; it is still a valid DAG
      assert.deepStrictEqual(explore?.turn?.plan?.nodes.map((n) => [n.id as string, n.deps.length]), [["c1", 0], ["c2", 0]])
      assert.isUndefined(explore?.validation.planError)
      // vague first queries find nothing; the second phrasing does
      assert.deepStrictEqual(explore?.turn?.searches.map((s) => s.query), ["Testing data", "Testing data"])
      assert.isTrue(explore?.searches.every((s) => s.hits.length === 0))
      assert.deepStrictEqual(rephrase?.turn?.searches.map((s) => s.query), ["alpha alpha", "bravo bravo"])
      // a first attempt drops the required argument and gets a 400; the retry is right
      assert.deepStrictEqual(broken?.turn?.calls.map((c) => c.arguments), [{}])
      assert.deepStrictEqual(broken?.observations.map((o) => o.outcome._tag === "error" ? o.outcome.error.kind : "ok"), ["invalid_arguments"])
      // the retried dependent call refers to the retry that completed c1
      assert.deepStrictEqual(t.steps[5]?.turn?.calls[0]?.arguments, { q: { $ref: "c1_r3.echo.q" } })
      // with the plan carried out, the outputs say nothing about the city: the planner adds c3 and the slot is explored
      assert.deepStrictEqual(t.steps[6]?.turn?.plan?.nodes.map((n) => n.id as string), ["c1", "c2", "c3"])
      assert.strictEqual(t.steps[6]?.turn?.think, "The results so far say nothing about city: my plan missed that part of the request; adding it.")
      assert.strictEqual(explorePhases(t), 2)
      assert.deepStrictEqual(okCalls(t), ["c1_r3", "c2_r5", "c3_r9"])
      // one of the three observed facts is left out of the answer
      const stated = ["team: lakers", "roster: lakers", "city: paris"].filter((f) => (t.answer ?? "").includes(f))
      assert.strictEqual(stated.length, 2)
    }))

  it.effect("back to exploring, as the paper's loop does: a slot unfound after its first search waits while the rest runs", () =>
    Effect.gen(function*() {
      // golf's documentation does not name it: the first query misses it, the second phrasing finds it
      const t = yield* runIn(lookalikeEnv, weatherTask, "ParaAct", { mistakeRate: 0 })
      assert.deepStrictEqual(actions(t), ["search c1,c2,c3", "call c1", "search c3", "call c2,c3", "answer"])
      assert.strictEqual(t.steps[1]?.turn?.think, "Running 1 independent call(s) while 1 slot(s) still lack a tool.")
      assert.strictEqual(explorePhases(t), 2)
      assert.strictEqual(t.answer, "Here is what the tools returned. team: lakers; roster: lakers; weather: paris.")
    }))

  it.effect("back to exploring: the wrong one of the retrieved tools answers 400, so the slot is searched again, then solved", () =>
    Effect.gen(function*() {
      // the look-alike `hotel` is ranked above bravo and takes an `id`, not a `q`
      const t = yield* runIn(lookalikeEnv, rosterTask, "ParaAct", { mistakeRate: 1 })
      assert.deepStrictEqual(actions(t), ["search c1", "search c1", "call c1", "search c1", "call c1_r4", "answer"])
      assert.deepStrictEqual(t.steps[1]?.searches[0]?.hits.map((h) => h.tool as string), ["hotel", "bravo"])
      const [wrong] = t.steps[2]?.observations ?? []
      assert.strictEqual(wrong?.tool, "hotel")
      assert.deepStrictEqual(wrong?.outcome._tag === "error" ? wrong.outcome.error.kind : "ok", "invalid_arguments")
      // the reason to go back is the observation, stated in the turn
      assert.strictEqual(t.steps[3]?.turn?.think, "hotel answered c1 with 400 invalid_arguments: not the tool for it, so searching again.")
      assert.strictEqual(t.steps[4]?.observations[0]?.tool, "bravo")
      assert.strictEqual(explorePhases(t), 2)
      assert.strictEqual(t.answer, "Here is what the tools returned. roster: lakers.")
    }))

  it.effect("back to exploring: a wrong tool's output without the value the slot needs; one that has it is taken", () =>
    Effect.gen(function*() {
      const listing = strictSimulator({}, 0, { delta: { listing: [] } })
      const t = yield* runIn(lookalikeEnv, rosterTask, "ParaAct", { mistakeRate: 1 }, listing, 7, "delta")
      assert.deepStrictEqual(actions(t), ["search c1", "search c1", "call c1", "search c1", "call c1_r4", "answer"])
      assert.strictEqual(t.steps[3]?.turn?.think, 'delta answered c1 with no "echo.q" in its output: not the tool for it, so searching again.')
      assert.strictEqual(explorePhases(t), 2)
      assert.strictEqual(t.answer, "Here is what the tools returned. roster: lakers.")
      // an output with every needed value gives the agent no reason to doubt the tool: it is used as it is
      const served = yield* runIn(lookalikeEnv, rosterTask, "ParaAct", { mistakeRate: 1 }, strictSimulator(), 7, "delta")
      assert.deepStrictEqual(actions(served), ["search c1", "search c1", "call c1", "answer"])
      assert.strictEqual(served.steps[2]?.observations[0]?.tool, "delta")
      assert.strictEqual(explorePhases(served), 1)
      assert.strictEqual(served.answer, "Here is what the tools returned. roster: lakers.")
    }))

  it.effect("back to exploring: a transient failure of the wrong tool is retried as it was before it is judged", () =>
    Effect.gen(function*() {
      const flaky = strictSimulator({ delta: 1 }, 0, { delta: { listing: [] } })
      const t = yield* runIn(lookalikeEnv, rosterTask, "ParaAct", { mistakeRate: 1 }, flaky, 7, "delta")
      assert.deepStrictEqual(actions(t), ["search c1", "search c1", "call c1", "call c1_r3", "search c1", "call c1_r5", "answer"])
      assert.deepStrictEqual(t.steps.slice(2, 4).map((s) => s.observations[0]?.tool as string), ["delta", "delta"])
      assert.deepStrictEqual(t.steps[3]?.turn?.calls[0]?.arguments, t.steps[2]?.turn?.calls[0]?.arguments)
      assert.strictEqual(t.steps[4]?.turn?.think, 'delta answered c1 with no "echo.q" in its output: not the tool for it, so searching again.')
      assert.strictEqual(t.answer, "Here is what the tools returned. roster: lakers.")
    }))

  it.effect("the same seed gives the same trajectory; another seed may differ only in where mistakes fall", () =>
    Effect.gen(function*() {
      const a = yield* run(chainTask, "ParaAct", { mistakeRate: 0.5 }, strictSimulator(), 11)
      const b = yield* run(chainTask, "ParaAct", { mistakeRate: 0.5 }, strictSimulator(), 11)
      assert.deepStrictEqual(a.steps.map((s) => s.raw), b.steps.map((s) => s.raw))
      const raws = new Set<string>()
      for (let seed = 0; seed < 8; seed++) raws.add(JSON.stringify((yield* run(chainTask, "ParaAct", { mistakeRate: 0.5 }, strictSimulator(), seed)).steps.map((s) => s.raw)))
      assert.isAbove(raws.size, 1)
    }))

  it.effect("options are validated: a bad value is a ConfigError naming its field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Teacher.validateOptions({ ...Teacher.defaultOptions, mistakeRate: 1.5 }))
      assert.strictEqual(error.field, "mistakeRate")
      const attempts = yield* Effect.flip(Teacher.validateOptions({ ...Teacher.defaultOptions, callAttempts: 0 }))
      assert.strictEqual(attempts.field, "callAttempts")
      const built = yield* Effect.flip(Effect.provide(policyService, scripted({ searchAttempts: 1.5 })))
      assert.strictEqual(built.field, "searchAttempts")
    }))

  it.effect("without the task (an unprivileged context) the teacher fails with a PolicyError", () =>
    Effect.gen(function*() {
      const policy = yield* Effect.provide(policyService, scripted())
      const error = yield* Effect.flip(policy.act({
        request: "r",
        paradigm: "ParaAct",
        round: 0,
        maxRounds: 12,
        controller: "Need",
        history: [],
        tools: [],
        seed: 1
      }))
      assert.include(error.message, "gold DAG")
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// Random tasks: the demonstrations are well-formed whatever the DAG, paradigm, mistake rate and faults

/** A random gold DAG of 1–5 calls over the test tools; dependent calls pass a parent's output by `$ref`. */
const taskArb: fc.Arbitrary<Task> = fc.integer({ min: 0, max: 1_000_000 }).map((n) => {
  const r = rng(hashParts(5, n))
  const size = 1 + r.int(5)
  // distinct tools, so no two gold calls can coincide
  const tools = r.shuffle(names)
  const calls = Array.from({ length: size }, (_, k) => {
    const deps = k === 0 ? [] : [...new Set(Array.from({ length: r.int(3) }, () => `c${1 + r.int(k)}`))]
    const q = deps.length > 0 && r.next() < 0.7 ? { $ref: `${deps[0]}.echo.q` } : `v${k}${r.int(9)}`
    return gold(`c${k + 1}`, tools[k] as string, { q }, deps)
  })
  const literal = (g: GoldCall): string => {
    const q = g.arguments["q"]
    if (typeof q === "string") return q
    const target = calls.find((c) => Refs.isRef(q ?? null) && c.id === (q as { $ref: string }).$ref.split(".")[0])
    return target === undefined ? "" : literal(target)
  }
  return {
    id: taskId(`random-${n}`),
    request: `random request ${n}`,
    level: "I2",
    categories: ["Testing"],
    gold: calls,
    facts: calls.filter((_, k) => k % 2 === 0).map((g) => fact(`fact_${g.id}`, literal(g), g.id)),
    split: "train",
    seed: n,
    source: "test"
  }
})

const paradigmArb = fc.constantFrom<Paradigm>("ParaAct", "ReAct", "ExploreThenExecute", "DFSDT")

describe("the scripted teacher on random tasks", () => {
  it("every turn validates, calls only retrieved tools, never repeats a settled call, and the answer states only observed values", () =>
    fc.assert(
      fc.asyncProperty(taskArb, paradigmArb, fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 1000 }), async (task, paradigm, mistakeRate, seed) => {
        const t = await Effect.runPromise(run(task, paradigm, { mistakeRate }, strictSimulator({}, 0.15), seed))
        for (const s of t.steps) {
          assert.isUndefined(s.protocolError, s.raw)
          assert.deepStrictEqual(s.validation.unseenTools, [])
          assert.deepStrictEqual(s.validation.repeatedCalls, [])
          assert.deepStrictEqual(s.validation.unresolvedRefs, [])
          assert.isUndefined(s.validation.planError)
          assert.deepStrictEqual(s.validation.dropped ?? [], [])
        }
        const values = t.steps.flatMap((s) => s.observations.flatMap((o) => o.outcome._tag === "ok" ? [JSON.stringify(o.outcome.payload)] : []))
        // the stated part of the answer comes before what it says it could not obtain
        const stated = (t.answer ?? "").split("I could not")[0] ?? ""
        for (const m of stated.matchAll(/fact_c\d+: ([^;.]+)/g)) {
          assert.isTrue(values.some((v) => v.includes(`"${m[1]}"`)), `${m[1]} not observed`)
        }
      }),
      { numRuns: 60 }
    ))

  it("without mistakes or faults, ParaAct completes every gold call once and states every fact", () =>
    fc.assert(
      fc.asyncProperty(taskArb, fc.integer({ min: 0, max: 1000 }), async (task, seed) => {
        const t = await Effect.runPromise(run(task, "ParaAct", { mistakeRate: 0 }, strictSimulator(), seed))
        assert.strictEqual(t.stop, "answer")
        assert.deepStrictEqual([...okCalls(t)].sort(), task.gold.map((g) => g.id as string).sort())
        for (const f of task.facts) assert.include(t.answer ?? "", `${f.key}: ${f.value}`)
        // each round runs a whole layer of the gold DAG: rounds = 1 search + depth + 1 answer
        const layers = new Map<string, number>()
        for (const g of task.gold) layers.set(g.id, 1 + Math.max(0, ...g.deps.map((d) => layers.get(d) ?? 0)))
        assert.strictEqual(t.steps.length, 2 + Math.max(...layers.values()))
      }),
      { numRuns: 40 }
    ))
})

// ---------------------------------------------------------------------------------------------------------------
// The orchestrator with roles that follow their own plan (what the LLM roles do)

const slotNode = (id: string, slot: string, deps: ReadonlyArray<string> = [], tool?: string) => ({
  id: callId(id),
  slot,
  deps: deps.map(callId),
  ...(tool === undefined ? {} : { tool: toolName(tool) })
})

/** Roles that plan from a list of plans (one per consultation) and log what they were asked. */
const planningRoles = (plans: ReadonlyArray<Plan>, log: Array<string>, declineExecute = false): Teacher.Roles => {
  let consulted = 0
  return {
    follows: "emitted",
    plan: ({ board }) =>
      Effect.sync(() => {
        log.push(`plan(${board.nodes.map((n) => n.id).join(",")})`)
        const plan = plans[Math.min(consulted, plans.length - 1)] as Plan
        consulted++
        return { value: plan, note: `plan ${consulted}` }
      }),
    search: (_, slots) =>
      Effect.sync(() => {
        log.push(`search(${slots.map((s) => s.id).join(",")})`)
        return { value: slots.map((s) => ({ slot: s.id, query: s.slot ?? s.id })) }
      }),
    execute: (_, ready) =>
      Effect.sync(() => {
        log.push(`execute(${ready.map((n) => n.id).join(",")})`)
        return { value: declineExecute ? [] : ready.map((node) => ({ node, arguments: { q: `for ${node.id}` } })), note: "calling" }
      }),
    answer: () => Effect.sync(() => (log.push("answer"), { value: "done </answer> here", note: "answering" }))
  }
}

const policyOf = (roles: Teacher.Roles, options: Teacher.TeacherOptions = Teacher.defaultOptions) =>
  Layer.succeed(
    Policy,
    Policy.of({
      name: "orchestrator",
      privileged: true,
      act: (context) =>
        Effect.map(Teacher.nextTurn(context, context.task as Task, roles, options), (turn) => Teacher.toOutput(turn, { promptTokens: 1, completionTokens: 2 }))
    })
  )

describe("the orchestrator following an emitted plan", () => {
  it.effect("plans before searching, revises the plan once tools are found, then executes layer by layer", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const unbound: Plan = { nodes: [slotNode("a", "the alpha thing"), slotNode("b", "the bravo thing", ["a"])] }
      const bound: Plan = { nodes: [slotNode("a", "the alpha thing", [], "alpha"), slotNode("b", "the bravo thing", ["a"], "bravo")] }
      const t = yield* rolloutWith(policyOf(planningRoles([unbound, bound], log)), chainTask, "ParaAct")
      assert.deepStrictEqual(log, ["plan()", "search(a,b)", "plan(a,b)", "execute(a)", "execute(b)", "answer"])
      assert.deepStrictEqual(actions(t), ["search a,b", "call a", "call b", "answer"])
      assert.deepStrictEqual(t.steps[0]?.turn?.plan, unbound)
      // the revision that bound the tools is shown with the first calls; the role notes make up the think
      assert.deepStrictEqual(t.steps[1]?.turn?.plan, bound)
      assert.strictEqual(t.steps[1]?.turn?.think, "plan 2 calling")
      assert.isUndefined(t.steps[2]?.turn?.plan)
      // the answer's closing tag is removed so the turn stays well-formed
      assert.strictEqual(t.answer, "done   here")
      assert.deepStrictEqual(okCalls(t), ["a", "b"])
    }))

  it.effect("a revision identical to the plan in force is not shown again; an executor that declines falls through to the answer", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const unbound: Plan = { nodes: [slotNode("a", "the alpha thing")] }
      const t = yield* rolloutWith(policyOf(planningRoles([unbound], log)), chainTask, "ParaAct")
      // nothing binds "a": the planner is consulted again after each search that found tools, then the slot is given up
      assert.deepStrictEqual(actions(t), ["search a", "search a", "search a", "answer"])
      assert.isDefined(t.steps[0]?.turn?.plan)
      assert.isTrue(t.steps.slice(1).every((s) => s.turn?.plan === undefined))
      const declined: Array<string> = []
      const bound: Plan = { nodes: [slotNode("a", "alpha", [], "alpha")] }
      const u = yield* rolloutWith(policyOf(planningRoles([bound], declined, true)), chainTask, "ParaAct")
      assert.deepStrictEqual(actions(u), ["search a", "answer"])
      assert.deepStrictEqual(declined, ["plan()", "search(a)", "execute(a)", "answer"])
    }))

  it.effect("a node out of attempts after the plan was written makes the planner revise it", () =>
    Effect.gen(function*() {
      const log: Array<string> = []
      const first: Plan = { nodes: [slotNode("a", "alpha", [], "alpha")] }
      const second: Plan = { nodes: [slotNode("a", "alpha", [], "alpha"), slotNode("z", "charlie instead", [], "charlie")] }
      const t = yield* rolloutWith(
        policyOf(planningRoles([first, second], log), { ...Teacher.defaultOptions, callAttempts: 1 }),
        chainTask,
        "ParaAct",
        strictSimulator({ alpha: 99 })
      )
      assert.deepStrictEqual(log, ["plan()", "search(a)", "execute(a)", "plan(a)", "search(z)", "execute(z)", "answer"])
      assert.deepStrictEqual(okCalls(t), ["z"])
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// On the generated world: real tools, BM25 retrieval, the three-layer simulator with 5% faults

/**
 * Whether every gold node was completed on the trajectory's path: by a success of its tool, or of another tool whose
 * output has every value the node must provide (what the teacher's board counts).
 */
const completesGold = (task: Task, t: Trajectory): boolean => {
  const board = Teacher.readBoard(task, t.steps)
  return task.gold.every((g) => board.done.has(g.id))
}

/** The 12k-endpoint generated world of seed 7, built once for the tests below. */
let sharedWorld: World.World | undefined
const generatedWorld = (): World.World => (sharedWorld ??= World.make({ seed: 7, size: 12_000 }))

/** The runtime over the generated world: BM25, the three-layer simulator with 5% faults, the default teacher. */
const generatedRollout = (world: World.World) => {
  const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
  const services = Layer.mergeAll(
    Teacher.layer(),
    Retriever.layerBm25,
    SimulatorModule.layer({ faultRate: 0.05 })
  ).pipe(Layer.provideMerge(worldLayer))
  return Effect.provide(Effect.gen(function*() {
    return yield* Rollout.Rollout
  }), Rollout.layer().pipe(Layer.provide(services)))
}

describe("the scripted teacher on generated-world tasks", () => {
  it.effect("ParaAct at the default mistake rate goes back to exploring in at least 20% of its demonstrations, and solves them", () =>
    Effect.gen(function*() {
      const world = generatedWorld()
      const tasks = Tasks.make(world).take({ split: "train", count: 40 })
      const rollout = yield* generatedRollout(world)
      let reexplored = 0
      let solved = 0
      for (const task of tasks) {
        const t = yield* rollout.run(task, { paradigm: "ParaAct", seed: 3 })
        if (explorePhases(t) >= 2) reexplored++
        if (t.stop === "answer" && completesGold(task, t)) solved++
      }
      const summary = `${reexplored}/${tasks.length} with two or more explore phases, ${solved}/${tasks.length} solved`
      assert.isAtLeast(reexplored / tasks.length, 0.2, summary)
      assert.isAtLeast(solved / tasks.length, 0.8, summary)
    }))

  it.effect("each paradigm: well-formed demonstrations, and most tasks solved end to end", () =>
    Effect.gen(function*() {
      const world = generatedWorld()
      const tasks = Tasks.make(world).take({ split: "train", count: 12 })
      const rollout = yield* generatedRollout(world)
      const summary: Array<string> = []
      for (const paradigm of ["ParaAct", "ReAct", "ExploreThenExecute", "DFSDT"] as const) {
        let solved = 0
        for (const task of tasks) {
          const t = yield* rollout.run(task, { paradigm, seed: 3 })
          for (const s of t.steps) {
            assert.isUndefined(s.protocolError, s.raw)
            assert.deepStrictEqual(s.validation.unseenTools, [])
            assert.deepStrictEqual(s.validation.unresolvedRefs, [])
          }
          if (t.stop === "answer" && completesGold(task, t)) solved++
        }
        summary.push(`${paradigm} ${solved}/${tasks.length}`)
        // ReAct and DFSDT take two rounds per gold call, so the largest DAGs can run out of the 12 rounds
        assert.isAtLeast(solved, paradigm === "ParaAct" || paradigm === "ExploreThenExecute" ? 9 : 6, summary.join(", "))
      }
    }))
})

describe("Teacher.factLabel", () => {
  it("folds list positions away so answers do not number what the tools did not number", () => {
    assert.strictEqual(Teacher.factLabel('support ticket 2 of the support tickets with priority "low"'), 'the support tickets with priority "low"')
    assert.strictEqual(Teacher.factLabel('fund 1 of the funds in "Fund 3 of X"'), 'the funds in "Fund 3 of X"')
    assert.strictEqual(Teacher.factLabel("priority of the new ticket"), "priority of the new ticket")
  })
})

describe("Teacher.literalArguments", () => {
  it("keeps the arguments without a $ref anywhere inside, in their order", () => {
    const args: JsonObject = { city: "Oslo", team: { $ref: "c1.id" }, days: 3, nested: { list: [1, { $ref: "c2.results.0" }] }, tags: ["a"] }
    assert.deepStrictEqual(Teacher.literalArguments(args), { city: "Oslo", days: 3, tags: ["a"] })
    assert.deepStrictEqual(Object.keys(Teacher.literalArguments(args)), ["city", "days", "tags"])
    assert.deepStrictEqual(Teacher.literalArguments({}), {})
  })
})
