/**
 * The ToolLibrary service: the tool interfaces an environment offers and their dependency graph G_dep.
 * Layers: the embedded generated world (default) and importers of real libraries.
 */
import { Context, Effect, Layer } from "effect"
import type { DepGraph } from "./DepGraph.ts"
import type { ToolSpec } from "../domain/Tool.ts"
import * as World from "./world/World.ts"

/** A loaded tool library. */
export interface Library {
  /** A label for logs and reports (`generated(seed=7)`, `toolbench:/path`). */
  readonly label: string
  readonly tools: ReadonlyArray<ToolSpec>
  /** Looks a tool up by its callable name. */
  readonly get: (name: string) => ToolSpec | undefined
  readonly categories: ReadonlyArray<string>
  readonly graph: DepGraph
}

/** The tool library of the environment. */
export class ToolLibrary extends Context.Service<ToolLibrary, Library>()("paraagent/ToolLibrary") {}

/** Builds a {@link Library} from specs and a graph. Importers make names unique; should two collide, the first is kept. */
export const makeLibrary = (label: string, tools: ReadonlyArray<ToolSpec>, graph: DepGraph): Library => {
  const byName = new Map<string, ToolSpec>()
  const categories = new Set<string>()
  for (const t of tools) {
    if (byName.has(t.name)) continue
    byName.set(t.name, t)
    categories.add(t.category)
  }
  return {
    label,
    tools: byName.size === tools.length ? tools : [...byName.values()],
    get: (name) => byName.get(name),
    categories: [...categories].sort(),
    graph
  }
}

/**
 * The embedded generated library (the default: needs no data folder): a deterministic world of 50,011 endpoints in
 * 52 categories with G_dep by construction. Also provides the GeneratedWorld, which the simulator and the task
 * generator use for the endpoints' behaviour.
 */
export const layerGenerated = (options: World.WorldOptions = {}): Layer.Layer<ToolLibrary | World.GeneratedWorld> =>
  Layer.effect(ToolLibrary, Effect.gen(function*() {
    const world = yield* World.GeneratedWorld
    return world.library
  })).pipe(Layer.provideMerge(World.layer(options)))
