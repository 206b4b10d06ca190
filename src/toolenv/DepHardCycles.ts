/**
 * Keeps the hard part of an inferred G_dep acyclic: hard edges inside a strongly connected component of the hard
 * graph become soft (Tarjan's algorithm, iterative).
 */
import type { DepEdge } from "../domain/Tool.ts"

/**
 * Keeps the hard part of G_dep acyclic: hard edges inside a strongly connected component of the hard
 * graph (A needs what B makes and B needs what A makes) become soft, since neither can go first.
 */
export const breakHardCycles = (edges: ReadonlyArray<DepEdge>): Array<DepEdge> => {
  const ids = new Map<string, number>()
  const idOf = (n: string): number => {
    let i = ids.get(n)
    if (i === undefined) ids.set(n, i = ids.size)
    return i
  }
  const adj: Array<Array<number>> = []
  for (const e of edges) {
    if (e.kind !== "hard") continue
    const a = idOf(e.from)
    const b = idOf(e.to)
    while (adj.length <= Math.max(a, b)) adj.push([])
    adj[a]?.push(b)
  }
  const component = stronglyConnected(adj)
  const size = new Map<number, number>()
  for (const c of component) size.set(c, (size.get(c) ?? 0) + 1)
  return edges.map((e) => {
    if (e.kind !== "hard") return e
    const a = component[idOf(e.from)] ?? -1
    const b = component[idOf(e.to)] ?? -2
    return a === b && (size.get(a) ?? 0) > 1 ? { ...e, kind: "soft" } : e
  })
}

/** Tarjan's strongly connected components, iterative (no recursion depth limit): component index per node. */
const stronglyConnected = (adj: ReadonlyArray<ReadonlyArray<number>>): Array<number> => {
  const n = adj.length
  const index = new Array<number>(n).fill(-1)
  const low = new Array<number>(n).fill(0)
  const onStack = new Array<boolean>(n).fill(false)
  const component = new Array<number>(n).fill(-1)
  const stack: Array<number> = []
  let counter = 0
  let components = 0
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue
    const work: Array<[number, number]> = [[root, 0]]
    while (work.length > 0) {
      const top = work[work.length - 1] as [number, number]
      const [v, i] = top
      if (i === 0) {
        index[v] = low[v] = counter++
        stack.push(v)
        onStack[v] = true
      }
      const next = adj[v] ?? []
      if (i < next.length) {
        top[1] = i + 1
        const w = next[i] as number
        if (index[w] === -1) work.push([w, 0])
        else if (onStack[w]) low[v] = Math.min(low[v] as number, index[w] as number)
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) low[parent[0]] = Math.min(low[parent[0]] as number, low[v] as number)
      if (low[v] === index[v]) {
        let w: number
        do {
          w = stack.pop() as number
          onStack[w] = false
          component[w] = components
        } while (w !== v)
        components++
      }
    }
  }
  return component
}
