/**
 * The run report's learning curves: series from the RL curves and the held-out table, and the inline-SVG line chart
 * with ± sd bands and tooltips (no script). Pure: the same input gives byte-identical SVG.
 */
import { mean, std } from "../math/Stats.ts"
import { c, escapeHtml, fixed, raw, type Curve, type MetricTable } from "./ReportFormat.ts"

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
export const axis = (min: number, max: number, target: number, extend: boolean, integer = false): Axis => {
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

/** The training-split curves' first and last point per estimator and metric (plain text: each renderer escapes it). */
export const curveSummaryRows = (curves: ReadonlyArray<Curve>, names: Readonly<Record<string, string>>): ReadonlyArray<ReadonlyArray<string>> =>
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

export const chartsOf = (curves: ReadonlyArray<Curve>, metrics: ReadonlyArray<typeof curveMetrics[number]>, names: Readonly<Record<string, string>>): string =>
  `<div class="charts">${
    metrics.map((m) =>
      lineChart(curveSeries(curves, m.key, names), { title: `${m.title} (training split)`, xLabel: "RL iteration", yLabel: m.yLabel, percent: m.percent, digits: m.digits })
    ).join("\n")
  }</div>`
