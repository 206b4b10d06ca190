/**
 * `npm run toolenv -- <command>`: explore ToolEnv. `stats` (Figure-3a statistics of the generated library or of a
 * ToolBench folder), `sample` (tasks with their gold DAG and facts), `call` (one call by hand), `gold` (a task's gold
 * DAG run layer by layer through the simulator), `tool` (one tool's documentation and its G_dep edges).
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as ToolLibraryFiles from "../layers/files/ToolLibraryFiles.ts"
import * as DepGraph from "../src/toolenv/DepGraph.ts"
import { type CallOutcome, transientErrorKinds } from "../src/domain/Call.ts"
import { ConfigError } from "../src/domain/Errors.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as Cli from "../src/io/Cli.ts"
import { callId, taskId, toolName } from "../src/domain/Ids.ts"
import { type Json, JsonObject } from "../src/domain/Json.ts"
import type { Level, Split, Task } from "../src/domain/Task.ts"
import * as Refs from "../src/protocol/Refs.ts"
import * as Faults from "../src/toolenv/simulator/Faults.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import { type Library, ToolLibrary } from "../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../src/toolenv/world/Tasks.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

const seed = RunConfig.intFlag("seed", RunConfig.caps.seed, "world seed (entities, tools and G_dep derive from it)").pipe(Flag.withDefault(World.defaultSeed))
const size = RunConfig.intFlag("size", RunConfig.caps.worldSize, "number of generated interfaces").pipe(Flag.withDefault(50_011))
const json = Flag.Boolean("json").pipe(Flag.withDescription("machine-readable output"), Flag.withDefault(false))
const library = RunConfig.flags.library.pipe(Flag.optional)
const level = Flag.Literals("level", ["I1", "I2", "I3"]).pipe(Flag.withDescription("task level (default: I1, I2, I3 in turn)"), Flag.optional)
const split = Flag.Literals("split", ["train", "validation", "test"]).pipe(Flag.withDescription("dataset split"), Flag.withDefault("train"))
const taskSeed = RunConfig.intFlag("task-seed", RunConfig.caps.seed, "seed of the task stream (default: the world seed)").pipe(Flag.optional)
const holdout = Flag.Boolean("holdout-tools").pipe(Flag.withDescription("hold out whole providers per split"), Flag.withDefault(false))
const faults = Flag.Boolean("faults").pipe(Flag.withDescription("inject the 5% transient faults (off by default)"), Flag.withDefault(false))

/** Builds the generated world (the flags checked `--size` against `RunConfig.caps.worldSize` already). */
const buildWorld = (s: number, n: number) => Effect.sync(() => World.make({ seed: s, size: n }))

/** The library a command works on: a ToolBench folder when given, else the generated world. */
const loadLibrary = (s: number, n: number, dir: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isSome(dir)) {
      const started = performance.now()
      const loaded = yield* ToolLibraryFiles.load([{ kind: "toolbench", dir: dir.value }])
      return { library: loaded.library, world: undefined, buildMs: performance.now() - started }
    }
    const world = yield* buildWorld(s, n)
    return { library: world.library, world, buildMs: world.buildMs }
  })

const simulatorLayer = (lib: Library, world: World.World | undefined, faultRate: number) =>
  Simulator.layer({ faultRate }).pipe(Layer.provide(Layer.mergeAll(
    Layer.succeed(ToolLibrary, lib),
    world === undefined ? Layer.empty : Layer.succeed(World.GeneratedWorld, world)
  )))

const pad = (s: string | number, n: number): string => String(s).padStart(n)
const short = (v: Json, max = 600): string => {
  const text = JSON.stringify(v)
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}

// ---------------------------------------------------------------------------------------------------------------

const stats = Command.make("stats", { seed, size, json, library }, (flags) =>
  Effect.gen(function*() {
    const { library: lib, buildMs, world } = yield* loadLibrary(flags.seed, flags.size, flags.library)
    const s = DepGraph.stats(lib.tools, lib.graph)
    const generated = world !== undefined
    yield* Console.log(`${lib.label}: ${s.apis.toLocaleString("en-US")} APIs in ${s.tools.toLocaleString("en-US")} ${generated ? "providers" : "tools"}, ${s.categories} categories (built in ${(buildMs / 1000).toFixed(2)} s)`)
    yield* Console.log(`G_dep: ${s.hardEdges.toLocaleString("en-US")} hard edges, ${s.softEdges.toLocaleString("en-US")} soft edges; ${s.toolsWithDeps.toLocaleString("en-US")} APIs (${((100 * s.toolsWithDeps) / Math.max(1, s.apis)).toFixed(1)}%) with at least one dependency`)
    const top4 = s.perCategory.slice(0, 4).reduce((a, c) => a + c.apis, 0)
    yield* Console.log(`four largest categories: ${((100 * top4) / Math.max(1, s.apis)).toFixed(1)}% of the APIs\n`)
    yield* Console.log(`${"category".padEnd(42)}${pad("apis", 7)}${pad(generated ? "providers" : "tools", 10)}${pad("hard", 8)}${pad("soft", 8)}${pad("with deps", 10)}`)
    for (const c of s.perCategory) {
      yield* Console.log(`${c.category.padEnd(42)}${pad(c.apis, 7)}${pad(c.tools, 10)}${pad(c.hardEdges, 8)}${pad(c.softEdges, 8)}${pad(c.toolsWithDeps, 10)}`)
    }
    if (flags.json) {
      // The generated world counts every interface as a tool (tools = apis = interfaces); a ToolBench folder counts RapidAPI tools.
      yield* Console.log(JSON.stringify({
        tools: generated ? s.apis : s.tools,
        apis: s.apis,
        categories: s.categories,
        hardEdges: s.hardEdges,
        softEdges: s.softEdges,
        toolsWithDeps: s.toolsWithDeps,
        buildMs: Math.round(buildMs)
      }))
    }
  })).pipe(Command.withDescription("Library statistics (Figure 3a): APIs, tools, hard/soft edges, APIs with a dependency, per category"))

