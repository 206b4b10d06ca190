/**
 * Value generators of the world: each turns a 32-bit hash into a realistic value (a person's name, a date, an amount,
 * an email, a URL ...). Pure and allocation-light: attribute values are recomputed on every call, never stored.
 */
import { hash32 } from "../../math/Random.ts"
import * as W from "./Words.ts"

/** An independent hash derived from `h` and a short label (draws that must not correlate). */
export const sub = (h: number, label: string): number => hash32(label, h)

/** A uniform float in [0, 1). */
export const unit = (h: number): number => h / 4294967296

/** A list element chosen by a hash. */
export const pick = <A>(items: ReadonlyArray<A>, h: number): A => items[h % items.length] as A

/** An integer in [min, max]. */
export const int = (h: number, min: number, max: number): number => min + (h % (max - min + 1))

/** A number in [min, max) rounded to `dp` decimals. */
export const float = (h: number, min: number, max: number, dp = 2): number => {
  const f = 10 ** dp
  return Math.round((min + unit(h) * (max - min)) * f) / f
}

/** A log-uniform number in [min, max): realistic for populations, followers, market caps. */
export const logUniform = (h: number, min: number, max: number): number => {
  // A range starting at 0 is shifted by one so the logarithm stays finite.
  const shift = min <= 0 ? 1 - min : 0
  return Math.exp(Math.log(min + shift) + unit(h) * (Math.log(max + shift) - Math.log(min + shift))) - shift
}

/** A log-uniform integer. */
export const logInt = (h: number, min: number, max: number): number => Math.floor(logUniform(h, min, max))

/** `true` with probability p. */
export const chance = (h: number, p: number): boolean => unit(h) < p

// ---------------------------------------------------------------------------------------------------------------
// Dates. Day numbers count days since 1970-01-01 (UTC); the world's "today" is fixed so every seed agrees on time.

/** The world's current date (2024-04-15), as a day number: contemporary with the RapidAPI snapshot ToolEnv2404. */
export const today = 19828

/** The civil date of a day number, as YYYY-MM-DD (Hinnant's days-to-civil). */
export const isoDate = (day: number): string => {
  const z = day + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0)
  return `${y}-${m < 10 ? "0" : ""}${m}-${d < 10 ? "0" : ""}${d}`
}

/** The day number of a YYYY-MM-DD date (Hinnant's days-from-civil); NaN when malformed. */
export const dayNumber = (date: string): number => {
  if (date.length < 10 || date.charCodeAt(4) !== 45 || date.charCodeAt(7) !== 45) return Number.NaN
  let y = Number(date.slice(0, 4))
  const m = Number(date.slice(5, 7))
  const d = Number(date.slice(8, 10))
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d)) return Number.NaN
  y -= m <= 2 ? 1 : 0
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** A date between `fromDay` and `toDay` (inclusive). */
export const dateIn = (h: number, fromDay: number, toDay: number): string => isoDate(int(h, fromDay, toDay))

/** A date `minDays`..`maxDays` before today. */
export const pastDate = (h: number, minDays: number, maxDays: number): string => isoDate(today - int(h, minDays, maxDays))

/** A date `minDays`..`maxDays` after today. */
export const futureDate = (h: number, minDays: number, maxDays: number): string => isoDate(today + int(h, minDays, maxDays))

/** An ISO date-time (UTC, minutes resolution) on a given day. */
export const dateTimeOn = (h: number, day: number, fromHour = 0, toHour = 23): string => {
  const hour = int(h, fromHour, toHour)
  const minute = (sub(h, "m") % 12) * 5
  return `${isoDate(day)}T${hour < 10 ? "0" : ""}${hour}:${minute < 10 ? "0" : ""}${minute}:00Z`
}

/** A year in [from, to]. */
export const year = (h: number, from: number, to: number): number => int(h, from, to)

// ---------------------------------------------------------------------------------------------------------------
// Names.

