/**
 * The ParaAct scanner: the tag vocabulary of a turn and the pass that finds each tag, in order, with its free text
 * or the span of its one JSON value. Decoding what a tag holds is the parser's job (ParaActParser.ts).
 */
import { Result } from "effect"
import { ProtocolError } from "../domain/Errors.ts"
import { describeAt, type JsonRead, readJsonAt } from "./ParaActJson.ts"

/** The tags of a turn, in the only order they may appear. */
export const tagNames = ["think", "plan", "search", "call", "answer"] as const
/** A tag of a turn. */
export type TagName = (typeof tagNames)[number]
/** Tags whose content is free text (everything up to the closing tag); the others hold one JSON value. */
export const textTags: ReadonlySet<TagName> = new Set(["think", "answer"])
/** Whether a string is one of {@link tagNames}. */
export const isTagName = (s: string): s is TagName => (tagNames as ReadonlyArray<string>).includes(s)
/** `<tag>` */
export const openTag = (tag: TagName): string => `<${tag}>`
/** `</tag>` */
export const closeTag = (tag: TagName): string => `</${tag}>`

/** A failed parse: a ProtocolError naming the tag and the character offset. */
export const fail = (tag: TagName, offset: number, message: string): Result.Result<never, ProtocolError> =>
  Result.fail(new ProtocolError({ tag, offset, message }))

/** A tag as found in the text: free text, or one JSON value with its span. */
export type Segment =
  | { readonly kind: "text"; readonly tag: TagName; readonly open: number; readonly text: string }
  | { readonly kind: "json"; readonly tag: TagName; readonly open: number; readonly read: JsonRead }

/** Whitespace between tags and around free text: what `String.prototype.trim` removes. */
const isSpace = (c: string | undefined): boolean => c !== undefined && c.trim() === "" && c !== ""

const skipSpace = (text: string, from: number): number => {
  let i = from
  while (i < text.length && isSpace(text[i])) i++
  return i
}

const tagAt = (text: string, pos: number): TagName | undefined =>
  text.charCodeAt(pos) === 0x3c ? tagNames.find((t) => text.startsWith(openTag(t), pos)) : undefined

/** The offset of the first opening tag (`<think>`, `<plan>`, ...) at or after `from`, or -1. */
export const findTag = (text: string, from = 0): number => {
  let best = -1
  for (const t of tagNames) {
    const i = text.indexOf(openTag(t), from)
    if (i >= 0 && (best < 0 || i < best)) best = i
  }
  return best
}

/** Whether a text holds any opening or closing tag of the protocol. */
export const hasTags = (text: string): boolean => tagNames.some((t) => text.includes(openTag(t)) || text.includes(closeTag(t)))

const strayMessage = (text: string, pos: number): string => {
  const m = /^<(\/?)([A-Za-z_][\w-]*)[^<>]{0,60}>/.exec(text.slice(pos, pos + 80))
  const list = tagNames.map((t) => `<${t}>`).join(", ")
  if (m !== null) {
    const name = m[2] ?? ""
    if (m[1] === "/" && isTagName(name)) return `closing tag ${m[0]} without a matching <${name}>`
    if (isTagName(name.toLowerCase())) return `unknown tag ${m[0]}: tags are lowercase and take no attributes`
    return `unknown tag ${m[0]}: the tags are ${list}`
  }
  const snippet = text.slice(pos, pos + 30)
  return `text outside tags (${JSON.stringify(snippet)}${text.length > pos + 30 ? "..." : ""}): write reasoning inside <think>`
}

/** Finds the tags of a turn in order with their content; `lenient` skips text outside tags and unclosed last tags. */
export const scan = (text: string, lenient: boolean): Result.Result<ReadonlyArray<Segment>, ProtocolError> => {
  const segments: Array<Segment> = []
  let pos = 0
  for (;;) {
    pos = skipSpace(text, pos)
    if (pos >= text.length) return Result.succeed(segments)
    const tag = tagAt(text, pos)
    if (tag === undefined) {
      if (!lenient) return fail(segments.at(-1)?.tag ?? "think", pos, strayMessage(text, pos))
      const next = findTag(text, pos + 1)
      if (next < 0) return Result.succeed(segments)
      pos = next
      continue
    }
    const open = pos
    const earlier = segments.find((s) => s.tag === tag)
    if (earlier !== undefined) return fail(tag, open, `<${tag}> appears twice (first at offset ${earlier.open}); each tag appears at most once`)
    const later = segments.find((s) => tagNames.indexOf(s.tag) > tagNames.indexOf(tag))
    if (later !== undefined) return fail(tag, open, `<${tag}> must come before <${later.tag}> (order: ${tagNames.join(", ")})`)
    const contentStart = open + openTag(tag).length
    const close = closeTag(tag)
    if (textTags.has(tag)) {
      const end = text.indexOf(close, contentStart)
      if (end < 0 && !lenient) return fail(tag, open, `<${tag}> is never closed: expected ${close}`)
      const stop = end < 0 ? text.length : end
      segments.push({ kind: "text", tag, open, text: text.slice(contentStart, stop).trim() })
      pos = end < 0 ? text.length : end + close.length
      continue
    }
    let p = skipSpace(text, contentStart)
    const fenced = lenient && text.startsWith("```", p)
    if (fenced) {
      const newline = text.indexOf("\n", p)
      p = newline < 0 ? text.length : newline + 1
    }
    const json = readJsonAt(text, p)
    if (!json.ok) return fail(tag, json.error.offset, `invalid JSON in <${tag}>: ${json.error.message}`)
    p = skipSpace(text, json.read.end)
    if (fenced && text.startsWith("```", p)) p = skipSpace(text, p + 3)
    if (text.startsWith(close, p)) pos = p + close.length
    else if (lenient && p >= text.length) pos = p
    else return fail(tag, p, `expected ${close} after the JSON value, found ${describeAt(text, p)}`)
    segments.push({ kind: "json", tag, open, read: json.read })
  }
}
