/**
 * The evaluated world of one seed: per entity type a lazily built table of ids and names, and on-demand attribute
 * values, relations, name search, filters and time series. Nothing but ids and names is stored per entity.
 */
import type { Json } from "../../domain/Json.ts"
import { hash32 } from "../../math/Random.ts"
import type { Attr, EntityDef, Entity, SeriesDef, WorldView } from "./Model.ts"

/** One entity type's table: ids, names and the block relation to its parent. */
export interface Table {
  readonly def: EntityDef
  readonly size: number
  readonly ids: ReadonlyArray<string>
  readonly names: ReadonlyArray<string>
  /** Parent index per entity (block relation), or undefined when the type has no parent. */
  readonly parentOf: Int32Array | undefined
  /** For each parent index p, children are [childStart[p], childStart[p + 1]). */
  readonly childStart: Int32Array | undefined
  readonly seed: number
  /** Each entity's hash (of the type seed and its index), computed once. */
  readonly hashes: Uint32Array
}

const tokenRe = /[a-z0-9]+/g

/** Lower-case alphanumeric tokens of a text. */
export const tokens = (text: string): Array<string> => text.toLowerCase().match(tokenRe) ?? []

const normalize = (text: string): string => tokens(text).join(" ")

/** Binary search in an ascending list. */
const contains = (list: ReadonlyArray<number>, x: number): boolean => {
  let lo = 0
  let hi = list.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const v = list[mid] as number
    if (v === x) return true
    if (v < x) lo = mid + 1
    else hi = mid - 1
  }
  return false
}

/** The items of ascending `small` that ascending `large` contains, in order (each search starts where the last ended). */
const intersect = (small: ReadonlyArray<number>, large: ReadonlyArray<number>): Array<number> => {
  const out: Array<number> = []
  let from = 0
  for (let s = 0; s < small.length && from < large.length; s++) {
    const x = small[s] as number
    let lo = from
    let hi = large.length - 1
    while (lo <= hi) {
      const mid = (lo + hi) >> 1
      if ((large[mid] as number) < x) lo = mid + 1
      else hi = mid - 1
    }
    // lo is the first position holding a value >= x.
    if (lo < large.length && large[lo] === x) {
      out.push(x)
      from = lo + 1
    } else from = lo
  }
  return out
}

class Handle implements Entity {
  constructor(
    readonly world: Universe,
    readonly table: Table,
    readonly index: number,
    readonly hash: number
  ) {}
  get type(): string {
    return this.table.def.type
  }
  get id(): string {
    return this.table.ids[this.index] ?? ""
  }
  get name(): string {
    return this.table.names[this.index] ?? ""
  }
  get parent(): number {
    return this.table.parentOf === undefined ? -1 : this.table.parentOf[this.index] ?? -1
  }
  get position(): number {
    const p = this.parent
    return p < 0 || this.table.childStart === undefined ? -1 : this.index - (this.table.childStart[p] ?? 0)
  }
  h(label: string): number {
    return hash32(label, this.hash)
  }
  get(key: string): Json {
    return this.world.attr(this.table.def.type, this.index, key)
  }
}

/** The result of a name search: matching indexes (best first, at most `limit`) and the total number of matches. */
export interface SearchResult {
  readonly matches: ReadonlyArray<number>
  readonly total: number
}

/** The evaluated world. */
export class Universe implements WorldView {
  private readonly tables = new Map<string, Table>()
  private readonly building = new Set<string>()
  private readonly idIndex = new Map<string, Map<string, number>>()
  private readonly nameIndex = new Map<string, Map<string, Array<number>>>()
  private readonly exactIndex = new Map<string, Map<string, Array<number>>>()
  private readonly inverseIndex = new Map<string, Array<Array<number>>>()
  private readonly columns = new Map<string, Array<Json>>()
  private readonly referrerIndex = new Map<string, Array<Array<number>>>()
  private readonly eqIndex = new Map<string, Map<string, Array<number>>>()
  private readonly sorted = new Map<string, Int32Array>()
  private readonly attrByKey = new Map<string, Map<string, Attr>>()
  private readonly seriesByKey = new Map<string, Map<string, SeriesDef>>()
  private readonly memos = new Map<string, unknown>()

  constructor(readonly seed: number, readonly defs: ReadonlyMap<string, EntityDef>) {}

  /** A value computed once per world (see WorldView.memo). */
  memo<A>(key: string, compute: () => A): A {
    if (this.memos.has(key)) return this.memos.get(key) as A
    const v = compute()
    this.memos.set(key, v)
    return v
  }

