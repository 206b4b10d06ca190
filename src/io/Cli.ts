/**
 * The one error reporter of every program and benchmark: a typed failure, a bad flag or a defect prints ONE line on
 * stderr (no stack trace) and exits non-zero; logs go to stderr, so stdout carries only the program's results.
 */
import { Cause, Console, Effect, Layer, Logger, Option, Runtime, Schema } from "effect"
import { CliError, CliOutput, Command, Flag } from "effect/cli"

/** Already reported on stderr: the runtime exits with `code` and logs nothing more. */
export class Reported extends Schema.TaggedError<Reported>()("Reported", { code: Schema.Number }) {
  override get [Runtime.errorExitCode](): number {
    return this.code
  }
  override get [Runtime.errorReported](): boolean {
    return false
  }
}

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

const field = (error: object, key: string): string | undefined => {
  const value: unknown = (error as Record<string, unknown>)[key]
  return typeof value === "string" && value.length > 0 ? value : undefined
}

/**
 * One line for any failure: a ConfigError names its field (and the value when the message does not), a file error
 * names its file; anything else is its tag and message.
 */
export const describe = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return oneLine(String(error))
  const message = field(error, "message") ?? ""
  const tag = field(error, "_tag")
  const name = field(error, "field")
  if (name !== undefined) {
    const value = (error as Record<string, unknown>)["value"]
    const shown = typeof value === "string" && value !== "" && !message.includes(value) ? ` (got ${JSON.stringify(value)})` : ""
    return oneLine(message.startsWith(name) ? `${message}${shown}` : `${name}: ${message}${shown}`)
  }
  const file = field(error, "file") ?? field(error, "source")
  if (file !== undefined) return oneLine(message.includes(file) ? message : `${file}: ${message}`)
  if (tag === "PlatformError" || tag === "SystemError" || tag === "BadArgument") return oneLine(message)
  return oneLine(tag === undefined || message.startsWith(tag) ? message : `${tag}: ${message}`)
}

/** The invalid flag or argument errors of a parse, as one line; help stays behind `--help`. */
const describeInvocation = (errors: ReadonlyArray<CliError.NonShowHelpErrors>): string =>
  oneLine(errors.map((e) => e.message.replace(/Expected: Schema validation failed: /g, "").replace(/Schema validation failed: /g, "")).join("; "))

/** A CLI presenter that prints a bad invocation as one stderr line instead of the help page plus an error block. */
export const presenter = (program: string): Layer.Layer<never> =>
  CliOutput.layerPresenter({
    present: (event) =>
      event._tag === "InvalidInvocation"
        ? Console.error(`${program}: ${describeInvocation(event.errors)} (see --help)`)
        : CliOutput.defaultPresenter.present(event)
  })

const isShowHelp = (error: unknown): error is CliError.ShowHelp => CliError.isCliError(error) && error._tag === "ShowHelp"

/**
 * Wraps a program's main effect: logs to stderr; a failure or defect becomes one stderr line `<program>: <what>` and
 * exit code 1 (interrupts are left to the runtime: 130).
 */
export const report = (program: string) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A | void, Reported, R> =>
  effect.pipe(
    Effect.provideService(Logger.LogToStderr, true),
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = Cause.findErrorOption(cause)
      if (failure._tag === "Some" && isShowHelp(failure.value)) {
        // the presenter already printed the parse errors; a bare help page is a success
        return failure.value.errors.length > 0 ? Effect.fail(new Reported({ code: 1 })) : Effect.void
      }
      const line = failure._tag === "Some" ? describe(failure.value) : `internal error: ${describe(Cause.squash(cause))}`
      return Console.error(`${program}: ${line}`).pipe(Effect.andThen(Effect.fail(new Reported({ code: 1 }))))
    })
  )

/** Runs a command on the process arguments with the one-line reporter and presenter. */
export const run = (program: string, version: string, defaults: ShownDefaults = new Map()) =>
<Name extends string, Input, E, R>(command: Command.Command<Name, Input, {}, E, R>) =>
  Command.run(command, { version }).pipe(
    report(program),
    Effect.provide(presenter(program)),
    Effect.provide(CliOutput.layer(formatterShowing(defaults)))
  )

/** Each flag's default as `--help` shows it, by flag name. */
export type ShownDefaults = ReadonlyMap<string, string>

/** The default help formatter, with ` (default: …)` after the description of every flag `defaults` names. */
export const formatterShowing = (defaults: ShownDefaults): CliOutput.Formatter => {
  const base = CliOutput.defaultFormatter()
  return {
    ...base,
    formatHelpDoc: (doc) =>
      base.formatHelpDoc({
        ...doc,
        flags: doc.flags.map((flag) => {
          const shown = defaults.get(flag.name)
          if (shown === undefined) return flag
          const text = Option.getOrElse(flag.description, () => "")
          return { ...flag, description: Option.some(`${text}${text === "" ? "" : " "}(default: ${shown})`) }
        })
      })
  }
}

/**
 * Defaults that `--help` shows: `withDefault(name, value)` sets a flag's default and records it (`shown` for a value
 * that prints differently, e.g. a computed folder name); pass `shown` to {@link run}.
 */
export const defaults = () => {
  const shown = new Map<string, string>()
  return {
    shown: shown as ShownDefaults,
    withDefault: <const B>(name: string, value: B, text?: string) => <A>(flag: Flag.Flag<A>): Flag.Flag<A | B> => {
      shown.set(name, text ?? (Array.isArray(value) ? value.join(",") : String(value)))
      return flag.pipe(Flag.withDefault(value))
    },
    /** The default `--help` shows for a flag left optional: the program must know whether it was given (`--resume`). */
    optional: (name: string, value: unknown) => <A>(flag: Flag.Flag<A>): Flag.Flag<Option.Option<A>> => {
      shown.set(name, Array.isArray(value) ? value.join(",") : String(value))
      return flag.pipe(Flag.optional)
    }
  }
}
