/**
 * The run's pages as a person sees them, in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core)
 * at 1280 px: the report (tables within the window, row labels that stay put, every plot drawn, the timeline of a real
 * teacher rollout whose simulator has a latency model) and the trajectory browser built from a real SQLite run store
 * (every held-out trajectory listed, each filter keeping exactly its rows, a row opening to its turns, calls,
 * observations, verdict and rewards). No console error, nothing loaded from outside.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { chromium } from "playwright-core"
import type { Browser, Page } from "playwright-core"
import * as RunStoreSqlite from "../../layers/storage/RunStoreSqlite.ts"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { Task } from "../../src/domain/Task.ts"
import type { Paradigm, Trajectory } from "../../src/domain/Trajectory.ts"
import * as Report from "../../src/eval/Report.ts"
import * as Scoring from "../../src/eval/Scoring.ts"
import * as TrajectoryBrowser from "../../src/eval/TrajectoryBrowser.ts"
import * as RuleJudge from "../../src/judge/RuleJudge.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as SimulatorModule from "../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import * as World from "../../src/toolenv/world/World.ts"
import * as Pipeline from "../../src/training/Pipeline.ts"
import { RunStore } from "../../src/training/RunStore.ts"
import * as Fixture from "./ReportFixture.ts"

const executablePath = "/usr/bin/chromium"
const hasChromium = existsSync(executablePath)
/** The flags this machine needs (docs of the machine): no sandbox as root, and no background traffic to outside hosts. */
const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
const width = 1280

/** Teacher rollouts on a small world, tools answering in 30–250 ms, scored by the rule judge. */
const teacherRollouts = (tasks: ReadonlyArray<Task>, paradigm: Paradigm, seed: number, latency: boolean) =>
  Effect.gen(function*() {
    const world = World.make({ seed: 7, size: 2_000 })
    const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
    const services = Layer.mergeAll(
      Teacher.layer(),
      Retriever.layerBm25,
      RuleJudge.layer,
      SimulatorModule.layer(latency ? { latency: { minMs: 30, maxMs: 250, jitter: 0.35, timeoutMs: 600 } } : {})
    ).pipe(Layer.provideMerge(worldLayer))
    return yield* Effect.gen(function*() {
      const rollout = yield* Rollout.Rollout
      const trajectories = yield* rollout.runAll(tasks.map((task, i) => ({ task, options: { paradigm, seed: seed + i } })), { concurrency: 3 })
      return yield* Effect.forEach(trajectories, (t, i) => Effect.map(Scoring.scoreGroup(tasks[i] as Task, [t]), ([scored]) => scored as Trajectory))
    }).pipe(Effect.provide(Rollout.layer().pipe(Layer.provideMerge(services))))
  })

const world = World.make({ seed: 7, size: 2_000 })
const i2Tasks = Tasks.make(world).take({ split: "test", count: 3, levels: ["I2"] })
const heldOutTasks = Tasks.make(world).take({ split: "test", count: 6, levels: ["I1", "I2", "I3"] })

/** Problems a page reported (console errors and warnings, uncaught errors) and every URL it requested. */
const watch = (page: Page) => {
  const problems: Array<string> = []
  const requests: Array<string> = []
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`)
  })
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`))
  page.on("request", (r) => requests.push(r.url()))
  return { problems, requests }
}

/** What overflows the window: elements whose right edge passes the viewport, and scroll boxes that need scrolling. */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const vw = document.documentElement.clientWidth
    return {
      vw,
      page: document.documentElement.scrollWidth,
      tables: [...document.querySelectorAll("table")].filter((t) => t.getBoundingClientRect().right > vw + 0.5).map((t) => t.className || t.outerHTML.slice(0, 60)),
      scrolling: [...document.querySelectorAll<HTMLElement>(".scroll")].filter((s) => !s.querySelector("svg.timeline") && s.scrollWidth > s.clientWidth + 1).length
    }
  })

const dir = mkdtempSync(join(tmpdir(), "paraagent-report-"))
let browser: Browser | undefined

// written past vitest's console capture, which drops the output of a skipped file
if (!hasChromium) process.stderr.write(`ReportBrowser: skipped, ${executablePath} is absent (Debian's chromium package installs it)\n`)