  /** The definition of a type (undefined for a type the world does not know). */
  def(type: string): EntityDef | undefined {
    return this.defs.get(type)
  }

  /** The table of a type, built on first use. */
  table(type: string): Table {
    const hit = this.tables.get(type)
    if (hit !== undefined) return hit
    const def = this.defs.get(type)
    if (def === undefined) return this.emptyTable(type)
    // A cycle between name generators would recurse forever; the definitions are acyclic, this guards edits.
    if (this.building.has(type)) return this.emptyTable(type)
    this.building.add(type)
    const built = this.build(def)
    this.building.delete(type)
    this.tables.set(type, built)
    return built
  }

  private emptyTable(type: string): Table {
    const def: EntityDef = {
      type, noun: type, plural: `${type}s`, synonyms: [], size: 0, nameLabel: "name", attrs: [],
      id: { label: `${type} id`, make: () => "", example: "" },
      name: () => "", createdOnly: true
    }
    return { def, size: 0, ids: [], names: [], parentOf: undefined, childStart: undefined, seed: this.seed, hashes: new Uint32Array(0) }
  }

  private build(def: EntityDef): Table {
    const seed = hash32(def.type, this.seed)
    let parentOf: Int32Array | undefined
    let childStart: Int32Array | undefined
    let size = def.createdOnly === true ? 0 : def.size
    if (def.parent !== undefined && def.createdOnly !== true) {
      const parent = this.table(def.parent.type)
      childStart = new Int32Array(parent.size + 1)
      const counts: Array<number> = new Array(parent.size)
      let total = 0
      for (let p = 0; p < parent.size; p++) {
        const span = def.parent.max - def.parent.min + 1
        const c = def.parent.min + (hash32(`${def.type}/n`, hash32(String(p), parent.seed)) % span)
        counts[p] = c
        childStart[p] = total
        total += c
      }
      childStart[parent.size] = total
      parentOf = new Int32Array(total)
      for (let p = 0; p < parent.size; p++) {
        const start = childStart[p] ?? 0
        const c = counts[p] ?? 0
        for (let k = 0; k < c; k++) parentOf[start + k] = p
      }
      size = total
    }
    const names: Array<string> = new Array(size)
    const ids: Array<string> = new Array(size)
    const hashes = new Uint32Array(size)
    for (let i = 0; i < size; i++) hashes[i] = hash32(String(i), seed)
    const table: Table = { def, size, ids, names, parentOf, childStart, seed, hashes }
    // Names first (ids may derive from names: tickers, codes); generators read the partly built table.
    const taken = def.uniqueNames === true ? new Set<string>() : undefined
    for (let i = 0; i < size; i++) {
      const handle = new Handle(this, table, i, hashes[i] ?? 0)
      let name = def.name(handle, 0)
      for (let attempt = 1; taken !== undefined && taken.has(name.toLowerCase()) && attempt <= 16; attempt++) name = def.name(handle, attempt)
      taken?.add(name.toLowerCase())
      names[i] = name
    }
    const seen = new Set<string>()
    for (let i = 0; i < size; i++) {
      const handle = new Handle(this, table, i, hashes[i] ?? 0)
      let id = def.id.make(handle, 0)
      for (let attempt = 1; seen.has(id) && attempt < 64; attempt++) id = def.id.make(handle, attempt)
      if (seen.has(id)) id = `${id}-${i}`
      seen.add(id)
      ids[i] = id
    }
    return table
  }

  /** Number of entities of a type. */
  size(type: string): number {
    return this.table(type).size
  }

  /** The id of an entity. */
  id(type: string, index: number): string {
    return this.table(type).ids[index] ?? ""
  }

  /** The display name of an entity. */
  name(type: string, index: number): string {
    return this.table(type).names[index] ?? ""
  }

  /** The index of an id, or -1 when no entity of the type has it. */
  indexOf(type: string, id: string): number {
    let index = this.idIndex.get(type)
    if (index === undefined) {
      const t = this.table(type)
      index = new Map()
      for (let i = 0; i < t.size; i++) index.set(t.ids[i] as string, i)
      this.idIndex.set(type, index)
    }
    return index.get(id) ?? -1
  }

  /** A handle on an entity, for generators and renderers. */
  entity(type: string, index: number): Entity {
    const t = this.table(type)
    return new Handle(this, t, index, t.hashes[index] ?? hash32(String(index), t.seed))
  }

