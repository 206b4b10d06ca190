/**
 * The scripted teacher's knobs: its mistake rate and how many searches and attempts it spends before giving up.
 * Validated once, a bad value naming its field.
 */
import { Effect } from "effect"
import { ConfigError } from "../../domain/Errors.ts"

/** How the teacher behaves. */
export interface TeacherOptions {
  /**
   * Probability of each kind of mistake a scripted role can make at a decision point: the searcher writes a vague
   * query, the executor sends broken arguments on a first attempt, the planner forgets a dependency, the answerer
   * omits a fact.
   */
  readonly mistakeRate: number
  /** Search attempts per capability slot before the teacher gives up on finding its tool. */
  readonly searchAttempts: number
  /** Attempts per plan node (first try + retries) before the teacher gives up on it. */
  readonly callAttempts: number
  /**
   * How the searcher phrases a slot's first query: `documentation` — the first sentence of the planned tool's own
   * description (what a searcher that knows its tool writes); `request` — the capability words of the request's
   * clause the slot serves, as a student that only reads the request can also write them (ActionSpace's clause
   * query), so a demonstration's first round is one the learned policy can express. Later attempts read the tool's
   * documentation either way.
   */
  readonly firstQuery: "documentation" | "request"
}

/** Defaults: 10% mistakes, 3 searches per slot, 3 attempts per call, first queries from the tools' documentation. */
export const defaultOptions: TeacherOptions = { mistakeRate: 0.1, searchAttempts: 3, callAttempts: 3, firstQuery: "documentation" }

/** Checks options (a rate in [0, 1], attempt counts that are positive integers); a bad value names its field. */
export const validateOptions = (options: TeacherOptions): Effect.Effect<TeacherOptions, ConfigError> => {
  const bad = (field: keyof TeacherOptions, message: string) =>
    Effect.fail(new ConfigError({ field, value: String(options[field]), message }))
  if (!(options.mistakeRate >= 0 && options.mistakeRate <= 1)) return bad("mistakeRate", "mistakeRate must be between 0 and 1")
  if (!Number.isInteger(options.searchAttempts) || options.searchAttempts < 1) {
    return bad("searchAttempts", "searchAttempts must be a positive integer")
  }
  if (!Number.isInteger(options.callAttempts) || options.callAttempts < 1) return bad("callAttempts", "callAttempts must be a positive integer")
  if (options.firstQuery !== "documentation" && options.firstQuery !== "request") return bad("firstQuery", "firstQuery must be documentation or request")
  return Effect.succeed(options)
}
