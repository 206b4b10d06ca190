/**
 * The run report's vocabulary: its input types (metric tables, curves, stages, the timeline's trajectory) and the
 * formatting every part shares — numbers, escaping, markdown and HTML tables, the style sheet. Pure.
 */
import type { Trajectory } from "../domain/Trajectory.ts"

// ---------------------------------------------------------------------------------------------------------------
// Input

/** A statistic over seeds: its mean and standard deviation. */
export interface MeanSd {
  readonly mean: number
  readonly sd: number
}

/** The metrics of a Table-1 / Table-2 cell, in column order. */
export const tableMetrics = ["pass1", "pass1Sampled", "path", "pathEquivalent", "rounds", "calls", "searches", "decisions"] as const
/** One metric of a table cell. */
export type TableMetric = typeof tableMetrics[number]

/**
 * A table: row (a variant such as "+SFT", or a paradigm) → level ("I1", "I2", "I3", "Avg") → metric → mean ± sd over
 * seeds. Rates (`pass1`, `path`) are fractions in 0–1 and print as percentages; the others are per-task means. Rows
 * keep the input's key order; levels are the union of the rows' keys in first-seen order, "Avg" last; a missing
 * metric or a non-finite number prints as "–".
 */
export type MetricTable = Readonly<Record<string, Readonly<Record<string, Partial<Readonly<Record<TableMetric, MeanSd>>>>>>>

/** One RL iteration of one training run. `rAns` is the mean R_ans of the iteration's rollouts, `pass1` in 0–1. */
export interface CurvePoint {
  readonly iteration: number
  readonly rAns: number
  readonly pass1: number
  readonly rounds: number
  readonly calls: number
  readonly kl: number
  readonly clipFraction: number
  readonly entropy: number
}

/** The learning curve of one RL run (one estimator, one seed). */
export interface Curve {
  /** The advantage estimator's registry name (`grpo`, `paraagent`); runs of one estimator are averaged over seeds. */
  readonly estimator: string
  readonly seed: number
  readonly points: ReadonlyArray<CurvePoint>
}

/** One stage of the pipeline, e.g. "judge filter" with detail "kept 412 / dropped 88 demonstrations". */
export interface Stage {
  readonly name: string
  readonly durationMs: number
  readonly detail: string
}

/** The held-out trajectory the timeline shows, with its task's request. */
export interface TimelineInput {
  readonly taskId: string
  readonly request: string
  readonly trajectory: Trajectory
}

/** Everything a report shows. Text fields are plain text: the renderers escape them. */
export interface ReportInput {
  readonly title: string
  /** The command line that produced the run. */
  readonly command: string
  readonly seeds: ReadonlyArray<number>
  readonly curves: ReadonlyArray<Curve>
  /**
   * Table 2: Backbone / +SFT / +SFT & RL (GRPO) / +SFT & RL (ours). The held-out chart reads its rows as training
   * stages: the first two are the path every run shares, each later row the end of one RL run.
   */
  readonly ablation: MetricTable
  /** Table 1 of the trained policy: ParaAct / ReAct / ExploreThenExecute / DFSDT. */
  readonly paradigms: MetricTable
  readonly stages: ReadonlyArray<Stage>
  readonly timeline?: TimelineInput
  readonly notes?: ReadonlyArray<string>
  /**
   * The name each estimator's model carries in the tables (`grpo` → "+SFT & RL (GRPO)"): curves, legends and stage
   * rows use it, so one model has one name everywhere. An estimator not named here shows as itself.
   */
  readonly modelNames?: Readonly<Record<string, string>>
  /** The file name of the run's trajectory browser beside the report (`trajectories.html`), linked when given. */
  readonly browser?: string
  /** Paired differences between rows (e.g. "GRPO-SFT"), in points, per column ("All", levels): mean and interval. */
  readonly paired?: PairedTable
}

/** A table of paired differences: what it measures, its columns, and one row per pair. */
export interface PairedTable {
  readonly caption: string
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<{ readonly pair: string; readonly cells: Readonly<Record<string, { readonly mean: number; readonly lo: number; readonly hi: number }>> }>
}

// ---------------------------------------------------------------------------------------------------------------
// Formatting

/** Escapes text for HTML and SVG (element content and attribute values). */
export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Escapes text for a markdown table cell or paragraph: no raw HTML, no cell break, one line. */
export const escapeMd = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/** `x.toFixed(d)` without "-0.0" and with "–" for a non-finite number. */
export const fixed = (x: number, d: number): string => {
  if (!Number.isFinite(x)) return "–"
  const s = x.toFixed(d)
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s
}

/** A rate as a percentage with one decimal (the project's tables: `61.3`). */
export const pct = (x: number): string => fixed(100 * x, 1)
/** A count with two decimals (`3.25`). */
export const num = (x: number): string => fixed(x, 2)

const rateMetrics: ReadonlySet<string> = new Set(["pass1", "pass1Sampled", "path", "pathEquivalent"])

