/**
 * Tokenisation shared by the retrievers: word tokens, identifier splitting, English stop words and
 * Porter stemming, each switchable so the plain-BM25 baseline (lowercase word tokens) is the same code.
 */
import { stemmer } from "stemmer"
import { eng } from "stopword"

/** What a tokeniser does beyond cutting lowercase runs of letters and digits. */
export interface TextOptions {
  /** Split identifiers: `getWordByLength` → get word by length, `HTMLParser` → html parser, `mp3` → mp 3. */
  readonly splitIdentifiers: boolean
  /** When an identifier was split, also keep the whole lowercased run (`getwordbylength`). */
  readonly keepCompounds: boolean
  /** Drop English stop words (the `stopword` package's list) and clitics (`'s`, `'d`, `'ll`, `'re`, `'ve`, `'m`). */
  readonly stopWords: boolean
  /** Reduce every alphabetic token to its Porter stem (the `stemmer` package). */
  readonly stem: boolean
  /** Drop tokens made only of digits (ids, zip codes and version numbers in requests rarely name a tool). Default false. */
  readonly dropNumbers?: boolean
}

/** The plain baseline: lowercase runs of letters and digits, nothing else. */
export const plainOptions: TextOptions = {
  splitIdentifiers: false,
  keepCompounds: false,
  stopWords: false,
  stem: false,
  dropNumbers: false
}

/** Every feature on: what the tuned BM25 and the dense encoder's vocabulary use. */
export const defaultOptions: TextOptions = {
  splitIdentifiers: true,
  keepCompounds: false,
  stopWords: true,
  stem: true,
  dropNumbers: false
}

/** A tokeniser bound to one set of options; it memoises stems, so keep one per index. */
export interface Tokenizer {
  readonly options: TextOptions
  /** The tokens of `text` in order (duplicates kept: term frequencies are counted from them). */
  readonly tokens: (text: string) => Array<string>
}

// Maximal runs of letters, marks and digits; everything else (space, `_`, `-`, `/`, punctuation) separates.
const wordRun = /[\p{L}\p{M}\p{N}]+/gu
// A possessive or contraction ending (`user's`, `I'd`, `we'll`, `they're`), straight or curly apostrophe.
const clitic = /(?<=[\p{L}\p{N}])['’](?:s|d|ll|re|ve|m)\b/giu
// Boundaries inside an identifier: aB, ABc (before the last capital), letter|digit, digit|letter.
// A plural acronym (`IDs`, `URLs`) stays whole.
const identifierBoundary = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})(?!\p{Lu}s$)|(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u
const hasLetter = /\p{L}/u
const allDigits = /^\p{N}+$/u

/** The English stop words used when `stopWords` is on (lowercase). */
export const stopWords: ReadonlySet<string> = new Set(eng.map((w) => w.toLowerCase()))

/** At most this many distinct word runs are memoised per tokeniser (the memo is cleared when full). */
const maxMemoisedRuns = 1 << 20

/**
 * Builds a tokeniser. The tokens of each distinct word run are memoised (a library repeats the same words
 * across thousands of documents, so splitting, stop-word lookup and stemming run once per distinct run).
 */
export const makeTokenizer = (options: TextOptions): Tokenizer => {
  const memo = new Map<string, ReadonlyArray<string>>()
  const emit = (out: Array<string>, lower: string): void => {
    if (options.stopWords && stopWords.has(lower)) return
    if (options.dropNumbers === true && allDigits.test(lower)) return
    out.push(options.stem && hasLetter.test(lower) ? stemmer(lower) : lower)
  }
  const runTokens = (run: string): ReadonlyArray<string> => {
    const known = memo.get(run)
    if (known !== undefined) return known
    const out: Array<string> = []
    if (!options.splitIdentifiers) {
      emit(out, run.toLowerCase())
    } else {
      const parts = run.split(identifierBoundary)
      for (const part of parts) emit(out, part.toLowerCase())
      if (options.keepCompounds && parts.length > 1) emit(out, run.toLowerCase())
    }
    if (memo.size >= maxMemoisedRuns) memo.clear()
    memo.set(run, out)
    return out
  }
  const tokens = (text: string): Array<string> => {
    const source = options.stopWords ? text.replace(clitic, "") : text
    const out: Array<string> = []
    for (const match of source.matchAll(wordRun)) {
      for (const token of runTokens(match[0])) out.push(token)
    }
    return out
  }
  return { options, tokens }
}

/** Tokenises one text with fresh options (for one-off use; indexes keep a {@link Tokenizer}). */
export const tokenize = (text: string, options: TextOptions = defaultOptions): Array<string> =>
  makeTokenizer(options).tokens(text)
