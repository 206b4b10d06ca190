/**
 * The run report: `report.md` and a self-contained `report.html` (inline CSS and SVG, no script, no external resource)
 * of the learning curves (the training split's RL rollouts, and the held-out Pass@1 by training stage), the ablation
 * (Table 2) and paradigm (Table 1) tables one level at a time (the average first), the training stages and one held-out
 * trajectory's timeline with its verdict and rewards. Pure rendering, string in and string out: the same input gives
 * byte-identical output.
 */
import type { Observation } from "../domain/Call.ts"
import type { SearchResult, Step, Trajectory } from "../domain/Trajectory.ts"
import * as Evaluation from "../math/Evaluation.ts"
import { mean, std } from "../math/Stats.ts"

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
const escapeMd = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/** `x.toFixed(d)` without "-0.0" and with "–" for a non-finite number. */
const fixed = (x: number, d: number): string => {
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
const c = (x: number): string => String(Math.round(x * 10) / 10 + 0)

/** A raw number for a data attribute or tooltip: at most three decimals. */
const raw = (x: number): string => (Number.isFinite(x) ? String(Math.round(x * 1_000) / 1_000 + 0) : "NaN")

const metricLabel: Readonly<Record<TableMetric, string>> = {
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
const tableShape = (table: MetricTable): { readonly rows: ReadonlyArray<string>; readonly levels: ReadonlyArray<string> } => {
  const rows = Object.keys(table)
  const levels: Array<string> = []
  for (const row of rows) for (const level of Object.keys(table[row] ?? {})) if (!levels.includes(level)) levels.push(level)
  return { rows, levels: [...levels.filter((l) => l === "Avg"), ...levels.filter((l) => l !== "Avg")] }
}

/** A level's heading: "Avg" is the mean over the levels. */
const levelTitle = (level: string): string => (level === "Avg" ? "Average over levels" : `Level ${level}`)

// ---------------------------------------------------------------------------------------------------------------
// Learning curves

/** One point of a chart series: `sd` draws the band, `n` (seeds) goes into the tooltip. */
export interface SeriesPoint {
  readonly x: number
  readonly y: number
  readonly sd?: number
  readonly n?: number
}

/** One line of a chart. */
export interface Series {
  readonly label: string
  readonly points: ReadonlyArray<SeriesPoint>
}

/** How a chart is drawn. `percent` plots 0–1 values as percentages; `digits` are the tooltips' decimals
 * (default: 1 for percentages, 2 otherwise). */
export interface LineChartOptions {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly percent?: boolean
  readonly digits?: number
  readonly width?: number
  readonly height?: number
  /** A categorical x axis: point `x = i` is labelled `xTickLabels[i]` (e.g. training stages) instead of a number. */
  readonly xTickLabels?: ReadonlyArray<string>
}

/** The curve metrics the report plots, with their chart titles; `main` ones are the learning curves, the rest diagnostics. */
export const curveMetrics = [
  { key: "rAns", title: "Mean R_ans", yLabel: "R_ans", percent: false, digits: 2, main: true },
  { key: "pass1", title: "Pass@1", yLabel: "Pass@1 %", percent: true, digits: 1, main: true },
  { key: "rounds", title: "Rounds per task", yLabel: "rounds", percent: false, digits: 2, main: true },
  { key: "calls", title: "Calls per task", yLabel: "calls", percent: false, digits: 2, main: false },
  { key: "kl", title: "KL to the reference policy", yLabel: "KL", percent: false, digits: 4, main: false },
  { key: "clipFraction", title: "Clip fraction", yLabel: "clipped %", percent: true, digits: 1, main: false },
  { key: "entropy", title: "Policy entropy", yLabel: "entropy (nats)", percent: false, digits: 3, main: false }
] as const

/** A metric of a learning curve. */
export type CurveMetric = typeof curveMetrics[number]["key"]

/** The estimators of the curves, in first-seen order. */
const estimatorsOf = (curves: ReadonlyArray<Curve>): ReadonlyArray<string> => [...new Set(curves.map((c) => c.estimator))]

/**
 * One series per estimator: at each iteration, the mean and the population sd (as {@link std}) over the seeds that
 * have a finite value there.
 */
export const curveSeries = (curves: ReadonlyArray<Curve>, metric: CurveMetric, names: Readonly<Record<string, string>> = {}): ReadonlyArray<Series> =>
  estimatorsOf(curves).map((estimator) => {
    const runs = curves.filter((c) => c.estimator === estimator)
    const iterations = [...new Set(runs.flatMap((r) => r.points.map((p) => p.iteration)))].sort((a, b) => a - b)
    return {
      label: names[estimator] ?? estimator,
      points: iterations.map((x) => {
        const ys = runs.flatMap((r) => r.points.filter((p) => p.iteration === x).map((p) => p[metric])).filter(Number.isFinite)
        return { x, y: mean(ys), sd: std(ys), n: ys.length }
      })
    }
  })

const palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]
/** The colour of the i-th series. */
const colour = (i: number): string => palette[i % palette.length] as string

/** A "nice" tick step (1, 2, 2.5 or 5 × 10^k) giving about `target` intervals over `span`. */
const niceStep = (span: number, target: number): number => {
  const rough = span / target
  const magnitude = 10 ** Math.floor(Math.log10(rough))
  const f = rough / magnitude
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * magnitude
}

/** The decimals needed to print multiples of `step` exactly. */
const decimalsOf = (step: number): number => {
  for (let d = 0; d < 8; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d
  return 8
}

interface Axis {
  readonly lo: number
  readonly hi: number
  readonly ticks: ReadonlyArray<number>
  readonly decimals: number
}

/** An axis over [min, max]: `extend` widens it to whole ticks; `integer` keeps ticks on integers. */
const axis = (min: number, max: number, target: number, extend: boolean, integer = false): Axis => {
  let lo = min
  let hi = max
  if (!(Number.isFinite(lo) && Number.isFinite(hi))) [lo, hi] = [0, 1]
  if (hi - lo < 1e-12) {
    const pad = Math.abs(hi) > 1e-12 ? Math.abs(hi) * 0.1 : 1
    lo -= pad
    hi += pad
  }
  let step = niceStep(hi - lo, target)
  if (integer) step = Math.max(1, Math.ceil(step))
  if (extend) {
    lo = Math.floor(lo / step + 1e-9) * step
    hi = Math.ceil(hi / step - 1e-9) * step
  }
  const decimals = decimalsOf(step)
  const ticks: Array<number> = []
  for (let t = Math.ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toFixed(decimals)))
  return { lo, hi, ticks, decimals }
}

/** Splits points into runs of finite values (a non-finite value breaks the line). */
const finiteRuns = (points: ReadonlyArray<SeriesPoint>): ReadonlyArray<ReadonlyArray<SeriesPoint>> => {
  const runs: Array<Array<SeriesPoint>> = []
  let run: Array<SeriesPoint> = []
  for (const p of points) {
    if (Number.isFinite(p.x) && Number.isFinite(p.y)) run.push(p)
    else if (run.length > 0) {
      runs.push(run)
      run = []
    }
  }
  if (run.length > 0) runs.push(run)
  return runs
}

/**
 * A line chart as an inline SVG: one line per series (mean), a band of ± sd where given, a dot per point with a
 * `<title>` tooltip, axes with ticks and labels, and a legend. Lines are `path.line[data-series]` with one `M`/`L`
 * command per point; bands are `path.band`.
 */
export const lineChart = (series: ReadonlyArray<Series>, options: LineChartOptions): string => {
  const width = options.width ?? 460
  const height = options.height ?? 290
  const scale = options.percent === true ? 100 : 1
  const f = (x: number) => fixed(x * scale, options.digits ?? (options.percent === true ? 1 : 2))
  const left = 58
  const right = 14
  const top = 48
  const bottom = 46
  const plotW = width - left - right
  const plotH = height - top - bottom
  const pts = series.flatMap((s) => s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)))
  const spread = (p: SeriesPoint) => (p.sd !== undefined && Number.isFinite(p.sd) ? p.sd : 0)
  const categories = options.xTickLabels
  const xs: Axis = categories === undefined
    ? axis(Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x)), 6, false, true)
    : { lo: -0.4, hi: Math.max(1, categories.length) - 0.6, ticks: categories.map((_, i) => i), decimals: 0 }
  const xText = (x: number): string => categories?.[x] ?? raw(x)
  const ys = axis(
    Math.min(...pts.map((p) => (p.y - spread(p)) * scale)),
    Math.max(...pts.map((p) => (p.y + spread(p)) * scale)),
    5,
    true
  )
  const X = (x: number) => left + ((x - xs.lo) / (xs.hi - xs.lo)) * plotW
  const Y = (y: number) => top + plotH - ((y * scale - ys.lo) / (ys.hi - ys.lo)) * plotH
  const out: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(options.title)}">`,
    `<text class="chart-title" x="${c(left)}" y="16">${escapeHtml(options.title)}</text>`,
    `<rect class="plot" x="${c(left)}" y="${c(top)}" width="${c(plotW)}" height="${c(plotH)}"/>`
  ]
  const grid: Array<string> = []
  for (const t of ys.ticks) {
    const y = top + plotH - ((t - ys.lo) / (ys.hi - ys.lo)) * plotH
    grid.push(`<line class="grid" x1="${c(left)}" x2="${c(left + plotW)}" y1="${c(y)}" y2="${c(y)}"/>`)
    grid.push(`<text class="tick" x="${c(left - 6)}" y="${c(y + 4)}" text-anchor="end">${t.toFixed(ys.decimals)}</text>`)
  }
  for (const t of xs.ticks) {
    const x = X(t)
    grid.push(`<line class="tick-mark" x1="${c(x)}" x2="${c(x)}" y1="${c(top + plotH)}" y2="${c(top + plotH + 5)}"/>`)
    grid.push(`<text class="tick" x="${c(x)}" y="${c(top + plotH + 18)}" text-anchor="middle">${categories === undefined ? t.toFixed(xs.decimals) : escapeHtml(xText(t))}</text>`)
  }
  out.push(`<g class="axes">${grid.join("")}`)
  out.push(`<line class="axis" x1="${c(left)}" x2="${c(left + plotW)}" y1="${c(top + plotH)}" y2="${c(top + plotH)}"/>`)
  out.push(`<line class="axis" x1="${c(left)}" x2="${c(left)}" y1="${c(top)}" y2="${c(top + plotH)}"/>`)
  out.push(`<text class="axis-label" x="${c(left + plotW / 2)}" y="${c(height - 8)}" text-anchor="middle">${escapeHtml(options.xLabel)}</text>`)
  out.push(
    `<text class="axis-label" transform="translate(14 ${c(top + plotH / 2)}) rotate(-90)" text-anchor="middle">${escapeHtml(options.yLabel)}</text></g>`
  )
  if (pts.length === 0) {
    out.push(`<text class="empty" x="${c(left + plotW / 2)}" y="${c(top + plotH / 2)}" text-anchor="middle">no data</text>`)
  }
  series.forEach((s, i) => {
    const col = colour(i)
    const label = escapeHtml(s.label)
    const parts: Array<string> = [`<g class="series" data-series="${label}">`]
    for (const run of finiteRuns(s.points)) {
      const banded = run.filter((p) => p.sd !== undefined && Number.isFinite(p.sd))
      if (banded.length > 1) {
        const upper = banded.map((p, j) => `${j === 0 ? "M" : "L"}${c(X(p.x))},${c(Y(p.y + spread(p)))}`)
        const lower = [...banded].reverse().map((p) => `L${c(X(p.x))},${c(Y(p.y - spread(p)))}`)
        parts.push(`<path class="band" d="${[...upper, ...lower].join(" ")} Z" fill="${col}"/>`)
      }
      const d = run.map((p, j) => `${j === 0 ? "M" : "L"}${c(X(p.x))},${c(Y(p.y))}`).join(" ")
      parts.push(`<path class="line" data-series="${label}" d="${d}" stroke="${col}"/>`)
      for (const p of run) {
        const value = `${f(p.y)}${options.percent === true ? " %" : ""}`
        const sd = p.sd !== undefined && Number.isFinite(p.sd) ? ` ± ${f(p.sd)}` : ""
        const n = p.n !== undefined ? ` (${p.n} seed${p.n === 1 ? "" : "s"})` : ""
        parts.push(
          `<circle class="dot" cx="${c(X(p.x))}" cy="${c(Y(p.y))}" r="2.5" fill="${col}"><title>${label} · ${escapeHtml(options.xLabel)} ${escapeHtml(xText(p.x))}: ${value}${sd}${n}</title></circle>`
        )
      }
    }
    parts.push("</g>")
    out.push(parts.join(""))
  })
  let lx = left
  const legend: Array<string> = ['<g class="legend">']
  series.forEach((s, i) => {
    legend.push(`<rect x="${c(lx)}" y="26" width="14" height="4" fill="${colour(i)}"/>`)
    legend.push(`<text class="legend-label" x="${c(lx + 18)}" y="32">${escapeHtml(s.label)}</text>`)
    lx += 30 + 6.5 * s.label.length
  })
  legend.push("</g>")
  out.push(legend.join(""), "</svg>")
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// Timeline

