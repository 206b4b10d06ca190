/**
 * Numbers however they are written: digits of every Unicode script, English number words and ordinals, CJK numerals.
 * The claim reader reads them all as numbers (so an invented number cannot hide in a form nobody checks); the red-team
 * generators write them (HackingStrategies.ts). Pure and linear.
 */

// ---------------------------------------------------------------------------------------------------------------
// Digits of other scripts
// ---------------------------------------------------------------------------------------------------------------

const ND = /\p{Nd}/u
const NON_ASCII_DIGIT = /[^\x00-\x7F]/u

const digitCache = new Map<number, string>()

/**
 * The ASCII digit of a decimal digit of any script (`٣` → `3`, `३` → `3`, `３` → `3`). Unicode lays every script's
 * digits out as contiguous runs of ten starting at zero, so the value is the distance from the run's start modulo 10.
 */
export const asciiDigit = (char: string): string | undefined => {
  const cp = char.codePointAt(0)
  if (cp === undefined || !ND.test(char)) return undefined
  if (cp >= 48 && cp <= 57) return char
  const hit = digitCache.get(cp)
  if (hit !== undefined) return hit
  let start = cp
  while (start > 0 && ND.test(String.fromCodePoint(start - 1))) start--
  const digit = String((cp - start) % 10)
  digitCache.set(cp, digit)
  return digit
}

/** The text with every decimal digit of another script written as an ASCII digit. One pass; ASCII text is returned as is. */
export const asciiDigits = (text: string): string => {
  if (!NON_ASCII_DIGIT.test(text)) return text
  return text.replace(/\p{Nd}/gu, (d) => asciiDigit(d) ?? d)
}

/** Zeros of some digit scripts, for writing numbers in them (tests and red-team variants). */
export const digitScripts = {
  arabicIndic: 0x0660,
  extendedArabicIndic: 0x06f0,
  devanagari: 0x0966,
  bengali: 0x09e6,
  gujarati: 0x0ae6,
  tamil: 0x0be6,
  thai: 0x0e50,
  lao: 0x0ed0,
  tibetan: 0x0f20,
  myanmar: 0x1040,
  khmer: 0x17e0,
  mongolian: 0x1810,
  fullwidth: 0xff10,
  mathematicalBold: 0x1d7ce
} as const

/** A script of {@link digitScripts}. */
export type DigitScript = keyof typeof digitScripts

/** The ASCII digits of a text written in another script (other characters kept). */
export const toScript = (text: string, script: DigitScript): string =>
  text.replace(/[0-9]/g, (d) => String.fromCodePoint(digitScripts[script] + Number(d)))

// ---------------------------------------------------------------------------------------------------------------
// English number words
// ---------------------------------------------------------------------------------------------------------------

const UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
const TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
const UNIT_ORDINALS = ["zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth"]
const TENS_ORDINALS = ["", "", "twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth", "eightieth", "ninetieth"]
const SCALES: ReadonlyArray<readonly [string, number]> = [["trillion", 1e12], ["billion", 1e9], ["million", 1e6], ["thousand", 1e3]]

type WordRole =
  | { readonly kind: "small"; readonly value: number; readonly ordinal: boolean }
  | { readonly kind: "hundred"; readonly ordinal: boolean }
  | { readonly kind: "scale"; readonly value: number; readonly ordinal: boolean }

const roles = new Map<string, WordRole>()
UNITS.forEach((w, i) => roles.set(w, { kind: "small", value: i, ordinal: false }))
TENS.forEach((w, i) => w !== "" && roles.set(w, { kind: "small", value: i * 10, ordinal: false }))
UNIT_ORDINALS.forEach((w, i) => roles.set(w, { kind: "small", value: i, ordinal: true }))
TENS_ORDINALS.forEach((w, i) => w !== "" && roles.set(w, { kind: "small", value: i * 10, ordinal: true }))
roles.set("fourty", { kind: "small", value: 40, ordinal: false })
roles.set("hundred", { kind: "hundred", ordinal: false })
roles.set("hundredth", { kind: "hundred", ordinal: true })
for (const [w, v] of SCALES) {
  roles.set(w, { kind: "scale", value: v, ordinal: false })
  roles.set(`${w}th`, { kind: "scale", value: v, ordinal: true })
}

/** Whether a lower-case word is a number word (cardinal or ordinal). */
export const isNumberWord = (word: string): boolean => roles.has(word)

/** Words that stand alone too often as something else ("one of them", "the first call") to be read as a number by themselves. */
const AMBIGUOUS_ALONE: ReadonlySet<string> = new Set(["one", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "zeroth"])

