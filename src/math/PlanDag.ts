/**
 * Plan DAG math: validation (duplicate ids, self-dependencies, unknown deps, cycles), layers, ready nodes,
 * and the plan identity the reward uses to spot a repeated plan. Pure; problems are tagged data, never thrown.
 */
import type { CallId } from "../domain/Ids.ts"
import type { Plan, PlanNode } from "../domain/Plan.ts"

/** One problem with a plan. */
export type PlanIssue =
  /** The plan has no nodes: it plans nothing. */
  | { readonly _tag: "EmptyPlan" }
  /** Several nodes share an id; `count` is how many. */
  | { readonly _tag: "DuplicateId"; readonly id: CallId; readonly count: number }
  /** A node lists itself among its deps. */
  | { readonly _tag: "SelfDependency"; readonly node: CallId }
  /** A node depends on an id no node of the plan has. */
  | { readonly _tag: "UnknownDep"; readonly node: CallId; readonly dep: CallId }
  /** Nodes on a dependency cycle: each node depends on the next, and the last depends on the first. */
  | { readonly _tag: "Cycle"; readonly nodes: ReadonlyArray<CallId> }

/** A validated plan: a DAG with every node's layer (roots are layer 1). */
export interface Dag {
  readonly nodes: ReadonlyArray<PlanNode>
  /** Layer of each node id: 1 + max layer of its deps. */
  readonly layerOf: ReadonlyMap<CallId, number>
  /** Node ids per layer: `layers[0]` holds layer 1; ids keep the plan's node order. */
  readonly layers: ReadonlyArray<ReadonlyArray<CallId>>
}

/** The result of {@link validate}: a DAG, or every problem found (at least one). */
export type Validation =
  | { readonly _tag: "Valid"; readonly dag: Dag }
  | { readonly _tag: "Invalid"; readonly issues: readonly [PlanIssue, ...Array<PlanIssue>] }

/** One dependency edge of a plan: `to` depends on `from`. */
export interface Edge {
  readonly from: CallId
  readonly to: CallId
}

/** The deps of a node with duplicates removed, in first-mention order. */
const uniqueDeps = (node: PlanNode): ReadonlyArray<CallId> => [...new Set(node.deps)]

/**
 * Validates a plan and computes its layers. Reports every problem, in this order: empty plan, duplicate ids,
 * self-dependencies, unknown deps, cycles (one concrete cycle per strongly connected component, found among
 * the first node of each duplicated id and the known, non-self deps). A plan is valid only with no problem.
 */
export const validate = (plan: Plan): Validation => {
  const issues: Array<PlanIssue> = []
  const nodes = plan.nodes
  if (nodes.length === 0) issues.push({ _tag: "EmptyPlan" })

  const byId = new Map<CallId, PlanNode>()
  const counts = new Map<CallId, number>()
  for (const node of nodes) {
    counts.set(node.id, (counts.get(node.id) ?? 0) + 1)
    if (!byId.has(node.id)) byId.set(node.id, node)
  }
  for (const [id, count] of counts) if (count > 1) issues.push({ _tag: "DuplicateId", id, count })

  // the graph used for cycles and layers: first node per id, known deps other than itself
  const deps = new Map<CallId, ReadonlyArray<CallId>>()
  for (const node of nodes) {
    for (const dep of uniqueDeps(node)) {
      if (dep === node.id) issues.push({ _tag: "SelfDependency", node: node.id })
      else if (!byId.has(dep)) issues.push({ _tag: "UnknownDep", node: node.id, dep })
    }
  }
  for (const [id, node] of byId) deps.set(id, uniqueDeps(node).filter((d) => d !== id && byId.has(d)))

  for (const component of stronglyConnected([...byId.keys()], deps)) {
    if (component.length > 1) issues.push({ _tag: "Cycle", nodes: cycleThrough(component, deps) })
  }

  const [first, ...rest] = issues
  if (first !== undefined) return { _tag: "Invalid", issues: [first, ...rest] }
  return { _tag: "Valid", dag: layered(nodes, deps) }
}

/** Layers of an acyclic dependency map (Kahn's algorithm in plan order). */
const layered = (nodes: ReadonlyArray<PlanNode>, deps: ReadonlyMap<CallId, ReadonlyArray<CallId>>): Dag => {
  const layerOf = new Map<CallId, number>()
  const dependants = new Map<CallId, Array<CallId>>()
  const pending = new Map<CallId, number>()
  for (const node of nodes) {
    const ds = deps.get(node.id) ?? []
    pending.set(node.id, ds.length)
    for (const d of ds) {
      let list = dependants.get(d)
      if (list === undefined) dependants.set(d, list = [])
      list.push(node.id)
    }
  }
  const queue: Array<CallId> = nodes.filter((n) => pending.get(n.id) === 0).map((n) => n.id)
  for (const id of queue) layerOf.set(id, 1)
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head] as CallId
    const layer = layerOf.get(id) ?? 1
    for (const next of dependants.get(id) ?? []) {
      layerOf.set(next, Math.max(layerOf.get(next) ?? 1, layer + 1))
      const left = (pending.get(next) ?? 0) - 1
      pending.set(next, left)
      if (left === 0) queue.push(next)
    }
  }
  const depth = Math.max(0, ...layerOf.values())
  const layers: Array<Array<CallId>> = Array.from({ length: depth }, () => [])
  for (const node of nodes) layers[(layerOf.get(node.id) ?? 1) - 1]?.push(node.id)
  return { nodes, layerOf, layers }
}