/** How the timeline is drawn. */
export interface TimelineOptions {
  readonly width?: number
}

/** One bar of the timeline. */
interface Bar {
  readonly kind: "policy" | "search" | "call"
  readonly outcome: "ok" | "error" | "policy"
  readonly startMs: number
  readonly endMs: number
  readonly label: string
  readonly tooltip: string
}

const ms = (x: number): string => `${raw(x)} ms`
const hits = (n: number): string => `${n} hit${n === 1 ? "" : "s"}`

const searchBar = (s: SearchResult): Bar => ({
  kind: "search",
  outcome: s.error === undefined ? "ok" : "error",
  startMs: s.startMs,
  endMs: s.endMs,
  label: `search ${s.slot}`,
  tooltip: `search ${s.slot}: "${s.query}" · ${s.error === undefined ? `${hits(s.hits.length)}${s.hits.length > 0 ? ` (top: ${s.hits.slice(0, 3).map((h) => h.tool).join(", ")})` : ""}` : `error: ${s.error}`} · ${ms(s.startMs)}–${ms(s.endMs)}`
})

const callBar = (o: Observation): Bar => ({
  kind: "call",
  outcome: o.outcome._tag,
  startMs: o.startMs,
  endMs: o.endMs,
  label: o.tool,
  tooltip: `${o.callId} · ${o.tool} · ${o.outcome._tag === "ok" ? "ok" : `${o.outcome.error.kind} (${o.outcome.error.status}): ${o.outcome.error.message}`} · ${ms(o.startMs)}–${ms(o.endMs)} · ${o.attempts} attempt${o.attempts === 1 ? "" : "s"}${o.refs.length > 0 ? ` · uses ${o.refs.join(", ")}` : ""}`
})

