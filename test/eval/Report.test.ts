import { assert, describe, it } from "@effect/vitest"
import * as Report from "../../src/eval/Report.ts"
import { mean, std } from "../../src/math/Stats.ts"
import * as Fixture from "./ReportFixture.ts"

/** The attributes of every `<tag ...>` in `text` whose attributes include all of `where`. */
const elements = (text: string, tag: string, where: Readonly<Record<string, string>> = {}): Array<Record<string, string>> =>
  [...text.matchAll(new RegExp(`<${tag}\\s([^>]*)>`, "g"))]
    .map((m) => Object.fromEntries([...(m[1] as string).matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1] as string, a[2] as string])))
    .filter((attrs) => Object.entries(where).every(([k, v]) => attrs[k] === v))

/** The text of the table cell for (row, level, metric) of the HTML report. */
const htmlCell = (html: string, row: string, level: string, metric: string): string | undefined =>
  html.match(new RegExp(`<td class="n" data-row="${Report.escapeHtml(row).replace(/[+()&]/g, "\\$&")}" data-level="${level}" data-metric="${metric}">([^<]*)</td>`))?.[1]

const input = Fixture.input()
const html = Report.renderHtml(input)
const md = Report.renderMarkdown(input)

describe("Report", () => {
  it("formats rates as percentages with one decimal and counts with two", () => {
    assert.strictEqual(Report.pct(0.6134), "61.3")
    assert.strictEqual(Report.pct(-0.0001), "0.0")
    assert.strictEqual(Report.num(3.256), "3.26")
    assert.strictEqual(Report.meanSd("pass1", { mean: 0.35, sd: 0.021 }), "35.0 ± 2.1")
    assert.strictEqual(Report.meanSd("rounds", { mean: 7, sd: 0.31 }), "7.00 ± 0.31")
    assert.strictEqual(Report.meanSd("calls", undefined), "–")
    assert.strictEqual(Report.meanSd("calls", { mean: NaN, sd: 0 }), "–")
    assert.deepStrictEqual([850, 12_345, 192_000, 3_912_000].map(Report.duration), ["850 ms", "12.3 s", "3 min 12 s", "1 h 05 min"])
  })

  it("has every section, in markdown and in HTML", () => {
    for (const heading of ["# ParaAgent pipeline &lt;run 7&gt;", "## Training stages", "## Learning curves", "## Table 2: ablation", "## Table 1: paradigms", "## Timeline of a held-out trajectory", "## Notes"]) {
      assert.include(md, heading)
    }
    for (const id of ["stages", "curves", "ablation", "paradigms", "timeline", "notes"]) assert.include(html, `<section id="${id}">`)
    assert.include(md, "```\nnpm start -- pipeline --seeds 1,2,3 --out runs/pipeline-7\n```")
    assert.include(md, "Seeds: 1, 2, 3.")
    // the held-out chart, three learning curves and four diagnostics of the training split, one timeline
    assert.strictEqual(elements(html, "svg", { class: "chart" }).length, 8)
    assert.strictEqual(elements(html, "svg", { class: "timeline" }).length, 1)
  })

  it("puts the input's numbers in the ablation and paradigm cells", () => {
    // Backbone I2 is cell(0), "+SFT & RL (ours)" I1 is cell(2.7); see the fixture
    assert.strictEqual(htmlCell(html, "Backbone", "I2", "pass1"), "20.0 ± 2.1")
    assert.strictEqual(htmlCell(html, "Backbone", "I2", "rounds"), "8.00 ± 0.31")
    assert.strictEqual(htmlCell(html, "+SFT & RL (ours)", "I1", "pass1"), "60.5 ± 2.1")
    assert.strictEqual(htmlCell(html, "+SFT & RL (ours)", "I1", "decisions"), "6.30 ± 0.50")
    assert.strictEqual(htmlCell(html, "DFSDT", "Avg", "path"), "54.0 ± 3.4")
    for (const table of [input.ablation, input.paradigms]) {
      for (const [row, levels] of Object.entries(table)) {
        for (const [level, metrics] of Object.entries(levels)) {
          for (const metric of Report.tableMetrics) {
            const v = metrics[metric]
            const rate = metric === "pass1" || metric === "pass1Sampled" || metric === "path" || metric === "pathEquivalent"
            const expected = v === undefined ? "–" : rate ? `${(100 * v.mean).toFixed(1)} ± ${(100 * v.sd).toFixed(1)}` : `${v.mean.toFixed(2)} ± ${v.sd.toFixed(2)}`
            assert.strictEqual(htmlCell(html, row, level, metric), expected, `${row} ${level} ${metric}`)
          }
        }
      }
    }
    assert.include(md, "| Backbone | I2 | 20.0 ± 2.1 | – | 45.0 ± 3.4 | 50.0 ± 3.0 | 8.00 ± 0.31 | 6.00 ± 0.42 | 4.00 ± 0.27 | 9.00 ± 0.50 |")
    assert.include(md, "| ParaAct | Avg | 53.0 ± 2.1 | – | 67.0 ± 3.4 | 72.0 ± 3.0 | 5.80 ± 0.31 | 4.90 ± 0.42 | 2.90 ± 0.27 | 6.80 ± 0.50 |")
    // the average first, then the levels in input order: one table per level, in markdown too (grouped by level)
    assert.deepStrictEqual(elements(html, "table", { class: "metrics" }).map((t) => t["data-level"]), ["Avg", "I1", "I2", "I3", "Avg", "I1", "I2", "I3"])
    const mdLevels = md.split("## Table 2")[1]!.split("## Table 1")[0]!.split("\n").filter((l) => l.startsWith("| Backbone |")).map((l) => l.split(" | ")[1])
    assert.deepStrictEqual(mdLevels, ["Avg", "I1", "I2", "I3"])
  })

  it("shows the paired differences with their intervals, escaped, and a dash where a difference is undefined", () => {
    assert.include(md, "Points of Pass@1 &lt;greedy&gt; on the same tasks.")
    assert.include(md, "| GRPO-SFT | +5.3 [+1.5, +9.0] | −2.0 [−6.5, +2.5] |")
    assert.include(md, "| Ours-GRPO | – | – |")
    assert.include(html, '<section id="paired"><h2>Paired differences</h2><p>Points of Pass@1 &lt;greedy&gt; on the same tasks.</p>')
    assert.include(html, '<td>GRPO-SFT</td><td class="n">+5.3 [+1.5, +9.0]</td>')
  })

  it("lists the stages with their durations and a total", () => {
    assert.include(md, "| judge filter | 9.8 s | kept 452 / dropped 148 (24.7 %) |")
    assert.include(md, "| SFT | 1 min 01 s | projection coverage 97.1 % (439 of 452 turns) |")
    assert.include(md, "| **Total** | 2 h 14 min |  |")
    assert.include(html, "<td>judge filter</td><td class=\"n\">9.8 s</td><td>kept 452 / dropped 148 (24.7 %)</td>")
  })

  it("averages the curves over seeds: mean line, population sd band, one point per iteration", () => {
    const curves = input.curves
    const [grpo, ours] = Report.curveSeries(curves, "rAns", input.modelNames)
    // one name per model everywhere: the tables' names, not the estimators' registry names
    assert.strictEqual(grpo?.label, "+SFT & RL (GRPO)")
    assert.strictEqual(ours?.label, "+SFT & RL (ours)")
    assert.deepStrictEqual(Report.curveSeries(curves, "rAns").map((s) => s.label), ["grpo", "paraagent"])
    const at0 = curves.filter((c) => c.estimator === "paraagent").map((c) => c.points[0]?.rAns as number)
    assert.strictEqual(ours?.points[0]?.y, mean(at0))
    assert.strictEqual(ours?.points[0]?.sd, std(at0))
    assert.strictEqual(ours?.points[0]?.n, 3)
    // 7 training-split charts of 25 iterations, and the held-out chart's two paths of 3 stages
    const lines = elements(html, "path", { class: "line" })
    assert.strictEqual(lines.length, 2 * 7 + 2)
    assert.deepStrictEqual(lines.map((l) => l.d?.match(/[ML]/g)?.length), [3, 3, ...Array.from({ length: 14 }, () => 25)])
    assert.strictEqual(elements(html, "path", { class: "band" }).length, 2 * 7 + 2)
    assert.strictEqual(elements(html, "circle", { class: "dot" }).length, 2 * 7 * 25 + 2 * 3)
    assert.deepStrictEqual([...new Set(lines.map((l) => l["data-series"]))], ["+SFT &amp; RL (GRPO)", "+SFT &amp; RL (ours)"])
    assert.include(md, "| R_ans | +SFT &amp; RL (ours) | 3 |")
  })

  it("labels the split of every curve: the RL curves as the training split, the held-out chart by training stage", () => {
    const titles = [...html.matchAll(/<text class="chart-title"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1])
    assert.strictEqual(titles[0], "Pass@1 on held-out test tasks")
    for (const title of titles.slice(1)) assert.match(title ?? "", /\(training split\)$/)
    assert.include(html, ">Backbone</text>")
    assert.include(html, ">+SFT &amp; RL</text>")
    const heldOut = Report.heldOutSeries(input.ablation)
    assert.deepStrictEqual(heldOut.stages, ["Backbone", "+SFT", "+SFT & RL"])
    assert.deepStrictEqual(heldOut.series.map((s) => [s.label, s.points.map((p) => p.y)]), [
      ["+SFT & RL (GRPO)", [input.ablation["Backbone"]!["Avg"]!.pass1!.mean, input.ablation["+SFT"]!["Avg"]!.pass1!.mean, input.ablation["+SFT & RL (GRPO)"]!["Avg"]!.pass1!.mean]],
      ["+SFT & RL (ours)", [input.ablation["Backbone"]!["Avg"]!.pass1!.mean, input.ablation["+SFT"]!["Avg"]!.pass1!.mean, input.ablation["+SFT & RL (ours)"]!["Avg"]!.pass1!.mean]]
    ])
    assert.include(md, "## Learning curves (training split)")
  })

  it("the timeline states the trajectory's verdict, R_ans, step rewards and advantages, and phase rewards", () => {
    const t = Fixture.trajectory
    assert.include(html, `<strong>Verdict:</strong> ${Report.escapeHtml(Report.verdictLine(t))}`)
    assert.match(Report.verdictLine(t), /^Quality \w+ · Faithfulness \w+ · Utility \w+ \(judge \w+\)/)
    const section = html.split('<section id="timeline">')[1]!.split("</section>")[0]!
    for (const step of t.steps) {
      if (step.reward !== undefined) assert.include(section, `<td class="n">${step.reward.rStep.toFixed(2)} (base ${step.reward.rBase.toFixed(0)}, plan ${step.reward.rPlan.toFixed(0)})</td>`)
    }
    for (const phase of t.phases) if (phase.reward !== undefined) assert.include(section, `<td class="n">${phase.reward.rPhase.toFixed(2)}</td>`)
    assert.include(md, "Verdict: Quality YES · Faithfulness PARTIAL · Utility YES (judge rule) → pattern 101, R_ans 0.00 — Q: 2/2 gold facts &lt;stated&gt;.")
    assert.include(md, "| Round | Phase | Controller | Action | R_step | Advantage |")
  })

  it("draws axes with ticks and labels, a legend and tooltips", () => {
    const svg = Report.lineChart(
      [{ label: "a<b", points: [{ x: 0, y: 0.1, sd: 0.05, n: 3 }, { x: 1, y: 0.4, sd: 0.02, n: 3 }, { x: 2, y: 0.35, sd: 0.01, n: 3 }] }],
      { title: "Pass@1", xLabel: "RL iteration", yLabel: "Pass@1 %", percent: true }
    )
    const ticks = [...svg.matchAll(/<text class="tick"[^>]*>([^<]*)<\/text>/g)].map((m) => m[1])
    assert.includeMembers(ticks, ["0", "1", "2", "10", "20", "30", "40"])
    assert.include(svg, ">RL iteration</text>")
    assert.include(svg, ">Pass@1 %</text>")
    assert.include(svg, '<text class="legend-label" x="76" y="32">a&lt;b</text>')
    assert.include(svg, "<title>a&lt;b · RL iteration 1: 40.0 % ± 2.0 (3 seeds)</title>")
  })

  it("breaks a line at a non-finite value and shows an empty chart as such", () => {
    const svg = Report.lineChart([{ label: "s", points: [{ x: 0, y: 1 }, { x: 1, y: 2 }, { x: 2, y: NaN }, { x: 3, y: 1 }, { x: 4, y: 3 }] }], {
      title: "t",
      xLabel: "x",
      yLabel: "y"
    })
    assert.deepStrictEqual(elements(svg, "path", { class: "line" }).map((p) => p.d?.match(/[ML]/g)?.length), [2, 2])
    assert.notInclude(svg, "NaN")
    assert.include(Report.lineChart([], { title: "t", xLabel: "x", yLabel: "y" }), ">no data</text>")
  })

  it("escapes markup from requests, titles, answers and tool names", () => {
    assert.notInclude(html, "<script")
    assert.notInclude(md, "<script")
    assert.include(html, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;")
    assert.include(md, "&lt;script&gt;alert(\"x\")&lt;/script&gt;")
    assert.include(md, "cheapest \\| offers")
    assert.include(html, "<title>ParaAgent pipeline &lt;run 7&gt;</title>")
    assert.include(html, "The two cheapest offers are &lt;EUR 120&gt; &amp; EUR 134.")
    assert.include(html, "search hotel &lt;prices&gt;")
    assert.notInclude(html, "<b>")
    assert.notInclude(html, "<prices>")
  })

  it("is self-contained: no script, no external resource, a policy that forbids loading any", () => {
    assert.notMatch(html, /<(script|link|img|iframe|object)\b/)
    assert.notMatch(html, /\b(src|href)="(?!#)/)
    assert.notMatch(html, /url\(/)
    assert.deepStrictEqual([...new Set(html.match(/https?:\/\/[^\s"]+/g))], ["http://www.w3.org/2000/svg"])
    assert.include(html, `content="default-src 'none'; style-src 'unsafe-inline'"`)
  })

  it("is deterministic: the same input (or a copy of it) gives byte-identical output", () => {
    const copy = JSON.parse(JSON.stringify(input)) as Report.ReportInput
    assert.strictEqual(Report.renderHtml(input), html)
    assert.strictEqual(Report.renderHtml(copy), html)
    assert.strictEqual(Report.renderMarkdown(copy), md)
  })

  it("the timeline: one row per round, parallel calls as overlapping bars in separate lanes, coloured by outcome", () => {
    const svg = Report.timelineSvg(Fixture.trajectory)
    assert.strictEqual(elements(svg, "g", { class: "round" }).length, Fixture.trajectory.steps.length)
    const calls = elements(svg, "rect", { "data-round": "2", "data-kind": "call" })
    assert.deepStrictEqual(calls.map((b) => b["data-label"]), ["search_flights_for_skyscan", "flight_offers_for_amadeus", "convert_for_currency_api"])
    assert.deepStrictEqual(calls.map((b) => [b["data-start"], b["data-end"]]), [["1083", "1390"], ["1084", "1505"], ["1085", "1201"]])
    assert.deepStrictEqual(calls.map((b) => b["data-outcome"]), ["ok", "error", "ok"])
    assert.deepStrictEqual(calls.map((b) => b.class), ["bar call ok", "bar call error", "bar call ok"])
    const spans = calls.map((b) => ({ x0: Number(b.x), x1: Number(b.x) + Number(b.width), y: Number(b.y) }))
    for (const a of spans) {
      for (const b of spans) {
        if (a === b) continue
        assert.isTrue(a.x0 < b.x1 && b.x0 < a.x1, "the bars overlap in time")
        assert.notStrictEqual(a.y, b.y, "each call has its own lane")
      }
    }
    // the bars sit on a shared time axis: a later call starts further right
    const [late] = elements(svg, "rect", { "data-round": "3", "data-kind": "call" })
    assert.isAbove(Number(late?.x), spans[2]!.x1)
    // round 1's searches ran in parallel too; round 2's failed
    const searches = elements(svg, "rect", { "data-round": "0", "data-kind": "search" })
    assert.strictEqual(searches.length, 2)
    assert.deepStrictEqual(elements(svg, "rect", { "data-round": "1", "data-kind": "search" }).map((b) => b.class), ["bar search error"])
    // tool names as labels and tooltips
    assert.include(svg, '<text class="bar-label"')
    assert.include(svg, ">flight_offers_for_amadeus</text>")
    assert.include(svg, "<title>c2 · flight_offers_for_amadeus · rate_limited (429): 429 Too Many Requests · 1084 ms–1505 ms · 3 attempts</title>")
    assert.include(svg, ">ms since the rollout started</text>")
  })

  it("a follow-up page of a query is marked in the timeline's tooltip and in the trajectory's details", () => {
    const [first] = Fixture.trajectory.steps
    const search = first!.searches[0]!
    const paged = { ...Fixture.trajectory, steps: [{ ...first!, searches: [{ ...search, page: 2 }] }] }
    assert.match(Report.timelineSvg(paged), /<title>search [^<]* \(page 2\) · [^<]*<\/title>/)
    assert.include(Report.trajectoryDetailsHtml(paged), ` (page 2) → `)
    assert.notInclude(Report.timelineSvg(Fixture.trajectory), "(page ")
    assert.notInclude(Report.trajectoryDetailsHtml(Fixture.trajectory), "(page ")
  })

  it("the timeline of a trajectory whose actions took no time still draws every bar", () => {
    const instant = { ...Fixture.trajectory, steps: Fixture.trajectory.steps.map((s) => ({ ...s, startMs: 0, policyMs: 0, endMs: 0, searches: s.searches.map((x) => ({ ...x, startMs: 0, endMs: 0 })), observations: s.observations.map((o) => ({ ...o, startMs: 0, endMs: 0 })) })) }
    const svg = Report.timelineSvg(instant)
    const bars = elements(svg, "rect").filter((b) => b.class?.startsWith("bar ") === true && b["data-round"] !== undefined)
    assert.strictEqual(bars.length, 5 + 3 + 4)
    for (const b of bars) assert.isAtLeast(Number(b.width), 2)
    assert.notInclude(svg, "NaN")
    assert.include(svg, "took no measurable time")
  })
})
