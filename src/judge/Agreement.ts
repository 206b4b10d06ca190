/**
 * Judge–human agreement (the paper's Table 10): per-criterion accuracy of a judge's binarised verdicts against human
 * ones, the confusion counts, and a stability check (judge twice, count flips). Reads a JSONL of annotated trajectories.
 */
import { Effect, Schema } from "effect"
import { Task } from "../domain/Task.ts"
import { Grade, Trajectory, type Verdict } from "../domain/Trajectory.ts"
import type { Judge } from "./Judge.ts"

/** The three criteria, in the paper's order. */
export const criteria = ["quality", "faithfulness", "utility"] as const
/** One criterion. */
export type Criterion = (typeof criteria)[number]

/** Human grades for one trajectory. */
export const HumanVerdict = Schema.Struct({
  quality: Grade,
  faithfulness: Grade,
  utility: Grade,
  annotator: Schema.optionalKey(Schema.String),
  note: Schema.optionalKey(Schema.String)
})
/** Human grades for one trajectory. */
export type HumanVerdict = typeof HumanVerdict.Type

/** One line of the agreement JSONL: a task, one trajectory of it, and the human verdict. */
export const AgreementRecord = Schema.Struct({
  /** A label for reports (default: the trajectory id). */
  id: Schema.optionalKey(Schema.String),
  task: Task,
  trajectory: Trajectory,
  human: HumanVerdict
})
/** One line of the agreement JSONL. */
export type AgreementRecord = typeof AgreementRecord.Type

/** A line that could not be used, with its 1-based number. */
export interface LineError {
  readonly line: number
  readonly message: string
}

/** A record and the line it came from. */
export interface NumberedRecord {
  readonly line: number
  readonly record: AgreementRecord
}

const decodeLine = Schema.decodeUnknownResult(Schema.fromJsonString(AgreementRecord))

/** Parses JSONL text: blank lines are skipped, bad lines reported with their number and the decode error. */
export const parseJsonl = (text: string): { readonly records: ReadonlyArray<NumberedRecord>; readonly errors: ReadonlyArray<LineError> } => {
  const records: Array<NumberedRecord> = []
  const errors: Array<LineError> = []
  const lines = text.split(/\r?\n/)
  for (const [i, raw] of lines.entries()) {
    if (raw.trim().length === 0) continue
    const decoded = decodeLine(raw)
    if (decoded._tag === "Success") {
      const record = decoded.success
      if (record.trajectory.taskId !== record.task.id) {
        errors.push({ line: i + 1, message: `trajectory.taskId ${JSON.stringify(record.trajectory.taskId)} is not task.id ${JSON.stringify(record.task.id)}` })
      } else {
        records.push({ line: i + 1, record })
      }
    } else {
      errors.push({ line: i + 1, message: decoded.failure.message.replace(/\n\s*/g, " ") })
    }
  }
  return { records, errors }
}

/** A grade as one bit: YES versus PARTIAL / NO (the strict projection R_ans uses). */
export const bit = (grade: Grade): boolean => grade === "YES"

/** Binarised confusion counts: judge grade × human grade. */
export interface Confusion {
  /** Judge YES, human YES. */
  readonly yesYes: number
  /** Judge YES, human PARTIAL/NO. */
  readonly yesNo: number
  /** Judge PARTIAL/NO, human YES. */
  readonly noYes: number
  /** Both PARTIAL/NO. */
  readonly noNo: number
}

/** Agreement on one criterion. */
export interface CriterionReport {
  readonly n: number
  /** Share of items where the binarised grades agree (NaN when n = 0). */
  readonly accuracy: number
  readonly confusion: Confusion
  /** Raw 3×3 counts: `grades[judge][human]`. */
  readonly grades: Readonly<Record<Grade, Readonly<Record<Grade, number>>>>
}

const grades: ReadonlyArray<Grade> = ["YES", "PARTIAL", "NO"]

/** Agreement per criterion over (judge, human) pairs. */
export const agreement = (
  pairs: ReadonlyArray<{ readonly judge: Pick<Verdict, Criterion>; readonly human: Pick<HumanVerdict, Criterion> }>
): Readonly<Record<Criterion, CriterionReport>> => {
  const one = (c: Criterion): CriterionReport => {
    const matrix = Object.fromEntries(grades.map((j) => [j, Object.fromEntries(grades.map((h) => [h, 0]))])) as Record<Grade, Record<Grade, number>>
    let yesYes = 0, yesNo = 0, noYes = 0, noNo = 0
    for (const { judge, human } of pairs) {
      matrix[judge[c]][human[c]]++
      const j = bit(judge[c])
      const h = bit(human[c])
      if (j && h) yesYes++
      else if (j) yesNo++
      else if (h) noYes++
      else noNo++
    }
    const n = pairs.length
    return { n, accuracy: n === 0 ? Number.NaN : (yesYes + noNo) / n, confusion: { yesYes, yesNo, noYes, noNo }, grades: matrix }
  }
  return { quality: one("quality"), faithfulness: one("faithfulness"), utility: one("utility") }
}

/** How often a judge changes its mind on the same item. */
export interface StabilityReport {
  readonly n: number
  /** Share of items whose binarised grade differs between the two runs, per criterion. */
  readonly flipRate: Readonly<Record<Criterion, number>>
  /** Share of items whose raw grade (YES / PARTIAL / NO) differs, per criterion. */
  readonly gradeChangeRate: Readonly<Record<Criterion, number>>
}