const policyBar = (step: Step): Bar => {
  const what = step.turn?.answer !== undefined ? "policy → answer" : step.protocolError !== undefined ? "policy (malformed turn)" : "policy"
  return {
    kind: "policy",
    outcome: "policy",
    startMs: step.startMs,
    endMs: step.startMs + step.policyMs,
    label: what,
    tooltip: `round ${step.index + 1} ${what} · ${ms(step.policyMs)} · ${step.usage.promptTokens} prompt / ${step.usage.completionTokens} completion tokens`
  }
}

/** The bars of one round: the policy's turn, then its searches and calls in turn order. */
const barsOf = (step: Step): ReadonlyArray<Bar> => [policyBar(step), ...step.searches.map(searchBar), ...step.observations.map(callBar)]

const laneH = 14
const laneGap = 4
const rowPad = 6

/**
 * The timeline of a trajectory as an inline SVG: one row per round; inside it one lane per action (the policy's turn,
 * each search, each call), each a bar from its `startMs` to its `endMs` on a shared ms axis, so the calls of one round
 * that ran in parallel show as overlapping bars. Bars are `rect.bar[data-round][data-kind][data-outcome]`, coloured
 * by outcome (ok / error; searches lighter than calls), labelled with the tool name and carrying a `<title>`.
 */
