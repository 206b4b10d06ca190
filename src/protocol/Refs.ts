/**
 * `$ref` placeholders: an argument value `{"$ref": "c1.items.0.id"}` stands for a field of the output of the
 * earlier call `c1`. This module reads the reference syntax, finds refs in arguments and resolves them; it never throws.
 */
import { Predicate } from "effect"
import type { CallId } from "../domain/Ids.ts"
import type { Json, JsonObject } from "../domain/Json.ts"

/** The key that marks a placeholder object. */
export const refKey = "$ref"

/**
 * The grammar of a call id (and plan node id): an identifier of at most 64 characters.
 * No `.` or `[`, so the id part of a reference is unambiguous.
 */
export const callIdPattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** One step of a reference path: an object key, or an array index (which also matches a numeric key of an object). */
export type Segment = string

/** A parsed reference: the call whose output it reads, and the path into that output. */
export interface RefTarget {
  readonly call: CallId
  readonly path: ReadonlyArray<Segment>
}

/** A reference string that does not follow the grammar, with the offset in the string where it breaks. */
export interface RefSyntaxError {
  readonly offset: number
  readonly message: string
}

/** The result of {@link parseRef}. */
export type ParsedRef = { readonly ok: true; readonly target: RefTarget } | { readonly ok: false; readonly error: RefSyntaxError }

const idChar = /[A-Za-z0-9_]/

/** An array index in a reference path: a decimal without leading zeros. */
const indexPattern = /^(0|[1-9][0-9]*)$/

/**
 * Parses `c1`, `c1.items.0.id` or `c1.items[0].id`. Segments after the id are separated by `.`; `[n]` is
 * accepted as a synonym of `.n` because models write both. A key that itself contains `.` or `[` cannot be addressed.
 */
export const parseRef = (ref: string): ParsedRef => {
  let i = 0
  while (i < ref.length && idChar.test(ref[i] ?? "")) i++
  const id = ref.slice(0, i)
  if (!callIdPattern.test(id)) {
    return { ok: false, error: { offset: 0, message: `a reference starts with a call id (like c1), got ${JSON.stringify(ref.slice(0, 20))}` } }
  }
  const path: Array<Segment> = []
  while (i < ref.length) {
    const c = ref[i]
    if (c === ".") {
      let j = i + 1
      while (j < ref.length && ref[j] !== "." && ref[j] !== "[") j++
      if (j === i + 1) return { ok: false, error: { offset: i + 1, message: "empty path segment" } }
      path.push(ref.slice(i + 1, j))
      i = j
    } else if (c === "[") {
      const close = ref.indexOf("]", i)
      const index = close < 0 ? "" : ref.slice(i + 1, close)
      if (!indexPattern.test(index)) {
        return { ok: false, error: { offset: i, message: "expected an array index like [0]" } }
      }
      path.push(index)
      i = close + 1
    } else {
      return { ok: false, error: { offset: i, message: `expected '.' or '[' after the call id, found ${JSON.stringify(c)}` } }
    }
  }
  return { ok: true, target: { call: id as CallId, path } }
}

/** Prints a reference in the canonical dotted form. */
export const formatRef = (target: RefTarget): string => [target.call, ...target.path].join(".")

/** Where a value sits inside an arguments object: keys and array indexes from the root. */
export type ValuePath = ReadonlyArray<string | number>

/** What {@link collectRefs} finds at one place. */
export type RefSite =
  | { readonly _tag: "Ref"; readonly path: ValuePath; readonly ref: string; readonly target: RefTarget }
  /** An object that uses `$ref` but is not a valid placeholder (non-string value, extra keys, bad syntax). */
  | { readonly _tag: "Malformed"; readonly path: ValuePath; readonly ref: string; readonly message: string }

/** Whether a value is a well-formed placeholder `{"$ref": "<string>"}` (exactly one key). */
export const isRef = (value: Json): value is { readonly $ref: string } => {
  const object = asObject(value)
  return object !== undefined && Object.keys(object).length === 1 && Predicate.isString(object[refKey])
}

/** The value as a JSON object, when it is one (not an array, not null). */
const asObject = (value: Json): JsonObject | undefined => Predicate.isObject(value) ? value as JsonObject : undefined

const rootMessage = "a $ref stands for an argument value, not for the whole arguments object"

const classify = (value: JsonObject, path: ValuePath): RefSite | undefined => {
  if (!Object.hasOwn(value, refKey)) return undefined
  const raw = value[refKey]
  const ref = Predicate.isString(raw) ? raw : JSON.stringify(raw) ?? "undefined"
  if (!Predicate.isString(raw)) return { _tag: "Malformed", path, ref, message: "the value of $ref must be a string" }
  const extra = Object.keys(value).filter((k) => k !== refKey)
  if (extra.length > 0) {
    return { _tag: "Malformed", path, ref, message: `a $ref object has no other keys, found ${JSON.stringify(extra[0])}` }
  }
  const parsed = parseRef(raw)
  if (!parsed.ok) return { _tag: "Malformed", path, ref, message: `at character ${parsed.error.offset}: ${parsed.error.message}` }
  return { _tag: "Ref", path, ref, target: parsed.target }
}