  /** The definition of an attribute. */
  attrDef(type: string, key: string): Attr | undefined {
    let m = this.attrByKey.get(type)
    if (m === undefined) {
      m = new Map((this.defs.get(type)?.attrs ?? []).map((a) => [a.key, a] as const))
      this.attrByKey.set(type, m)
    }
    return m.get(key)
  }

  /** The value of an attribute (`id` and `name` are attributes too). */
  attr(type: string, index: number, key: string): Json {
    if (key === "id") return this.id(type, index)
    if (key === "name") return this.name(type, index)
    const a = this.attrDef(type, key)
    if (a === undefined) return null
    return a.gen(this.entity(type, index))
  }

  /** The index of the entity a reference attribute points at, or -1. */
  refIndex(type: string, index: number, key: string): number {
    const a = this.attrDef(type, key)
    if (a?.ref === undefined) return -1
    return a.ref.index(this.entity(type, index))
  }

  /** Children of a parent through the block relation of `childType` (a team's players). */
  children(childType: string, parentIndex: number): { readonly start: number; readonly count: number } {
    const t = this.table(childType)
    if (t.childStart === undefined) return { start: 0, count: 0 }
    const start = t.childStart[parentIndex] ?? 0
    const end = t.childStart[parentIndex + 1] ?? start
    return { start, count: end - start }
  }

  /**
   * Entities of `type` whose reference attributes to `targetType` named `relation` (see RefTarget.inverse) point at
   * entity `target` of that type; attributes sharing a relation name are unioned (a team's home and away matches).
   */
  inverse(type: string, relation: string, targetType: string, target: number): ReadonlyArray<number> {
    const key = `${type}\u0000${relation}\u0000${targetType}`
    let idx = this.inverseIndex.get(key)
    if (idx === undefined) {
      const refs = (this.defs.get(type)?.attrs ?? []).filter((a) => a.ref?.inverse === relation && a.ref.type === targetType)
      const built: Array<Array<number>> = Array.from({ length: this.size(targetType) }, () => [])
      const n = refs.length === 0 ? 0 : this.size(type)
      for (let i = 0; i < n; i++) {
        const e = this.entity(type, i)
        let last = -1
        for (const a of refs) {
          const j = a.ref?.index(e) ?? -1
          if (j >= 0 && j !== last) built[j]?.push(i)
          last = j
        }
      }
      idx = built
      this.inverseIndex.set(key, idx)
    }
    return idx[target] ?? []
  }

  /**
   * Entities of `type` whose reference attribute `key` points at entity `target` of the referenced type, in index
   * order (a block relation answers from the parent's child range; other references from an index built once).
   */
  referrers(type: string, key: string, target: number): ReadonlyArray<number> {
    const a = this.attrDef(type, key)
    const r = a?.ref
    if (r === undefined) return []
    const def = this.defs.get(type)
    if (def?.parent?.key === key) {
      const c = this.children(type, target)
      return Array.from({ length: c.count }, (_, k) => c.start + k)
    }
    const k = `${type}\u0000${key}`
    let idx = this.referrerIndex.get(k)
    if (idx === undefined) {
      const built: Array<Array<number>> = Array.from({ length: this.size(r.type) }, () => [])
      const n = this.size(type)
      for (let i = 0; i < n; i++) {
        const j = r.index(this.entity(type, i))
        if (j >= 0) built[j]?.push(i)
      }
      idx = built
      this.referrerIndex.set(k, idx)
    }
    return idx[target] ?? []
  }

  /** Entities of `type` whose attribute `key` equals `value` (categorical and boolean attributes), in index order. */
  whereEq(type: string, key: string, value: Json): ReadonlyArray<number> {
    const k = `${type}\u0000${key}`
    let idx = this.eqIndex.get(k)
    if (idx === undefined) {
      idx = new Map()
      const col = this.column(type, key)
      for (let i = 0; i < col.length; i++) {
        const v = String(col[i])
        let list = idx.get(v)
        if (list === undefined) idx.set(v, list = [])
        list.push(i)
      }
      this.eqIndex.set(k, idx)
    }
    return idx.get(String(value)) ?? []
  }

  /** The values of one attribute for every entity of a type (built once, for filters and rankings). */
  column(type: string, key: string): ReadonlyArray<Json> {
    const k = `${type}\u0000${key}`
    let col = this.columns.get(k)
    if (col === undefined) {
      const n = this.size(type)
      col = new Array(n)
      for (let i = 0; i < n; i++) col[i] = this.attr(type, i, key)
      this.columns.set(k, col)
    }
    return col
  }

