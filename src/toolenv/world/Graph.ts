/**
 * G_dep of the generated library, by construction from the endpoints' `x-entity` annotations.
 * Hard edge A → B: B has a required parameter holding a `<type>.id` that A's response carries (B cannot be called
 * with a valid id before something produced it). Soft edge A → B: B is better after A — an optional id filter fed by
 * A, a name parameter (`<type>.name`) whose exact value A returns, or a public id (currency / country code) A returns.
 * Every producer of an id could feed every consumer (ids are global in the world); G_dep keeps all edges inside a
 * provider and a seeded sample across providers (2 in the same category, 2 in others), so the graph stays sparse
 * like the inferred graph of a real library.
 */
import { type DepEdge, groupKey } from "../../domain/Tool.ts"
import { hash32 } from "../../math/Random.ts"
import { entityDefs } from "./Entities.ts"
import type { GeneratedTool } from "./Generate.ts"
import { edgePath, type Op } from "./Ops.ts"

/** One place where an endpoint's response carries an entity attribute. */
interface Production {
  readonly tool: number
  readonly field: string
}

/** Cross-provider producers sampled per consumer parameter. */
export const crossSameCategory = 2
/** Cross-category producers sampled per consumer parameter. */
export const crossOtherCategory = 2

/** Entity annotations an op's response produces (echoed arguments excluded), with their G_dep field paths. */
export const productions = (op: Op): ReadonlyArray<readonly [string, string]> => {
  const out: Array<readonly [string, string]> = []
  for (const f of op.fields) {
    if (f.source.kind === "arg") continue
    const own = f.schema["x-entity"]
    const item = f.schema.type === "array" ? f.schema.items?.["x-entity"] : undefined
    if (own !== undefined) out.push([own, edgePath(op, f.out)])
    else if (item !== undefined) out.push([item, `${edgePath(op, f.out)}[]`])
  }
  return out
}

/** Builds G_dep's edges. */
export const build = (tools: ReadonlyArray<GeneratedTool>, seed: number): Array<DepEdge> => {
  const producers = new Map<string, Array<Production>>()
  const byTool: Array<Map<string, string>> = new Array(tools.length)
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as GeneratedTool
    const mine = new Map<string, string>()
    byTool[i] = mine
    for (const [entity, field] of productions(t.op)) {
      if (mine.has(entity)) continue
      mine.set(entity, field)
      let list = producers.get(entity)
      if (list === undefined) producers.set(entity, list = [])
      list.push({ tool: i, field })
    }
  }
  const byGroup = new Map<string, Array<number>>()
  for (let i = 0; i < tools.length; i++) {
    const key = groupKey((tools[i] as GeneratedTool).spec)
    let g = byGroup.get(key)
    if (g === undefined) byGroup.set(key, g = [])
    g.push(i)
  }
  const edges: Array<DepEdge> = []
  for (let j = 0; j < tools.length; j++) {
    const consumer = tools[j] as GeneratedTool
    for (const p of consumer.op.params) {
      const entity = p.schema["x-entity"]
      if (entity === undefined) continue
      const isId = entity.endsWith(".id")
      const isName = entity.endsWith(".name")
      if (!isId && !isName) continue
      // A public id (ISO currency or country code) can be written without any call: feeding it is only "better after".
      const isPublic = isId && entityDefs.get(entity.slice(0, -3))?.publicIds === true
      const kind = isId && p.required && !isPublic ? "hard" : "soft"
      const list = producers.get(entity)
      if (list === undefined) continue
      const add = (prod: Production): void => {
        if (prod.tool === j) return
        const from = tools[prod.tool] as GeneratedTool
        edges.push({ from: from.spec.name, to: consumer.spec.name, kind, param: p.name, field: prod.field, entity })
      }
      // Inside the provider: every producer.
      const mine = groupKey(consumer.spec)
      for (const i of byGroup.get(mine) ?? []) {
        const field = byTool[i]?.get(entity)
        if (field !== undefined) add({ tool: i, field })
      }
      // Across providers: a seeded sample, some in the same category, some in others.
      const base = hash32(`gdep\u0000${consumer.spec.name}\u0000${p.name}`, seed)
      let same = 0
      let other = 0
      const picked = new Set<number>()
      for (let attempt = 0; attempt < 24 && (same < crossSameCategory || other < crossOtherCategory); attempt++) {
        const prod = list[hash32(String(attempt), base) % list.length] as Production
        const from = tools[prod.tool] as GeneratedTool
        if (picked.has(prod.tool) || groupKey(from.spec) === mine) continue
        const sameCat = from.spec.category === consumer.spec.category
        if (sameCat ? same >= crossSameCategory : other >= crossOtherCategory) continue
        picked.add(prod.tool)
        if (sameCat) same++
        else other++
        add(prod)
      }
    }
  }
  return edges
}