export const timelineSvg = (trajectory: Trajectory, options: TimelineOptions = {}): string => {
  const width = options.width ?? 960
  const left = 120
  const right = 24
  const top = 40
  const plotW = width - left - right
  const rounds = trajectory.steps.map((step) => ({ step, bars: barsOf(step) }))
  const ends = rounds.flatMap((r) => [r.step.endMs, ...r.bars.map((b) => b.endMs)]).filter(Number.isFinite)
  const span = Math.max(0, ...ends)
  // an in-process simulator without a latency model answers at once: keep a 1 ms axis and say why the bars stack
  const xs = axis(0, Math.max(1, span), 8, true)
  const X = (t: number) => left + ((Number.isFinite(t) ? t : 0) - xs.lo) / (xs.hi - xs.lo) * plotW
  const rowsH = rounds.reduce((h, r) => h + r.bars.length * (laneH + laneGap) - laneGap + 2 * rowPad, 0)
  const height = top + rowsH + 46
  const out: Array<string> = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeHtml(`timeline of ${trajectory.id}`)}">`
  ]
  const legend: ReadonlyArray<readonly [string, string]> = [
    ["bar policy", "policy turn"],
    ["bar search ok", "search ok"],
    ["bar search error", "search error"],
    ["bar call ok", "call ok"],
    ["bar call error", "call error"]
  ]
  out.push(
    `<g class="legend">${legend.map(([cls, text], i) => `<rect class="${cls}" x="${c(left + i * 120)}" y="10" width="14" height="10"/><text class="legend-label" x="${c(left + i * 120 + 18)}" y="19">${text}</text>`).join("")}</g>`
  )
  if (span < 1) {
    out.push(`<text class="note" x="${c(left + plotW)}" y="34" text-anchor="end">every action took no measurable time (&lt; 1 ms): bars are drawn at their minimum width</text>`)
  }
  // three passes so the grid sits above the row shading and below the bars
  const rowTops: Array<number> = []
  let y = top
  for (const { step, bars } of rounds) {
    const rowH = bars.length * (laneH + laneGap) - laneGap + 2 * rowPad
    const dropped = step.validation.dropped !== undefined && step.validation.dropped.length > 0 ? ` · dropped: ${step.validation.dropped.join(", ")}` : ""
    const rowTitle = `round ${step.index + 1} · ${step.phase} · controller ${step.controller} · ${ms(step.startMs)}–${ms(step.endMs)} · ${step.searches.length} searches, ${step.observations.length} calls${dropped}`
    out.push(`<rect class="row ${step.index % 2 === 0 ? "even" : "odd"}" x="0" y="${c(y)}" width="${width}" height="${c(rowH)}"><title>${escapeHtml(rowTitle)}</title></rect>`)
    rowTops.push(y)
    y += rowH
  }
  const axisY = top + rowsH
  out.push(`<g class="grid">${xs.ticks.map((t) => `<line class="grid" x1="${c(X(t))}" x2="${c(X(t))}" y1="${top}" y2="${c(axisY)}"/>`).join("")}</g>`)
  rounds.forEach(({ step, bars }, r) => {
    const rowY = rowTops[r] as number
    out.push(`<g class="round" data-round="${step.index}">`)
    out.push(`<text class="row-label" x="8" y="${c(rowY + rowPad + laneH - 3)}">R${step.index + 1} · ${escapeHtml(step.phase)}</text>`)
    bars.forEach((bar, lane) => {
      const by = rowY + rowPad + lane * (laneH + laneGap)
      const x0 = X(bar.startMs)
      const w = Math.max(2, X(bar.endMs) - x0)
      const label = bar.label.length > 40 ? `${bar.label.slice(0, 39)}…` : bar.label
      const labelRight = x0 + w + 4 + 6.2 * label.length <= width
      out.push(
        `<rect class="bar ${bar.kind}${bar.kind === "policy" ? "" : ` ${bar.outcome}`}" data-round="${step.index}" data-kind="${bar.kind}" data-outcome="${bar.outcome}" data-start="${raw(bar.startMs)}" data-end="${raw(bar.endMs)}" data-label="${escapeHtml(bar.label)}" x="${c(x0)}" y="${c(by)}" width="${c(w)}" height="${laneH}"><title>${escapeHtml(bar.tooltip)}</title></rect>`,
        `<text class="bar-label" x="${c(labelRight ? x0 + w + 4 : x0 - 4)}" y="${c(by + laneH - 3)}"${labelRight ? "" : ' text-anchor="end"'}>${escapeHtml(label)}</text>`
      )
    })
    out.push("</g>")
  })
  const ticks = xs.ticks.map((t) =>
    `<line class="tick-mark" x1="${c(X(t))}" x2="${c(X(t))}" y1="${c(axisY)}" y2="${c(axisY + 5)}"/><text class="tick" x="${c(X(t))}" y="${c(axisY + 18)}" text-anchor="middle">${t.toFixed(xs.decimals)}</text>`
  )
  out.push(
    `<g class="axes"><line class="axis" x1="${left}" x2="${c(left + plotW)}" y1="${c(axisY)}" y2="${c(axisY)}"/>${ticks.join("")}<text class="axis-label" x="${c(left + plotW / 2)}" y="${c(height - 6)}" text-anchor="middle">ms since the rollout started</text></g>`,
    "</svg>"
  )
  return out.join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// Markdown

const mdTable = (head: ReadonlyArray<string>, align: ReadonlyArray<"l" | "r">, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `|${align.map((a) => (a === "r" ? "---:" : "---")).join("|")}|`,
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ].join("\n")

