/**
 * A set of acceptable turns as a label, and its exact probability under the turn distribution: when several turns are
 * equally good (equivalent providers, the same fact from two calls, two queries that both find the needed tool), an
 * imitation loss on one arbitrary pick among them teaches noise; −log P(any acceptable turn) does not.
 * Pure: no Effect, no I/O.
 */
import { logSigmoid, sigmoid } from "./TurnDistribution.ts"
import type { Choice, KindSlot, Layout } from "./TurnDistribution.ts"

/**
 * One way a turn can be acceptable: the kind, groups of candidate rows of which the turn must take at least one each,
 * the rows it may take at all (`allowed`, a superset of the groups' rows; every other candidate of the kind must stay
 * out), and the plan bit (`undefined`: either). Under a one-of kind the turn must take one row of a group (or of
 * `allowed` when there is no group). No group: any non-empty subset of `allowed`.
 */
export interface Alternative {
  readonly kind: number
  readonly groups: ReadonlyArray<ReadonlyArray<number>>
  readonly allowed: ReadonlyArray<number>
  readonly plan: boolean | undefined
}

/** A label: the turns of any of its alternatives are acceptable (at least one alternative). */
export interface Acceptable {
  readonly alternatives: ReadonlyArray<Alternative>
}

const at = (xs: ArrayLike<number>, i: number): number => xs[i] as number

/** log(1 − e^x) for x ≤ 0, without cancellation (−∞ at x = 0). */
export const log1mExp = (x: number): number => (x > -Math.LN2 ? Math.log(-Math.expm1(x)) : Math.log1p(-Math.exp(x)))

const logSumExp = (values: ReadonlyArray<number>): number => {
  let m = -Infinity
  for (const v of values) m = Math.max(m, v)
  if (m === -Infinity) return -Infinity
  let s = 0
  for (const v of values) s += Math.exp(v - m)
  return m + Math.log(s)
}

/**
 * The groups made disjoint: identical groups kept once, groups sharing a row merged into one (a row serving two needs
 * satisfies both; merging relaxes the label to "one of the union" for those needs, which keeps the probability a
 * product of independent group terms).
 */
export const disjointGroups = (groups: ReadonlyArray<ReadonlyArray<number>>): ReadonlyArray<ReadonlyArray<number>> => {
  const merged: Array<Set<number>> = []
  for (const g of groups) {
    if (g.length === 0) continue
    let into = new Set(g)
    for (let i = merged.length - 1; i >= 0; i--) {
      const m = merged[i] as Set<number>
      if ([...into].some((r) => m.has(r))) {
        into = new Set([...m, ...into])
        merged.splice(i, 1)
      }
    }
    merged.push(into)
  }
  return merged.map((s) => [...s].sort((a, b) => a - b))
}

/** An alternative's rows within its kind's candidates, and its groups made disjoint over those rows. */
const normalise = (slot: KindSlot, alt: Alternative): { readonly allowed: ReadonlySet<number>; readonly groups: ReadonlyArray<ReadonlyArray<number>> } => {
  const allowed = new Set(alt.allowed.filter((r) => r >= slot.start && r < slot.end))
  return { allowed, groups: disjointGroups(alt.groups.map((g) => g.filter((r) => allowed.has(r)))) }
}

/** Whether a choice is one of the label's acceptable turns (with the groups made disjoint, as the probability counts them). */
export const accepts = (layout: Layout, label: Acceptable, choice: Choice): boolean =>
  label.alternatives.some((alt) => {
    if (alt.kind !== choice.kind) return false
    const slot = layout.kinds[alt.kind]
    if (slot === undefined) return false
    if (alt.plan !== undefined && slot.plan && layout.planRow !== undefined && alt.plan !== choice.plan) return false
    const picked = new Set(choice.selected)
    if (slot.mode === "none") return picked.size === 0
    const { allowed, groups } = normalise(slot, alt)
    if (picked.size === 0 || ![...picked].every((r) => allowed.has(r))) return false
    if (slot.mode === "one") return (groups.length === 0 ? [...allowed] : groups.flat()).includes(choice.selected[0] as number)
    return groups.length > 0 ? groups.every((g) => g.some((r) => picked.has(r))) : true
  })

