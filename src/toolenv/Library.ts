/**
 * A loaded tool library as plain data: the tools, a lookup by callable name, the categories and G_dep. Pure, so the
 * generated world and the importers build one without depending on the ToolLibrary service.
 */
import type { DepGraph } from "./DepGraph.ts"
import type { ToolSpec } from "../domain/Tool.ts"

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
