import { assert, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { callId, toolName } from "../../src/domain/Ids.ts"
import type { Plan, PlanNode } from "../../src/domain/Plan.ts"
import * as PlanMath from "../../src/math/PlanDag.ts"

const node = (id: string, deps: ReadonlyArray<string> = [], tool?: string): PlanNode => ({
  id: callId(id),
  deps: deps.map(callId),
  ...(tool === undefined ? {} : { tool: toolName(tool) })
})

/** A random DAG: node i depends on some nodes j < i; nodes listed in a random order. */
const dagArb: fc.Arbitrary<Plan> = fc.integer({ min: 1, max: 24 }).chain((n) =>
  fc.tuple(
    fc.array(fc.array(fc.nat({ max: 1000 }), { maxLength: 4 }), { minLength: n, maxLength: n }),
    fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n })
  ).map(([picks, order]) => ({
    nodes: order.map((i) => node(`n${i}`, i === 0 ? [] : (picks[i] ?? []).map((p) => `n${p % i}`)))
  }))
)

const valid = (plan: Plan): PlanMath.Dag => {
  const result = PlanMath.validate(plan)
  assert(result._tag === "Valid", result._tag === "Invalid" ? PlanMath.describeIssues(result.issues) : "")
  return result.dag
}

const issuesOf = (plan: Plan): ReadonlyArray<PlanMath.PlanIssue> => {
  const result = PlanMath.validate(plan)
  return result._tag === "Invalid" ? result.issues : []
}

describe("Plan.validate and layers", () => {
  it("layers a diamond: roots at 1, a node one above its deepest dep", () => {
    const dag = valid({ nodes: [node("d", ["b", "c"]), node("b", ["a"]), node("c", ["a"]), node("a"), node("e")] })
    expect(Object.fromEntries(dag.layerOf)).toEqual({ a: 1, e: 1, b: 2, c: 2, d: 3 })
    expect(dag.layers).toEqual([["a", "e"], ["b", "c"], ["d"]])
  })

  it("every node's layer is 1 + the max layer of its deps (roots at 1), for random DAGs", () => {
    fc.assert(
      fc.property(dagArb, (plan) => {
        const dag = valid(plan)
        for (const n of plan.nodes) {
          const layer = dag.layerOf.get(n.id) as number
          const depLayers = n.deps.map((d) => dag.layerOf.get(d) as number)
          for (const dl of depLayers) expect(layer).toBeGreaterThan(dl)
          expect(layer).toBe(1 + Math.max(0, ...depLayers))
        }
        expect(dag.layers.flat().sort()).toEqual(plan.nodes.map((n) => n.id).sort())
        dag.layers.forEach((ids, i) => ids.forEach((id) => expect(dag.layerOf.get(id)).toBe(i + 1)))
      }),
      { numRuns: 300 }
    )
  })

  it("ready nodes are exactly the open nodes whose deps are all completed", () => {
    fc.assert(
      fc.property(dagArb.chain((plan) => fc.tuple(fc.constant(plan), fc.subarray(plan.nodes.map((n) => n.id)))), ([plan, done]) => {
        const dag = valid(plan)
        const completed = new Set<string>(done)
        const expected = plan.nodes.filter((n) => !completed.has(n.id) && n.deps.every((d) => completed.has(d))).map((n) => n.id)
        expect([...PlanMath.ready(dag, completed)]).toEqual(expected)
      }),
      { numRuns: 300 }
    )
  })

  it("completing every ready node round after round walks the layers and exhausts the DAG in depth rounds", () => {
    fc.assert(
      fc.property(dagArb, (plan) => {
        const dag = valid(plan)
        const completed = new Set<string>()
        let rounds = 0
        while (!PlanMath.isExhausted(dag, completed)) {
          const ready = PlanMath.ready(dag, completed)
          expect([...ready]).toEqual(dag.layers[rounds])
          for (const id of ready) completed.add(id)
          rounds++
        }
        expect(rounds).toBe(dag.layers.length)
      }),
      { numRuns: 300 }
    )
  })

  it("finds a planted cycle and names nodes that really form one", () => {
    const arb = dagArb
      .filter((plan) => plan.nodes.some((n) => n.deps.length > 0))
      .chain((plan) => fc.tuple(fc.constant(plan), fc.constantFrom(...plan.nodes.filter((n) => n.deps.length > 0))))
    fc.assert(
      fc.property(arb, ([plan, consumer]) => {
        const producer = consumer.deps[0] as string
        // the producer now also depends on its consumer: producer -> consumer -> producer
        const planted: Plan = {
          nodes: plan.nodes.map((n) => (n.id === producer ? { ...n, deps: [...n.deps, consumer.id] } : n))
        }
        const cycles = issuesOf(planted).filter((i): i is Extract<PlanMath.PlanIssue, { _tag: "Cycle" }> => i._tag === "Cycle")
        expect(cycles.length).toBeGreaterThanOrEqual(1)
        const depsOf = new Map(planted.nodes.map((n) => [n.id as string, n.deps as ReadonlyArray<string>]))
        for (const cycle of cycles) {
          expect(cycle.nodes.length).toBeGreaterThanOrEqual(2)
          cycle.nodes.forEach((id, i) => {
            const next = cycle.nodes[(i + 1) % cycle.nodes.length] as string
            expect(depsOf.get(id)).toContain(next)
          })
        }
        expect(cycles.some((c) => c.nodes.includes(callId(producer)) && c.nodes.includes(consumer.id))).toBe(true)
      }),
      { numRuns: 300 }
    )
  })

  it("finds planted unknown deps, duplicate ids and self-dependencies", () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), fc.constantFrom("unknown", "duplicate", "self"), (plan, pick, kind) => {
        const target = plan.nodes[pick % plan.nodes.length] as PlanNode
        const issues = issuesOf(
          kind === "unknown"
            ? { nodes: plan.nodes.map((n) => (n === target ? { ...n, deps: [...n.deps, callId("zz_missing")] } : n)) }
            : kind === "duplicate"
            ? { nodes: [...plan.nodes, node(target.id)] }
            : { nodes: plan.nodes.map((n) => (n === target ? { ...n, deps: [...n.deps, n.id] } : n)) }
        )
        const expected = kind === "unknown"
          ? { _tag: "UnknownDep", node: target.id, dep: "zz_missing" }
          : kind === "duplicate"
          ? { _tag: "DuplicateId", id: target.id, count: 2 }
          : { _tag: "SelfDependency", node: target.id }
        expect(issues).toContainEqual(expected)
        expect(issues.some((i) => i._tag === "Cycle")).toBe(false)
      }),
      { numRuns: 300 }
    )
  })

  it("reports every problem of a plan, in a fixed order, and describes each", () => {
    const issues = issuesOf({
      nodes: [node("a", ["b"]), node("b", ["a"]), node("c", ["c", "x"]), node("c")]
    })
    expect(issues).toEqual([
      { _tag: "DuplicateId", id: "c", count: 2 },
      { _tag: "SelfDependency", node: "c" },
      { _tag: "UnknownDep", node: "c", dep: "x" },
      { _tag: "Cycle", nodes: ["a", "b"] }
    ])
    expect(PlanMath.describeIssues(issues)).toBe(
      `node id "c" is used 2 times; node "c" depends on itself; node "c" depends on unknown node "x"; ` +
        `dependency cycle: "a" -> "b" -> "a"`
    )
    expect(issuesOf({ nodes: [] })).toEqual([{ _tag: "EmptyPlan" }])
  })

  it("names a shortest cycle through the first node of a longer loop", () => {
    const issues = issuesOf({ nodes: [node("a", ["b"]), node("b", ["c"]), node("c", ["a", "d"]), node("d", ["b"])] })
    expect(issues).toEqual([{ _tag: "Cycle", nodes: ["a", "b", "c"] }])
  })

  it("handles a 5,000-node chain without deep recursion", () => {
    const nodes = Array.from({ length: 5000 }, (_, i) => node(`n${i}`, i === 0 ? [] : [`n${i - 1}`]))
    expect(valid({ nodes }).layers.length).toBe(5000)
    const looped = { nodes: nodes.map((n, i) => (i === 0 ? node("n0", ["n4999"]) : n)) }
    const cycle = issuesOf(looped)[0]
    expect(cycle?._tag === "Cycle" ? cycle.nodes.length : 0).toBe(5000)
  })
})