/** A fenced code block whose fence no backtick run inside can close. */
const fence = (text: string): string => {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const f = "`".repeat(Math.max(3, longest + 1))
  return `${f}\n${text}\n${f}`
}

const mdMetricTable = (first: string, table: MetricTable): string => {
  const { rows, levels } = tableShape(table)
  if (rows.length === 0) return "_No data._"
  return mdTable(
    [first, "Level", ...tableMetrics.map((m) => metricLabel[m])],
    ["l", "l", ...tableMetrics.map(() => "r" as const)],
    levels.flatMap((level) => rows.map((row) => [escapeMd(row), escapeMd(level), ...tableMetrics.map((m) => meanSd(m, table[row]?.[level]?.[m]))]))
  )
}

/** A paired difference as `+2.3 [−0.4, +5.1]` (points; "–" when undefined). */
const pairedCell = (d: { readonly mean: number; readonly lo: number; readonly hi: number } | undefined): string => {
  const f = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? "+" : "−"}${fixed(Math.abs(x), 1)}` : "–")
  return d === undefined || !Number.isFinite(d.mean) ? "–" : `${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}]`
}

const pairedRows = (table: PairedTable): ReadonlyArray<ReadonlyArray<string>> =>
  table.rows.map((r) => [r.pair, ...table.columns.map((c) => pairedCell(r.cells[c]))])

/** The training-split curves' first and last point per estimator and metric (plain text: each renderer escapes it). */
const curveSummaryRows = (curves: ReadonlyArray<Curve>, names: Readonly<Record<string, string>>): ReadonlyArray<ReadonlyArray<string>> =>
  curveMetrics.flatMap((metric) =>
    curveSeries(curves, metric.key).map((s) => {
      const f = (p: SeriesPoint | undefined) => {
        if (p === undefined || !Number.isFinite(p.y)) return "–"
        const g = (x: number) => fixed(metric.percent ? 100 * x : x, metric.digits)
        return `${g(p.y)} ± ${g(p.sd ?? NaN)} (it ${raw(p.x)})`
      }
      const seeds = new Set(curves.filter((c) => c.estimator === s.label).map((c) => c.seed)).size
      return [metric.yLabel, names[s.label] ?? s.label, String(seeds), f(s.points[0]), f(s.points.at(-1))]
    })
  )

/** The held-out Pass@1 (Avg level) by training stage: one series per RL row, through the rows every run shares. */
export const heldOutSeries = (ablation: MetricTable): { readonly stages: ReadonlyArray<string>; readonly series: ReadonlyArray<Series> } => {
  const rows = Object.keys(ablation)
  const shared = rows.slice(0, 2)
  const ends = rows.slice(2)
  const point = (row: string, x: number): SeriesPoint => {
    const v = ablation[row]?.["Avg"]?.pass1
    return { x, y: v?.mean ?? NaN, ...(v !== undefined ? { sd: v.sd } : {}) }
  }
  return {
    stages: [...shared, ends.length > 0 ? "+SFT & RL" : ""].filter((s) => s !== ""),
    series: (ends.length > 0 ? ends : [rows.at(-1) ?? ""]).filter((r) => r !== "").map((end) => ({
      label: end,
      points: [...shared.map(point), ...(ends.length > 0 ? [point(end, shared.length)] : [])]
    }))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A trajectory's verdict and rewards (the report's timeline and the trajectory browser)

const grades = (v: Trajectory["verdict"]): string =>
  v === undefined ? "not judged" : `Quality ${v.quality} · Faithfulness ${v.faithfulness} · Utility ${v.utility} (judge ${v.judge})`

/** The verdict and R_ans of a trajectory in one line of plain text. */
export const verdictLine = (t: Trajectory): string =>
  `${grades(t.verdict)}${t.answerReward !== undefined ? ` → pattern ${t.answerReward.pattern}, R_ans ${fixed(t.answerReward.rAns, 2)}` : ""}${t.verdict?.rationale !== undefined ? ` — ${t.verdict.rationale}` : ""}`

/** Whether a trajectory counts as solved: Quality, Faithfulness and Utility YES (`Evaluation.solved`, Pass@1's rule). */
export const solved = (t: Trajectory): boolean => Evaluation.solved(t.verdict)

const stepRewardText = (step: Step): string =>
  step.reward === undefined ? "–" : `${fixed(step.reward.rStep, 2)} (base ${fixed(step.reward.rBase, 0)}, plan ${fixed(step.reward.rPlan, 0)})`

const advantageText = (step: Step): string =>
  step.advantage === undefined ? "–" : `${fixed(step.advantage.combined, 2)} (traj ${fixed(step.advantage.traj, 2)}, phase ${fixed(step.advantage.phase, 2)}, step ${fixed(step.advantage.step, 2)})`

const phaseOf = (t: Trajectory, index: number): number => t.phases.findIndex((p) => index >= p.start && index < p.end)

/** The rounds of a trajectory with their step rewards and advantages: one row each (plain text cells). */
const roundRows = (t: Trajectory): ReadonlyArray<ReadonlyArray<string>> =>
  t.steps.map((step) => {
    const action = step.turn?.answer !== undefined
      ? "answer"
      : step.protocolError !== undefined
      ? `malformed turn (${step.protocolError.tag})`
      : `${step.searches.length} searches, ${step.observations.length} calls (${step.observations.filter((o) => o.outcome._tag === "ok").length} ok)`
    const phase = phaseOf(t, step.index)
    return [String(step.index + 1), `${step.phase}${phase >= 0 ? ` ${phase + 1}` : ""}`, step.controller, action, stepRewardText(step), advantageText(step)]
  })

/** The phases of a trajectory with L1–L4 and R_phase (plain text cells). */
const phaseRows = (t: Trajectory): ReadonlyArray<ReadonlyArray<string>> =>
  t.phases.map((p, i) => [
    String(i + 1),
    p.kind,
    `${p.start + 1}–${p.end}`,
    ...(p.reward === undefined ? ["–", "–", "–", "–", "–"] : [p.reward.l1, p.reward.l2, p.reward.l3, p.reward.l4, p.reward.rPhase].map((x) => fixed(x, 2)))
  ])

const roundHead = ["Round", "Phase", "Controller", "Action", "R_step", "Advantage"]
const phaseHead = ["Phase", "Kind", "Rounds", "L1", "L2", "L3", "L4", "R_phase"]

/** A payload or argument object as text for a reader, cut at `max` characters. */
const shortJson = (value: unknown, max: number): string => {
  const text = JSON.stringify(value) ?? "undefined"
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
}

/**
 * A trajectory for a reader, as HTML: the verdict and R_ans, the phases with their rewards, and every round — the turn
 * as the policy wrote it, its searches with their hits, its calls with arguments and observations (payloads cut at
 * 1,200 characters), the step reward and advantage. Every text escaped.
 */
export const trajectoryDetailsHtml = (t: Trajectory): string => {
  const rounds = t.steps.map((step) => {
    const searches = step.searches.map((s) =>
      `<li><span class="k">search ${escapeHtml(s.slot)}</span> “${escapeHtml(s.query)}” → ${
        s.error !== undefined ? `<span class="bad">error: ${escapeHtml(s.error)}</span>` : s.hits.length === 0 ? "no hit" : s.hits.map((h) => `${escapeHtml(h.tool)} (${fixed(h.score, 2)})`).join(", ")
      }</li>`
    )
    const calls = step.observations.map((o) =>
      `<li><span class="k">call ${escapeHtml(o.callId)}</span> ${escapeHtml(o.tool)}(${escapeHtml(shortJson(o.arguments, 400))}) → ${
        o.outcome._tag === "ok"
          ? `<span class="good">ok</span> <code>${escapeHtml(shortJson(o.outcome.payload, 1_200))}</code>`
          : `<span class="bad">${escapeHtml(o.outcome.error.kind)} ${o.outcome.error.status}</span>: ${escapeHtml(o.outcome.error.message)}`
      }${o.attempts > 1 ? ` (${o.attempts} attempts)` : ""}</li>`
    )
    const dropped = step.validation.dropped !== undefined && step.validation.dropped.length > 0 ? `<p class="note">dropped by the paradigm: ${escapeHtml(step.validation.dropped.join(", "))}</p>` : ""
    return `<div class="round"><h4>Round ${step.index + 1} · ${escapeHtml(step.phase)} · controller ${escapeHtml(step.controller)} · R_step ${escapeHtml(stepRewardText(step))} · A ${escapeHtml(advantageText(step))}</h4><pre class="turn">${escapeHtml(step.raw)}</pre>${
      step.protocolError !== undefined ? `<p class="bad">protocol error ${escapeHtml(step.protocolError.tag)} at ${step.protocolError.offset}: ${escapeHtml(step.protocolError.message)}</p>` : ""
    }${dropped}${searches.length + calls.length > 0 ? `<ul class="actions">${[...searches, ...calls].join("")}</ul>` : ""}</div>`
  })
  return [
    `<p class="verdict"><strong>Verdict:</strong> ${escapeHtml(verdictLine(t))}</p>`,
    `<p><strong>Stop:</strong> ${escapeHtml(t.stop)}${t.error !== undefined ? ` (${escapeHtml(t.error)})` : ""} · ${t.steps.length} rounds · policy ${escapeHtml(t.policy)} · ${escapeHtml(t.paradigm)}</p>`,
    t.answer !== undefined ? `<p><strong>Answer:</strong> ${escapeHtml(t.answer)}</p>` : "",
    `<div class="scroll">${htmlTable(phaseHead, phaseRows(t).map((r) => r.map(escapeHtml)), [true, false, true, true, true, true, true, true])}</div>`,
    ...rounds
  ].join("")
}

const mdTimeline = (timeline: TimelineInput): string => {
  const t = timeline.trajectory
  const rows = t.steps.map((step) => {
    const searches = step.searches.map((s) => `${s.slot} (${s.error === undefined ? hits(s.hits.length) : "error"}, ${raw(s.startMs)}–${raw(s.endMs)} ms)`)
    const calls = step.observations.map((o) => `${o.tool} (${o.outcome._tag === "ok" ? "ok" : o.outcome.error.kind}, ${raw(o.startMs)}–${raw(o.endMs)} ms)`)
    return [
      String(step.index + 1),
      step.phase,
      `${raw(step.startMs)}–${raw(step.endMs)}`,
      raw(step.policyMs),
      escapeMd(searches.join("; ")) || "–",
      escapeMd(calls.join("; ")) || (step.turn?.answer !== undefined ? "answer" : "–")
    ]
  })
  return [
    `Task ${escapeMd(timeline.taskId)} (${escapeMd(t.paradigm)}, ${escapeMd(t.policy)}, stop: ${t.stop}, ${t.steps.length} rounds, ${duration(t.durationMs)}).`,
    "",
    `> ${escapeMd(timeline.request)}`,
    "",
    `Verdict: ${escapeMd(verdictLine(t))}.`,
    "",
    mdTable(["Round", "Phase", "Start–end ms", "Policy ms", "Searches", "Calls"], ["r", "l", "r", "r", "l", "l"], rows),
    "",
    "Rewards:",
    "",
    mdTable(roundHead, ["r", "l", "l", "l", "r", "r"], roundRows(t).map((r) => r.map(escapeMd))),
    "",
    mdTable(phaseHead, ["r", "l", "r", "r", "r", "r", "r", "r"], phaseRows(t).map((r) => r.map(escapeMd))),
    ...(t.answer !== undefined ? ["", `Answer: ${escapeMd(t.answer)}`] : [])
  ].join("\n")
}

const stageRows = (stages: ReadonlyArray<Stage>): ReadonlyArray<ReadonlyArray<string>> => {
  const total = stages.reduce((s, x) => s + (Number.isFinite(x.durationMs) ? x.durationMs : 0), 0)
  return [...stages.map((s) => [escapeMd(s.name), duration(s.durationMs), escapeMd(s.detail)]), ["**Total**", duration(total), ""]]
}

/** The report as markdown: the tables and the timeline as text (the plots are in the HTML report). */
export const renderMarkdown = (input: ReportInput): string => {
  const names = input.modelNames ?? {}
  const parts: Array<string> = [
    `# ${escapeMd(input.title)}`,
    "",
    fence(input.command),
    "",
    `Seeds: ${input.seeds.length === 0 ? "–" : input.seeds.join(", ")}.`,
    ...(input.browser !== undefined ? ["", `Every held-out trajectory, filterable by model, level, paradigm and outcome: [${escapeMd(input.browser)}](${input.browser}).`] : []),
    "",
    "## Training stages",
    "",
    mdTable(["Stage", "Duration", "Detail"], ["l", "r", "l"], stageRows(input.stages)),
    "",
    "## Learning curves (training split)",
    "",
    "The RL rollouts of each iteration, on training tasks: mean ± sd over seeds at the first and the last iteration; the curves are plotted in `report.html`. Held-out numbers are the tables below.",
    "",
    input.curves.length === 0
      ? "_No RL curves._"
      : mdTable(["Metric", "Model", "Seeds", "First", "Last"], ["l", "l", "r", "r", "r"], curveSummaryRows(input.curves, names).map((r) => r.map(escapeMd))),
    "",
    "## Table 2: ablation (held-out test tasks, mean ± sd over seeds)",
    "",
    mdMetricTable("Model", input.ablation),
    "",
    "## Table 1: paradigms of the trained policy (held-out test tasks, mean ± sd over seeds)",
    "",
    mdMetricTable("Paradigm", input.paradigms),
    ""
  ]
  if (input.paired !== undefined) {
    parts.push(
      "## Paired differences",
      "",
      escapeMd(input.paired.caption),
      "",
      mdTable(["Pair", ...input.paired.columns], ["l", ...input.paired.columns.map(() => "r" as const)], pairedRows(input.paired).map((r) => r.map(escapeMd))),
      ""
    )
  }
  if (input.timeline !== undefined) parts.push("## Timeline of a held-out trajectory", "", mdTimeline(input.timeline), "")
  if (input.notes !== undefined && input.notes.length > 0) parts.push("## Notes", "", ...input.notes.map((n) => `- ${escapeMd(n)}`), "")
  return parts.join("\n")
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