/** The gold calls in layers: layer = 1 + max layer of deps. */
const layersOf = (t: Task): Array<Array<Task["gold"][number]>> => {
  const depth = new Map<string, number>()
  for (const c of t.gold) depth.set(c.id, 1 + Math.max(0, ...c.deps.map((d) => depth.get(d) ?? 0)))
  const out: Array<Array<Task["gold"][number]>> = []
  for (const c of t.gold) (out[(depth.get(c.id) ?? 1) - 1] ??= []).push(c)
  return out
}

const printTask = (t: Task) =>
  Effect.gen(function*() {
    yield* Console.log(`task ${t.id}  (${t.level}; ${t.categories.join(", ")}; split ${t.split})`)
    yield* Console.log(`request: ${t.request}`)
    yield* Console.log("gold DAG:")
    const layers = layersOf(t)
    for (let i = 0; i < layers.length; i++) {
      for (const c of layers[i] ?? []) yield* Console.log(`  layer ${i + 1}  ${c.id} ${c.tool} ${JSON.stringify(c.arguments)}`)
    }
    yield* Console.log("facts:")
    for (const f of t.facts) yield* Console.log(`  - ${f.key}: ${f.value}   (${f.call} ${f.path})`)
  })

const drawTasks = (world: World.World, flags: { readonly level: Option.Option<Level>; readonly split: Split; readonly taskSeed: Option.Option<number>; readonly holdout: boolean }, count: number) => {
  const generator = Tasks.make(world, { holdoutTools: flags.holdout, ...(Option.isSome(flags.taskSeed) ? { seed: flags.taskSeed.value } : {}) })
  return generator.take({ split: flags.split, count, ...(Option.isSome(flags.level) ? { levels: [flags.level.value] } : {}) })
}

const count = RunConfig.intFlag("count", RunConfig.caps.count, "how many tasks").pipe(Flag.withDefault(1))

const sample = Command.make("sample", { seed, size, level, split, taskSeed, holdout, count, json }, (flags) =>
  Effect.gen(function*() {
    const world = yield* buildWorld(flags.seed, flags.size)
    const tasks = drawTasks(world, flags, flags.count)
    for (const t of tasks) {
      if (flags.json) yield* Console.log(JSON.stringify(t))
      else {
        yield* printTask(t)
        yield* Console.log("")
      }
    }
  })).pipe(Command.withDescription("Sample tasks of the generated world and print them (request, gold DAG, facts)"))

const decodeArgs = (text: string) =>
  Schema.decodeUnknownEffect(Schema.fromJsonString(JsonObject))(text).pipe(
    Effect.mapError((e) => new ConfigError({ field: "arguments", value: text, message: `arguments must be a JSON object: ${e.message}` }))
  )

const printOutcome = (outcome: CallOutcome, attempt: number, max = 4000) =>
  outcome._tag === "ok"
    ? Console.log(`  → 200 (attempt ${attempt}) ${short(outcome.payload, max)}`)
    : Console.log(`  → ${outcome.error.status} ${outcome.error.kind} (attempt ${attempt}): ${outcome.error.message}`)

const call = Command.make("call", {
  tool: Argument.String("tool").pipe(Argument.withDescription("the tool's callable name")),
  args: Argument.String("arguments").pipe(Argument.withDescription("the arguments as a JSON object"), Argument.withDefault("{}")),
  request: Flag.String("request").pipe(Flag.withDescription("the user request of the episode: ids it contains count as known (default: the arguments themselves)"), Flag.optional),
  faults, seed, size, library
}, (flags) =>
  Effect.gen(function*() {
    const args = yield* decodeArgs(flags.args)
    const { library: lib, world } = yield* loadLibrary(flags.seed, flags.size, flags.library)
    yield* Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: taskId("by-hand"), seed: 0, request: Option.getOrElse(flags.request, () => flags.args), faults: flags.faults })
      const x = yield* episode.execute({ id: callId("c1"), tool: toolName(flags.tool), arguments: args })
      yield* Console.log(`${flags.tool} ${JSON.stringify(args)}`)
      yield* printOutcome(x.outcome, x.attempt, 100_000)
    }).pipe(Effect.provide(simulatorLayer(lib, world, flags.faults ? Faults.defaultFaultRate : 0)))
  })).pipe(Command.withDescription("Execute one call by hand: tool name + JSON arguments"))

