/**
 * HuggingFace `tokenizer.json` (the `tokenizers` library format) for user-supplied sentence-transformers ONNX exports.
 * The file is validated with Schema here (a bad file is a TokenizerError naming it); normalisation, pre-tokenisation
 * and the model (WordPiece, Unigram, BPE, ...) are @huggingface/tokenizers (tokenizers.js); the post-processor's
 * special tokens, segment ids and truncation to `maxLength` (special tokens included) are applied here.
 *
 * Why the library: bench/tokenizer-hf.ts measured our own implementation against it on 2026-12-01 (Node 20, 2 busy
 * cores) over 5,018 texts (5,002 tool documents of the generated world and 16 edge cases): identical ids on 5,018/5,018
 * with a BERT WordPiece tokenizer.json, the same over a 5,846-word world vocabulary and with a Unigram one, and ours
 * ran at 0.68–0.75× its speed — so ours went. The library refuses a file without `decoder` or `added_tokens` keys,
 * which encoding never reads: they are filled in (null, []) when absent.
 */
import { Tokenizer as LibraryTokenizer } from "@huggingface/tokenizers"
import { Effect, Result, Schema } from "effect"

/** A tokenizer file that cannot be read or uses a component this module does not implement. */
export class TokenizerError extends Schema.TaggedError<TokenizerError>()("TokenizerError", {
  source: Schema.String,
  message: Schema.String
}) {}

// ---------------------------------------------------------------------------------------------------------------
// The file format (the subset we read; unknown keys are ignored, unknown component types are reported by name)

/** A normalizer node of tokenizer.json. */
export interface NormalizerJson {
  readonly type: string
  readonly lowercase?: boolean
  readonly strip_accents?: boolean | null
  readonly clean_text?: boolean
  readonly handle_chinese_chars?: boolean
  readonly strip_left?: boolean
  readonly strip_right?: boolean
  readonly prepend?: string
  readonly pattern?: PatternJson
  readonly content?: string
  readonly normalizers?: ReadonlyArray<NormalizerJson>
}

/** A pattern of a Replace normalizer: a literal string or a regular expression. */
export interface PatternJson {
  readonly String?: string
  readonly Regex?: string
}

const PatternJson: Schema.Codec<PatternJson> = Schema.Struct({
  String: Schema.optionalKey(Schema.String),
  Regex: Schema.optionalKey(Schema.String)
})

const NormalizerJson: Schema.Codec<NormalizerJson> = Schema.Struct({
  type: Schema.String,
  lowercase: Schema.optionalKey(Schema.Boolean),
  strip_accents: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  clean_text: Schema.optionalKey(Schema.Boolean),
  handle_chinese_chars: Schema.optionalKey(Schema.Boolean),
  strip_left: Schema.optionalKey(Schema.Boolean),
  strip_right: Schema.optionalKey(Schema.Boolean),
  prepend: Schema.optionalKey(Schema.String),
  pattern: Schema.optionalKey(PatternJson),
  content: Schema.optionalKey(Schema.String),
  normalizers: Schema.optionalKey(Schema.Array(Schema.suspend((): Schema.Codec<NormalizerJson> => NormalizerJson)))
})

/** A pre-tokenizer node of tokenizer.json. */
export interface PreTokenizerJson {
  readonly type: string
  readonly replacement?: string
  readonly prepend_scheme?: string
  readonly add_prefix_space?: boolean
  readonly split?: boolean
  readonly individual_digits?: boolean
  readonly pretokenizers?: ReadonlyArray<PreTokenizerJson>
}

const PreTokenizerJson: Schema.Codec<PreTokenizerJson> = Schema.Struct({
  type: Schema.String,
  replacement: Schema.optionalKey(Schema.String),
  prepend_scheme: Schema.optionalKey(Schema.String),
  add_prefix_space: Schema.optionalKey(Schema.Boolean),
  split: Schema.optionalKey(Schema.Boolean),
  individual_digits: Schema.optionalKey(Schema.Boolean),
  pretokenizers: Schema.optionalKey(
    Schema.Array(Schema.suspend((): Schema.Codec<PreTokenizerJson> => PreTokenizerJson))
  )
})

