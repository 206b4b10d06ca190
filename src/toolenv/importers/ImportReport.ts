/**
 * What an importer hands back besides the tools: how many records loaded, how many were skipped, and
 * the first problems it met (file/record locator + reason), so nothing malformed vanishes silently.
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"
import type { JsonSchema } from "../../domain/Json.ts"
import type { ToolSpec } from "../../domain/Tool.ts"

/** One problem met while importing: where (file, record) and what was wrong. */
export interface ImportIssue {
  readonly source: string
  readonly message: string
}

/** The outcome of an import: counts and the first {@link maxIssueExamples} issues. */
export interface ImportReport {
  /** The file or folder that was imported. */
  readonly source: string
  /** Records turned into tool specs. */
  readonly loaded: number
  /** Records (or whole files) that could not be turned into a tool spec. */
  readonly skipped: number
  /** The first issues, in a deterministic order (file order, then record order). */
  readonly issues: ReadonlyArray<ImportIssue>
  /** All issues, including repairs of records that still loaded (a dropped parameter, a partial response schema). */
  readonly issueCount: number
}

/** Tool specs and the report of the import that produced them. */
export interface ImportResult {
  readonly tools: ReadonlyArray<ToolSpec>
  readonly report: ImportReport
}

/** The source as a whole is unreadable (missing folder or file, not a directory): nothing could be imported. */
export class ImportError extends Schema.TaggedError<ImportError>()("ImportError", {
  source: Schema.String,
  message: Schema.String
}) {}

/** How many issues a report keeps as examples. */
export const maxIssueExamples = 20

/**
 * Collects issues and counts for one source. Importers fill one per file or record batch and
 * {@link combine} them in a fixed order, so the examples kept do not depend on I/O timing.
 */
export interface Collector {
  readonly issue: (source: string, message: string) => void
  readonly load: (n?: number) => void
  readonly skip: (source: string, message: string) => void
  readonly report: (source: string) => ImportReport
}

/** A fresh {@link Collector}. */
export const collector = (limit: number = maxIssueExamples): Collector => {
  const issues: Array<ImportIssue> = []
  let issueCount = 0
  let loaded = 0
  let skipped = 0
  const issue = (source: string, message: string): void => {
    issueCount++
    if (issues.length < limit) issues.push({ source, message })
  }
  return {
    issue,
    load: (n = 1) => {
      loaded += n
    },
    skip: (source, message) => {
      skipped++
      issue(source, message)
    },
    report: (source) => ({ source, loaded, skipped, issues: [...issues], issueCount })
  }
}

/** The result with its report relabelled `source` (a loader converts under the file's base name, reports the full path). */
export const withSource = (result: ImportResult, source: string): ImportResult => ({ tools: result.tools, report: { ...result.report, source } })

/** Adds up reports (in the given order) under one source label. */
export const combine = (source: string, reports: ReadonlyArray<ImportReport>, limit: number = maxIssueExamples): ImportReport => {
  const issues: Array<ImportIssue> = []
  let loaded = 0
  let skipped = 0
  let issueCount = 0
  for (const r of reports) {
    loaded += r.loaded
    skipped += r.skipped
    issueCount += r.issueCount
    for (const i of r.issues) if (issues.length < limit) issues.push(i)
  }
  return { source, loaded, skipped, issues, issueCount }
}

/** A one-paragraph human summary of a report (counts, then the first few issues). */
export const summary = (report: ImportReport, examples = 5): string => {
  const head = `${report.source}: loaded ${report.loaded}, skipped ${report.skipped}, issues ${report.issueCount}`
  const shown = report.issues.slice(0, examples).map((i) => `\n  - ${i.source}: ${i.message}`)
  return head + shown.join("")
}

/**
 * The longest tool, tool-group or parameter description kept at import, in UTF-16 code units. Real descriptions are a
 * few hundred characters; a 5 MB one (seen in scraped RapidAPI files) would ride whole in every prompt, index and
 * rendering request. 65,536 keeps every description of ToolEnv2404 whole (its longest is 55,634; 33 exceed 4,000, and
 * cutting those at 4,000 lowered BM25F's NDCG@5 by up to 0.4 points), so the cap only bounds pathological inputs.
 */
export const maxDescriptionLength = 65_536

/**
 * `text` cut to {@link maxDescriptionLength} (ending in "…", never inside a surrogate pair); each cut is an issue
 * at `at`, so the import report counts it.
 */
export const capDescription = (text: string, at: string, issues: Collector, max: number = maxDescriptionLength): string => {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  issues.issue(at, `description truncated from ${text.length} to ${max} characters`)
  return `${text.slice(0, end)}…`
}

/** Flattens a multi-line decode message into one line. */
export const oneLine = (message: string): string => message.replace(/\s*\n\s*/g, " ").trim()

/**
 * The size caps of an imported tool spec beside {@link maxDescriptionLength}: a scraped tool file can hold a 4 MB name,
 * thousands of parameters or a default value the size of a book, and a spec rides whole in prompts, indexes and every
 * rendering request. Every ToolEnv2404 spec fits them untouched (its largest in each measure is noted), so they only bound
 * pathological inputs.
 */