/** log P(one alternative) and, when `d` is given, its gradient added into `d` scaled by `weight`. */
const alternative = (layout: Layout, logits: Float64Array, alt: Alternative, d: Float64Array | undefined, weight: number): number => {
  const slot = layout.kinds[alt.kind] as KindSlot | undefined
  if (slot === undefined) return -Infinity
  const kindRows = layout.kinds.map((k) => k.row)
  const kindLse = logSumExp(kindRows.map((r) => at(logits, r)))
  let lp = at(logits, slot.row) - kindLse
  if (d !== undefined) {
    kindRows.forEach((r, k) => (d[r] = at(d, r) + weight * ((k === alt.kind ? 1 : 0) - Math.exp(at(logits, r) - kindLse))))
  }
  const { allowed, groups } = normalise(slot, alt)
  if (slot.mode === "subset") {
    // forbidden rows stay out; each group takes at least one; with no group, at least one allowed row; all of it
    // conditioned on a non-empty subset (the normaliser of TurnDistribution)
    let prefix = 0
    const first: Array<number> = []
    for (let i = slot.start; i < slot.end; i++) {
      const z = at(logits, i)
      first.push(logSigmoid(z) + prefix)
      prefix += logSigmoid(-z)
    }
    const logNonEmpty = logSumExp(first)
    for (let i = slot.start; i < slot.end; i++) {
      if (allowed.has(i)) continue
      lp += logSigmoid(-at(logits, i))
      if (d !== undefined) d[i] = at(d, i) - weight * sigmoid(at(logits, i))
    }
    const needs = groups.length > 0 ? groups : allowed.size > 0 ? [[...allowed]] : []
    if (needs.length === 0) return -Infinity
    for (const g of needs) {
      let none = 0
      for (const r of g) none += logSigmoid(-at(logits, r))
      const term = log1mExp(none)
      lp += term
      // d/dz_r log(1 − Π(1 − p)) = p_r · Π(1 − p) / (1 − Π(1 − p))
      if (d !== undefined) for (const r of g) d[r] = at(d, r) + weight * sigmoid(at(logits, r)) * Math.exp(none - term)
    }
    lp -= logNonEmpty
    // d/dz_i log(1 − Π(1 − p_j)) = p_i · Π(1 − p_j) / (1 − Π(1 − p_j)); `prefix` ends as log Π(1 − p_j)
    if (d !== undefined) {
      for (let i = slot.start; i < slot.end; i++) d[i] = at(d, i) - weight * Math.exp(logSigmoid(at(logits, i)) + prefix - logNonEmpty)
    }
  } else if (slot.mode === "one") {
    const union = [...new Set(groups.length > 0 ? groups.flat() : [...allowed])]
    if (union.length === 0) return -Infinity
    const all: Array<number> = []
    for (let i = slot.start; i < slot.end; i++) all.push(at(logits, i))
    const lseAll = logSumExp(all)
    const lseOk = logSumExp(union.map((r) => at(logits, r)))
    lp += lseOk - lseAll
    if (d !== undefined) {
      const ok = new Set(union)
      for (let i = slot.start; i < slot.end; i++) {
        d[i] = at(d, i) + weight * ((ok.has(i) ? Math.exp(at(logits, i) - lseOk) : 0) - Math.exp(at(logits, i) - lseAll))
      }
    }
  }
  const planRow = slot.plan ? layout.planRow : undefined
  if (planRow !== undefined && alt.plan !== undefined) {
    const z = at(logits, planRow)
    lp += alt.plan ? logSigmoid(z) : logSigmoid(-z)
    if (d !== undefined) d[planRow] = at(d, planRow) + weight * ((alt.plan ? 1 : 0) - sigmoid(z))
  }
  return lp
}

/**
 * log P(the turn is acceptable): the log-sum-exp over the alternatives (which must name distinct kinds, so their
 * turns are disjoint) of log P(kind) + log P(the kind's candidates satisfy the alternative | kind, non-empty) +
 * log P(plan bit); −∞ when no alternative is possible.
 */
export const logProb = (layout: Layout, logits: Float64Array, label: Acceptable): number =>
  logSumExp(label.alternatives.map((alt) => alternative(layout, logits, alt, undefined, 1)))

/** {@link logProb} and its gradient with respect to every row's logit. */
export const logProbGrad = (layout: Layout, logits: Float64Array, label: Acceptable): { readonly logprob: number; readonly dLogits: Float64Array } => {
  const parts = label.alternatives.map((alt) => alternative(layout, logits, alt, undefined, 1))
  const logprob = logSumExp(parts)
  const dLogits = new Float64Array(layout.rows)
  if (logprob === -Infinity) return { logprob, dLogits }
  // the mixture's gradient: each alternative's, weighted by its posterior share
  label.alternatives.forEach((alt, i) => {
    const w = Math.exp(at(parts, i) - logprob)
    if (w > 0) alternative(layout, logits, alt, dLogits, w)
  })
  return { logprob, dLogits }
}

/** The label of one exact choice: its kind, each chosen row a group of its own, nothing else allowed, its plan bit. */
export const exactly = (layout: Layout, choice: Choice): Acceptable => {
  const slot = layout.kinds[choice.kind]
  return {
    alternatives: [{
      kind: choice.kind,
      groups: slot?.mode === "one" ? [choice.selected] : choice.selected.map((r) => [r]),
      allowed: choice.selected,
      plan: slot?.plan === true && layout.planRow !== undefined ? choice.plan : undefined
    }]
  }
}

/**
 * The label's turn the model itself favours **[ours]**: for the alternative of kind `choice.kind`, per group the row
 * with the largest logit (each once, ascending; a one-of kind: the largest over the groups' rows), the plan bit as
 * `choice` has it. An exact label that picks among equivalent rows by the learner's own preference — the matching step
 * of hard EM, or of DETR's set loss — instead of an arbitrary first, so the rows the learner cannot tell apart do not
 * teach it contrary targets. `choice` itself when the label has no groups under its kind.
 */
export const matched = (layout: Layout, label: Acceptable, choice: Choice, logits: ArrayLike<number>): Choice => {
  const slot = layout.kinds[choice.kind]
  const groups = label.alternatives.find((a) => a.kind === choice.kind)?.groups.filter((g) => g.length > 0) ?? []
  if (slot === undefined || groups.length === 0) return choice
  const best = (rows: ReadonlyArray<number>): number => rows.reduce((b, r) => (at(logits, r) > at(logits, b) ? r : b))
  const selected = slot.mode === "one" ? [best(groups.flat())] : [...new Set(groups.map(best))].sort((a, b) => a - b)
  return { ...choice, selected }
}
