/**
 * Callable names and stable ids for imported tools: OpenAI-safe (`[A-Za-z0-9_-]{1,64}`), deterministic,
 * and made unique within one library by a rule that depends only on the colliding entries' ids.
 */
import type { ToolSpec } from "../../domain/Tool.ts"
import { toolId, toolName } from "../../domain/Ids.ts"
import { hash32 } from "../../math/Random.ts"

/** The longest callable name OpenAI accepts. */
export const maxNameLength = 64

const combining = /[\u0300-\u036f]/g

/** Lowercase ASCII snake case: accents folded, every run of other characters becomes one `_`. Empty when nothing is left. */
export const slug = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(combining, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")

/** Six base-36 characters from a hash of the text. */
export const shortHash = (text: string): string => hash32(text).toString(36).padStart(7, "0").slice(-6)

/** A slug that is never empty: text with no ASCII letters or digits (emoji, CJK) becomes `x<hash>`. */
export const slugOrHash = (text: string): string => {
  const s = slug(text)
  return s.length > 0 ? s : `x${shortHash(text)}`
}

const trimUnderscores = (s: string): string => s.replace(/^_+|_+$/g, "")

/** Cuts a name to {@link maxNameLength}, replacing the tail by a hash of the whole so that distinct long names stay distinct. */
export const fitName = (name: string, max: number = maxNameLength): string => {
  if (name.length <= max) return name
  return `${trimUnderscores(name.slice(0, max - 7))}_${shortHash(name)}`
}

/** Only characters OpenAI accepts in a function name; other characters become `_`. Never empty. */
export const safeName = (raw: string): string => {
  const cleaned = trimUnderscores(raw.replace(/[^A-Za-z0-9_-]+/g, "_"))
  return fitName(cleaned.length > 0 ? cleaned : `tool_${shortHash(raw)}`)
}

/**
 * Makes the callable names of `tools` unique. Among the tools sharing a name, the one with the smallest
 * id keeps it; each other gets `_<hash of its id>` appended (the base cut to fit 64 characters), so a
 * name depends only on the tool and the ids it collides with, never on load order.
 */
export const uniquifyNames = (tools: ReadonlyArray<ToolSpec>, taken: ReadonlySet<string> = new Set()): Array<ToolSpec> => {
  const byName = new Map<string, Array<number>>()
  tools.forEach((t, i) => {
    const list = byName.get(t.name)
    if (list === undefined) byName.set(t.name, [i])
    else list.push(i)
  })
  // only names shared by several tools (or already taken) need work; sorted so the order is fixed
  const names = [...byName.entries()].filter(([name, list]) => list.length > 1 || taken.has(name)).map(([name]) => name).sort()
  if (names.length === 0) return [...tools]
  const used = new Set<string>(taken)
  for (const t of tools) used.add(t.name)
  const out = [...tools]
  for (const name of names) {
    const indexes = byName.get(name) ?? []
    const sorted = [...indexes].sort((a, b) => compareIds(tools[a]?.id ?? "", tools[b]?.id ?? ""))
    const keepFirst = !taken.has(name)
    sorted.forEach((index, rank) => {
      if (rank === 0 && keepFirst) return
      const t = tools[index]
      if (t === undefined) return
      let candidate = withSuffix(name, shortHash(t.id))
      let n = 2
      while (used.has(candidate)) candidate = withSuffix(name, `${shortHash(t.id)}${n++}`)
      used.add(candidate)
      out[index] = { ...t, name: toolName(candidate) }
    })
  }
  return out
}

const withSuffix = (name: string, suffix: string): string =>
  `${trimUnderscores(name.slice(0, maxNameLength - suffix.length - 1))}_${suffix}`

/** Code-unit order, the same on every machine and locale. */
export const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Makes ids unique in place order: the first keeps its id, later duplicates get `~2`, `~3`, ...
 * (used where a source lists the same API twice; the order is the source's own).
 */
export const uniquifyIds = <A extends { readonly id: string }>(items: ReadonlyArray<A>, make: (item: A, id: string) => A): Array<A> => {
  const seen = new Map<string, number>()
  return items.map((item) => {
    const n = (seen.get(item.id) ?? 0) + 1
    seen.set(item.id, n)
    return n === 1 ? item : make(item, `${item.id}~${n}`)
  })
}

/** Makes ids (`~2`, `~3` in source order) and then callable names unique over a library: depends on the content only. */
export const uniquifyTools = (tools: ReadonlyArray<ToolSpec>): Array<ToolSpec> =>
  uniquifyNames(uniquifyIds(tools, (t, id) => ({ ...t, id: toolId(id) })))
