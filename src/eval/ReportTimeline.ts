/**
 * One trajectory in the run report and the trajectory browser: the timeline SVG (policy, searches and calls per round),
 * the verdict line, the rounds' and phases' reward rows, the details as HTML and the timeline as markdown. Pure.
 */
import type { Observation } from "../domain/Call.ts"
import type { SearchResult, Step, Trajectory } from "../domain/Trajectory.ts"
import * as Evaluation from "../math/Evaluation.ts"
import { c, duration, escapeHtml, escapeMd, fixed, htmlTable, mdTable, raw, type TimelineInput } from "./ReportFormat.ts"
import { axis } from "./ReportCharts.ts"

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
  tooltip: `search ${s.slot}: "${s.query}"${s.page !== undefined ? ` (page ${s.page})` : ""} · ${s.error === undefined ? `${hits(s.hits.length)}${s.hits.length > 0 ? ` (top: ${s.hits.slice(0, 3).map((h) => h.tool).join(", ")})` : ""}` : `error: ${s.error}`} · ${ms(s.startMs)}–${ms(s.endMs)}`
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
export const roundRows = (t: Trajectory): ReadonlyArray<ReadonlyArray<string>> =>
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
export const phaseRows = (t: Trajectory): ReadonlyArray<ReadonlyArray<string>> =>
  t.phases.map((p, i) => [
    String(i + 1),
    p.kind,
    `${p.start + 1}–${p.end}`,
    ...(p.reward === undefined ? ["–", "–", "–", "–", "–"] : [p.reward.l1, p.reward.l2, p.reward.l3, p.reward.l4, p.reward.rPhase].map((x) => fixed(x, 2)))
  ])

export const roundHead = ["Round", "Phase", "Controller", "Action", "R_step", "Advantage"]
export const phaseHead = ["Phase", "Kind", "Rounds", "L1", "L2", "L3", "L4", "R_phase"]

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
      `<li><span class="k">search ${escapeHtml(s.slot)}</span> “${escapeHtml(s.query)}”${s.page !== undefined ? ` (page ${s.page})` : ""} → ${
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

export const mdTimeline = (timeline: TimelineInput): string => {
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
