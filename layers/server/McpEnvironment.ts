/**
 * The environment served episodes act in: the generated world (tools, task source) or a ToolBench-format folder (tools,
 * no task source: clients bring their own requests) — the one builder of the ToolEnv HTTP server (ToolEnvServer.ts)
 * and the MCP server — and, for the MCP server, BM25 retrieval, the simulator, the rule judge and the episodes over them.
 */
import { Layer } from "effect"
import type { ConfigError } from "../../src/domain/Errors.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as McpEpisodes from "../../src/service/McpEpisodes.ts"
import * as Simulator from "../../src/toolenv/Simulator.ts"
import * as TaskSource from "../../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../../src/toolenv/ToolLibrary.ts"
import type { GeneratedWorld, WorldOptions } from "../../src/toolenv/world/World.ts"
import type { ImportError } from "../../src/toolenv/importers/ImportReport.ts"
import * as ToolLibraryFiles from "../files/ToolLibraryFiles.ts"
import * as TaskSourceWorker from "./TaskSourceWorker.ts"

/** What the environment provides: the episodes and the services they act over (a test steps the same ones in-process). */
export type Services = McpEpisodes.McpEpisodes | McpEpisodes.Requirements

/** Which library the episodes act in. */
export type LibraryChoice =
  | { readonly kind: "generated"; readonly seed?: number; readonly size?: number }
  | { readonly kind: "toolbench"; readonly dir: string }

/** Everything the environment is built from. */
export interface EnvironmentOptions {
  readonly library: LibraryChoice
  /** The simulator's transient-fault rate (0 turns faults off). */
  readonly faultRate: number
  readonly episodes?: Partial<McpEpisodes.McpEpisodesOptions>
}

/**
 * The generated world with its task source. Generated tasks hold out whole providers per split (as `npm start` draws
 * them), so a task id from the task source names the same task here. `drawWorker` (with the seed and size named):
 * the draws run on a worker thread (TaskSourceWorker.ts), so a long draw never stalls a server's other clients.
 */
export const generatedWorld = (
  world: WorldOptions,
  options: { readonly drawWorker?: boolean } = {}
): Layer.Layer<TaskSource.TaskSource | ToolLibrary.ToolLibrary | GeneratedWorld> => {
  const tasks = options.drawWorker === true && world.seed !== undefined && world.size !== undefined
    ? TaskSourceWorker.layer({ world: { seed: world.seed, size: world.size }, holdoutTools: true })
    : TaskSource.layerGenerated({ holdoutTools: true })
  return tasks.pipe(
    Layer.provideMerge(ToolLibrary.layerGenerated({ ...(world.seed !== undefined ? { seed: world.seed } : {}), ...(world.size !== undefined ? { size: world.size } : {}) }))
  )
}

/** A ToolBench-format folder's tools (G_dep inferred): no task source. */
export const toolBenchWorld = (dir: string): Layer.Layer<ToolLibrary.ToolLibrary, ImportError> => ToolLibraryFiles.layerToolBench(dir)

/**
 * The MCP episodes service (over the library, simulator, retriever and judge in context): the options' episode
 * settings, with the rollouts' faults on exactly when the simulator's fault rate is above 0.
 */
export const episodes = (options: Pick<EnvironmentOptions, "faultRate" | "episodes">) => {
  const episodes = options.episodes ?? {}
  return McpEpisodes.layer({ ...episodes, rollout: { ...episodes.rollout, faults: options.faultRate > 0 } })
}

const common = (options: EnvironmentOptions) =>
  Layer.mergeAll(Simulator.layer({ faultRate: options.faultRate }), Retriever.layerBm25, RuleJudge.layer)

/** The episodes over the generated world, with its task source (see {@link generatedWorld}). */
export const layerGenerated = (
  world: { readonly seed?: number; readonly size?: number },
  options: Omit<EnvironmentOptions, "library">
): Layer.Layer<Services | TaskSource.TaskSource | GeneratedWorld, ConfigError> => {
  const all = { ...options, library: { kind: "generated" as const, ...world } }
  const services = common(all).pipe(Layer.provideMerge(generatedWorld(world)))
  return episodes(all).pipe(Layer.provideMerge(services))
}

/** The episodes over a ToolBench-format folder: no task source, so clients pass their own request. */
export const layerToolBench = (dir: string, options: Omit<EnvironmentOptions, "library">): Layer.Layer<Services, ConfigError | ImportError> => {
  const all = { ...options, library: { kind: "toolbench" as const, dir } }
  const services = common(all).pipe(Layer.provideMerge(toolBenchWorld(dir)))
  return episodes(all).pipe(Layer.provideMerge(services))
}

/** The episodes over the library the options name. */
export const layer = (options: EnvironmentOptions): Layer.Layer<Services, ConfigError | ImportError> =>
  options.library.kind === "generated" ? layerGenerated(options.library, options) : layerToolBench(options.library.dir, options)