/** A number read from words: its value, the words it spans (indexes into the word list), and what it looked like. */
export interface WordNumber {
  readonly value: number
  readonly decimals: number
  /** Index of the first word and one past the last. */
  readonly from: number
  readonly to: number
  readonly ordinal: boolean
  /** One word that is often no number at all ("one", "first" … "tenth"): read only where a value is expected. */
  readonly ambiguous: boolean
}

/**
 * The numbers a list of lower-case words writes in English: "thirty one", "one hundred and twelve",
 * "two thousand twenty four", "forty one thousand and seven", "thirty first", "twelve point five", "minus three"
 * (hyphens are word breaks, so "thirty-one" arrives as two words). Greedy and linear: each maximal run of number words
 * that reads as one number is one result; a run that does not ("one two") is split where the grammar breaks.
 */
export const readNumberWords = (words: ReadonlyArray<string>): ReadonlyArray<WordNumber> => {
  const out: Array<WordNumber> = []
  let i = 0
  while (i < words.length) {
    const first = roles.get(words[i] as string)
    const negative = (words[i] === "minus" || words[i] === "negative") && roles.get(words[i + 1] as string)?.kind === "small"
    if (first === undefined && !negative) {
      i++
      continue
    }
    const from = i
    if (negative) i++
    let total = 0
    let current = 0
    let lastSmall = -1 // the value of the last small word of the current group, -1 when none
    let lastScale = Infinity // the last scale used, so "thousand million" is two numbers
    let ordinal = false
    let end = i
    let sawWord = false
    while (i < words.length) {
      const word = words[i] as string
      if (word === "and" && sawWord && roles.get(words[i + 1] as string)?.kind === "small") {
        i++
        continue
      }
      const role = roles.get(word)
      if (role === undefined || ordinal) break
      if (role.kind === "small") {
        // "twenty" then "one" joins; "one" then "two", or "twenty" then "thirty", does not
        if (lastSmall >= 0 && !(lastSmall >= 20 && lastSmall % 10 === 0 && role.value < 10)) break
        current += role.value
        lastSmall = role.value
      } else if (role.kind === "hundred") {
        if (current === 0 || current >= 100) break
        current *= 100
        lastSmall = -1
      } else {
        if (role.value >= lastScale || (current === 0 && total === 0)) break
        total += (current === 0 ? 1 : current) * role.value
        current = 0
        lastSmall = -1
        lastScale = role.value
      }
      ordinal = role.ordinal
      sawWord = true
      i++
      end = i
    }
    if (!sawWord) {
      i = from + 1
      continue
    }
    let value = total + current
    let decimals = 0
    // "twelve point five": the digits after "point", one word each
    if (!ordinal && words[end] === "point") {
      let k = end + 1
      let fraction = ""
      while (k < words.length) {
        const r = roles.get(words[k] as string)
        if (r === undefined || r.kind !== "small" || r.ordinal || r.value > 9) break
        fraction += String(r.value)
        k++
      }
      if (fraction.length > 0) {
        value = Number(`${value}.${fraction}`)
        decimals = fraction.length
        end = k
        i = k
      }
    }
    if (negative) value = -value
    const single = end - from === 1
    out.push({ value, decimals, from, to: end, ordinal, ambiguous: single && AMBIGUOUS_ALONE.has(words[from] as string) })
    i = end
  }
  return out
}

const under1000 = (n: number): Array<string> => {
  const out: Array<string> = []
  const h = Math.floor(n / 100)
  const rest = n % 100
  if (h > 0) out.push(UNITS[h] as string, "hundred")
  if (rest > 0) {
    if (h > 0) out.push("and")
    if (rest < 20) out.push(UNITS[rest] as string)
    else out.push(rest % 10 === 0 ? (TENS[rest / 10] as string) : `${TENS[Math.floor(rest / 10)]}-${UNITS[rest % 10]}`)
  }
  return out
}

/** A non-negative integer below 10^15 in English words ("forty-one thousand and seven"). */
export const toWords = (n: number): string => {
  if (!Number.isInteger(n) || n < 0 || n >= 1e15) return String(n)
  if (n === 0) return "zero"
  const parts: Array<string> = []
  let rest = n
  for (const [word, scale] of SCALES) {
    const k = Math.floor(rest / scale)
    if (k > 0) {
      parts.push(...under1000(k), word)
      rest -= k * scale
    }
  }
  if (rest > 0) {
    if (parts.length > 0 && rest < 100) parts.push("and")
    parts.push(...under1000(rest))
  }
  return parts.join(" ")
}

