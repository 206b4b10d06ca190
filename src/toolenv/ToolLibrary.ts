/**
 * The ToolLibrary service: the tool interfaces an environment offers and their dependency graph G_dep.
 * Layers: the embedded generated world (default) and importers of real libraries.
 */
import { Context, Effect, Layer } from "effect"
import type { Library } from "./Library.ts"
import * as World from "./world/World.ts"

export { type Library, makeLibrary } from "./Library.ts"

/** The tool library of the environment. */
export class ToolLibrary extends Context.Service<ToolLibrary, Library>()("paraagent/ToolLibrary") {
  /** The default layer: the embedded generated world (see {@link layerGenerated}). */
  static readonly layer = (options: World.WorldOptions = {}): Layer.Layer<ToolLibrary | World.GeneratedWorld> => layerGenerated(options)
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
