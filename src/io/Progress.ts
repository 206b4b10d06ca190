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