/** Tarjan's strongly connected components, iterative (a model may write a long chain). */
const stronglyConnected = (
  ids: ReadonlyArray<CallId>,
  deps: ReadonlyMap<CallId, ReadonlyArray<CallId>>
): Array<Array<CallId>> => {
  const index = new Map<CallId, number>()
  const low = new Map<CallId, number>()
  const onStack = new Set<CallId>()
  const stack: Array<CallId> = []
  const components: Array<Array<CallId>> = []
  let counter = 0
  for (const root of ids) {
    if (index.has(root)) continue
    const work: Array<{ id: CallId; next: number }> = [{ id: root, next: 0 }]
    index.set(root, counter)
    low.set(root, counter++)
    stack.push(root)
    onStack.add(root)
    while (work.length > 0) {
      const frame = work[work.length - 1] as { id: CallId; next: number }
      const ds = deps.get(frame.id) ?? []
      if (frame.next < ds.length) {
        const d = ds[frame.next++] as CallId
        if (!index.has(d)) {
          index.set(d, counter)
          low.set(d, counter++)
          stack.push(d)
          onStack.add(d)
          work.push({ id: d, next: 0 })
        } else if (onStack.has(d)) {
          low.set(frame.id, Math.min(low.get(frame.id) ?? 0, index.get(d) ?? 0))
        }
        continue
      }
      work.pop()
      const parent = work[work.length - 1]
      if (parent !== undefined) low.set(parent.id, Math.min(low.get(parent.id) ?? 0, low.get(frame.id) ?? 0))
      if (low.get(frame.id) === index.get(frame.id)) {
        const component: Array<CallId> = []
        let top: CallId | undefined
        do {
          top = stack.pop()
          if (top === undefined) break
          onStack.delete(top)
          component.push(top)
        } while (top !== frame.id)
        components.push(component)
      }
    }
  }
  return components
}

/**
 * A shortest cycle through the component's earliest node (in plan order of `deps`' keys), following deps:
 * the result lists each node before the node it depends on.
 */
const cycleThrough = (component: ReadonlyArray<CallId>, deps: ReadonlyMap<CallId, ReadonlyArray<CallId>>): Array<CallId> => {
  const members = new Set(component)
  const order = [...deps.keys()].filter((id) => members.has(id))
  const start = order[0] ?? (component[0] as CallId)
  const parent = new Map<CallId, CallId>()
  const queue: Array<CallId> = [start]
  for (let head = 0; head < queue.length; head++) {
    const id = queue[head] as CallId
    for (const d of deps.get(id) ?? []) {
      if (!members.has(d)) continue
      if (d === start) {
        const path: Array<CallId> = [id]
        let cursor = id
        while (cursor !== start) {
          cursor = parent.get(cursor) as CallId
          path.push(cursor)
        }
        return path.reverse()
      }
      if (!parent.has(d)) {
        parent.set(d, id)
        queue.push(d)
      }
    }
  }
  return [...component]
}

/** A one-line human description of an issue (what `StepValidation.planError` stores). */
export const describeIssue = (issue: PlanIssue): string => {
  switch (issue._tag) {
    case "EmptyPlan":
      return "the plan has no nodes"
    case "DuplicateId":
      return `node id "${issue.id}" is used ${issue.count} times`
    case "SelfDependency":
      return `node "${issue.node}" depends on itself`
    case "UnknownDep":
      return `node "${issue.node}" depends on unknown node "${issue.dep}"`
    case "Cycle":
      return `dependency cycle: ${[...issue.nodes, issue.nodes[0] ?? ""].map((n) => `"${n}"`).join(" -> ")}`
  }
}

/** All issues of an invalid plan in one line, separated by "; ". */
export const describeIssues = (issues: ReadonlyArray<PlanIssue>): string => issues.map(describeIssue).join("; ")

/** Nodes not yet completed whose deps are all completed, in plan order. */
export const ready = (dag: Dag, completed: ReadonlySet<string>): ReadonlyArray<CallId> =>
  dag.nodes.filter((n) => !completed.has(n.id) && n.deps.every((d) => completed.has(d))).map((n) => n.id)

/** Whether every node of the DAG is completed (the controller's "DAG exhausted"). */
export const isExhausted = (dag: Dag, completed: ReadonlySet<string>): boolean =>
  dag.nodes.every((n) => completed.has(n.id))

/** The dependency edges of a plan (duplicates once; self-loops and unknown deps included as written). */
export const edges = (plan: Plan): ReadonlyArray<Edge> => {
  const out: Array<Edge> = []
  for (const node of plan.nodes) for (const dep of uniqueDeps(node)) out.push({ from: dep, to: node.id })
  return out
}

/** Node ids that `id` depends on, directly or through other nodes (not including `id` unless on a cycle). */
export const ancestors = (plan: Plan, id: string): ReadonlySet<CallId> => {
  const deps = new Map<string, ReadonlyArray<CallId>>()
  for (const node of plan.nodes) deps.set(node.id, [...(deps.get(node.id) ?? []), ...node.deps])
  const seen = new Set<CallId>()
  const stack = [...(deps.get(id) ?? [])]
  while (stack.length > 0) {
    const d = stack.pop() as CallId
    if (seen.has(d)) continue
    seen.add(d)
    stack.push(...(deps.get(d) ?? []))
  }
  return seen
}

/**
 * The identity of a plan up to node order and dep order: each node's id, bound tool and deps.
 * A node's `slot` wording is not part of it: rephrasing a capability does not make a plan new.
 */
export const planKey = (plan: Plan): string =>
  `[${plan.nodes.map((n) => JSON.stringify([n.id, n.tool ?? null, [...new Set(n.deps)].sort()])).sort().join(",")}]`

/** Whether two plans are the same up to node order, dep order and slot wording (see {@link planKey}). */
export const samePlan = (a: Plan, b: Plan): boolean => planKey(a) === planKey(b)
