/**
 * The environment the MCP server's episodes act in: the generated world (tools, simulator, task source) or a
 * ToolBench-format folder (tools and simulator, no task source: clients bring their own requests), with BM25
 * retrieval, the rule judge and the episodes service over them.
 */
import { Layer } from "effect"
import type { ConfigError } from "../src/domain/Errors.ts"
import * as RuleJudge from "../src/judge/RuleJudge.ts"
import { Retriever } from "../src/retrieval/Retriever.ts"
import * as McpEpisodes from "../src/service/McpEpisodes.ts"
import * as Simulator from "../src/toolenv/Simulator.ts"
import * as TaskSource from "../src/toolenv/TaskSource.ts"
import * as ToolLibrary from "../src/toolenv/ToolLibrary.ts"
import type { ImportError } from "../src/toolenv/importers/ImportReport.ts"
import * as ToolLibraryFiles from "./ToolLibraryFiles.ts"

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
 * The episodes service over its environment. Generated tasks hold out whole providers per split (as `npm start`
 * draws them), so a task id from the task source names the same task here.
 */
export const layer = (options: EnvironmentOptions): Layer.Layer<McpEpisodes.McpEpisodes, ConfigError | ImportError> => {
  const library = options.library
  const episodes = options.episodes ?? {}
  const rollout = { ...episodes.rollout, faults: options.faultRate > 0 }
  const common = Layer.mergeAll(Simulator.layer({ faultRate: options.faultRate }), Retriever.layerBm25, RuleJudge.layer)
  const services = library.kind === "generated"
    ? Layer.mergeAll(common, TaskSource.layerGenerated({ holdoutTools: true })).pipe(
      Layer.provideMerge(ToolLibrary.layerGenerated({ ...(library.seed !== undefined ? { seed: library.seed } : {}), ...(library.size !== undefined ? { size: library.size } : {}) }))
    )
    : common.pipe(Layer.provideMerge(ToolLibraryFiles.layer([{ kind: "toolbench", dir: library.dir }])))
  return McpEpisodes.layer({ ...episodes, rollout }).pipe(Layer.provide(services))
}
