/**
 * Utility APIs that compute on their inputs instead of looking up entities (text analysis, validation, unit
 * conversion, calculators, vision labels). Real computations where they are cheap (word counts, BMI, loan payments,
 * haversine distance, IBAN check digits); seeded but stable pseudo-results where a model would be needed (sentiment,
 * detected objects).
 */
import type { Json } from "../../domain/Json.ts"
import { hash32 } from "../../math/Random.ts"
import type { ActionInput } from "./Model.ts"
import * as V from "./Values.ts"
import * as W from "./Words.ts"

/** An input of a utility: the same shape as an action's input. */
export type UtilityInput = ActionInput

/** An output field of a utility. */
export interface UtilityOutput {
  readonly key: string
  readonly label: string
  readonly type: "string" | "number" | "integer" | "boolean" | "string[]"
}

/** A utility API. */
export interface UtilityDef {
  readonly key: string
  /** What it does, as a verb phrase (`detect the language of a text`). */
  readonly label: string
  /** Nouns for descriptions and names (`language detection`). */
  readonly topic: string
  readonly synonyms: ReadonlyArray<string>
  readonly inputs: ReadonlyArray<UtilityInput>
  readonly outputs: ReadonlyArray<UtilityOutput>
  /** Computes the outputs; `h` is a hash of (world seed, utility, canonical inputs). */
  readonly run: (args: { readonly [key: string]: Json }, h: number) => { readonly [key: string]: Json }
}

const text = (v: Json | undefined): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v))
const number = (v: Json | undefined): number => (typeof v === "number" ? v : Number(v))
const round = (x: number, dp = 2): number => Math.round(x * 10 ** dp) / 10 ** dp

const sampleText = (h: number): string => `${V.sentence(h, V.capitalize(V.pick(W.topics, V.sub(h, "t"))))} and the ${V.pick(W.commonWords, V.sub(h, "w"))} looks ${V.pick(["great", "disappointing", "promising", "uncertain", "excellent"], V.sub(h, "a"))}.`

const positiveWords = new Set(["great", "excellent", "love", "good", "promising", "happy", "best", "amazing", "win", "record", "celebrates"])
const negativeWords = new Set(["bad", "disappointing", "hate", "worst", "poor", "delays", "broken", "fail", "terrible", "uncertain"])

