/**
 * G_dep: the dependency graph over tool interfaces, with adjacency lookups and the statistics
 * the paper's Figure 3a shows. Plain data; built once per library.
 */
import { type DepEdge, type DepKind, groupKey, type ToolSpec } from "../domain/Tool.ts"

/** G_dep with O(1) adjacency lookups. */
export interface DepGraph {
  readonly edges: ReadonlyArray<DepEdge>
  /** Edges leaving `tool` (tools it feeds). */
  readonly outgoing: (tool: string) => ReadonlyArray<DepEdge>
  /** Edges entering `tool` (tools that feed it). */
  readonly incoming: (tool: string) => ReadonlyArray<DepEdge>
  /** The strongest relation from `from` to `to`: hard beats soft. */
  readonly kind: (from: string, to: string) => DepKind | undefined
}

const none: ReadonlyArray<DepEdge> = []

/** Builds the adjacency indexes of a list of edges (duplicate edges are kept once, hard wins over soft). */
export const make = (edges: ReadonlyArray<DepEdge>): DepGraph => {
  const out = new Map<string, Array<DepEdge>>()
  const inc = new Map<string, Array<DepEdge>>()
  const kinds = new Map<string, DepKind>()
  const kept: Array<DepEdge> = []
  const seen = new Set<string>()
  for (const e of edges) {
    const key = `${e.from}\u0000${e.to}\u0000${e.kind}\u0000${e.param ?? ""}`
    if (seen.has(key)) continue
    seen.add(key)
    kept.push(e)
    let o = out.get(e.from)
    if (o === undefined) out.set(e.from, o = [])
    o.push(e)
    let i = inc.get(e.to)
    if (i === undefined) inc.set(e.to, i = [])
    i.push(e)
    const pair = `${e.from}\u0000${e.to}`
    if (e.kind === "hard" || kinds.get(pair) === undefined) kinds.set(pair, e.kind)
  }
  return {
    edges: kept,
    outgoing: (tool) => out.get(tool) ?? none,
    incoming: (tool) => inc.get(tool) ?? none,
    kind: (from, to) => kinds.get(`${from}\u0000${to}`)
  }
}

/** The empty graph. */
export const empty: DepGraph = make([])

/** Per-category counts of {@link Stats}. */
export interface CategoryStats {
  readonly category: string
  readonly tools: number
  readonly apis: number
  readonly hardEdges: number
  readonly softEdges: number
  readonly toolsWithDeps: number
}

/** The statistics of Figure 3a: interfaces, groups, edges by kind, interfaces with at least one dependency. */
export interface Stats {
  /** Tool groups (RapidAPI tools); equals `apis` when every interface is its own tool. */
  readonly tools: number
  /** Callable interfaces (APIs). */
  readonly apis: number
  readonly categories: number
  readonly hardEdges: number
  readonly softEdges: number
  /** Interfaces with at least one incoming edge (they depend on something). */
  readonly toolsWithDeps: number
  readonly perCategory: ReadonlyArray<CategoryStats>
}

/** Computes {@link Stats}; an edge counts in the category of its target. */
export const stats = (tools: ReadonlyArray<ToolSpec>, graph: DepGraph): Stats => {
  const groups = new Set<string>()
  const cat = new Map<string, { groups: Set<string>; apis: number; hard: number; soft: number; withDeps: number }>()
  const categoryOf = new Map<string, string>()
  let hard = 0
  let soft = 0
  let withDeps = 0
  for (const t of tools) {
    categoryOf.set(t.name, t.category)
    let c = cat.get(t.category)
    if (c === undefined) cat.set(t.category, c = { groups: new Set(), apis: 0, hard: 0, soft: 0, withDeps: 0 })
    const group = groupKey(t)
    groups.add(group)
    c.groups.add(group)
    c.apis++
    if (graph.incoming(t.name).length > 0) {
      withDeps++
      c.withDeps++
    }
  }
  for (const e of graph.edges) {
    const c = cat.get(categoryOf.get(e.to) ?? "")
    if (e.kind === "hard") {
      hard++
      if (c) c.hard++
    } else {
      soft++
      if (c) c.soft++
    }
  }
  const perCategory = [...cat.entries()]
    .map(([category, c]) => ({
      category,
      tools: c.groups.size,
      apis: c.apis,
      hardEdges: c.hard,
      softEdges: c.soft,
      toolsWithDeps: c.withDeps
    }))
    .sort((a, b) => b.apis - a.apis || a.category.localeCompare(b.category))
  return { tools: groups.size, apis: tools.length, categories: cat.size, hardEdges: hard, softEdges: soft, toolsWithDeps: withDeps, perCategory }
}