describe(hasChromium ? "the run's pages in headless Chromium" : `the run's pages in headless Chromium (skipped: ${executablePath} is absent)`, () => {
  beforeAll(async () => {
    if (hasChromium) browser = await chromium.launch({ executablePath, args, headless: true })
  })
  afterAll(async () => {
    await browser?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it.skipIf(!hasChromium)("the report at 1280 px: tables within the window with sticky row labels, every plot drawn, parallel calls as overlapping bars, the verdict and rewards, no console error", async () => {
    const rollouts = await Effect.runPromise(teacherRollouts(i2Tasks, "ParaAct", 31, true))
    const i = rollouts.findIndex((t) => t.steps.some((s) => s.observations.length >= 2))
    assert.isAtLeast(i, 0, "the teacher ran two calls in one round of some task")
    const timeline = { taskId: i2Tasks[i]!.id, request: i2Tasks[i]!.request, trajectory: rollouts[i]! }
    const parallelRound = timeline.trajectory.steps.find((s) => s.observations.length >= 2)!
    const file = join(dir, "report.html")
    writeFileSync(file, Report.renderHtml(Fixture.input(timeline)))
    const page = await browser!.newPage({ viewport: { width, height: 900 } })
    const { problems, requests } = watch(page)
    await page.goto(pathToFileURL(file).href, { waitUntil: "load" })

    const seen = await page.evaluate((round: number) => {
      const box = (e: Element) => {
        const r = e.getBoundingClientRect()
        return { x: r.x + window.scrollX, y: r.y + window.scrollY, w: r.width, h: r.height }
      }
      const charts = [...document.querySelectorAll("svg.chart")].map((svg) => ({
        title: svg.querySelector("text.chart-title")?.textContent ?? "",
        box: box(svg),
        lines: [...svg.querySelectorAll<SVGPathElement>("path.line")].map((p) => ({
          series: p.dataset.series ?? "",
          length: p.getTotalLength(),
          points: (p.getAttribute("d") ?? "").match(/[ML]/g)?.length ?? 0,
          bbox: (({ width, height }) => ({ width, height }))(p.getBBox())
        })),
        bands: [...svg.querySelectorAll<SVGPathElement>("path.band")].map((p) => p.getBBox().height),
        ticks: svg.querySelectorAll("text.tick").length,
        legend: [...svg.querySelectorAll("text.legend-label")].map((t) => t.textContent)
      }))
      const timeline = document.querySelector("svg.timeline")
      const bars = [...document.querySelectorAll<SVGRectElement>(`svg.timeline rect.bar[data-round="${round}"][data-kind="call"]`)]
      // what a person hovering the middle of each bar would hit: the bar itself, not a grid line or a label
      const hit = bars.map((b) => {
        b.scrollIntoView({ block: "center", inline: "center" })
        const r = b.getBoundingClientRect()
        return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === b
      })
      const rowLabels = [...document.querySelectorAll("table.metrics th[scope=row]")].map((th) => getComputedStyle(th).position)
      return {
        title: document.title,
        scripts: document.querySelectorAll("script").length,
        charts,
        timeline: timeline === null ? null : box(timeline),
        rounds: document.querySelectorAll("svg.timeline g.round").length,
        allBars: [...document.querySelectorAll("svg.timeline rect.bar[data-round]")].map(box),
        parallel: bars.map((b) => ({ ...box(b), label: b.dataset.label, outcome: b.dataset.outcome })),
        hit,
        cells: document.querySelectorAll("table.metrics td").length,
        levels: [...document.querySelectorAll("#ablation table.metrics")].map((t) => t.getAttribute("data-level")),
        rowLabels,
        verdict: document.querySelector("#timeline p.verdict")?.textContent ?? "",
        rewardRows: document.querySelectorAll("#timeline table tbody tr").length
      }
    }, parallelRound.index)
    const fit = await overflow(page)
    await page.screenshot({ path: join(dir, "report.png"), fullPage: true })
    await page.close()

    assert.deepStrictEqual(problems, [])
    assert.deepStrictEqual(requests, [pathToFileURL(file).href], "the page loads nothing but itself")
    assert.strictEqual(seen.title, "ParaAgent pipeline <run 7>")
    assert.strictEqual(seen.scripts, 0)
    // the tables fit the window: one table per level (the average first), no box that needs scrolling sideways
    assert.deepStrictEqual(seen.levels, ["Avg", "I1", "I2", "I3"])
    assert.deepStrictEqual(fit, { vw: width, page: width, tables: [], scrolling: 0 })
    assert.isTrue(seen.rowLabels.length > 0 && seen.rowLabels.every((p) => p === "sticky"))
    assert.strictEqual(seen.cells, (4 + 4) * 4 * Report.tableMetrics.length)
    // the held-out chart by training stage, then the seven training-split charts, each series named as the tables name it
    assert.strictEqual(seen.charts.length, 8)
    assert.strictEqual(seen.charts[0]?.title, "Pass@1 on held-out test tasks")
    assert.deepStrictEqual(seen.charts[0]?.lines.map((l) => [l.series, l.points]), [["+SFT & RL (GRPO)", 3], ["+SFT & RL (ours)", 3]])
    for (const chart of seen.charts) {
      assert.isAbove(chart.box.w, 100)
      assert.isAbove(chart.box.h, 100)
      assert.isAtLeast(chart.ticks, 6)
      assert.deepStrictEqual(chart.legend, ["+SFT & RL (GRPO)", "+SFT & RL (ours)"])
      for (const band of chart.bands) assert.isAbove(band, 0)
    }
    for (const chart of seen.charts.slice(1)) {
      assert.match(chart.title, /\(training split\)$/)
      assert.deepStrictEqual(chart.lines.map((l) => [l.series, l.points]), [["+SFT & RL (GRPO)", 25], ["+SFT & RL (ours)", 25]])
      for (const line of chart.lines) {
        assert.isAbove(line.length, 100, "a curve over 25 iterations is drawn across the plot")
        assert.isAbove(line.bbox.width, 100)
      }
    }
    // the timeline: a row per round, bars with area, the round's parallel calls overlapping in time in lanes of their own
    assert.isNotNull(seen.timeline)
    assert.isAbove(seen.timeline!.w, 500)
    assert.isAbove(seen.timeline!.h, 50)
    assert.strictEqual(seen.rounds, timeline.trajectory.steps.length)
    for (const bar of seen.allBars) {
      assert.isAtLeast(bar.w, 1.5)
      assert.isAbove(bar.h, 0)
    }
    assert.strictEqual(seen.parallel.length, parallelRound.observations.length)
    assert.deepStrictEqual(seen.parallel.map((b) => b.label), parallelRound.observations.map((o) => o.tool))
    for (const a of seen.parallel) {
      for (const b of seen.parallel) {
        if (a === b) continue
        assert.isTrue(a.x < b.x + b.w && b.x < a.x + a.w, `${a.label} and ${b.label} overlap in time`)
        assert.isTrue(a.y + a.h <= b.y || b.y + b.h <= a.y, `${a.label} and ${b.label} have lanes of their own`)
      }
    }
    assert.deepStrictEqual(seen.hit, seen.parallel.map(() => true))
    // its verdict and rewards: the judge's grades and R_ans, a row per round and per phase
    assert.strictEqual(seen.verdict, `Verdict: ${Report.verdictLine(timeline.trajectory)}`)
    assert.match(seen.verdict, /Quality (YES|PARTIAL|NO) · Faithfulness (YES|PARTIAL|NO) · Utility (YES|PARTIAL|NO) \(judge rule\) → pattern [01]{3}, R_ans/)
    assert.strictEqual(seen.rewardRows, timeline.trajectory.steps.length + timeline.trajectory.phases.length)
    assert.isAbove(statSync(join(dir, "report.png")).size, 50_000)
  })

  it.skipIf(!hasChromium)("the trajectory browser from a run store: every held-out trajectory listed, each filter keeps exactly its rows, a row opens to its turns, calls, observations, verdict and rewards", async () => {
    // a run store holding the evaluation stages the pipeline writes: 2 seeds × (4 rows under ParaAct + ours under ReAct)
    const options: Pipeline.PipelineOptions = { ...Pipeline.defaults, seeds: [1, 2], paradigms: ["ParaAct", "ReAct"], progress: false }
    const [paraAct, reAct] = await Effect.runPromise(Effect.all([teacherRollouts(heldOutTasks, "ParaAct", 50, false), teacherRollouts(heldOutTasks, "ReAct", 60, false)]))
    const store = join(dir, "run.sqlite")
    const entries = await Effect.runPromise(Effect.gen(function*() {
      const runs = yield* RunStore
      yield* runs.createRun("pipeline", {})
      for (const seed of options.seeds) {
        for (const model of ["Backbone", "SFT", "GRPO", "Ours"]) {
          for (const t of paraAct!) yield* runs.putTrajectories("pipeline", `eval/${model}/seed${seed}/ParaAct`, t.taskId, 0, [t])
        }
        for (const t of reAct!) yield* runs.putTrajectories("pipeline", `eval/Ours/seed${seed}/ReAct`, t.taskId, 0, [t])
      }
      return yield* Pipeline.heldOutEntries("pipeline", options, heldOutTasks)
    }).pipe(Effect.provide(RunStoreSqlite.layer(store))))
    const total = 2 * 5 * heldOutTasks.length
    assert.strictEqual(entries.length, total)

    const file = join(dir, "trajectories.html")
    writeFileSync(file, TrajectoryBrowser.renderBrowser("every held-out trajectory <run>", entries, (text) => createHash("sha256").update(text).digest("base64")))
    const page = await browser!.newPage({ viewport: { width, height: 900 } })
    const { problems, requests } = watch(page)
    await page.goto(pathToFileURL(file).href, { waitUntil: "load" })

    const visible = () =>
      page.evaluate(() => ({
        rows: [...document.querySelectorAll<HTMLTableRowElement>("tr.entry")].filter((r) => !r.hidden).map((r) => ({ ...r.dataset })),
        count: document.getElementById("count")?.textContent ?? ""
      }))
    const all = await visible()
    assert.strictEqual(all.rows.length, total)
    assert.strictEqual(all.count, `${total} of ${total} trajectories`)
    const fit = await overflow(page)
    assert.deepStrictEqual(fit, { vw: width, page: width, tables: [], scrolling: 0 })

    // each filter alone keeps exactly the entries with its value
    const expected = {
      model: (e: TrajectoryBrowser.BrowserEntry) => e.model,
      level: (e: TrajectoryBrowser.BrowserEntry) => e.level,
      paradigm: (e: TrajectoryBrowser.BrowserEntry) => e.trajectory.paradigm as string,
      outcome: (e: TrajectoryBrowser.BrowserEntry) => TrajectoryBrowser.outcomeOf(e.trajectory) as string
    }
    for (const filter of TrajectoryBrowser.filters) {
      const values = await page.locator(`select[data-filter="${filter}"] option`).evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value).filter((v) => v !== ""))
      assert.sameMembers(values, [...new Set(entries.map(expected[filter]))], filter)
      for (const value of values) {
        await page.selectOption(`select[data-filter="${filter}"]`, value)
        const shown = await visible()
        const want = entries.filter((e) => expected[filter](e) === value).length
        assert.strictEqual(shown.rows.length, want, `${filter} = ${value}`)
        assert.isTrue(shown.rows.every((r) => r[filter] === value), `${filter} = ${value}`)
        assert.strictEqual(shown.count, `${want} of ${total} trajectories`)
      }
      await page.selectOption(`select[data-filter="${filter}"]`, "")
    }
    // filters combine
    await page.selectOption('select[data-filter="model"]', "+SFT & RL (ours)")
    await page.selectOption('select[data-filter="paradigm"]', "ReAct")
    assert.strictEqual((await visible()).rows.length, 2 * heldOutTasks.length)
    await page.selectOption('select[data-filter="model"]', "")
    await page.selectOption('select[data-filter="paradigm"]', "")

    // every row opens to its details: the turns as written, the calls with their observations, verdict and rewards
    const opened = await page.evaluate(() => {
      const rows = [...document.querySelectorAll<HTMLTableRowElement>("tr.entry")]
      return rows.map((row) => {
        row.click()
        const open = row.nextElementSibling as HTMLElement
        const seen = {
          index: Number(row.dataset.index),
          turns: [...open.querySelectorAll("pre.turn")].map((p) => p.textContent ?? ""),
          calls: open.querySelectorAll("ul.actions li").length,
          verdict: open.querySelector("p.verdict")?.textContent ?? "",
          rounds: open.querySelectorAll("div.round h4").length,
          stepRewards: [...open.querySelectorAll("div.round h4")].every((h) => /R_step \d/.test(h.textContent ?? "")),
          phaseRows: open.querySelectorAll(":scope table > tbody > tr").length
        }
        row.click()
        return seen
      })
    })
    assert.strictEqual(opened.length, total)
    for (const o of opened) {
      const t = entries[o.index]!.trajectory
      assert.deepStrictEqual(o.turns, t.steps.map((s) => s.raw))
      assert.strictEqual(o.calls, t.steps.reduce((n, s) => n + s.searches.length + s.observations.length, 0))
      assert.strictEqual(o.verdict, `Verdict: ${Report.verdictLine(t)}`)
      assert.include(o.verdict, `R_ans ${t.answerReward!.rAns.toFixed(2)}`)
      assert.strictEqual(o.rounds, t.steps.length)
      assert.isTrue(o.stepRewards)
      assert.strictEqual(o.phaseRows, t.phases.length)
    }
    await page.screenshot({ path: join(dir, "trajectories.png") })
    await page.close()
    assert.deepStrictEqual(problems, [])
    assert.deepStrictEqual(requests, [pathToFileURL(file).href], "the page loads nothing but itself")
  })
})
