/**
 * The HTML report as a person sees it: written to a file and opened in headless Chromium (Debian's /usr/bin/chromium,
 * driven by playwright-core), with the timeline of a real teacher rollout whose simulator has a latency model.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { chromium } from "playwright-core"
import * as Teacher from "../../src/agent/Teacher.ts"
import type { Trajectory } from "../../src/domain/Trajectory.ts"
import * as Report from "../../src/eval/Report.ts"
import { Retriever } from "../../src/retrieval/Retriever.ts"
import * as Rollout from "../../src/runtime/Rollout.ts"
import * as SimulatorModule from "../../src/toolenv/Simulator.ts"
import { ToolLibrary } from "../../src/toolenv/ToolLibrary.ts"
import * as Tasks from "../../src/toolenv/world/Tasks.ts"
import * as World from "../../src/toolenv/world/World.ts"
import * as Fixture from "./ReportFixture.ts"

const executablePath = "/usr/bin/chromium"
const hasChromium = existsSync(executablePath)
/** The flags this machine needs (docs of the machine): no sandbox as root, and no background traffic to outside hosts. */
const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

/** Teacher rollouts of three held-out I2 tasks on a small world, tools answering in 30–250 ms; the first with a round of parallel calls. */
const parallelRollout = Effect.gen(function*() {
  const world = World.make({ seed: 7, size: 2_000 })
  const tasks = Tasks.make(world).take({ split: "test", count: 3, levels: ["I2"] })
  const worldLayer = Layer.mergeAll(Layer.succeed(ToolLibrary, world.library), Layer.succeed(World.GeneratedWorld, world))
  const services = Layer.mergeAll(
    Teacher.layer(),
    Retriever.layerBm25,
    SimulatorModule.layer({ latency: { minMs: 30, maxMs: 250, jitter: 0.35, timeoutMs: 600 } })
  ).pipe(Layer.provideMerge(worldLayer))
  const rollout = yield* Effect.provide(Effect.gen(function*() {
    return yield* Rollout.Rollout
  }), Rollout.layer().pipe(Layer.provide(services)))
  const trajectories = yield* rollout.runAll(tasks.map((task, i) => ({ task, options: { paradigm: "ParaAct" as const, seed: 31 + i } })), { concurrency: 3 })
  const i = trajectories.findIndex((t: Trajectory) => t.steps.some((s) => s.observations.length >= 2))
  assert.isAtLeast(i, 0, "the teacher ran two calls in one round of some task")
  const task = tasks[i]!
  return { taskId: task.id, request: task.request, trajectory: trajectories[i]! }
})

// written past vitest's console capture, which drops the output of a skipped file
if (!hasChromium) process.stderr.write(`ReportBrowser: skipped, ${executablePath} is absent (Debian's chromium package installs it)\n`)

describe(hasChromium ? "report in headless Chromium" : `report in headless Chromium (skipped: ${executablePath} is absent)`, () => {
  it.skipIf(!hasChromium)("renders every plot: SVGs with area, curves with points, parallel calls as overlapping bars, no console error", async () => {
    const t0 = performance.now()
    const timeline = await Effect.runPromise(parallelRollout)
    const parallelRound = timeline.trajectory.steps.find((s) => s.observations.length >= 2)!
    const dir = mkdtempSync(join(tmpdir(), "paraagent-report-"))
    const file = join(dir, "report.html")
    writeFileSync(file, Report.renderHtml(Fixture.input(timeline)))
    const t1 = performance.now()
    const browser = await chromium.launch({ executablePath, args, headless: true })
    const t2 = performance.now()
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
      const problems: Array<string> = []
      const requests: Array<string> = []
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") problems.push(`console.${m.type()}: ${m.text()}`)
      })
      page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`))
      page.on("request", (r) => requests.push(r.url()))
      await page.goto(pathToFileURL(file).href, { waitUntil: "load" })
      const t3 = performance.now()

      const seen = await page.evaluate((round: number) => {
        const box = (e: Element) => {
          const r = e.getBoundingClientRect()
          return { x: r.x + window.scrollX, y: r.y + window.scrollY, w: r.width, h: r.height }
        }
        const charts = [...document.querySelectorAll("svg.chart")].map((svg) => ({
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
          const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)
          return top === b
        })
        return {
          title: document.title,
          scripts: document.querySelectorAll("script").length,
          charts,
          timeline: timeline === null ? null : box(timeline),
          rounds: document.querySelectorAll("svg.timeline g.round").length,
          allBars: [...document.querySelectorAll("svg.timeline rect.bar[data-round]")].map(box),
          parallel: bars.map((b) => ({ ...box(b), label: b.dataset.label, outcome: b.dataset.outcome })),
          hit,
          cells: document.querySelectorAll("table.metrics td").length
        }
      }, parallelRound.index)
      await page.screenshot({ path: join(dir, "report.png"), fullPage: true })
      const t4 = performance.now()

      assert.deepStrictEqual(problems, [])
      assert.deepStrictEqual(requests, [pathToFileURL(file).href], "the page loads nothing but itself")
      assert.strictEqual(seen.title, "ParaAgent pipeline <run 7>")
      assert.strictEqual(seen.scripts, 0)
      assert.strictEqual(seen.charts.length, 7)
      for (const chart of seen.charts) {
        assert.isAbove(chart.box.w, 100)
        assert.isAbove(chart.box.h, 100)
        assert.isAtLeast(chart.ticks, 6)
        assert.deepStrictEqual(chart.legend, ["grpo", "paraagent"])
        assert.deepStrictEqual(chart.lines.map((l) => [l.series, l.points]), [["grpo", 25], ["paraagent", 25]])
        for (const line of chart.lines) {
          assert.isAbove(line.length, 100, "a curve over 25 iterations is drawn across the plot")
          assert.isAbove(line.bbox.width, 100)
        }
        for (const band of chart.bands) assert.isAbove(band, 0)
      }
      assert.isNotNull(seen.timeline)
      assert.isAbove(seen.timeline!.w, 500)
      assert.isAbove(seen.timeline!.h, 50)
      assert.strictEqual(seen.rounds, timeline.trajectory.steps.length)
      for (const bar of seen.allBars) {
        assert.isAtLeast(bar.w, 1.5)
        assert.isAbove(bar.h, 0)
      }
      // the round's calls ran in parallel: on screen their bars overlap in x and sit in lanes of their own
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
      assert.strictEqual(seen.cells, (4 + 4) * 4 * Report.tableMetrics.length)
      assert.isAbove(statSync(join(dir, "report.png")).size, 50_000)
      console.log(
        `ReportBrowser: rollouts ${(t1 - t0).toFixed(0)} ms, chromium launch ${(t2 - t1).toFixed(0)} ms, load ${(t3 - t2).toFixed(0)} ms, checks + screenshot ${(t4 - t3).toFixed(0)} ms`
      )
    } finally {
      await browser.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