/** A non-negative integer as an English ordinal in words ("forty-first", "one hundredth"). */
export const toOrdinalWords = (n: number): string => {
  const words = toWords(n)
  const last = /([a-z]+)$/.exec(words)?.[1] ?? ""
  const unit = UNITS.indexOf(last)
  const tens = TENS.indexOf(last)
  const ordinal = unit >= 0 ? UNIT_ORDINALS[unit] : tens >= 2 ? TENS_ORDINALS[tens] : `${last}th`
  return `${words.slice(0, words.length - last.length)}${ordinal}`
}

/** An integer with its English ordinal suffix in digits ("1st", "22nd", "113th"). */
export const toOrdinalDigits = (n: number): string => {
  const mod100 = Math.abs(n) % 100
  const suffix = mod100 >= 11 && mod100 <= 13 ? "th" : ["th", "st", "nd", "rd"][Math.abs(n) % 10] ?? "th"
  return `${n}${suffix}`
}

// ---------------------------------------------------------------------------------------------------------------
// CJK numerals
// ---------------------------------------------------------------------------------------------------------------

const CJK_DIGITS: Readonly<Record<string, number>> = { 〇: 0, 零: 0, 一: 1, 二: 2, 两: 2, 兩: 2, 三: 3, 四: 4, 五: 5, 六: 6, 七: 7, 八: 8, 九: 9 }
const CJK_SMALL_UNITS: Readonly<Record<string, number>> = { 十: 10, 百: 100, 千: 1000 }
const CJK_BIG_UNITS: Readonly<Record<string, number>> = { 万: 1e4, 萬: 1e4, 亿: 1e8, 億: 1e8 }

/** A run of CJK numeral characters, for {@link cjkValue} (the claim reader replaces each run by its value). */
export const CJK_NUMERAL_RUN = /[〇零一二两兩三四五六七八九十百千万萬亿億]+/gu

/** The value of a run of CJK numerals (`三十一` → 31, `四百一十万零一百二十三` → 4100123, `二〇二四` → 2024), else undefined. */
export const cjkValue = (run: string): number | undefined => {
  const chars = [...run]
  // digit by digit (二〇二四): no unit character at all
  if (chars.length > 1 && chars.every((c) => CJK_DIGITS[c] !== undefined)) return Number(chars.map((c) => CJK_DIGITS[c]).join(""))
  let total = 0
  let section = 0
  let digit = -1
  for (const c of chars) {
    const d = CJK_DIGITS[c]
    if (d !== undefined) {
      digit = d
      continue
    }
    const small = CJK_SMALL_UNITS[c]
    if (small !== undefined) {
      section += (digit < 0 ? 1 : digit) * small
      digit = -1
      continue
    }
    const big = CJK_BIG_UNITS[c]
    if (big === undefined) return undefined
    // 亿 scales everything before it; 万 only its own section (一亿二千万 = 1·10^8 + 2000·10^4)
    if (big === 1e8) total = (total + section + Math.max(0, digit)) * big
    else total += (section + Math.max(0, digit)) * big
    section = 0
    digit = -1
  }
  const value = total + section + Math.max(0, digit)
  return Number.isFinite(value) ? value : undefined
}

const CJK_DIGIT_CHARS = ["零", "一", "二", "三", "四", "五", "六", "七", "八", "九"]

const cjkUnder10000 = (n: number, leadingZero: boolean): string => {
  let out = ""
  let zero = leadingZero
  for (const [unit, scale] of [["千", 1000], ["百", 100], ["十", 10]] as const) {
    const d = Math.floor(n / scale) % 10
    if (d === 0) {
      if (out.length > 0 || zero) zero = true
      continue
    }
    if (zero && out.length > 0) out += "零"
    zero = false
    out += `${CJK_DIGIT_CHARS[d]}${unit}`
  }
  const d = n % 10
  if (d > 0) out += `${zero && out.length > 0 ? "零" : ""}${CJK_DIGIT_CHARS[d]}`
  return out
}

/** A positive integer below 10^12 in CJK numerals (`31` → 三十一). */
export const toCjk = (n: number): string => {
  if (!Number.isInteger(n) || n <= 0 || n >= 1e12) return String(n)
  const yi = Math.floor(n / 1e8)
  const wan = Math.floor(n / 1e4) % 1e4
  const rest = n % 1e4
  let out = ""
  if (yi > 0) out += `${cjkUnder10000(yi, false)}亿`
  if (wan > 0) out += `${yi > 0 && wan < 1000 ? "零" : ""}${cjkUnder10000(wan, false)}万`
  if (rest > 0) out += `${(yi > 0 || wan > 0) && rest < 1000 ? "零" : ""}${cjkUnder10000(rest, false)}`
  return out
}
