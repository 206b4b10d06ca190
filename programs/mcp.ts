#!/usr/bin/env node
/**
 * `npm run mcp -- [--library generated|<dir>] [--seed 7] [--size 50011] [--fault-rate 0.05] [--max-rounds 12]
 * [--episode-seed 1] [--otlp <url>]`: ToolEnv as an MCP server over stdio, for desktop assistants and agent frameworks
 * (docs/mcp.md). stdout carries the protocol only; logs and errors go to stderr. The end of stdin is a normal end
 * (exit 0); SIGINT / SIGTERM are interrupts (exit 130). A client should start it as `node --import tsx programs/mcp.ts`
 * in a clone, or `paraagent-mcp` (the package's bin) where the package is installed: `npm run mcp` prints npm's
 * banner on stdout first.
 */
// subpath imports: the package index loads every Node module (HTTP server, sockets, workers), ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import { Cause, Effect, Exit, Fiber, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import * as McpEnvironment from "../layers/server/McpEnvironment.ts"
import * as Otlp from "../layers/Otlp.ts"
import * as RunConfig from "../src/eval/RunConfig.ts"
import * as Cli from "../src/io/Cli.ts"
import * as McpTools from "../src/service/McpTools.ts"
import * as Faults from "../src/toolenv/simulator/Faults.ts"
import * as World from "../src/toolenv/world/World.ts"
import * as Signals from "../src/io/Signals.ts"
import * as Provenance from "../src/io/Provenance.ts"

const library = Flag.String("library").pipe(
  Flag.withDescription("generated (the built-in world) or a ToolBench-format folder (<Category>/<tool>.json; no task source: clients pass their own request)"),
  Flag.withDefault("generated")
)
const seed = RunConfig.intFlag("seed", RunConfig.caps.seed, "seed of the generated world").pipe(Flag.withDefault(World.defaultSeed))
const size = RunConfig.intFlag("size", RunConfig.caps.worldSize, "tool interfaces of the generated world").pipe(Flag.withDefault(50_011))
const faultRate = RunConfig.numberFlag("fault-rate", { minimum: 0, maximum: 1 }, "the simulator's transient-fault rate, 0 for none").pipe(
  Flag.withDefault(Faults.defaultFaultRate)
)
const maxRounds = RunConfig.flags.maxRounds.pipe(Flag.withDefault(12))
const episodeSeed = RunConfig.intFlag("episode-seed", RunConfig.caps.seed, "default episode seed when start_episode gives none").pipe(Flag.withDefault(1))

const mcp = Command.make("mcp", { library, seed, size, faultRate, maxRounds, episodeSeed }, (flags) => {
  const environment = McpEnvironment.layer({
    library: flags.library === "generated" ? { kind: "generated", seed: flags.seed, size: flags.size } : { kind: "toolbench", dir: flags.library },
    faultRate: flags.faultRate,
    episodes: { seed: flags.episodeSeed, rollout: { maxRounds: flags.maxRounds } }
  })
  const server = Layer.launch(McpTools.layerStdio.pipe(Layer.provide(environment), Layer.provide(NodeStdio.layer)))
  // at the end of stdin the RPC stdio protocol interrupts the fiber that built it: run the server on a child fiber, so
  // that end is a normal end of this program (exit 0), while an interrupt of the program itself (SIGINT, SIGTERM)
  // still interrupts the wait below (exit 130)
  return Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(server)
    const exit = yield* Fiber.await(fiber)
    if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) return yield* Effect.failCause(exit.cause)
    yield* Effect.logInfo("stdin closed: the MCP server stops")
  })
}).pipe(Command.withDescription("ToolEnv as an MCP server over stdio: start_episode, search_tools, describe_tool, call_tool, call_tools, answer, episode_state"))

mcp.pipe(
  Otlp.traced("mcp"),
  Cli.run("mcp", Provenance.packageVersion()),
  Effect.provide(NodeServices.layer),
  Signals.runMain()
)
