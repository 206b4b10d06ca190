/**
 * The flags of a benchmark, decoded with `effect/cli` before the benchmark runs: a bad value prints one stderr line
 * naming the flag and exits 1 (through the programs' reporter, `src/io/Cli.ts`); `--help` prints the flags and exits 0.
 */
// a subpath import: the package index loads every Node module, ~1.5 s of start-up
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Exit } from "effect"
import { Command } from "effect/cli"
import * as Cli from "../src/io/Cli.ts"
import * as Provenance from "../src/io/Provenance.ts"

/**
 * Parses the process arguments against `config`; resolves with the decoded flags (or exits: help, a bad flag). `name`
 * is a benchmark's file name without `.ts` (`bench/<name>`), or a path such as `studies/<name>` for a study.
 */
export const parse = async <const Config extends Command.Command.Config>(
  name: string,
  description: string,
  config: Config
): Promise<Command.Command.Config.Infer<Config>> => {
  let decoded: Command.Command.Config.Infer<Config> | undefined
  const program = name.includes("/") ? name : `bench/${name}`
  const command = Command.make(program, config, (flags) => Effect.sync(() => {
    decoded = flags
  })).pipe(Command.withDescription(description))
  const exit = await Effect.runPromiseExit(command.pipe(Cli.run(program, Provenance.packageVersion()), Effect.provide(NodeServices.layer)))
  if (Exit.isFailure(exit)) process.exit(1)
  // --help / --version: the command printed and ran no handler
  if (decoded === undefined) process.exit(0)
  return decoded
}
