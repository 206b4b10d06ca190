/**
 * The verdict an agent is shown: the same grades, and a rationale that names what is missing without quoting any
 * gold value — a training client that reads the verdict must not read the answer key. The full verdict stays in the
 * run's own records (trajectories written in-process, the server's log).
 */
import type { GoldFact, Task } from "../domain/Task.ts"
import type { Verdict } from "../domain/Trajectory.ts"

/** What a gold value is replaced by in a client's rationale. */
export const WITHHELD = "[withheld]"

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * A rationale with every gold value taken out: the rule judge's `key="value"` becomes `key`, and any other occurrence
 * of a value (whole, case-insensitive, not inside a longer word or number, nor a count like `3/5`) becomes
 * {@link WITHHELD}. Works on any judge's rationale (an LLM judge given the reference facts may quote them).
 */
export const redactRationale = (facts: ReadonlyArray<Pick<GoldFact, "value">>, rationale: string): string => {
  let out = rationale
  const values = [...new Set(facts.map((f) => f.value.trim()).filter((v) => v.length > 0))].sort((a, b) => b.length - a.length)
  for (const value of values) out = out.split(`=${JSON.stringify(value)}`).join("")
  for (const value of values) {
    out = out.replace(new RegExp(`(?<![\\p{L}\\p{N}/.,])${escapeRegExp(value)}(?![\\p{L}\\p{N}/]|[.,]\\p{N})`, "giu"), WITHHELD)
  }
  return out
}

/** The verdict as an agent over HTTP or MCP receives it: grades and judge unchanged, the rationale redacted. */
export const forClient = (task: Pick<Task, "facts">, verdict: Verdict): Verdict =>
  verdict.rationale === undefined ? verdict : { ...verdict, rationale: redactRationale(task.facts, verdict.rationale) }
