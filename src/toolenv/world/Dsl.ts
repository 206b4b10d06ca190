/**
 * Small constructors for declaring entity types (attributes, references, id schemes, series), so that
 * Entities.ts reads as a description of the world rather than as code.
 */
import type { Json } from "../../domain/Json.ts"
import { hash32 } from "../../math/Random.ts"
import type { Attr, AttrType, Entity, EntityCore, IdScheme, RefTarget, SeriesDef } from "./Model.ts"
import * as V from "./Values.ts"

type Extra = Partial<Omit<Attr, "key" | "label" | "type" | "gen">>

const attr = (key: string, label: string, type: AttrType, gen: (e: Entity) => Json, extra?: Extra): Attr => ({ key, label, type, gen, ...extra })

/** A hash for a name part: the attribute-free draw `label`, varied per retry `attempt` (see EntityDef.uniqueNames). */
export const draw = (e: EntityCore, attempt: number, label: string): number => e.h(attempt === 0 ? label : `${label}~${attempt}`)

/** A string attribute. */
export const str = (key: string, label: string, gen: (e: Entity) => string, extra?: Extra): Attr => attr(key, label, "string", gen, extra)
/** An integer attribute. */
export const int = (key: string, label: string, gen: (e: Entity) => number, extra?: Extra): Attr => attr(key, label, "integer", gen, extra)
/** A number attribute. */
export const num = (key: string, label: string, gen: (e: Entity) => number, extra?: Extra): Attr => attr(key, label, "number", gen, extra)
/** A boolean attribute. */
export const bool = (key: string, label: string, gen: (e: Entity) => boolean, extra?: Extra): Attr => attr(key, label, "boolean", gen, extra)
/** A list-of-strings attribute. */
export const list = (key: string, label: string, gen: (e: Entity) => Array<string>, extra?: Extra): Attr => attr(key, label, "string[]", gen, extra)
/** A date attribute (YYYY-MM-DD); filterable by range. */
export const date = (key: string, label: string, gen: (e: Entity) => string, extra?: Extra): Attr =>
  attr(key, label, "string", gen, { format: "date", filter: "range", ...extra })
/** A date-time attribute. */
export const dateTime = (key: string, label: string, gen: (e: Entity) => string, extra?: Extra): Attr =>
  attr(key, label, "string", gen, { format: "date-time", ...extra })

/** A categorical attribute drawn from a finite list; tools may filter on it. */
export const cat = (key: string, label: string, values: ReadonlyArray<string>, extra?: Extra & { readonly gen?: (e: Entity) => string }): Attr =>
  attr(key, label, "string", extra?.gen ?? ((e) => V.pick(values, e.h(key))), { values, filter: "eq", ...extra })

/** A uniformly drawn integer attribute in [min, max], filterable by range. */
export const count = (key: string, label: string, min: number, max: number, extra?: Extra): Attr =>
  int(key, label, (e) => V.int(e.h(key), min, max), { filter: "range", ...extra })

/** A log-uniform integer attribute (populations, followers), filterable by range. */
export const logCount = (key: string, label: string, min: number, max: number, extra?: Extra): Attr =>
  int(key, label, (e) => V.logInt(e.h(key), min, max), { filter: "range", ...extra })

/** A number attribute uniform in [min, max) with `dp` decimals, filterable by range. */
export const measure = (key: string, label: string, min: number, max: number, dp = 1, extra?: Extra): Attr =>
  num(key, label, (e) => V.float(e.h(key), min, max, dp), { filter: "range", ...extra })

/** A money amount (log-uniform), filterable by range. */
export const money = (key: string, label: string, min: number, max: number, unit = "USD", extra?: Extra): Attr =>
  num(key, label, (e) => V.amount(e.h(key), min, max), { unit, filter: "range", ...extra })