const TemplatePiece = Schema.Union([
  Schema.Struct({ SpecialToken: Schema.Struct({ id: Schema.String, type_id: Schema.Int }) }),
  Schema.Struct({ Sequence: Schema.Struct({ id: Schema.String, type_id: Schema.Int }) })
])

const SpecialTokenEntry = Schema.Struct({ id: Schema.String, ids: Schema.Array(Schema.Int) })

/** A post-processor node of tokenizer.json. */
export interface PostProcessorJson {
  readonly type: string
  readonly single?: ReadonlyArray<typeof TemplatePiece.Type>
  readonly special_tokens?: { readonly [key: string]: typeof SpecialTokenEntry.Type }
  readonly cls?: readonly [string, number]
  readonly sep?: readonly [string, number]
  readonly processors?: ReadonlyArray<PostProcessorJson>
}

const PostProcessorJson: Schema.Codec<PostProcessorJson> = Schema.Struct({
  type: Schema.String,
  single: Schema.optionalKey(Schema.Array(TemplatePiece)),
  special_tokens: Schema.optionalKey(Schema.Record(Schema.String, SpecialTokenEntry)),
  cls: Schema.optionalKey(Schema.Tuple([Schema.String, Schema.Int])),
  sep: Schema.optionalKey(Schema.Tuple([Schema.String, Schema.Int])),
  processors: Schema.optionalKey(
    Schema.Array(Schema.suspend((): Schema.Codec<PostProcessorJson> => PostProcessorJson))
  )
})

const ModelJson = Schema.Struct({
  type: Schema.optionalKey(Schema.String),
  unk_token: Schema.optionalKey(Schema.String),
  continuing_subword_prefix: Schema.optionalKey(Schema.NullOr(Schema.String)),
  max_input_chars_per_word: Schema.optionalKey(Schema.Int),
  unk_id: Schema.optionalKey(Schema.NullOr(Schema.Int)),
  /** WordPiece: token → id; Unigram: [piece, log-probability] in id order. */
  vocab: Schema.Union([
    Schema.Record(Schema.String, Schema.Int),
    Schema.Array(Schema.Tuple([Schema.String, Schema.Number]))
  ])
})

const AddedToken = Schema.Struct({
  id: Schema.Int,
  content: Schema.String,
  special: Schema.optionalKey(Schema.Boolean)
})

/** The parts of a HuggingFace `tokenizer.json` this module reads. */
export const TokenizerJson = Schema.Struct({
  truncation: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ max_length: Schema.Int, direction: Schema.optionalKey(Schema.String) }))
  ),
  padding: Schema.optionalKey(
    Schema.NullOr(Schema.Struct({ pad_id: Schema.optionalKey(Schema.Int), pad_token: Schema.optionalKey(Schema.String) }))
  ),
  added_tokens: Schema.optionalKey(Schema.Array(AddedToken)),
  normalizer: Schema.optionalKey(Schema.NullOr(NormalizerJson)),
  pre_tokenizer: Schema.optionalKey(Schema.NullOr(PreTokenizerJson)),
  post_processor: Schema.optionalKey(Schema.NullOr(PostProcessorJson)),
  model: ModelJson
})
/** The parts of a HuggingFace `tokenizer.json` this module reads. */
export type TokenizerJson = typeof TokenizerJson.Type

// ---------------------------------------------------------------------------------------------------------------
// Runtime

/** The token ids of one text, ready for a transformer: ids, segment (token type) ids, and the token strings. */
export interface Encoding {
  readonly ids: ReadonlyArray<number>
  readonly typeIds: ReadonlyArray<number>
  readonly tokens: ReadonlyArray<string>
}

/** A tokenizer built from a tokenizer.json. */
export interface HfTokenizer {
  /** Tokenises one text with the special tokens of the post-processor, truncated to `maxLength`. */
  readonly encode: (text: string) => Encoding
  /** The id used to pad batches. */
  readonly padId: number
  /** The maximum number of ids (special tokens included). */
  readonly maxLength: number
}