describe("Plan identity and edges", () => {
  it("a plan equals itself with nodes and deps shuffled and slots reworded", () => {
    fc.assert(
      fc.property(dagArb, fc.nat(), (plan, seed) => {
        const reordered: Plan = {
          nodes: [...plan.nodes].reverse().map((n, i) => ({
            ...n,
            deps: (seed + i) % 2 === 0 ? [...n.deps].reverse() : n.deps,
            slot: `reworded ${i}`
          }))
        }
        expect(PlanMath.samePlan(plan, reordered)).toBe(true)
      })
    )
  })

  it("a plan differs from one with a dependency dropped or a tool rebound", () => {
    const plan: Plan = { nodes: [node("a", [], "find_team"), node("b", ["a"], "team_roster")] }
    expect(PlanMath.samePlan(plan, { nodes: [node("a", [], "find_team"), node("b", [], "team_roster")] })).toBe(false)
    expect(PlanMath.samePlan(plan, { nodes: [node("a", [], "find_team"), node("b", ["a"], "other")] })).toBe(false)
    expect(PlanMath.samePlan(plan, { nodes: [node("a"), node("b", ["a"], "team_roster")] })).toBe(false)
  })

  it("lists edges dep -> node once each, and ancestors transitively", () => {
    const plan: Plan = { nodes: [node("a"), node("b", ["a", "a"]), node("c", ["b"])] }
    expect(PlanMath.edges(plan)).toEqual([{ from: "a", to: "b" }, { from: "b", to: "c" }])
    expect([...PlanMath.ancestors(plan, "c")].sort()).toEqual(["a", "b"])
    expect([...PlanMath.ancestors(plan, "a")]).toEqual([])
  })
})