/** A reference to another entity drawn by hash (many-to-one); `inverse` names the relation from the target's side. */
export const ref = (
  key: string,
  label: string,
  type: string,
  extra?: { readonly inverse?: string; readonly inverseLabel?: string; readonly index?: (e: EntityCore) => number; readonly fact?: boolean }
): Attr => {
  const index = extra?.index ?? ((e: EntityCore) => {
    const n = e.world.size(type)
    return n === 0 ? -1 : e.h(key) % n
  })
  const target: RefTarget = {
    type,
    index,
    ...(extra?.inverse === undefined ? {} : { inverse: extra.inverse }),
    ...(extra?.inverseLabel === undefined ? {} : { inverseLabel: extra.inverseLabel })
  }
  return attr(key, label, "string", (e) => {
    const i = index(e)
    return i < 0 ? "" : e.world.id(type, i)
  }, { ref: target, filter: "eq", ...(extra?.fact === undefined ? {} : { fact: extra.fact }) })
}

/** The name of the entity another attribute of the same entity references (`city` beside `city_id`). */
export const refName = (key: string, label: string, via: Attr, extra?: Extra): Attr =>
  str(key, label, (e) => {
    const r = via.ref
    if (r === undefined) return ""
    const i = r.index(e)
    return i < 0 ? "" : e.world.name(r.type, i)
  }, { ...(via.ref === undefined ? {} : { names: via.ref.type }), ...extra })

/** An attribute of the entity another attribute references (`country_code` of a hotel = that of its city). */
export const refAttr = (key: string, label: string, type: AttrType, via: Attr, targetKey: string, extra?: Extra): Attr =>
  attr(key, label, type, (e) => {
    const r = via.ref
    if (r === undefined) return null
    const i = r.index(e)
    return i < 0 ? null : e.world.attr(r.type, i, targetKey)
  }, extra)

/** The parent's id (block relation), for the attribute that carries it. */
export const parentId = (key: string, label: string, parentType: string): Attr =>
  str(key, label, (e) => e.world.id(parentType, e.parent), {
    ref: { type: parentType, index: (e) => e.parent },
    filter: "eq"
  })

/** The parent's name. */
export const parentName = (key: string, label: string, parentType: string): Attr =>
  str(key, label, (e) => e.world.name(parentType, e.parent), { names: parentType })

/** The parent's attribute. */
export const parentAttr = (key: string, label: string, type: AttrType, parentType: string, parentKey: string, extra?: Extra): Attr =>
  attr(key, label, type, (e) => e.world.attr(parentType, e.parent, parentKey), extra)

/** The number of children in a block relation (a team's player count). */
export const childCount = (key: string, label: string, childType: string): Attr =>
  int(key, label, (e) => e.world.children(childType, e.index).count, { filter: "range", counts: childType })

/** The indexes behind {@link refs}: `min`..`max` distinct entities of `type`, drawn from the attribute's hash. */
export const refIndexes = (e: EntityCore, key: string, type: string, min: number, max: number): Array<number> => {
  const n = e.world.size(type)
  const k = V.int(e.h(`${key}/n`), min, max)
  const out: Array<number> = []
  for (let j = 0; out.length < k && j < k * 4 && n > 0; j++) {
    const i = hash32(String(j), e.h(key)) % n
    if (!out.includes(i)) out.push(i)
  }
  return out
}

/** Several references drawn by hash (many-to-many, forward only): a fund's holdings, a movie's cast. */
export const refs = (key: string, label: string, type: string, min: number, max: number): Attr =>
  list(key, label, (e) => refIndexes(e, key, type, min, max).map((i) => e.world.id(type, i)), { ref: { type, index: () => -1 } })

/** A numbered id: prefix + zero-padded digits (`TM-04211`). */
export const numbered = (prefix: string, digits: number, label: string): IdScheme => ({
  label,
  example: `${prefix}${"0".repeat(Math.max(0, digits - 4))}4211`.slice(0, prefix.length + digits),
  make: (e, attempt) => `${prefix}${String(hash32(`id${attempt}`, e.hash) % 10 ** digits).padStart(digits, "0")}`
})