/** A cell: `mean ± sd`, rates in percent. */
export const meanSd = (metric: TableMetric, v: MeanSd | undefined): string => {
  if (v === undefined || !Number.isFinite(v.mean)) return "–"
  const f = rateMetrics.has(metric) ? pct : num
  return Number.isFinite(v.sd) ? `${f(v.mean)} ± ${f(v.sd)}` : f(v.mean)
}

/** A duration: `850 ms`, `12.3 s`, `3 min 12 s`, `1 h 05 min`. */
export const duration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "–"
  if (ms < 1_000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${fixed(ms / 1_000, 1)} s`
  const s = Math.round(ms / 1_000)
  if (s < 3_600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
  const m = Math.round(s / 60)
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`
}

/** An SVG coordinate: one decimal, no "-0". */
export const c = (x: number): string => String(Math.round(x * 10) / 10 + 0)

/** A raw number for a data attribute or tooltip: at most three decimals. */
export const raw = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 1_000) / 1_000 + 0) : "NaN")

export const metricLabel: Readonly<Record<TableMetric, string>> = {
  pass1: "Pass@1 %",
  pass1Sampled: "Pass@1 sampled %",
  path: "Path %",
  pathEquivalent: "Path≈ %",
  rounds: "Rounds",
  calls: "Calls",
  searches: "Searches",
  decisions: "Decisions"
}

/** The rows and the levels of a table, in display order ("Avg" first: the number a reader looks for). */
export const tableShape = (table: MetricTable): { readonly rows: ReadonlyArray<string>; readonly levels: ReadonlyArray<string> } => {
  const rows = Object.keys(table)
  const levels: Array<string> = []
  for (const row of rows) for (const level of Object.keys(table[row] ?? {})) if (!levels.includes(level)) levels.push(level)
  return { rows, levels: [...levels.filter((l) => l === "Avg"), ...levels.filter((l) => l !== "Avg")] }
}

/** A level's heading: "Avg" is the mean over the levels. */
export const levelTitle = (level: string): string => (level === "Avg" ? "Average over levels" : `Level ${level}`)

// ---------------------------------------------------------------------------------------------------------------
// Markdown

export const mdTable = (head: ReadonlyArray<string>, align: ReadonlyArray<"l" | "r">, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `|${align.map((a) => (a === "r" ? "---:" : "---")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ].join("\n")

/** A fenced code block whose fence no backtick run inside can close. */
export const fence = (text: string): string => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const f = "`".repeat(Math.max(3, longest + 1))
  return `${f}\n${text}\n${f}`
}

// ---------------------------------------------------------------------------------------------------------------
// HTML

/** The report's style sheet (the trajectory browser uses it too). */
export const css = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#222;margin:24px auto;max-width:1220px;padding:0 16px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:10px 0 4px}pre{background:#f5f5f5;padding:8px;overflow-x:auto;white-space:pre-wrap}
nav a{margin-right:12px}table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ddd;padding:3px 7px}th{background:#f3f3f3;white-space:nowrap}td.n{text-align:right;white-space:nowrap}
th[scope=row]{position:sticky;left:0;background:#f8f8f8;text-align:left;z-index:1}
.scroll{overflow-x:auto;max-width:100%}.charts{display:flex;flex-wrap:wrap;gap:12px}.levels{display:flex;flex-wrap:wrap;gap:0 24px}
blockquote{margin:8px 0;padding:4px 12px;border-left:3px solid #bbb;color:#444}.note{color:#666;font-size:12px}
.good{color:#1b5e20;font-weight:600}.bad{color:#b71c1c;font-weight:600}.k{font-weight:600}code{font-size:12px;word-break:break-all}
.round{border-left:3px solid #ddd;padding-left:8px;margin:8px 0}.turn{margin:4px 0}ul.actions{margin:4px 0;padding-left:18px}
svg text{font:11px system-ui,sans-serif;fill:#333}svg .chart-title{font-size:13px;font-weight:600}
svg .axis-label{font-size:11px;fill:#555}svg .plot{fill:#fff;stroke:none}svg .grid{stroke:#eee}
svg .axis,svg .tick-mark{stroke:#888}svg .line{fill:none;stroke-width:2}svg .band{opacity:.18;stroke:none}
svg .row.even{fill:#fafafa}svg .row.odd{fill:#f0f0f0}svg .row-label{font-weight:600}
svg .bar{stroke-width:1}svg .bar.policy{fill:#bdbdbd;stroke:#8d8d8d}
svg .bar.call.ok{fill:#2e7d32;stroke:#1b5e20}svg .bar.call.error{fill:#c62828;stroke:#8e0000}
svg .bar.search.ok{fill:#a5d6a7;stroke:#2e7d32}svg .bar.search.error{fill:#ef9a9a;stroke:#c62828}
svg .bar-label{font-size:10px}
`.trim()

/** An HTML table; cells are HTML (escape text before). */
export const htmlTable = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, numeric: ReadonlyArray<boolean>): string =>
  `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${
    rows.map((r) => `<tr>${r.map((cell, i) => `<td${numeric[i] === true ? ' class="n"' : ""}>${cell}</td>`).join("")}</tr>`).join("")
  }</tbody></table>`