const words = (s: string): Array<string> => s.toLowerCase().match(/[a-z0-9']+/g) ?? []

const unitTable: Readonly<Record<string, readonly [string, number]>> = {
  m: ["length", 1], km: ["length", 1000], mi: ["length", 1609.344], ft: ["length", 0.3048], in: ["length", 0.0254], yd: ["length", 0.9144],
  kg: ["mass", 1], g: ["mass", 0.001], lb: ["mass", 0.45359237], oz: ["mass", 0.028349523125], t: ["mass", 1000],
  l: ["volume", 1], ml: ["volume", 0.001], gal: ["volume", 3.785411784], qt: ["volume", 0.946352946], cup: ["volume", 0.2365882365]
}

const convertUnits = (value: number, from: string, to: string): number | undefined => {
  const temps = ["c", "f", "k"]
  if (temps.includes(from) || temps.includes(to)) {
    if (!temps.includes(from) || !temps.includes(to)) return undefined
    const c = from === "c" ? value : from === "f" ? (value - 32) * 5 / 9 : value - 273.15
    return to === "c" ? c : to === "f" ? c * 9 / 5 + 32 : c + 273.15
  }
  const a = unitTable[from]
  const b = unitTable[to]
  if (a === undefined || b === undefined || a[0] !== b[0]) return undefined
  return (value * a[1]) / b[1]
}

const ibanValid = (iban: string): boolean => {
  const s = iban.replace(/\s+/g, "").toUpperCase()
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(s)) return false
  const moved = s.slice(4) + s.slice(0, 4)
  let rem = 0
  for (const ch of moved) {
    const code = ch >= "A" && ch <= "Z" ? String(ch.charCodeAt(0) - 55) : ch
    for (const d of code) rem = (rem * 10 + Number(d)) % 97
  }
  return rem === 1
}

const callingCodes: ReadonlyArray<readonly [string, string]> = [["1", "US"], ["44", "GB"], ["33", "FR"], ["49", "DE"], ["34", "ES"], ["39", "IT"], ["81", "JP"], ["91", "IN"], ["61", "AU"], ["55", "BR"], ["27", "ZA"], ["234", "NG"], ["971", "AE"]]

/** The utilities of the world. */
export const utilities: ReadonlyArray<UtilityDef> = [
  {
    key: "sentiment", label: "analyse the sentiment of a text", topic: "sentiment analysis", synonyms: ["opinion mining", "tone detection", "emotion analysis"],
    inputs: [{ key: "text", label: "text to analyse", type: "string", required: true, example: sampleText }],
    outputs: [{ key: "sentiment", label: "sentiment", type: "string" }, { key: "score", label: "sentiment score (-1..1)", type: "number" }, { key: "confidence", label: "confidence", type: "number" }],
    run: (args, h) => {
      const ws = words(text(args["text"]))
      let s = 0
      for (const w of ws) s += positiveWords.has(w) ? 1 : negativeWords.has(w) ? -1 : 0
      const score = round(Math.max(-1, Math.min(1, s / Math.max(1, Math.sqrt(ws.length)) + (V.unit(h) - 0.5) * 0.1)), 3)
      return { sentiment: score > 0.1 ? "positive" : score < -0.1 ? "negative" : "neutral", score, confidence: round(0.55 + V.unit(V.sub(h, "c")) * 0.44, 3) }
    }
  },
  {
    key: "detect_language", label: "detect the language of a text", topic: "language detection", synonyms: ["language identification", "lang detect"],
    inputs: [{ key: "text", label: "text", type: "string", required: true, example: sampleText }],
    outputs: [{ key: "language", label: "language code", type: "string" }, { key: "language_name", label: "language", type: "string" }, { key: "confidence", label: "confidence", type: "number" }],
    run: (args, h) => {
      const t = text(args["text"])
      // Plain ASCII text with common English words is English; anything else gets a stable seeded guess.
      const english = /^[\x20-\x7e]*$/.test(t) && / (the|and|is|of|to|a) /i.test(` ${t} `)
      const lang = english ? W.languages[0] : V.pick(W.languages, h)
      return { language: lang?.[1] ?? "en", language_name: lang?.[0] ?? "English", confidence: round(english ? 0.97 : 0.6 + V.unit(V.sub(h, "c")) * 0.35, 3) }
    }
  },
  {
    key: "translate", label: "translate a text into another language", topic: "translation", synonyms: ["machine translation", "translator", "localization"],
    inputs: [
      { key: "text", label: "text to translate", type: "string", required: true, example: sampleText },
      { key: "target_language", label: "target language code", type: "string", values: W.languages.map((l) => l[1]), required: true, example: (h) => V.pick(["es", "fr", "de", "it"], h) },
      { key: "source_language", label: "source language code (auto-detected when absent)", type: "string", values: W.languages.map((l) => l[1]), required: false, example: () => "en" }
    ],
    outputs: [{ key: "translated_text", label: "translation", type: "string" }, { key: "source_language", label: "source language", type: "string" }, { key: "characters", label: "characters billed", type: "integer" }],
    run: (args) => {
      const t = text(args["text"])
      const target = text(args["target_language"])
      return { translated_text: `[${target}] ${t}`, source_language: text(args["source_language"]) || "en", characters: t.length }
    }
  },
  {
    key: "text_stats", label: "count the words, sentences and characters of a text", topic: "text statistics", synonyms: ["word counter", "readability", "text metrics"],
    inputs: [{ key: "text", label: "text", type: "string", required: true, example: sampleText }],
    outputs: [{ key: "words", label: "word count", type: "integer" }, { key: "characters", label: "character count", type: "integer" }, { key: "sentences", label: "sentence count", type: "integer" }, { key: "reading_time_sec", label: "reading time (s)", type: "integer" }],
    run: (args) => {
      const t = text(args["text"])
      const n = words(t).length
      return { words: n, characters: t.length, sentences: Math.max(t.length > 0 ? 1 : 0, (t.match(/[.!?]+(\s|$)/g) ?? []).length), reading_time_sec: Math.round((n / 238) * 60) }
    }
  },
  {
    key: "keywords", label: "extract the keywords of a text", topic: "keyword extraction", synonyms: ["key phrase extraction", "topic tagging", "auto-tagging"],
    inputs: [{ key: "text", label: "text", type: "string", required: true, example: sampleText }, { key: "max_keywords", label: "maximum keywords", type: "integer", minimum: 1, maximum: 20, required: false, example: () => 5 }],
    outputs: [{ key: "keywords", label: "keywords", type: "string[]" }],
    run: (args) => {
      const max = Number.isFinite(number(args["max_keywords"])) ? number(args["max_keywords"]) : 5
      const counts = new Map<string, number>()
      for (const w of words(text(args["text"]))) if (w.length > 3) counts.set(w, (counts.get(w) ?? 0) + 1)
      return { keywords: [...counts.entries()].sort((a, b) => b[1] - a[1] || b[0].length - a[0].length || a[0].localeCompare(b[0])).slice(0, max).map((e) => e[0]) }
    }
  },
  {
    key: "validate_email", label: "validate an email address", topic: "email validation", synonyms: ["email verification", "email checker", "mailbox validation"],
    inputs: [{ key: "email", label: "email address", type: "string", required: true, example: (h) => V.email(V.personName(h), V.mailDomain(V.sub(h, "d")), h) }],
    outputs: [{ key: "valid_format", label: "valid format", type: "boolean" }, { key: "domain", label: "domain", type: "string" }, { key: "disposable", label: "disposable provider", type: "boolean" }, { key: "mx_found", label: "MX record found", type: "boolean" }, { key: "deliverability", label: "deliverability", type: "string" }],
    run: (args, h) => {
      const e = text(args["email"])
      const ok = /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)
      const domain = ok ? e.slice(e.indexOf("@") + 1).toLowerCase() : ""
      const disposable = ok && (/(tempmail|mailinator|trash|10minute)/.test(domain) || V.chance(h, 0.03))
      const mx = ok && V.chance(V.sub(h, "mx"), 0.92)
      return { valid_format: ok, domain, disposable, mx_found: mx, deliverability: ok && mx && !disposable ? "deliverable" : ok ? "risky" : "undeliverable" }
    }
  },
  {
    key: "validate_phone", label: "validate and look up a phone number", topic: "phone number validation", synonyms: ["phone lookup", "carrier lookup", "number verification"],
    inputs: [{ key: "phone", label: "phone number (E.164)", type: "string", required: true, example: (h) => V.phone(h) }],
    outputs: [{ key: "valid", label: "valid", type: "boolean" }, { key: "country_code", label: "country code", type: "string" }, { key: "line_type", label: "line type", type: "string" }, { key: "carrier", label: "carrier", type: "string" }],
    run: (args, h) => {
      const p = text(args["phone"]).replace(/[\s()-]/g, "")
      const valid = /^\+\d{8,15}$/.test(p)
      const cc = callingCodes.filter((c) => p.startsWith(`+${c[0]}`)).sort((a, b) => b[0].length - a[0].length)[0]?.[1] ?? ""
      return { valid, country_code: valid ? cc : "", line_type: valid ? V.pick(["mobile", "landline", "voip"], h) : "unknown", carrier: valid ? `${V.coined(V.sub(h, "c"))} ${V.pick(["Mobile", "Telecom", "Wireless"], V.sub(h, "k"))}` : "" }
    }
  },
  {
    key: "unit_convert", label: "convert a quantity between units", topic: "unit conversion", synonyms: ["measurement converter", "metric converter", "units calculator"],
    inputs: [
      { key: "value", label: "value", type: "number", required: true, example: (h) => V.int(h, 1, 500) },
      { key: "from_unit", label: "unit to convert from", type: "string", values: [...Object.keys(unitTable), "c", "f", "k"], required: true, example: (h) => V.pick(["km", "lb", "f", "gal"], h) },
      { key: "to_unit", label: "unit to convert to", type: "string", values: [...Object.keys(unitTable), "c", "f", "k"], required: true, example: (h) => V.pick(["mi", "kg", "c", "l"], h) }
    ],
    outputs: [{ key: "result", label: "converted value", type: "number" }, { key: "formula", label: "conversion", type: "string" }],
    run: (args) => {
      const v = number(args["value"])
      const from = text(args["from_unit"])
      const to = text(args["to_unit"])
      const r = convertUnits(v, from, to)
      return r === undefined ? { result: 0, formula: `cannot convert ${from} to ${to}` } : { result: round(r, 4), formula: `${v} ${from} = ${round(r, 4)} ${to}` }
    }
  },
  {
    key: "bmi", label: "calculate the body-mass index", topic: "BMI calculator", synonyms: ["body mass index", "health calculator", "weight check"],
    inputs: [
      { key: "weight_kg", label: "weight (kg)", type: "number", minimum: 10, maximum: 400, required: true, example: (h) => V.int(h, 50, 110) },
      { key: "height_cm", label: "height (cm)", type: "number", minimum: 50, maximum: 250, required: true, example: (h) => V.int(h, 150, 200) }
    ],
    outputs: [{ key: "bmi", label: "BMI", type: "number" }, { key: "category", label: "category", type: "string" }],
    run: (args) => {
      const m = number(args["height_cm"]) / 100
      const bmi = round(number(args["weight_kg"]) / (m * m), 1)
      return { bmi, category: bmi < 18.5 ? "underweight" : bmi < 25 ? "normal" : bmi < 30 ? "overweight" : "obese" }
    }
  },
  {
    key: "loan", label: "compute the monthly payment of a loan", topic: "loan calculator", synonyms: ["mortgage calculator", "amortization", "repayment calculator"],
    inputs: [
      { key: "principal", label: "loan amount", type: "number", minimum: 1, required: true, example: (h) => 1000 * V.int(h, 5, 600) },
      { key: "annual_rate_pct", label: "annual interest rate (%)", type: "number", minimum: 0, maximum: 40, required: true, example: (h) => V.float(h, 2, 9, 2) },
      { key: "years", label: "term in years", type: "integer", minimum: 1, maximum: 40, required: true, example: (h) => V.pick([5, 10, 15, 20, 30], h) }
    ],
    outputs: [{ key: "monthly_payment", label: "monthly payment", type: "number" }, { key: "total_interest", label: "total interest", type: "number" }, { key: "total_paid", label: "total paid", type: "number" }],
    run: (args) => {
      const p = number(args["principal"])
      const r = number(args["annual_rate_pct"]) / 1200
      const n = number(args["years"]) * 12
      const pay = r === 0 ? p / n : (p * r) / (1 - (1 + r) ** -n)
      return { monthly_payment: round(pay), total_interest: round(pay * n - p), total_paid: round(pay * n) }
    }
  },
  {
    key: "distance", label: "compute the distance between two coordinates", topic: "distance calculator", synonyms: ["geodesic distance", "haversine", "as the crow flies"],
    inputs: [
      { key: "lat1", label: "latitude of the first point", type: "number", minimum: -90, maximum: 90, required: true, example: (h) => V.float(h, -40, 60, 4) },
      { key: "lon1", label: "longitude of the first point", type: "number", minimum: -180, maximum: 180, required: true, example: (h) => V.float(V.sub(h, "a"), -120, 140, 4) },
      { key: "lat2", label: "latitude of the second point", type: "number", minimum: -90, maximum: 90, required: true, example: (h) => V.float(V.sub(h, "b"), -40, 60, 4) },
      { key: "lon2", label: "longitude of the second point", type: "number", minimum: -180, maximum: 180, required: true, example: (h) => V.float(V.sub(h, "c"), -120, 140, 4) }
    ],
    outputs: [{ key: "distance_km", label: "distance (km)", type: "number" }, { key: "distance_mi", label: "distance (miles)", type: "number" }],
    run: (args) => {
      const rad = Math.PI / 180
      const [a1, o1, a2, o2] = [number(args["lat1"]) * rad, number(args["lon1"]) * rad, number(args["lat2"]) * rad, number(args["lon2"]) * rad]
      const d = 2 * 6371.0088 * Math.asin(Math.sqrt(Math.sin((a2 - a1) / 2) ** 2 + Math.cos(a1) * Math.cos(a2) * Math.sin((o2 - o1) / 2) ** 2))
      return { distance_km: round(d, 2), distance_mi: round(d / 1.609344, 2) }
    }
  },
  {
    key: "validate_iban", label: "validate an IBAN", topic: "IBAN validation", synonyms: ["bank account check", "IBAN checker"],
    inputs: [{ key: "iban", label: "IBAN", type: "string", required: true, example: () => "GB82WEST12345698765432" }],
    outputs: [{ key: "valid", label: "valid", type: "boolean" }, { key: "country_code", label: "country code", type: "string" }, { key: "bank_code", label: "bank code", type: "string" }],
    run: (args) => {
      const s = text(args["iban"]).replace(/\s+/g, "").toUpperCase()
      const ok = ibanValid(s)
      return { valid: ok, country_code: ok ? s.slice(0, 2) : "", bank_code: ok ? s.slice(4, 8) : "" }
    }
  },
  {
    key: "password_strength", label: "score the strength of a password", topic: "password strength", synonyms: ["password checker", "entropy estimate", "credential audit"],
    inputs: [{ key: "password", label: "password", type: "string", required: true, example: (h) => `${V.coined(h)}${V.int(V.sub(h, "n"), 10, 99)}!` }],
    outputs: [{ key: "score", label: "score (0-4)", type: "integer" }, { key: "entropy_bits", label: "entropy (bits)", type: "number" }, { key: "verdict", label: "verdict", type: "string" }],
    run: (args) => {
      const p = text(args["password"])
      const pool = (/[a-z]/.test(p) ? 26 : 0) + (/[A-Z]/.test(p) ? 26 : 0) + (/\d/.test(p) ? 10 : 0) + (/[^A-Za-z0-9]/.test(p) ? 33 : 0)
      const bits = round(p.length * Math.log2(Math.max(pool, 1)), 1)
      const score = bits < 28 ? 0 : bits < 36 ? 1 : bits < 60 ? 2 : bits < 80 ? 3 : 4
      return { score, entropy_bits: bits, verdict: ["very weak", "weak", "fair", "strong", "very strong"][score] ?? "weak" }
    }
  },
  {
    key: "fingerprint", label: "compute a checksum of a text", topic: "checksum", synonyms: ["hash", "digest", "fingerprint"],
    inputs: [{ key: "text", label: "input text", type: "string", required: true, example: sampleText }],
    outputs: [{ key: "checksum", label: "32-bit FNV-1a checksum (hex)", type: "string" }, { key: "length", label: "input length", type: "integer" }],
    run: (args) => {
      const t = text(args["text"])
      return { checksum: hash32(t).toString(16).padStart(8, "0"), length: t.length }
    }
  },
  {
    key: "base64", label: "encode a text as Base64", topic: "Base64 encoding", synonyms: ["encoder", "base64 converter"],
    inputs: [{ key: "text", label: "text to encode", type: "string", required: true, example: sampleText }],
    outputs: [{ key: "encoded", label: "Base64 text", type: "string" }, { key: "bytes", label: "byte length", type: "integer" }],
    run: (args) => {
      const b = Buffer.from(text(args["text"]), "utf8")
      return { encoded: b.toString("base64"), bytes: b.length }
    }
  },
  {
    key: "slugify", label: "turn a title into a URL slug", topic: "slug generator", synonyms: ["permalink", "URL slug", "string normalizer"],
    inputs: [{ key: "text", label: "title", type: "string", required: true, example: (h) => V.title(h) }],
    outputs: [{ key: "slug", label: "slug", type: "string" }],
    run: (args) => ({ slug: V.slug(text(args["text"])) })
  },
  {
    key: "qr_code", label: "generate a QR code for a text or URL", topic: "QR code generator", synonyms: ["QR generator", "barcode", "QR image"],
    inputs: [
      { key: "data", label: "text or URL to encode", type: "string", required: true, example: (h) => `https://${V.domainFor(V.compound(h), V.sub(h, "t"))}` },
      { key: "size", label: "image size in pixels", type: "integer", minimum: 64, maximum: 2048, required: false, example: () => 300 }
    ],
    outputs: [{ key: "image_url", label: "QR image URL", type: "string" }, { key: "size", label: "size (px)", type: "integer" }],
    run: (args, h) => ({ image_url: `https://qr.example-cdn.com/${V.hex(h, 16)}.png`, size: Number.isFinite(number(args["size"])) ? number(args["size"]) : 300 })
  },
  {
    key: "age", label: "compute an age from a date of birth", topic: "age calculator", synonyms: ["birthday calculator", "date difference"],
    inputs: [{ key: "birth_date", label: "date of birth", type: "string", format: "date", required: true, example: (h) => V.pastDate(h, 7000, 25000) }],
    outputs: [{ key: "years", label: "age in years", type: "integer" }, { key: "days", label: "age in days", type: "integer" }, { key: "next_birthday", label: "next birthday", type: "string" }],
    run: (args) => {
      const b = text(args["birth_date"])
      const days = V.today - V.dayNumber(b)
      const t = V.isoDate(V.today)
      const y = Number(t.slice(0, 4)) - Number(b.slice(0, 4)) - (t.slice(5) < b.slice(5) ? 1 : 0)
      const nextYear = Number(t.slice(0, 4)) + (t.slice(5) < b.slice(5) ? 0 : 1)
      return { years: y, days, next_birthday: `${nextYear}${b.slice(4)}` }
    }
  },
  {
    key: "detect_objects", label: "detect objects in an image", topic: "object detection", synonyms: ["image recognition", "image labeling", "computer vision"],
    inputs: [{ key: "image_url", label: "image URL", type: "string", format: "uri", required: true, example: (h) => `https://images.example-cdn.com/${V.hex(h, 12)}.jpg` }],
    outputs: [{ key: "labels", label: "detected objects", type: "string[]" }, { key: "count", label: "number of objects", type: "integer" }, { key: "top_confidence", label: "top confidence", type: "number" }],
    run: (_args, h) => {
      const labels = W.visionLabels.filter((_, k) => V.chance(V.sub(h, `l${k}`), 0.18))
      const out = labels.length === 0 ? [V.pick(W.visionLabels, h)] : labels
      return { labels: out, count: out.length + V.int(V.sub(h, "n"), 0, 3), top_confidence: round(0.62 + V.unit(V.sub(h, "c")) * 0.37, 3) }
    }
  },
  {
    key: "ocr", label: "extract the text of an image", topic: "OCR", synonyms: ["optical character recognition", "text recognition", "image to text"],
    inputs: [{ key: "image_url", label: "image URL", type: "string", format: "uri", required: true, example: (h) => `https://images.example-cdn.com/${V.hex(h, 12)}.png` }],
    outputs: [{ key: "text", label: "recognised text", type: "string" }, { key: "confidence", label: "confidence", type: "number" }],
    run: (_args, h) => ({ text: V.sentence(h, V.capitalize(V.pick(W.commonWords, V.sub(h, "w")))), confidence: round(0.7 + V.unit(V.sub(h, "c")) * 0.29, 3) })
  },
  {
    key: "quote", label: "get a quote for a topic", topic: "quotes", synonyms: ["inspirational quote", "famous saying", "quote of the day"],
    inputs: [{ key: "topic", label: "topic", type: "string", values: ["life", "success", "love", "science", "humor", "friendship", "work"], required: false, example: (h) => V.pick(["life", "success", "work"], h) }],
    outputs: [{ key: "quote", label: "quote", type: "string" }, { key: "author", label: "author", type: "string" }],
    run: (args, h) => ({ quote: `${V.capitalize(text(args["topic"]) || "life")} is ${V.pick(["a voyage", "a garden", "a long road", "an echo", "a promise"], h)} ${V.pick(["worth taking slowly", "that rewards patience", "best shared", "we keep rewriting"], V.sub(h, "b"))}.`, author: V.personName(V.sub(h, "a")) })
  }
]

/** Looks a utility up by key. */
export const utility = (key: string): UtilityDef | undefined => utilities.find((u) => u.key === key)