/** An id drawn from an alphabet (`usr_k3j9x0a1`, base62 track ids). */
export const coded = (prefix: string, length: number, alphabet: "hex" | "alnum" | "upper" | "base64" | "digits", label: string, example: string): IdScheme => ({
  label,
  example,
  make: (e, attempt) => {
    const h = hash32(`id${attempt}`, e.hash)
    switch (alphabet) {
      case "hex": return prefix + V.hex(h, length)
      case "alnum": return prefix + V.alphanumeric(h, length)
      case "upper": return prefix + V.chars(h, length, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
      case "base64": return prefix + V.base64(h, length)
      case "digits": return prefix + V.chars(h, length, "0123456789")
    }
  }
})

/** An id made of upper-case letters taken from the name (tickers, IATA codes), with random letters on collision. */
export const lettersFromName = (length: number, label: string, example: string, minLength = length): IdScheme => ({
  label,
  example,
  make: (e, attempt) => {
    const words = V.slug(e.name, " ").toUpperCase().split(" ").filter((w) => w.length > 0 && !["THE", "OF", "AND", "INC", "LTD", "CORP", "CO", "AG", "SA", "GMBH", "GROUP"].includes(w))
    const letters = words.join("").replace(/[^A-Z]/g, "")
    const initials = words.map((w) => w[0] ?? "").join("")
    let base = initials.length >= minLength ? initials.slice(0, length) : (initials + letters.slice(1)).slice(0, length)
    if (base.length < minLength) base = (base + V.letters(e.hash, length)).slice(0, minLength)
    if (attempt === 0) return base
    const h = hash32(`code${attempt}`, e.hash)
    if (attempt < 8) return (base.slice(0, Math.max(1, base.length - 1)) + V.letters(h, 1)).slice(0, length)
    return (base[0] ?? "X") + V.letters(h, length - 1)
  }
})

interface WaveShape {
  readonly w1: number
  readonly w2: number
  readonly f1: number
  readonly f2: number
}

// A series' periods and phases depend only on its hash; calls read a series for up to 31 days in a row.
const shapes = new Map<number, WaveShape>()

const shapeOf = (h: number): WaveShape => {
  let s = shapes.get(h)
  if (s === undefined) {
    if (shapes.size > 65_536) shapes.clear()
    s = {
      w1: (2 * Math.PI) / (40 + (h % 160)),
      w2: (2 * Math.PI) / (5 + (hash32("p2", h) % 11)),
      f1: V.unit(hash32("f1", h)) * 2 * Math.PI,
      f2: V.unit(hash32("f2", h)) * 2 * Math.PI
    }
    shapes.set(h, s)
  }
  return s
}

/** A smooth daily wave in [-1, 1]: two seasonal components and day-level noise, all from the series hash. */
export const wave = (h: number, day: number): number => {
  const s = shapeOf(h)
  const noise = V.unit(hash32(String(day), h)) * 2 - 1
  return 0.6 * Math.sin(s.w1 * day + s.f1) + 0.25 * Math.sin(s.w2 * day + s.f2) + 0.15 * noise
}

/** A series fluctuating around an entity-level base value. */
export const around = (key: string, label: string, base: (e: EntityCore) => number, volatility: number, dp = 2, unit?: string): SeriesDef => {
  const f = 10 ** dp
  const at = (b: number, h: number, day: number): number => Math.round(Math.max(0, b * (1 + volatility * wave(h, day))) * f) / f
  return {
    key,
    label,
    type: dp === 0 ? "integer" : "number",
    ...(unit === undefined ? {} : { unit }),
    value: (e, day, h) => at(base(e), h, day),
    range: (e, from, to, h) => {
      const b = base(e)
      const out: Array<number> = []
      for (let d = from; d <= to; d++) out.push(at(b, h, d))
      return out
    }
  }
}
