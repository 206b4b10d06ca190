/**
 * The generated world: the entity universe of a seed, the 50k-endpoint library over it, each endpoint's operation,
 * and G_dep. Built in one pass, deterministic from the seed; offered as the GeneratedWorld service.
 */
import { Context, Effect, Layer } from "effect"
import * as DepGraph from "../DepGraph.ts"
import type { ToolSpec } from "../../domain/Tool.ts"
import { hash32 } from "../../math/Random.ts"
import { type Library, makeLibrary } from "../Library.ts"
import { entityDefs } from "./Entities.ts"
import { generate } from "./Generate.ts"
import * as Graph from "./Graph.ts"
import type { Op } from "./Ops.ts"
import { Universe } from "./Universe.ts"

/** Options of a generated world. */
export interface WorldOptions {
  /** World seed (default 7): entities, tools and G_dep all derive from it. */
  readonly seed?: number
  /** Number of endpoints (default 50,011). */
  readonly size?: number
}

/** The default world seed. */
export const defaultSeed = 7

/** A built world. */
export interface World {
  readonly seed: number
  readonly universe: Universe
  readonly library: Library
  /** The operation behind each generated endpoint, by callable name. */
  readonly ops: ReadonlyMap<string, Op>
  /** Milliseconds the build took (tools + G_dep; entity tables are built lazily on use). */
  readonly buildMs: number
  /** A 64-bit hash (hex) of every ToolSpec and edge: equal worlds hash equally. */
  readonly fingerprint: () => string
}

/** Builds a world. */
export const make = (options: WorldOptions = {}): World => {
  const seed = options.seed ?? defaultSeed
  const started = performance.now()
  const generated = generate({ seed, ...(options.size === undefined ? {} : { size: options.size }) })
  const tools: Array<ToolSpec> = new Array(generated.length)
  const ops = new Map<string, Op>()
  for (let i = 0; i < generated.length; i++) {
    const g = generated[i]
    if (g === undefined) continue
    tools[i] = g.spec
    ops.set(g.spec.name, g.op)
  }
  const graph = DepGraph.make(Graph.build(generated, seed))
  const library = makeLibrary(`generated(seed=${seed}, tools=${tools.length})`, tools, graph)
  const buildMs = performance.now() - started
  let memo: string | undefined
  return {
    seed,
    universe: new Universe(seed, entityDefs),
    library,
    ops,
    buildMs,
    fingerprint: () => {
      if (memo !== undefined) return memo
      let a = 0x9e3779b9
      let b = 0x85ebca6b
      for (const t of tools) {
        const text = JSON.stringify(t)
        a = hash32(text, a)
        b = hash32(text, b ^ a)
      }
      for (const e of graph.edges) {
        const text = `${e.from}>${e.to}:${e.kind}:${e.param ?? ""}:${e.field ?? ""}`
        a = hash32(text, a)
        b = hash32(text, b ^ a)
      }
      memo = a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0")
      return memo
    }
  }
}

/** The generated world as a service, for layers that need more than the ToolLibrary (simulator, task generator). */
export class GeneratedWorld extends Context.Service<GeneratedWorld, World>()("paraagent/GeneratedWorld") {
  /** The default layer: the world of the given options, built once (see {@link layer}). */
  static readonly layer = (options: WorldOptions = {}): Layer.Layer<GeneratedWorld> => layer(options)
}

/** A layer building the world once. */
export const layer = (options: WorldOptions = {}): Layer.Layer<GeneratedWorld> =>
  Layer.effect(GeneratedWorld, Effect.sync(() => make(options)))