  /** Indexes of a type sorted by a numeric attribute, largest first (ties by index). */
  rankedBy(type: string, key: string): Int32Array {
    const k = `${type}\u0000${key}`
    let order = this.sorted.get(k)
    if (order === undefined) {
      const col = this.column(type, key)
      const idx = Array.from({ length: col.length }, (_, i) => i)
      const num = (i: number): number => {
        const v = col[i]
        return typeof v === "number" ? v : Number.NEGATIVE_INFINITY
      }
      idx.sort((a, b) => num(b) - num(a) || a - b)
      order = Int32Array.from(idx)
      this.sorted.set(k, order)
    }
    return order
  }

  /** Searches entities by name: every query token must appear in the name; exact names first, then shorter names. */
  search(type: string, query: string, limit: number): SearchResult {
    const qs = tokens(query)
    if (qs.length === 0) return { matches: [], total: 0 }
    const index = this.tokenIndex(type)
    let lists: Array<ReadonlyArray<number>> = []
    for (const q of qs) {
      const list = index.get(q)
      if (list === undefined) return { matches: [], total: 0 }
      lists.push(list)
    }
    // Posting lists are sorted by index: intersect them shortest first, each step walking the (shrinking) result and
    // searching forward in the next list; a token repeated in the query adds nothing.
    if (lists.length > 1) lists = lists.sort((a, b) => a.length - b.length)
    let hits: Array<number> = [...(lists[0] ?? [])]
    for (let k = 1; k < lists.length && hits.length > 0; k++) {
      const list = lists[k] as ReadonlyArray<number>
      if (list !== lists[k - 1]) hits = intersect(hits, list)
    }
    const exact = this.exactIndex.get(type)?.get(qs.join(" ")) ?? []
    const names = this.table(type).names
    const isExact = (i: number): number => (exact.length > 0 && contains(exact, i) ? 1 : 0)
    if (hits.length > 1) hits.sort((a, b) => isExact(b) - isExact(a) || (names[a]?.length ?? 0) - (names[b]?.length ?? 0) || a - b)
    return { matches: hits.length > limit ? hits.slice(0, Math.max(0, limit)) : hits, total: hits.length }
  }

  /** Entities whose normalised name equals the text exactly. */
  byExactName(type: string, text: string): ReadonlyArray<number> {
    this.tokenIndex(type)
    return this.exactIndex.get(type)?.get(normalize(text)) ?? []
  }

  private tokenIndex(type: string): Map<string, Array<number>> {
    let index = this.nameIndex.get(type)
    if (index !== undefined) return index
    const t = this.table(type)
    index = new Map()
    const exact = new Map<string, Array<number>>()
    for (let i = 0; i < t.size; i++) {
      const toks = tokens(t.names[i] ?? "")
      const seen = new Set<string>()
      for (const tok of toks) {
        if (seen.has(tok)) continue
        seen.add(tok)
        let list = index.get(tok)
        if (list === undefined) index.set(tok, list = [])
        list.push(i)
      }
      const key = toks.join(" ")
      let e = exact.get(key)
      if (e === undefined) exact.set(key, e = [])
      e.push(i)
    }
    this.nameIndex.set(type, index)
    this.exactIndex.set(type, exact)
    return index
  }

  /** The definition of a time series. */
  seriesDef(type: string, key: string): SeriesDef | undefined {
    let m = this.seriesByKey.get(type)
    if (m === undefined) {
      m = new Map((this.defs.get(type)?.series ?? []).map((s) => [s.key, s] as const))
      this.seriesByKey.set(type, m)
    }
    return m.get(key)
  }

  /** The values of a series from day `from` to day `to` (inclusive). */
  seriesRange(type: string, index: number, key: string, from: number, to: number): Array<number> {
    const s = this.seriesDef(type, key)
    if (s === undefined) return []
    const e = this.entity(type, index)
    const h = e.h(`series/${key}`)
    if (s.range !== undefined) return s.range(e, from, to, h)
    const out: Array<number> = []
    for (let d = from; d <= to; d++) out.push(s.value(e, d, h))
    return out
  }

  /** The value of a series on a day. */
  seriesValue(type: string, index: number, key: string, day: number): number {
    const s = this.seriesDef(type, key)
    if (s === undefined) return 0
    const e = this.entity(type, index)
    return s.value(e, day, e.h(`series/${key}`))
  }
}