/** A metrics table one level at a time, the average first: each level's table is as wide as one level's columns. */
const htmlMetricTable = (first: string, table: MetricTable): string => {
  const { rows, levels } = tableShape(table)
  if (rows.length === 0) return "<p><em>No data.</em></p>"
  const head = `<tr><th>${escapeHtml(first)}</th>${tableMetrics.map((m) => `<th>${escapeHtml(metricLabel[m])}</th>`).join("")}</tr>`
  const one = (level: string) => {
    const body = rows.map((row) =>
      `<tr><th scope="row">${escapeHtml(row)}</th>${
        tableMetrics.map((m) =>
          `<td class="n" data-row="${escapeHtml(row)}" data-level="${escapeHtml(level)}" data-metric="${m}">${escapeHtml(meanSd(m, table[row]?.[level]?.[m]))}</td>`
        ).join("")
      }</tr>`
    )
    return `<div class="level" data-level="${escapeHtml(level)}"><h3>${escapeHtml(levelTitle(level))}</h3><div class="scroll"><table class="metrics" data-level="${escapeHtml(level)}"><thead>${head}</thead><tbody>${body.join("")}</tbody></table></div></div>`
  }
  const [avg, ...others] = levels
  return `${avg === undefined ? "" : one(avg)}<div class="levels">${others.map(one).join("")}</div>`
}

