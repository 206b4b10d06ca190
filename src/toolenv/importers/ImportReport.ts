/**
 * What an importer hands back besides the tools: how many records loaded, how many were skipped, and
 * the first problems it met (file/record locator + reason), so nothing malformed vanishes silently.
 */
import { Schema } from "effect"
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