/** A person's full name. */
export const personName = (h: number, middleInitial = false): string =>
  `${pick(W.firstNames, h)} ${middleInitial ? `${"ABCDEFGHJKLMNPRSTW"[sub(h, "m") % 18]}. ` : ""}${pick(W.lastNames, sub(h, "l"))}`

/** An invented place name (`Ashford`, `Port Glenmere`, `Solmira`). */
export const placeName = (h: number): string => {
  const style = h % 10
  if (style < 2) return pick(W.placeLatin, sub(h, "lat")) + (style === 1 ? ` ${pick(["del Mar", "de la Sierra", "Alta", "Baixa", "do Sul", "Nuova"], sub(h, "q"))}` : "")
  const base = pick(W.placeRoots, sub(h, "r")) + pick(W.placeSuffixes, sub(h, "s"))
  return style < 4 ? `${pick(W.placePrefixes, sub(h, "p"))} ${base}` : base
}

/** A coined brand word (`Zentria`, `Kovalo`). */
export const coined = (h: number): string => pick(W.brandHeads, h) + pick(W.brandTails, sub(h, "t"))

/** A compound brand word (`Bluepeak`, `Northwind`). */
export const compound = (h: number): string => pick(W.compoundHeads, h) + pick(W.compoundTails, sub(h, "t"))

/** A company name (`Harlow Dynamics`, `Bluepeak Systems Inc.`, `Zentria Labs`). */
export const companyName = (h: number): string => {
  const style = h % 5
  const head = style === 0 ? pick(W.lastNames, sub(h, "n")) : style < 3 ? compound(sub(h, "c")) : coined(sub(h, "k"))
  const tail = pick(W.companySuffixes, sub(h, "s"))
  return style === 4 ? `${head} ${pick(W.industries, sub(h, "i")).split(" ")[0]} ${tail}` : `${head} ${tail}`
}

/** A title of a creative work (`The Silent Harbor`, `Echoes of Winter`). */
export const title = (h: number): string => {
  const a = pick(W.titleAdjectives, sub(h, "a"))
  const n = pick(W.titleNouns, sub(h, "n"))
  const n2 = pick(W.titleNouns, sub(h, "m"))
  switch (h % 6) {
    case 0: return `The ${a} ${n}`
    case 1: return `${n}s of ${n2}`
    case 2: return `${a} ${n}`
    case 3: return `A ${n} in ${pick(W.titleNouns, sub(h, "o"))}`
    case 4: return `${n} ${int(sub(h, "d"), 2, 9)}`
    default: return `${a} ${n}s`
  }
}

/** Lower-case letters and digits of a text joined by `sep` (`Bluepeak Systems` → `bluepeak-systems`). */
export const slug = (text: string, sep = "-"): string => {
  const ascii = /^[\x00-\x7f]*$/.test(text) ? text.toLowerCase() : text.toLowerCase().normalize("NFKD")
  let out = ""
  let pending = false
  for (let i = 0; i < ascii.length; i++) {
    const c = ascii.charCodeAt(i)
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (pending && out.length > 0) out += sep
      pending = false
      out += ascii[i]
    } else pending = true
  }
  return out
}

/** An email address for a person at a domain. */
export const email = (name: string, domain: string, h: number): string => {
  const parts = slug(name, ".").split(".")
  const first = parts[0] ?? "user"
  const last = parts[parts.length - 1] ?? "mail"
  const local = h % 3 === 0 ? `${first}.${last}` : h % 3 === 1 ? `${first[0] ?? "x"}${last}` : `${first}${int(sub(h, "d"), 1, 99)}`
  return `${local}@${domain}`
}

/** A public email domain. */
export const mailDomain = (h: number): string => pick(["gmail.com", "outlook.com", "yahoo.com", "proton.me", "icloud.com", "mail.com"], h)

/** A web domain for a name (`bluepeak-systems.com`). */
export const domainFor = (name: string, h: number): string => `${slug(name.replace(/\b(Inc|Ltd|Corp|Co|AG|GmbH|S\.A)\b\.?/g, ""))}.${pick(W.tlds, h)}`

