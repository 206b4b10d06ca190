/**
 * The text the claim reader reads: an answer normalised (NFKC, invisible and control characters removed, quotes, hyphens
 * and dashes unified) and JSON answers rendered as `label: value` lines.
 */
import type { Json } from "../domain/Json.ts"
import { readJsonAt } from "../protocol/ParaActJson.ts"
import { asciiDigits, CJK_NUMERAL_RUN, cjkValue } from "./Numerals.ts"

// ---------------------------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------------------------

/**
 * Characters that render as nothing: format characters (zero-width space / joiners, word joiner, BOM, soft hyphen,
 * bidi controls, tag characters), variation selectors, the combining grapheme joiner, Hangul fillers, the Braille blank,
 * Mongolian free variation selectors. They are removed, so they can neither split nor glue a token.
 */
const INVISIBLE = /[\p{Cf}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u2800\u3164\ufe00-\ufe0f\uffa0\u{e0100}-\u{e01ef}]/gu
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g
const SPACE = /[\p{Zs}\t]+/gu
const QUOTE_SINGLE = /[\u2018\u2019\u201a\u201b\u2032\u0060\u00b4]/g
const QUOTE_DOUBLE = /[\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\u300c\u300d\u300e\u300f\u301d\u301e]/g
const HYPHEN = /[\u2010\u2011\u2012\u2212\ufe63\uff0d]/g
const DASH = /[\u2013\u2014\u2015\ufe58]/g

/**
 * Unicode normalisation of any text the judge compares (answers, requests, tool outputs): NFKC (full-width forms,
 * ligatures, super- and subscripts, circled digits fold to their plain forms), invisible characters removed, controls
 * and every kind of space turned into one space, line separators into newlines, digits of every script and CJK
 * numerals into ASCII digits, curly and angle quotes into `'` and `"`, hyphens and minus signs into `-`, en and em
 * dashes into `—`. Backticks are kept (they quote code). One pass per rule.
 */
export const normalize = (text: string): string => {
  let out = text.normalize("NFKC").replace(INVISIBLE, "")
  out = out.replace(/\r\n?|[\u2028\u2029\u0085]/g, "\n").replace(CONTROL, " ").replace(SPACE, " ")
  out = asciiDigits(out)
  if (/[〇零一二两兩三四五六七八九十百千万萬亿億]/u.test(out)) out = out.replace(CJK_NUMERAL_RUN, (run) => {
    const v = cjkValue(run)
    return v === undefined ? run : ` ${v} `
  })
  return out.replace(QUOTE_SINGLE, (c) => (c === "`" ? c : "'")).replace(QUOTE_DOUBLE, "\"").replace(HYPHEN, "-").replace(DASH, "—").replace(/\u2044/g, "/")
}

// ---------------------------------------------------------------------------------------------------------------
// JSON answers
// ---------------------------------------------------------------------------------------------------------------

const isRecord = (v: Json): v is { readonly [k: string]: Json } => v !== null && typeof v === "object" && !Array.isArray(v)

const leafText = (v: Json): string => (typeof v === "string" ? v.replace(/\s+/g, " ").trim() : String(v))

/** A JSON value as `label: value` lines: nested keys join into the label, arrays of plain values into one list value. */
export const renderJson = (value: Json, path: ReadonlyArray<string> = []): Array<string> => {
  if (value === null) return []
  if (typeof value !== "object") return [path.length === 0 ? leafText(value) : `${path.join(" ")}: ${leafText(value)}`]
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== "object")) {
      const items = value.filter((v) => v !== null).map(leafText)
      return items.length === 0 ? [] : [path.length === 0 ? items.join(", ") : `${path.join(" ")}: ${items.join(", ")}`]
    }
    return value.flatMap((v) => renderJson(v, path))
  }
  return Object.entries(value).flatMap(([k, v]) => renderJson(v, [...path, k.replace(/[_\s]+/g, " ").trim()]))
}

/**
 * The text with its first JSON object or array (a whole answer, or a fenced ```json block) rendered as
 * `label: value` lines, so a JSON answer's keys are read as labels and its values as values. At most a few candidate
 * positions are tried (the first `{` and `[` at a line start), so this stays linear.
 */
export const renderJsonIn = (text: string): string => {
  const fenced = /```(?:json)?[ \t]*\n([\s\S]*?)\n?```/i.exec(text)
  const candidates: Array<number> = []
  if (fenced !== null) candidates.push(fenced.index + fenced[0].indexOf(fenced[1] ?? "") )
  for (const m of text.matchAll(/(?:^|\n)[ \t]*([{[])/g)) {
    candidates.push(m.index + m[0].length - 1)
    if (candidates.length >= 4) break
  }
  for (const at of candidates) {
    const read = readJsonAt(text, at)
    if (!read.ok || read.read.value === null || typeof read.read.value !== "object") continue
    const lines = renderJson(read.read.value)
    if (lines.length === 0) continue
    const start = fenced !== null && at === candidates[0] ? fenced.index : at
    const end = fenced !== null && at === candidates[0] ? fenced.index + fenced[0].length : read.read.end
    return `${text.slice(0, start)}\n${lines.join("\n")}\n${text.slice(end)}`
  }
  return text
}