export const specCaps = {
  /** Group, API and category names as shown (the callable name is already ≤ 64 characters); ToolEnv2404's longest: 901. */
  displayName: 4_096,
  /** Properties of one object schema (parameters, nested objects, the response); ToolEnv2404's most: 300. */
  properties: 1_024,
  /** A property's name; ToolEnv2404's longest: 1,143. */
  propertyName: 4_096,
  /** A default value as JSON (a longer one is dropped: a cut default would be a wrong value); ToolEnv2404's: 9,950. */
  defaultJson: 65_536,
  /** Values of one `enum`; ToolEnv2404's most: 155. */
  enumValues: 4_096,
  /** The parameters or the response schema as JSON, after the caps above; ToolEnv2404's largest: 158 KB. */
  schemaBytes: 1024 * 1024,
  /** The example response as JSON; a larger one is dropped. */
  exampleBytes: 256 * 1024,
  /** The whole spec as JSON; past it the tool is skipped. ToolEnv2404's largest: 159 KB. */
  specBytes: 2 * 1024 * 1024
} as const

const cutName = (text: string, max: number): string => {
  if (text.length <= max) return text
  let end = max - 1
  const last = text.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end--
  return `${text.slice(0, end)}…`
}

/** A JSON schema with the caps applied at every level; each cap is an issue at `at`. */
const capSchema = (schema: JsonSchema, at: string, issues: Collector): JsonSchema => {
  let out: { -readonly [K in keyof JsonSchema]: JsonSchema[K] } = { ...schema }
  if (out.default !== undefined && JSON.stringify(out.default).length > specCaps.defaultJson) {
    issues.issue(at, `default value of ${JSON.stringify(out.default).length} characters dropped (over ${specCaps.defaultJson})`)
    const { default: _, ...rest } = out
    out = rest
  }
  if (out.enum !== undefined && out.enum.length > specCaps.enumValues) {
    issues.issue(at, `enum of ${out.enum.length} values cut to ${specCaps.enumValues}`)
    out.enum = out.enum.slice(0, specCaps.enumValues)
  }
  if (out.items !== undefined) out.items = capSchema(out.items, `${at}[]`, issues)
  if (out.properties !== undefined) {
    const names = Object.keys(out.properties)
    const required = new Set(out.required ?? [])
    const tooLong = names.filter((n) => n.length > specCaps.propertyName)
    if (tooLong.length > 0) issues.issue(at, `${tooLong.length} propert${tooLong.length === 1 ? "y" : "ies"} with a name over ${specCaps.propertyName} characters dropped`)
    const usable = names.filter((n) => n.length <= specCaps.propertyName)
    // required properties first, so a cut never leaves a required parameter undescribed
    const kept = [...usable.filter((n) => required.has(n)), ...usable.filter((n) => !required.has(n))].slice(0, specCaps.properties)
    if (kept.length < usable.length) issues.issue(at, `${usable.length} properties cut to ${specCaps.properties}`)
    const keep = new Set(kept)
    const properties: Record<string, JsonSchema> = {}
    for (const n of usable) if (keep.has(n)) properties[n] = capSchema(out.properties[n] as JsonSchema, `${at}.${n}`, issues)
    out.properties = properties
    if (out.required !== undefined) out.required = out.required.filter((n) => keep.has(n))
  }
  return out
}

/**
 * A spec within {@link specCaps}: display names cut (with "…"), schemas capped level by level, an oversized response
 * schema or example dropped; undefined (skipped, one issue) when its parameters or the whole spec are still too large.
 * Each cap is an issue at `at`, so the import report counts it.
 */
export const capSpec = (spec: ToolSpec, at: string, issues: Collector): ToolSpec | undefined => {
  let out: { -readonly [K in keyof ToolSpec]: ToolSpec[K] } = { ...spec }
  if (out.id.length > specCaps.displayName) {
    // ids are built from the names: cut, with a digest of the whole id so two long ids never meet
    issues.issue(at, `id of ${out.id.length} characters cut to ${specCaps.displayName}`)
    out.id = `${cutName(out.id, specCaps.displayName - 40)}#${createHash("sha256").update(out.id).digest("hex").slice(0, 32)}` as ToolSpec["id"]
  }
  for (const field of ["group", "apiName", "category"] as const) {
    if (out[field].length > specCaps.displayName) {
      issues.issue(at, `${field} of ${out[field].length} characters cut to ${specCaps.displayName}`)
      out[field] = cutName(out[field], specCaps.displayName)
    }
  }
  out.parameters = capSchema(out.parameters, `${at}.parameters`, issues) as ToolSpec["parameters"]
  const parametersBytes = JSON.stringify(out.parameters).length
  if (parametersBytes > specCaps.schemaBytes) {
    issues.skip(at, `parameters schema of ${parametersBytes} bytes after the caps (over ${specCaps.schemaBytes}): tool skipped`)
    return undefined
  }
  if (out.response !== undefined) {
    const response = capSchema(out.response, `${at}.response`, issues)
    const bytes = JSON.stringify(response).length
    if (bytes > specCaps.schemaBytes) {
      issues.issue(at, `response schema of ${bytes} bytes dropped (over ${specCaps.schemaBytes})`)
      const { response: _, ...rest } = out
      out = rest
    } else out.response = response
  }
  if (out.example !== undefined && JSON.stringify(out.example).length > specCaps.exampleBytes) {
    issues.issue(at, `example response of ${JSON.stringify(out.example).length} bytes dropped (over ${specCaps.exampleBytes})`)
    const { example: _, ...rest } = out
    out = rest
  }
  const bytes = JSON.stringify(out).length
  if (bytes > specCaps.specBytes) {
    issues.skip(at, `spec of ${bytes} bytes after the caps (over ${specCaps.specBytes}): tool skipped`)
    return undefined
  }
  return out
}