/** A phone number in E.164 form. */
export const phone = (h: number): string => {
  const cc = pick(["1", "44", "33", "49", "34", "39", "81", "91", "61", "55", "27", "234", "971"], h)
  let digits = ""
  let x = sub(h, "p")
  for (let i = 0; i < 9; i++) {
    digits += String(x % 10)
    x = Math.floor(x / 10) || sub(x, "n")
  }
  return `+${cc}${1 + (sub(h, "a") % 9)}${digits}`
}

/** A street address (`214 Ashford Lane`). */
export const streetAddress = (h: number): string =>
  `${int(h, 1, 980)} ${sub(h, "k") % 2 === 0 ? pick(W.lastNames, sub(h, "n")) : pick(W.placeRoots, sub(h, "r")) + pick(W.placeSuffixes, sub(h, "s"))} ${pick(W.streetSuffixes, sub(h, "t"))}`

const hexDigits = "0123456789abcdef"
const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/** A string of `length` characters drawn from `alphabet`, from a hash. */
export const chars = (h: number, length: number, alphabet: string): string => {
  let out = ""
  let x = h
  for (let i = 0; i < length; i++) {
    if (i % 4 === 0) x = sub(h, String(i))
    out += alphabet[x % alphabet.length]
    x = Math.floor(x / alphabet.length)
  }
  return out
}

/** Lower-case hex. */
export const hex = (h: number, length: number): string => chars(h, length, hexDigits)
/** Lower-case letters and digits. */
export const alphanumeric = (h: number, length: number): string => chars(h, length, alnum)
/** Upper-case letters. */
export const letters = (h: number, length: number): string => chars(h, length, upper)
/** URL-safe base64 characters (video-id style). */
export const base64 = (h: number, length: number): string => chars(h, length, base64url)

/** A UUID-shaped identifier. */
export const uuid = (h: number): string =>
  `${hex(h, 8)}-${hex(sub(h, "b"), 4)}-4${hex(sub(h, "c"), 3)}-${"89ab"[sub(h, "v") % 4]}${hex(sub(h, "d"), 3)}-${hex(sub(h, "e"), 12)}`

/** A public-looking IPv4 address. */
export const ipv4 = (h: number): string =>
  `${pick([23, 31, 45, 52, 64, 77, 85, 91, 104, 128, 141, 151, 172, 185, 193, 203, 212], h)}.${sub(h, "b") % 256}.${sub(h, "c") % 256}.${1 + (sub(h, "d") % 254)}`

/** A sentence built from common words, for free-text fields. */
export const sentence = (h: number, subject: string): string => {
  const verbs = ["announces", "reports", "reveals", "plans", "confirms", "celebrates", "reviews", "expands", "delays", "unveils"]
  return `${subject} ${pick(verbs, h)} ${pick(["new", "record", "major", "surprise", "annual", "quarterly", "first"], sub(h, "a"))} ${pick(W.commonWords, sub(h, "w"))}`
}

/** An amount with two decimals, log-uniform in [min, max). */
export const amount = (h: number, min: number, max: number): number => Math.round(logUniform(h, min, max) * 100) / 100

/** The text of an ISBN-13 with a valid check digit. */
export const isbn13 = (h: number): string => {
  const body = `978${String(sub(h, "a") % 10)}${String(100000000 + (h % 900000000)).slice(0, 8)}`
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(body[i]) * (i % 2 === 0 ? 1 : 3)
  return `${body}${(10 - (sum % 10)) % 10}`
}

/** A 17-character vehicle identification number (no I, O, Q). */
export const vin = (h: number): string => chars(h, 17, "ABCDEFGHJKLMNPRSTUVWXYZ0123456789")

/** A MAC address. */
export const mac = (h: number): string => {
  const x = hex(h, 12)
  return x.replace(/(..)(?!$)/g, "$1:")
}

/** Capitalises the first letter. */
export const capitalize = (s: string): string => (s.length === 0 ? s : (s[0] ?? "").toUpperCase() + s.slice(1))