const index = RunConfig.intFlag("index", RunConfig.caps.index, "which task of the stream (0-based)").pipe(Flag.withDefault(0))

const gold = Command.make("gold", { seed, size, level, split, taskSeed, holdout, index, faults }, (flags) =>
  Effect.gen(function*() {
    const world = yield* buildWorld(flags.seed, flags.size)
    const t = drawTasks(world, flags, flags.index + 1)[flags.index]
    if (t === undefined) return yield* new ConfigError({ field: "--index", value: String(flags.index), message: "no task at that index" })
    yield* printTask(t)
    yield* Console.log("")
    yield* Effect.gen(function*() {
      const sim = yield* Simulator.Simulator
      const episode = yield* sim.open({ taskId: t.id, seed: 1, request: t.request, faults: flags.faults })
      const outputs = new Map<string, Json>()
      const layers = layersOf(t)
      for (let i = 0; i < layers.length; i++) {
        yield* Console.log(`layer ${i + 1}: ${(layers[i] ?? []).length} call(s) in parallel`)
        const results = yield* Effect.forEach(layers[i] ?? [], (c) => {
          const resolved = Refs.resolveRefs(c.arguments, (id) => outputs.get(id))
          const run = episode.execute({ id: c.id, tool: c.tool, arguments: resolved.arguments })
          // A runtime retries transient faults with the identical call; so does this replay.
          return Effect.repeat(run, {
            until: (x) => x.outcome._tag === "ok" || !transientErrorKinds.has(x.outcome.error.kind),
            times: 5
          }).pipe(Effect.map((x) => ({ c, args: resolved.arguments, x })))
        }, { concurrency: "unbounded" })
        for (const { c, args, x } of results) {
          yield* Console.log(`  ${c.id} ${c.tool} ${JSON.stringify(args)}`)
          yield* printOutcome(x.outcome, x.attempt)
          if (x.outcome._tag === "ok") outputs.set(c.id, x.outcome.payload)
        }
      }
      yield* Console.log("facts:")
      let found = 0
      for (const f of t.facts) {
        const payload = outputs.get(f.call)
        const got = payload === undefined ? undefined : Refs.select(payload, f.path.split("."))
        const value = got?.ok === true ? (typeof got.value === "string" ? got.value : JSON.stringify(got.value)) : undefined
        const ok = value === f.value
        if (ok) found++
        yield* Console.log(`  ${ok ? "✓" : "✗"} ${f.key}: ${f.value}${ok ? "" : ` (observed ${value ?? "nothing"})`}`)
      }
      yield* Console.log(`${found}/${t.facts.length} gold facts observed`)
    }).pipe(Effect.provide(simulatorLayer(world.library, world, flags.faults ? Faults.defaultFaultRate : 0)))
  })).pipe(Command.withDescription("Run a task's gold DAG layer by layer through the simulator and check the gold facts"))

const tool = Command.make("tool", {
  name: Argument.String("name").pipe(Argument.withDescription("the tool's callable name")),
  seed, size, library
}, (flags) =>
  Effect.gen(function*() {
    const { library: lib } = yield* loadLibrary(flags.seed, flags.size, flags.library)
    const spec = lib.get(flags.name)
    if (spec === undefined) return yield* new ConfigError({ field: "name", value: flags.name, message: `no tool named ${flags.name} in ${lib.label}` })
    yield* Console.log(JSON.stringify(spec, null, 2))
    const incoming = lib.graph.incoming(spec.name)
    const outgoing = lib.graph.outgoing(spec.name)
    yield* Console.log(`\nG_dep: ${incoming.length} incoming, ${outgoing.length} outgoing edges`)
    for (const e of incoming.slice(0, 8)) yield* Console.log(`  ← ${e.kind} ${e.from} (${e.field} → ${e.param})`)
    for (const e of outgoing.slice(0, 8)) yield* Console.log(`  → ${e.kind} ${e.to} (${e.field} → ${e.param})`)
  })).pipe(Command.withDescription("Print one tool's documentation and its G_dep edges"))

Command.make("toolenv").pipe(
  Command.withDescription("Explore ToolEnv: the generated 50k-tool world (or a ToolBench folder), its tasks and its simulator"),
  Command.withSubcommands([stats, sample, call, gold, tool]),
  Otlp.traced("toolenv"),
  Cli.run("toolenv", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
