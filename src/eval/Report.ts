/**
 * The run report: `report.md` and a self-contained `report.html` (inline CSS and SVG, no script, no external resource)
 * of the learning curves (the training split's RL rollouts, and the held-out Pass@1 by training stage), the ablation
 * (Table 2) and paradigm (Table 1) tables one level at a time (the average first), the training stages and one held-out
 * trajectory's timeline with its verdict and rewards. Pure rendering, string in and string out: the same input gives
 * byte-identical output.
 */
import { css, duration, escapeHtml, escapeMd, fence, fixed, htmlTable, levelTitle, mdTable, meanSd, metricLabel, tableMetrics, tableShape, type MetricTable, type PairedTable, type ReportInput, type Stage } from "./ReportFormat.ts"
import { chartsOf, curveMetrics, curveSummaryRows, heldOutSeries, lineChart } from "./ReportCharts.ts"
import { mdTimeline, phaseHead, phaseRows, roundHead, roundRows, timelineSvg, verdictLine } from "./ReportTimeline.ts"
export { css, duration, escapeHtml, htmlTable, meanSd, num, pct, tableMetrics, type Curve, type CurvePoint, type MeanSd, type MetricTable, type PairedTable, type ReportInput, type Stage, type TableMetric, type TimelineInput } from "./ReportFormat.ts"
export { curveMetrics, curveSeries, heldOutSeries, lineChart, type CurveMetric, type LineChartOptions, type Series, type SeriesPoint } from "./ReportCharts.ts"
export { solved, timelineSvg, trajectoryDetailsHtml, verdictLine, type TimelineOptions } from "./ReportTimeline.ts"

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