/**
 * Every `$ref` in an arguments object, in document order, with where it sits. A placeholder's own contents are
 * not searched. The arguments object itself is never a placeholder: a `$ref` key at its top level is malformed.
 */
export const collectRefs = (args: JsonObject): ReadonlyArray<RefSite> => {
  const sites: Array<RefSite> = []
  const walk = (v: Json, path: Array<string | number>): void => {
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...path, i]))
      return
    }
    const object = asObject(v)
    if (object === undefined) return
    const site = path.length === 0 ? rootSite(object) : classify(object, path)
    if (site !== undefined) sites.push(site)
    if (site !== undefined && path.length > 0) return
    for (const key of Object.keys(object)) {
      const child = object[key]
      if (child !== undefined && !(path.length === 0 && key === refKey)) walk(child, [...path, key])
    }
  }
  walk(args, [])
  return sites
}

const rootSite = (args: JsonObject): RefSite | undefined => {
  if (!Object.hasOwn(args, refKey)) return undefined
  const raw = args[refKey]
  return { _tag: "Malformed", path: [], ref: Predicate.isString(raw) ? raw : JSON.stringify(raw) ?? "", message: rootMessage }
}

/** Why a reference could not be resolved. */
export type UnresolvedReason = "malformed" | "missing_call" | "missing_field"

/** A reference left in place, with the reason. */
export interface Unresolved {
  readonly path: ValuePath
  readonly ref: string
  readonly reason: UnresolvedReason
  readonly message: string
}

/** The arguments after resolution, the references that could not be resolved, and the calls whose output was used. */
export interface Resolution {
  /** Resolved placeholders are replaced by the value they point at; unresolved ones are left as they were. */
  readonly arguments: JsonObject
  readonly unresolved: ReadonlyArray<Unresolved>
  /** Calls whose output at least one reference read, in order of first use. */
  readonly consumed: ReadonlyArray<CallId>
}

/** Follows a path into a value: an index into an array, a key into an object. */
export const select = (
  value: Json,
  path: ReadonlyArray<Segment>
): { readonly ok: true; readonly value: Json } | { readonly ok: false; readonly at: number; readonly message: string } => {
  let current = value
  for (let at = 0; at < path.length; at++) {
    const segment = path[at] ?? ""
    const object = asObject(current)
    let next: Json | undefined
    if (Array.isArray(current)) {
      const index = indexPattern.test(segment) ? Number(segment) : -1
      next = index >= 0 ? current[index] : undefined
      if (next === undefined) {
        const message = index < 0
          ? `${JSON.stringify(segment)} is not an index of an array`
          : `index ${index} is out of range (length ${current.length})`
        return { ok: false, at, message }
      }
    } else if (object !== undefined) {
      next = Object.hasOwn(object, segment) ? object[segment] : undefined
      if (next === undefined) return { ok: false, at, message: `no field ${JSON.stringify(segment)}` }
    } else {
      return { ok: false, at, message: `cannot read ${JSON.stringify(segment)} of ${current === null ? "null" : typeof current}` }
    }
    current = next
  }
  return { ok: true, value: current }
}

/**
 * Replaces every resolvable placeholder in `args` by the value it points at. `lookup` gives the output of an
 * earlier call, or `undefined` when there is no such call (or it produced no output). Never throws.
 */
export const resolveRefs = (args: JsonObject, lookup: (id: CallId) => Json | undefined): Resolution => {
  const unresolved: Array<Unresolved> = []
  const consumed: Array<CallId> = []
  const resolve = (v: Json, path: Array<string | number>): Json => {
    if (Array.isArray(v)) return v.map((item, i) => resolve(item, [...path, i]))
    const object = asObject(v)
    if (object === undefined) return v
    const site = path.length === 0 ? undefined : classify(object, path)
    if (site === undefined) {
      // fromEntries keeps a "__proto__" key as data; an assignment would set the prototype instead.
      return Object.fromEntries(Object.keys(object).flatMap((key) => {
        const child = object[key]
        if (child === undefined) return []
        if (path.length === 0 && key === refKey) {
          unresolved.push({ path: [], ref: rootSite(object)?.ref ?? "", reason: "malformed", message: rootMessage })
          return [[key, child]]
        }
        return [[key, resolve(child, [...path, key])]]
      }))
    }
    if (site._tag === "Malformed") {
      unresolved.push({ path, ref: site.ref, reason: "malformed", message: site.message })
      return v
    }
    const output = lookup(site.target.call)
    if (output === undefined) {
      unresolved.push({ path, ref: site.ref, reason: "missing_call", message: `no output of an earlier call ${site.target.call}` })
      return v
    }
    const selected = select(output, site.target.path)
    if (!selected.ok) {
      const where = formatRef({ call: site.target.call, path: site.target.path.slice(0, selected.at + 1) })
      unresolved.push({ path, ref: site.ref, reason: "missing_field", message: `${where}: ${selected.message}` })
      return v
    }
    if (!consumed.includes(site.target.call)) consumed.push(site.target.call)
    return selected.value
  }
  const resolved = asObject(resolve(args, [])) ?? {}
  return { arguments: resolved, unresolved, consumed }
}