/** Flip rates over pairs of verdicts on the same items. */
export const stability = (
  pairs: ReadonlyArray<{ readonly first: Pick<Verdict, Criterion>; readonly second: Pick<Verdict, Criterion> }>
): StabilityReport => {
  const n = pairs.length
  const rate = (differs: (a: Grade, b: Grade) => boolean) =>
    Object.fromEntries(criteria.map((c) => [c, n === 0 ? Number.NaN : pairs.filter((p) => differs(p.first[c], p.second[c])).length / n])) as Record<Criterion, number>
  return { n, flipRate: rate((a, b) => bit(a) !== bit(b)), gradeChangeRate: rate((a, b) => a !== b) }
}

/** An item the judge could not grade. */
export interface ItemError {
  readonly line: number
  readonly id: string
  readonly message: string
}

/** The full report of one agreement run. */
export interface AgreementReport {
  readonly judge: string
  /** Items scored (records the judge graded). */
  readonly n: number
  readonly criteria: Readonly<Record<Criterion, CriterionReport>>
  readonly stability?: StabilityReport
  readonly lineErrors: ReadonlyArray<LineError>
  readonly judgeErrors: ReadonlyArray<ItemError>
}

/** Options of an agreement run. */
export interface RunOptions {
  /** Judge every item a second time and report flip rates. */
  readonly stability?: boolean
  /** Items judged at once (default 4). */
  readonly concurrency?: number
}

/**
 * Judges every record (a failure on one item is reported, not fatal) and scores the verdicts against the humans'.
 * With `stability`, the second verdicts are taken from an independent second pass over all items.
 */
export const run = Effect.fn("Agreement.run")(function*(
  judge: Judge["Service"],
  parsed: { readonly records: ReadonlyArray<NumberedRecord>; readonly errors: ReadonlyArray<LineError> },
  options: RunOptions = {}
) {
  const concurrency = options.concurrency ?? 4
  const pass = Effect.forEach(
    parsed.records,
    ({ line, record }) =>
      judge.judge(record.task, record.trajectory).pipe(
        Effect.map((verdict) => ({ line, record, verdict }) as const),
        Effect.catchTag("JudgeError", (error) =>
          Effect.succeed({ line, record, error: error.message } as const))
      ),
    { concurrency }
  )
  const first = yield* pass
  const second = options.stability === true ? yield* pass : undefined

  const judgeErrors: Array<ItemError> = []
  const scored: Array<{ readonly judge: Verdict; readonly human: HumanVerdict }> = []
  const twice: Array<{ readonly first: Verdict; readonly second: Verdict }> = []
  for (const [i, item] of first.entries()) {
    const label = item.record.id ?? item.record.trajectory.id
    if ("error" in item) {
      judgeErrors.push({ line: item.line, id: label, message: item.error })
      continue
    }
    scored.push({ judge: item.verdict, human: item.record.human })
    const again = second?.[i]
    if (again === undefined) continue
    if ("error" in again) judgeErrors.push({ line: again.line, id: label, message: `second pass: ${again.error}` })
    else twice.push({ first: item.verdict, second: again.verdict })
  }
  const report: AgreementReport = {
    judge: judge.name,
    n: scored.length,
    criteria: agreement(scored),
    ...(options.stability === true ? { stability: stability(twice) } : {}),
    lineErrors: parsed.errors,
    judgeErrors
  }
  return report
})

const pct = (x: number): string => (Number.isNaN(x) ? "n/a" : `${(100 * x).toFixed(1)}%`)
const title = (c: Criterion): string => c[0]!.toUpperCase() + c.slice(1)

/** The report as markdown: the Table 10 row, the confusion counts, stability, and the problems. */
export const renderMarkdown = (report: AgreementReport): string => {
  const lines: Array<string> = [
    `Judge agreement with human verdicts (YES vs PARTIAL/NO), ${report.n} trajectories`,
    "",
    "| Judge | Quality | Faithfulness | Utility |",
    "|---|---|---|---|",
    `| ${report.judge} | ${criteria.map((c) => pct(report.criteria[c].accuracy)).join(" | ")} |`,
    "",
    "| Criterion | judge YES / human YES | judge YES / human not | judge not / human YES | both not |",
    "|---|---|---|---|---|",
    ...criteria.map((c) => {
      const k = report.criteria[c].confusion
      return `| ${title(c)} | ${k.yesYes} | ${k.yesNo} | ${k.noYes} | ${k.noNo} |`
    })
  ]
  if (report.stability !== undefined) {
    const s = report.stability
    lines.push(
      "",
      `Stability (judged twice, ${s.n} trajectories)`,
      "",
      "| | Quality | Faithfulness | Utility |",
      "|---|---|---|---|",
      `| binarised flip rate | ${criteria.map((c) => pct(s.flipRate[c])).join(" | ")} |`,
      `| raw grade change rate | ${criteria.map((c) => pct(s.gradeChangeRate[c])).join(" | ")} |`
    )
  }
  if (report.lineErrors.length > 0) {
    lines.push("", `Skipped ${report.lineErrors.length} bad line(s):`, ...report.lineErrors.map((e) => `- line ${e.line}: ${e.message}`))
  }
  if (report.judgeErrors.length > 0) {
    lines.push("", `The judge failed on ${report.judgeErrors.length} item(s):`, ...report.judgeErrors.map((e) => `- line ${e.line} (${e.id}): ${e.message}`))
  }
  return lines.join("\n")
}
