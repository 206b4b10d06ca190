/**
 * A progress bar on stderr for long jobs: redrawn in place on a terminal, a line per tenth of the work otherwise,
 * so logs stay readable in CI. stdout is left to the job's results.
 */
import { Effect } from "effect"

/** A counter that renders itself. */
export interface Progress {
  readonly tick: (n?: number) => Effect.Effect<void>
  readonly done: Effect.Effect<void>
}

/** A progress bar over `total` units of work labelled `label`; `enabled: false` draws nothing. */
export const make = (label: string, total: number, enabled = true): Progress => {
  const tty = process.stderr.isTTY === true
  const started = Date.now()
  let count = 0
  let lastDecile = -1
  const render = (final: boolean) => {
    if (!enabled || total <= 0) return
    const fraction = Math.min(1, count / total)
    const width = 30
    const filled = Math.round(fraction * width)
    const seconds = (Date.now() - started) / 1000
    const line = `${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${count}/${total} ${seconds.toFixed(1)}s`
    if (tty) {
      process.stderr.write(`\r${line}${final ? "\n" : ""}`)
      return
    }
    const decile = Math.floor(fraction * 10)
    if (decile !== lastDecile) {
      lastDecile = decile
      process.stderr.write(`${line}\n`)
    }
  }
  return {
    tick: (n = 1) =>
      Effect.sync(() => {
        count += n
        render(false)
      }),
    done: Effect.sync(() => render(true))
  }
}

/** A duration for a person: `45 s`, `3 min 12 s`, `1 h 05 min`. */
export const humanDuration = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1_000))
  if (s < 60) return `${s} s`
  if (s < 3_600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`
  const m = Math.round(s / 60)
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, "0")} min`
}

/**
 * One stage of a job's plan. `kind` groups stages whose work costs the same per unit (e.g. every evaluation); `units`
 * is the stage's work in that kind's unit (rollouts, demonstration steps × epochs), `weight` a first guess of a unit's
 * cost relative to the other kinds, used until a stage of the kind has been timed.
 */
export interface PlannedStage {
  readonly name: string
  readonly kind: string
  readonly units: number
  readonly weight: number
}

/** The stages of a job, announced as they start with an overall counter, the time spent and an estimate of the rest. */
export interface StagePlan {
  /** Stage `index` (0-based) starts: prints `[k/N · elapsed · ETA] name`. */
  readonly start: (index: number, detail?: string) => Effect.Effect<void>
  /** Stage `index` ended; `restored` when its work was read back (a resumed run): it then teaches the ETA nothing. */
  readonly finish: (index: number, restored?: boolean) => Effect.Effect<void>
  /** The estimate of the remaining time in ms after the finished stages (undefined before any work was timed). */
  readonly remainingMs: () => number | undefined
}

/**
 * A plan over `stages`, printing to stderr (nothing when `enabled` is false). The estimate of the time left is the sum
 * over the unfinished stages of units × the measured ms per unit of their kind — or, for a kind not yet timed, of the
 * measured ms per weighted unit over all timed stages × the kind's weight. It is an estimate: a stage of a new kind
 * moves it; by the second seed of the pipeline every kind has been timed.
 */
export const plan = (stages: ReadonlyArray<PlannedStage>, enabled = true, now: () => number = Date.now): StagePlan => {
  const started = now()
  const startedAt = new Map<number, number>()
  const done = new Set<number>()
  const timed = new Map<string, { ms: number; units: number }>()
  let weighted = { ms: 0, units: 0 }
  const remainingMs = (): number | undefined => {
    if (weighted.units <= 0) return undefined
    const perWeighted = weighted.ms / weighted.units
    let rest = 0
    stages.forEach((s, i) => {
      if (done.has(i)) return
      const kind = timed.get(s.kind)
      rest += kind !== undefined && kind.units > 0 ? s.units * (kind.ms / kind.units) : s.units * s.weight * perWeighted
    })
    return rest
  }
  return {
    start: (index, detail) =>
      Effect.sync(() => {
        startedAt.set(index, now())
        if (!enabled) return
        const stage = stages[index]
        if (stage === undefined) return
        const eta = remainingMs()
        const head = `[${index + 1}/${stages.length} · ${humanDuration(now() - started)} elapsed · ETA ${eta === undefined ? "after the first timed stage" : humanDuration(eta)}]`
        process.stderr.write(`${head} ${stage.name}${detail === undefined ? "" : `: ${detail}`}\n`)
      }),
    finish: (index, restored = false) =>
      Effect.sync(() => {
        const stage = stages[index]
        const at = startedAt.get(index)
        if (stage === undefined || done.has(index)) return
        done.add(index)
        if (restored || at === undefined || stage.units <= 0) return
        const ms = now() - at
        const kind = timed.get(stage.kind) ?? { ms: 0, units: 0 }
        timed.set(stage.kind, { ms: kind.ms + ms, units: kind.units + stage.units })
        weighted = { ms: weighted.ms + ms, units: weighted.units + stage.units * stage.weight }
      }),
    remainingMs
  }
}