interface Special {
  readonly ids: ReadonlyArray<number>
  readonly tokens: ReadonlyArray<string>
  readonly typeId: number
}
interface Template {
  readonly before: ReadonlyArray<Special>
  readonly after: ReadonlyArray<Special>
  readonly sequenceTypeId: number
}

const buildTemplate = (
  node: PostProcessorJson | null | undefined,
  tokenId: (token: string) => number | undefined
): Result.Result<Template, string> => {
  if (node === null || node === undefined) return Result.succeed({ before: [], after: [], sequenceTypeId: 0 })
  switch (node.type) {
    case "BertProcessing":
    case "RobertaProcessing": {
      const [clsToken, clsId] = node.cls ?? ["[CLS]", tokenId("[CLS]") ?? -1]
      const [sepToken, sepId] = node.sep ?? ["[SEP]", tokenId("[SEP]") ?? -1]
      if (clsId < 0 || sepId < 0) return Result.fail(`${node.type} without cls/sep ids`)
      return Result.succeed({
        before: [{ ids: [clsId], tokens: [clsToken], typeId: 0 }],
        after: [{ ids: [sepId], tokens: [sepToken], typeId: 0 }],
        sequenceTypeId: 0
      })
    }
    case "TemplateProcessing": {
      const before: Array<Special> = []
      const after: Array<Special> = []
      let sequenceTypeId = 0
      let seenSequence = false
      for (const piece of node.single ?? []) {
        if ("Sequence" in piece) {
          seenSequence = true
          sequenceTypeId = piece.Sequence.type_id
          continue
        }
        const entry = node.special_tokens?.[piece.SpecialToken.id]
        const id = tokenId(piece.SpecialToken.id)
        const special: Special | undefined = entry !== undefined
          ? { ids: entry.ids, tokens: entry.ids.map(() => piece.SpecialToken.id), typeId: piece.SpecialToken.type_id }
          : id !== undefined
          ? { ids: [id], tokens: [piece.SpecialToken.id], typeId: piece.SpecialToken.type_id }
          : undefined
        if (special === undefined) return Result.fail(`template special token ${piece.SpecialToken.id} has no id`)
        ;(seenSequence ? after : before).push(special)
      }
      return Result.succeed({ before, after, sequenceTypeId })
    }
    case "Sequence": {
      // ByteLevel processors only trim offsets; the template (if any) decides the special tokens
      const template = (node.processors ?? []).find((p) =>
        p.type === "TemplateProcessing" || p.type === "BertProcessing" || p.type === "RobertaProcessing"
      )
      return buildTemplate(template, tokenId)
    }
    case "ByteLevel":
      return Result.succeed({ before: [], after: [], sequenceTypeId: 0 })
    default:
      return Result.fail(`unsupported post_processor type ${JSON.stringify(node.type)}`)
  }
}

/** Default maximum sequence length when the file sets no truncation (BERT's position-embedding limit). */
export const defaultMaxLength = 512

/** The model types the library implements (it silently falls back on others, so they are refused here by name). */
export const supportedModels: ReadonlyArray<string> = ["WordPiece", "Unigram", "BPE"]