/** An HTML table; cells are HTML (escape text before). */
export const htmlTable = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, numeric: ReadonlyArray<boolean>): string =>
  `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>${
    rows.map((r) => `<tr>${r.map((cell, i) => `<td${numeric[i] === true ? ' class="n"' : ""}>${cell}</td>`).join("")}</tr>`).join("")
  }</tbody></table>`

const chartsOf = (curves: ReadonlyArray<Curve>, metrics: ReadonlyArray<typeof curveMetrics[number]>, names: Readonly<Record<string, string>>): string =>
  `<div class="charts">${
    metrics.map((m) =>
      lineChart(curveSeries(curves, m.key, names), { title: `${m.title} (training split)`, xLabel: "RL iteration", yLabel: m.yLabel, percent: m.percent, digits: m.digits })
    ).join("\n")
  }</div>`

/**
 * The report as one self-contained HTML page: inline CSS, inline SVG plots with `<title>` tooltips, no script and a
 * Content-Security-Policy that forbids loading anything (the trajectory browser, when given, is a link beside it).
 */
export const renderHtml = (input: ReportInput): string => {
  const names = input.modelNames ?? {}
  const sections: Array<string> = []
  const total = input.stages.reduce((s, x) => s + (Number.isFinite(x.durationMs) ? x.durationMs : 0), 0)
  sections.push(
    `<section id="stages"><h2>Training stages</h2>${
      htmlTable(
        ["Stage", "Duration", "Detail"],
        [...input.stages.map((s) => [escapeHtml(s.name), duration(s.durationMs), escapeHtml(s.detail)]), ["<strong>Total</strong>", duration(total), ""]],
        [false, true, false]
      )
    }</section>`
  )
  const main = curveMetrics.filter((m) => m.main)
  const diagnostics = curveMetrics.filter((m) => !m.main)
  const heldOut = heldOutSeries(input.ablation)
  const heldOutChart = heldOut.series.length === 0
    ? ""
    : `<h3>Held-out Pass@1 by training stage</h3><p>Test tasks no training task shares a provider with: the average level of Table 2, mean (line) ± sd (band) over seeds.</p><div class="charts">${
      lineChart(heldOut.series, { title: "Pass@1 on held-out test tasks", xLabel: "training stage", yLabel: "Pass@1 %", percent: true, digits: 1, xTickLabels: heldOut.stages, width: 560 })
    }</div>`
  sections.push(
    `<section id="curves"><h2>Learning curves</h2>${heldOutChart}<h3>During RL, on the training split</h3><p>The rollouts of each RL iteration, on training tasks (not the held-out test tasks): mean over seeds (line) ± sd (band); hover a point for its value.</p>${
      input.curves.length === 0
        ? "<p><em>No RL curves.</em></p>"
        : `${chartsOf(input.curves, main, names)}<h3>Diagnostics (training split)</h3>${chartsOf(input.curves, diagnostics, names)}<h3>First and last iteration (training split)</h3>${
          htmlTable(
            ["Metric", "Model", "Seeds", "First", "Last"],
            curveSummaryRows(input.curves, names).map((r) => r.map(escapeHtml)),
            [false, false, true, true, true]
          )
        }`
    }</section>`
  )
  sections.push(`<section id="ablation"><h2>Table 2: ablation</h2><p>Held-out test tasks, mean ± sd over seeds.</p>${htmlMetricTable("Model", input.ablation)}</section>`)
  sections.push(
    `<section id="paradigms"><h2>Table 1: paradigms of the trained policy</h2><p>Held-out test tasks, mean ± sd over seeds.</p>${htmlMetricTable("Paradigm", input.paradigms)}</section>`
  )
  if (input.paired !== undefined) {
    sections.push(
      `<section id="paired"><h2>Paired differences</h2><p>${escapeHtml(input.paired.caption)}</p>${
        htmlTable(["Pair", ...input.paired.columns], pairedRows(input.paired).map((r) => r.map(escapeHtml)), [false, ...input.paired.columns.map(() => true)])
      }</section>`
    )
  }
  if (input.timeline !== undefined) {
    const t = input.timeline.trajectory
    sections.push(
      `<section id="timeline"><h2>Timeline of a held-out trajectory</h2><p>Task <code>${escapeHtml(input.timeline.taskId)}</code> · ${escapeHtml(t.paradigm)} · ${escapeHtml(t.policy)} · stop: ${escapeHtml(t.stop)} · ${t.steps.length} rounds · ${duration(t.durationMs)}</p><blockquote class="request">${escapeHtml(input.timeline.request)}</blockquote><p class="verdict"><strong>Verdict:</strong> ${escapeHtml(verdictLine(t))}</p><div class="scroll">${timelineSvg(t)}</div>${
        t.answer !== undefined ? `<p><strong>Answer:</strong> ${escapeHtml(t.answer)}</p>` : ""
      }<h3>Rewards</h3><div class="scroll">${htmlTable(roundHead, roundRows(t).map((r) => r.map(escapeHtml)), [true, false, false, false, true, true])}</div><div class="scroll">${
        htmlTable(phaseHead, phaseRows(t).map((r) => r.map(escapeHtml)), [true, false, true, true, true, true, true, true])
      }</div></section>`
    )
  }
  if (input.notes !== undefined && input.notes.length > 0) {
    sections.push(`<section id="notes"><h2>Notes</h2><ul>${input.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul></section>`)
  }
  const nav = [
    ["#stages", "Stages"],
    ["#curves", "Curves"],
    ["#ablation", "Table 2"],
    ["#paradigms", "Table 1"],
    ...(input.paired !== undefined ? [["#paired", "Paired"]] : []),
    ...(input.timeline !== undefined ? [["#timeline", "Timeline"]] : []),
    ...(input.browser !== undefined ? [[input.browser, "Every held-out trajectory"]] : [])
  ]
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(input.title)}</title>`,
    `<style>${css}</style>`,
    "</head>",
    "<body>",
    `<header><h1>${escapeHtml(input.title)}</h1><pre class="command">${escapeHtml(input.command)}</pre><p>Seeds: ${input.seeds.length === 0 ? "–" : input.seeds.join(", ")}</p></header>`,
    `<nav>${nav.map(([href, label]) => `<a href="${escapeHtml(href ?? "")}">${escapeHtml(label ?? "")}</a>`).join("")}</nav>`,
    ...sections,
    "</body>",
    "</html>",
    ""
  ].join("\n")
}
