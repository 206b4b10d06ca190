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
}

/** Defaults: 10% mistakes, 3 searches per slot, 3 attempts per call. */
export const defaultOptions: TeacherOptions = { mistakeRate: 0.1, searchAttempts: 3, callAttempts: 3 }

/** Checks options (a rate in [0, 1], attempt counts that are positive integers); a bad value names its field. */
export const validateOptions = (options: TeacherOptions): Effect.Effect<TeacherOptions, ConfigError> => {
  const bad = (field: keyof TeacherOptions, message: string) =>
    Effect.fail(new ConfigError({ field, value: String(options[field]), message }))
  if (!(options.mistakeRate >= 0 && options.mistakeRate <= 1)) return bad("mistakeRate", "mistakeRate must be between 0 and 1")
  if (!Number.isInteger(options.searchAttempts) || options.searchAttempts < 1) {
    return bad("searchAttempts", "searchAttempts must be a positive integer")
  }
  if (!Number.isInteger(options.callAttempts) || options.callAttempts < 1) return bad("callAttempts", "callAttempts must be a positive integer")
  return Effect.succeed(options)
}
