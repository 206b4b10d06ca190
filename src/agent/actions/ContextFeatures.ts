/**
 * The context block of every feature row: round, controller state, clauses covered and searched, what the last step
 * brought, tools seen, successes, plan, paradigm. Pure.
 */
import { transientErrorKinds } from "../../domain/Call.ts"
import { factColumn } from "./Facts.ts"
import type { Reading } from "./Reading.ts"
import type { FactCandidate } from "./Types.ts"
import { clip01 } from "./Text.ts"
import { contextWidth } from "./Types.ts"
import type { SpaceContext } from "./Types.ts"

/** The context features of a round. */
export const contextFeatures = (context: SpaceContext, r: Reading): Float64Array => {
  const { clauses, history, seen, last, single } = r
  const ctx = new Float64Array(contextWidth)
  const controllers = ["Need", "May", "No", "Answer"] as const
  ctx[0] = context.round / Math.max(1, context.maxRounds)
  ctx[1] = context.round >= context.maxRounds - 1 ? 1 : 0
  controllers.forEach((c, i) => (ctx[2 + i] = context.controller === c ? 1 : 0))
  const covered = clauses.filter((_, i) => seen.clauseSuccess.has(i)).length
  ctx[6] = covered / clauses.length
  ctx[7] = clauses.filter((_, i) => seen.searchedClauses.has(i)).length / clauses.length
  ctx[8] = last?.observations.some((o) => o.outcome._tag === "ok") === true ? 1 : 0
  ctx[9] = last?.observations.some((o) => o.outcome._tag === "error" && transientErrorKinds.has(o.outcome.error.kind)) === true ? 1 : 0
  ctx[10] = last?.observations.some((o) => o.outcome._tag === "error" && !transientErrorKinds.has(o.outcome.error.kind)) === true ? 1 : 0
  ctx[11] = (last?.searches.length ?? 0) > 0 ? 1 : 0
  ctx[12] = (last?.turn?.calls.length ?? 0) > 0 ? 1 : 0
  ctx[13] = clip01(context.tools.length / 12)
  ctx[14] = clip01(history.successes.length / 6)
  ctx[15] = history.latestPlan !== undefined ? 1 : 0
  ctx[16] = clip01(clauses.length / 4)
  ctx[17] = single ? 1 : 0
  ctx[18] = context.paradigm === "ExploreThenExecute" ? 1 : 0
  ctx[19] = last === undefined ? 1 : last.turn === undefined ? 1 : 0
  return ctx
}

/**
 * The **readiness** block of the context (columns 20–23), from the round's fact candidates: what the answer could say
 * now — the share of clauses with a fact that looks like their answer (a counted item's display field, or the
 * attribute asked: `factColumn`), the share with a fact whose key words meet the clause, whether
 * the last step brought new facts, and how full the fact pool is. Written into `ctx` after the facts are enumerated.
 */
export const readinessFeatures = (
  ctx: Float64Array,
  r: Reading,
  facts: ReadonlyArray<FactCandidate>,
  features: ReadonlyArray<Float64Array>,
  factsTotal: number
): void => {
  const n = Math.max(1, r.clauses.length)
  const answered = new Set<number>()
  const named = new Set<number>()
  facts.forEach((fact, j) => {
    const f = features[j] as Float64Array
    const clause = fact.clause ?? -1
    if (clause < 0) return
    if ((f[factColumn.countedDisplay] as number) > 0 || (f[factColumn.attributeAsked] as number) > 0) answered.add(clause)
    if ((f[factColumn.ownKeyCoversClause] as number) > 0) named.add(clause)
  })
  const lastCalls = new Set<string>((r.last?.observations ?? []).map((o) => o.callId))
  ctx[20] = answered.size / n
  ctx[21] = named.size / n
  ctx[22] = facts.some((f) => lastCalls.has(f.callId)) ? 1 : 0
  ctx[23] = clip01(facts.length / Math.max(1, factsTotal))
}
