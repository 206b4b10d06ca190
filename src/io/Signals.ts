/**
 * How every program ends on a signal (the programs' `runMain`): the first SIGTERM or SIGINT always ends the program.
 * By default it interrupts the main fiber, so finalizers run (temp files removed, stores closed, workers stopped), and
 * the process exits 143 (SIGTERM) or 130 (SIGINT) once they are done — or after `graceMs` if they hang; a second
 * signal exits at once. A program that finishes gracefully instead (`onSignal: "notify"`: a server draining its
 * requests) waits on {@link received} and exits 0 when its effect succeeds within the grace.
 */
import { Cause, Deferred, Effect, Exit, Runtime } from "effect"

/** The signals a program ends on. */
export type Signal = "SIGTERM" | "SIGINT"

/** The exit code of a program a signal ended: 128 + the signal's number (SIGTERM 15 → 143, SIGINT 2 → 130). */
export const exitCodeOf = (signal: Signal): number => (signal === "SIGTERM" ? 143 : 130)

/** How long finalizers (or a graceful finish) may take after the first signal before the process exits anyway. */
export const defaultGraceMs = 10_000

/** Options of {@link runMain}. */
export interface RunMainOptions {
  /** See {@link defaultGraceMs}; a function is read when the signal comes (a grace set by a flag: a server's drain). */
  readonly graceMs?: number | (() => number)
  /**
   * `interrupt` (default): the first signal interrupts the main fiber. `notify`: it only completes {@link received};
   * the program finishes by itself (exit 0 when its effect succeeds, 143/130 when the grace runs out).
   */
  readonly onSignal?: "interrupt" | "notify"
  /**
   * With `interrupt`: read when the signal has interrupted the main fiber; true means the program finished its work
   * on the way (a server that drained every request in flight in its interrupt finalizer), so it exits 0.
   */
  readonly finished?: () => boolean
}

const first = Deferred.makeUnsafe<Signal>()

/** The first signal the program received: waits until there is one (a program in `notify` mode drains on it). */
export const received: Effect.Effect<Signal> = Deferred.await(first)

/** Runs a program's main effect with the signal handling above (a drop-in for `NodeRuntime.runMain`). */
export const runMain = (options: RunMainOptions = {}) => <E, A>(effect: Effect.Effect<A, E>): void => {
  const graceMs = () => (typeof options.graceMs === "function" ? options.graceMs() : options.graceMs ?? defaultGraceMs)
  Runtime.makeRunMain(({ fiber, teardown }) => {
    let signal: Signal | undefined
    const on = (name: Signal) => () => {
      // a second signal: now
      if (signal !== undefined) process.exit(exitCodeOf(signal))
      signal = name
      Deferred.doneUnsafe(first, Exit.succeed(name))
      setTimeout(() => process.exit(exitCodeOf(name)), graceMs()).unref()
      if (options.onSignal !== "notify") fiber.interruptUnsafe(fiber.id)
    }
    const onTerm = on("SIGTERM")
    const onInt = on("SIGINT")
    process.on("SIGTERM", onTerm)
    process.on("SIGINT", onInt)
    fiber.addObserver((exit) => {
      process.removeListener("SIGTERM", onTerm)
      process.removeListener("SIGINT", onInt)
      teardown(exit, (code) => {
        if (signal === undefined) {
          if (code !== 0) process.exit(code)
          return
        }
        // ended by the signal: interrupted → 143/130 (0 when it finished its work); a graceful finish → 0; a failure
        // on the way → its code
        process.exit(
          Exit.isSuccess(exit) ? 0
          : Cause.hasInterruptsOnly(exit.cause) ? (options.finished?.() === true ? 0 : exitCodeOf(signal))
          : code
        )
      })
    })
  })(effect)
}