/** The library's tokenizer over a tokenizer.json object; its construction errors become one-line messages. */
const libraryTokenizer = (raw: Readonly<Record<string, unknown>>): Result.Result<LibraryTokenizer, string> => {
  try {
    return Result.succeed(new LibraryTokenizer({ ...raw, decoder: raw["decoder"] ?? null, added_tokens: raw["added_tokens"] ?? [] }, {}))
  } catch (e) {
    return Result.fail(`unsupported tokenizer.json component: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/**
 * Builds a tokenizer from a decoded tokenizer.json; `maxLength` overrides the file's truncation. `raw` is the file's
 * object as parsed (all its keys, for the library); it defaults to the decoded one.
 */
export const fromJson = (
  json: TokenizerJson,
  options: { readonly maxLength?: number } = {},
  raw: Readonly<Record<string, unknown>> = json
): Result.Result<HfTokenizer, string> => {
  const type = json.model.type ?? (Array.isArray(json.model.vocab) ? "Unigram" : "WordPiece")
  if (!supportedModels.includes(type)) return Result.fail(`unsupported model type ${JSON.stringify(type)} (${supportedModels.join(", ")} are)`)
  if (type === "WordPiece" && Array.isArray(json.model.vocab)) return Result.fail("WordPiece model.vocab must be an object token → id")
  if (type === "Unigram" && !Array.isArray(json.model.vocab)) return Result.fail("Unigram model.vocab must be an array of [piece, score]")
  const library = libraryTokenizer({ ...raw, model: { ...json.model, type, ...(raw["model"] as Readonly<Record<string, unknown>> | undefined) } })
  if (Result.isFailure(library)) return Result.fail(library.failure)
  const tokenizer = library.success

  const added = new Map<string, number>()
  for (const t of json.added_tokens ?? []) added.set(t.content, t.id)
  const vocabLookup = (token: string): number | undefined => added.get(token) ?? tokenizer.token_to_id(token)
  const template = buildTemplate(json.post_processor, vocabLookup)
  if (Result.isFailure(template)) return Result.fail(template.failure)

  const maxLength = options.maxLength ?? json.truncation?.max_length ?? defaultMaxLength
  if (!Number.isInteger(maxLength) || maxLength < 1) return Result.fail(`invalid max length ${maxLength}`)
  const truncateLeft = json.truncation?.direction === "Left"
  const padId = json.padding?.pad_id ??
    (json.padding?.pad_token !== undefined ? vocabLookup(json.padding.pad_token) : undefined) ??
    vocabLookup("[PAD]") ?? vocabLookup("<pad>") ?? 0

  const t = template.success
  const specialCount = [...t.before, ...t.after].reduce((n, s) => n + s.ids.length, 0)

  const encode = (text: string): Encoding => {
    // the sequence alone (added tokens matched verbatim by the library); the frame and truncation are ours
    const { ids, tokens } = tokenizer.encode(text, { add_special_tokens: false })
    const budget = Math.max(0, maxLength - specialCount)
    const keepFrom = truncateLeft ? Math.max(0, ids.length - budget) : 0
    const keepTo = truncateLeft ? ids.length : Math.min(ids.length, budget)
    const outIds: Array<number> = []
    const outTypes: Array<number> = []
    const outTokens: Array<string> = []
    const pushSpecial = (s: Special) => {
      s.ids.forEach((id, j) => {
        outIds.push(id)
        outTypes.push(s.typeId)
        outTokens.push(s.tokens[j] ?? "")
      })
    }
    t.before.forEach(pushSpecial)
    for (let i = keepFrom; i < keepTo; i++) {
      outIds.push(ids[i] ?? 0)
      outTypes.push(t.sequenceTypeId)
      outTokens.push(tokens[i] ?? "")
    }
    t.after.forEach(pushSpecial)
    return { ids: outIds, typeIds: outTypes, tokens: outTokens }
  }
  return Result.succeed({ encode, padId, maxLength })
}

const decodeTokenizerJson = Schema.decodeUnknownEffect(Schema.fromJsonString(TokenizerJson))

/** Parses the text of a tokenizer.json; `source` names the file in errors. */
export const parse = Effect.fn("TokenizerHf.parse")(function*(
  text: string,
  source: string,
  options: { readonly maxLength?: number } = {}
) {
  const json = yield* decodeTokenizerJson(text).pipe(
    Effect.mapError((e) => new TokenizerError({ source, message: e.message }))
  )
  // the decoded text is JSON (the schema checked it): the library gets every key of the file
  const raw = JSON.parse(text) as Readonly<Record<string, unknown>>
  const built = fromJson(json, options, raw)
  if (Result.isFailure(built)) return yield* new TokenizerError({ source, message: built.failure })
  return built.success
})
