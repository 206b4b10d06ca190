/**
 * The learned policy's distribution over turns, given one logit per row of its scored matrix.
 *
 * A turn is chosen in three factors: the action kind (categorical over the available kinds' rows), then that
 * kind's candidates — either a non-empty subset (one Bernoulli per candidate, conditioned on at least one being
 * chosen) or exactly one (categorical), or nothing when the kind has no candidates — and, for kinds that may carry
 * a plan, whether the plan is emitted (one Bernoulli). The log-probability of a sampled turn is exact: the sum of the
 * three factors' log-probabilities, with the subset factor's normaliser log(1 − Π(1 − p_i)).
 * Pure: no Effect, no I/O.
 */
import type { Sets } from "./SetScorer.ts"

/** How a kind's candidates are chosen. */
export type Mode = "subset" | "one" | "none"

/** One available action kind and where its rows are. */
export interface KindSlot {
  /** The row holding this kind's logit (in the kind categorical). */
  readonly row: number
  /** Candidate rows [start, end) of this kind (start === end for mode "none"). */
  readonly start: number
  readonly end: number
  readonly mode: Mode
  /** Whether choosing this kind also draws the plan bit. */
  readonly plan: boolean
}

/** Where the decisions sit among the scored rows. */
export interface Layout {
  /** Which set of rows each row is scored against (the scoring network's input; the distribution does not read it). */
  readonly sets?: Sets
  /** The available kinds, in a fixed order; at least one. */
  readonly kinds: ReadonlyArray<KindSlot>
  /** The row of the plan Bernoulli's logit (present when some kind has `plan`). */
  readonly planRow?: number
  /** Total rows scored. */
  readonly rows: number
}

/** One sampled turn, in layout terms. */
export interface Choice {
  /** Index into `layout.kinds`. */
  readonly kind: number
  /** Chosen candidate rows (absolute row numbers, ascending). */
  readonly selected: ReadonlyArray<number>
  /** Whether the plan is emitted (false when the kind carries no plan). */
  readonly plan: boolean
  /**
   * The candidates were decoded from the logits, not drawn **[ours]** (a sampled turn whose answer's facts are chosen
   * the way evaluation chooses them): they are no factor of the turn's probability, which is then P(kind) · P(plan).
   * Absent: drawn.
   */
  readonly decoded?: boolean
}

/** log σ(z), without overflow or cancellation for any finite z. */
export const logSigmoid = (z: number): number => (z >= 0 ? -Math.log1p(Math.exp(-z)) : z - Math.log1p(Math.exp(z)))

/** σ(z) = 1 / (1 + e^−z), without overflow for any finite z. */
export const sigmoid = (z: number): number => {
  if (z >= 0) return 1 / (1 + Math.exp(-z))
  const e = Math.exp(z)
  return e / (1 + e)
}

/** The logits divided by a temperature: {@link sample} at temperature T draws from the distribution of these. */
export const temper = (logits: Float64Array, temperature: number): Float64Array => logits.map((z) => z / temperature)

const at = (xs: ArrayLike<number>, i: number): number => xs[i] as number

/** log Σ exp(v_i) over the values; −∞ for none. */
const logSumExp = (values: ArrayLike<number>): number => {
  let m = -Infinity
  for (let i = 0; i < values.length; i++) m = Math.max(m, at(values, i))
  if (m === -Infinity) return -Infinity
  let s = 0
  for (let i = 0; i < values.length; i++) s += Math.exp(at(values, i) - m)
  return m + Math.log(s)
}

/** The values at some rows of the logits. */
const gather = (logits: Float64Array, rows: ReadonlyArray<number>): Float64Array => Float64Array.from(rows, (r) => at(logits, r))

const kindRows = (layout: Layout): ReadonlyArray<number> => layout.kinds.map((k) => k.row)

const range = (start: number, end: number): ReadonlyArray<number> => Array.from({ length: end - start }, (_, i) => start + i)

/** The plan row of a kind that draws the plan bit, else undefined. */
const planRowOf = (layout: Layout, slot: KindSlot): number | undefined => (slot.plan ? layout.planRow : undefined)

/**
 * log P(first chosen candidate is i, given at least one is chosen) for each candidate i of a subset kind, and the
 * normaliser log(1 − Π(1 − p_j)). The normaliser is the log-sum-exp of log(p_i · Π_{j<i}(1 − p_j)) — the
 * probability that i is the first one chosen — which stays finite and exact whatever the logits (1 − Π(1 − p_j)
 * computed directly would round to 0 for very negative logits).
 */
const firstChosen = (logits: Float64Array, start: number, end: number): { readonly logFirst: Float64Array; readonly logNonEmpty: number } => {
  const a = new Float64Array(end - start)
  let prefix = 0
  for (let i = start; i < end; i++) {
    const z = at(logits, i)
    a[i - start] = logSigmoid(z) + prefix
    prefix += logSigmoid(-z)
  }
  const logNonEmpty = logSumExp(a)
  return { logFirst: a.map((x) => x - logNonEmpty), logNonEmpty }
}

/** Why a choice has probability 0 under a (valid) layout, or undefined when it is possible. */
const impossible = (layout: Layout, choice: Choice): string | undefined => {
  const slot = layout.kinds[choice.kind]
  if (slot === undefined) return `kind ${choice.kind} is not one of the ${layout.kinds.length} kinds`
  const n = choice.selected.length
  for (let i = 0; i < n; i++) {
    const r = at(choice.selected, i)
    if (!Number.isInteger(r) || r < slot.start || r >= slot.end) return `row ${r} is not a candidate of kind ${choice.kind}`
    if (i > 0 && r <= at(choice.selected, i - 1)) return "selected rows are not strictly ascending"
  }
  if (slot.mode === "subset" && n === 0) return "a subset kind chose no candidate"
  if (slot.mode === "one" && n !== 1) return `a one-of kind chose ${n} candidates`
  if (slot.mode === "none" && n !== 0) return `a kind without candidates chose ${n}`
  if (choice.plan && planRowOf(layout, slot) === undefined) return "the plan bit is set on a kind that carries no plan"
  return undefined
}

/** How a choice's candidates enter its probability: by the kind's mode, or not at all when they were decoded. */
const factorMode = (slot: KindSlot, choice: Choice): Mode => (choice.decoded === true ? "none" : slot.mode)

/**
 * log P(choice) and, when `d` is given, its gradient added into `d`. An impossible choice has log-probability −∞ and
 * contributes no gradient.
 */
const evaluate = (layout: Layout, logits: Float64Array, choice: Choice, d: Float64Array | undefined): number => {
  const slot = layout.kinds[choice.kind]
  if (slot === undefined || impossible(layout, choice) !== undefined) return -Infinity
  const rows = kindRows(layout)
  const kindLse = logSumExp(gather(logits, rows))
  let lp = at(logits, slot.row) - kindLse
  if (d !== undefined) {
    rows.forEach((r, k) => (d[r] = at(d, r) + (k === choice.kind ? 1 : 0) - Math.exp(at(logits, r) - kindLse)))
  }
  const mode = factorMode(slot, choice)
  if (mode === "subset") {
    const chosen = new Set(choice.selected)
    const { logNonEmpty } = firstChosen(logits, slot.start, slot.end)
    for (let i = slot.start; i < slot.end; i++) {
      const z = at(logits, i)
      const picked = chosen.has(i)
      lp += picked ? logSigmoid(z) : logSigmoid(-z)
      // d/dz_i [log P(s) − log P(non-empty)] = s_i − p_i / (1 − Π(1 − p_j)) = s_i − P(s_i = 1 | non-empty)
      if (d !== undefined) d[i] = at(d, i) + (picked ? 1 : 0) - Math.exp(logSigmoid(z) - logNonEmpty)
    }
    lp -= logNonEmpty
  } else if (mode === "one") {
    const pick = at(choice.selected, 0)
    const lse = logSumExp(logits.subarray(slot.start, slot.end))
    lp += at(logits, pick) - lse
    if (d !== undefined) {
      for (let i = slot.start; i < slot.end; i++) d[i] = at(d, i) + (i === pick ? 1 : 0) - Math.exp(at(logits, i) - lse)
    }
  }
  const planRow = planRowOf(layout, slot)
  if (planRow !== undefined) {
    const z = at(logits, planRow)
    lp += choice.plan ? logSigmoid(z) : logSigmoid(-z)
    if (d !== undefined) d[planRow] = at(d, planRow) + (choice.plan ? 1 : 0) - sigmoid(z)
  }
  return lp
}

/**
 * The exact log-probability of a turn: log P(kind) + log P(candidates | kind) + log P(plan | kind), the subset factor
 * conditioned on a non-empty subset; −∞ for a choice the layout cannot produce. The layout must pass {@link validate}.
 */
export const logProb = (layout: Layout, logits: Float64Array, choice: Choice): number => evaluate(layout, logits, choice, undefined)

/** {@link logProb} and its gradient with respect to every row's logit (0 for rows the choice does not involve). */
export const logProbGrad = (layout: Layout, logits: Float64Array, choice: Choice): { readonly logprob: number; readonly dLogits: Float64Array } => {
  const dLogits = new Float64Array(layout.rows)
  const logprob = evaluate(layout, logits, choice, dLogits)
  return { logprob, dLogits }
}

/** An index drawn with probabilities exp(logP_i) (which sum to 1) from one uniform; rounding falls to the last possible index. */
const drawIndex = (logP: ArrayLike<number>, u: number): number => {
  let cumulative = 0
  let last = 0
  for (let i = 0; i < logP.length; i++) {
    const p = Math.exp(at(logP, i))
    if (p <= 0) continue
    cumulative += p
    last = i
    if (u < cumulative) return i
  }
  return last
}

/** log-softmax of some values. */
/**
 * The listwise imitation term of a choice **[ours]**: −log of the probability a softmax over the chosen kind's
 * candidate logits puts on the chosen candidates, −log Σ_{i∈S} softmax_i(z), and its gradient wrt the logits
 * (softmax_j − the softmax restricted to S, on the kind's candidate rows; 0 elsewhere). It trains the candidates'
 * ranking, which greedy decoding's most probable candidate reads, where the subset factor scores each candidate on its
 * own. 0 with a zero gradient for a kind that is not a subset or a choice with no candidate.
 */
export const listwiseGrad = (layout: Layout, logits: Float64Array, choice: Choice): { readonly loss: number; readonly dLogits: Float64Array } => {
  const dLogits = new Float64Array(logits.length)
  const slot = layout.kinds[choice.kind]
  if (slot === undefined || slot.mode !== "subset" || choice.selected.length === 0) return { loss: 0, dLogits }
  const all = logSumExp(logits.subarray(slot.start, slot.end))
  const chosen = logSumExp(Float64Array.from(choice.selected, (r) => at(logits, r)))
  for (let r = slot.start; r < slot.end; r++) dLogits[r] = Math.exp(at(logits, r) - all)
  for (const r of choice.selected) dLogits[r] = at(dLogits, r) - Math.exp(at(logits, r) - chosen)
  return { loss: all - chosen, dLogits }
}

const logSoftmax = (values: Float64Array): Float64Array => {
  const lse = logSumExp(values)
  return values.map((v) => v - lse)
}

/** The first index of the largest value (ties go to the earlier index). */
const argmax = (values: ArrayLike<number>): number => {
  let best = 0
  for (let i = 1; i < values.length; i++) if (at(values, i) > at(values, best)) best = i
  return best
}

/** The most probable choice factor by factor: argmax kind; subset = candidates with p > 0.5, or the single most probable if none; one = argmax; plan = p > 0.5. */
export const greedy = (layout: Layout, logits: Float64Array): Choice => {
  const kind = argmax(gather(logits, kindRows(layout)))
  const slot = layout.kinds[kind] as KindSlot
  let selected: ReadonlyArray<number> = []
  if (slot.mode === "subset") {
    const positive = range(slot.start, slot.end).filter((r) => at(logits, r) > 0)
    // with every p_i < 1/2 each extra candidate multiplies the probability by p_i / (1 − p_i) < 1: the best non-empty subset is one candidate
    selected = positive.length > 0 ? positive : [slot.start + argmax(logits.subarray(slot.start, slot.end))]
  } else if (slot.mode === "one") {
    selected = [slot.start + argmax(logits.subarray(slot.start, slot.end))]
  }
  const planRow = planRowOf(layout, slot)
  return { kind, selected, plan: planRow !== undefined && at(logits, planRow) > 0 }
}

/**
 * {@link greedy} with a subset kind's candidates kept down to a probability `threshold` **[ours]**: the kind, the plan
 * bit and one-of kinds as in {@link greedy}; for a subset kind chosen by `subsets(kind)` (default: every one), every
 * candidate with p > `threshold` (logit > logit(threshold)), else the single most probable one. `threshold` ½ is
 * {@link greedy}. Below ½ it is not the most probable subset of the independent Bernoullis but what a decision
 * threshold tuned on held-out data gives when the model ranks the right candidates first and rates each below ½ —
 * an answer's facts, where two or three requested values each compete with many look-alikes.
 */
export const greedyAbove = (layout: Layout, logits: Float64Array, threshold: number, subsets: (kind: number) => boolean = () => true): Choice => {
  const base = greedy(layout, logits)
  const slot = layout.kinds[base.kind] as KindSlot
  if (slot.mode !== "subset" || !subsets(base.kind) || !(threshold > 0 && threshold < 1)) return base
  return { ...base, selected: subsetAbove(slot, logits, threshold) }
}

/** A subset kind's candidates with p > `threshold` (in (0, 1)), else its single most probable one. */
export const subsetAbove = (slot: KindSlot, logits: Float64Array, threshold: number): ReadonlyArray<number> => {
  const cut = Math.log(threshold / (1 - threshold))
  const above = range(slot.start, slot.end).filter((r) => at(logits, r) > cut)
  return above.length > 0 ? above : [slot.start + argmax(logits.subarray(slot.start, slot.end))]
}

/**
 * An exact draw from the distribution of the logits divided by `temperature` (temperature ≤ 0 gives
 * {@link greedy}). Uniforms are consumed in order: one for the kind; for a subset, one for its first chosen candidate
 * (drawn with probability Π_{j<i}(1 − p_j)·p_i / (1 − Π(1 − p_j))) and one per later candidate (independent
 * Bernoullis); one for a one-of kind; one for the plan bit.
 */
export const sample = (layout: Layout, logits: Float64Array, uniform: () => number, temperature = 1): Choice => {
  if (temperature <= 0) return greedy(layout, logits)
  const z = temperature === 1 ? logits : temper(logits, temperature)
  const kind = drawIndex(logSoftmax(gather(z, kindRows(layout))), uniform())
  const slot = layout.kinds[kind] as KindSlot
  const selected: Array<number> = []
  if (slot.mode === "subset") {
    const first = slot.start + drawIndex(firstChosen(z, slot.start, slot.end).logFirst, uniform())
    selected.push(first)
    for (let i = first + 1; i < slot.end; i++) if (uniform() < sigmoid(at(z, i))) selected.push(i)
  } else if (slot.mode === "one") {
    selected.push(slot.start + drawIndex(logSoftmax(z.slice(slot.start, slot.end)), uniform()))
  }
  const planRow = planRowOf(layout, slot)
  return { kind, selected, plan: planRow !== undefined && uniform() < sigmoid(at(z, planRow)) }
}

/** Entropy of Bernoulli(σ(z)) and its derivative −z·σ(z)·σ(−z); both terms of the sum are ≥ 0, so no cancellation. */
const bernoulliEntropy = (z: number): { readonly h: number; readonly dh: number } => {
  const p = sigmoid(z)
  const q = sigmoid(-z)
  return { h: -p * logSigmoid(z) - q * logSigmoid(-z), dh: -z * p * q }
}

/** Entropy of softmax(values) and its gradient −q_j·(log q_j + H). */
const categoricalEntropy = (values: Float64Array): { readonly h: number; readonly dh: Float64Array } => {
  const logQ = logSoftmax(values)
  let h = 0
  for (let i = 0; i < logQ.length; i++) h -= Math.exp(at(logQ, i)) * at(logQ, i)
  return { h, dh: logQ.map((lq) => -Math.exp(lq) * (lq + h)) }
}

/**
 * A factor-wise entropy bonus and its exact gradient: H(kind) + Σ_k P(k)·H_k + P(a plan-carrying kind)·H(plan),
 * where H_k is the categorical entropy for a one-of kind, 0 for a kind without candidates, and — an approximation —
 * the sum of the candidates' unconditioned Bernoulli entropies for a subset kind (the entropy of the subset
 * conditioned on being non-empty is lower by up to the information in "non-empty"; the sum is smooth, cheap and
 * pushes the same way).
 */
export const entropy = (layout: Layout, logits: Float64Array): { readonly entropy: number; readonly dLogits: Float64Array } => {
  const d = new Float64Array(layout.rows)
  const rows = kindRows(layout)
  const logQ = logSoftmax(gather(logits, rows))
  const kindH = categoricalEntropy(gather(logits, rows))
  const plan = layout.planRow === undefined ? undefined : bernoulliEntropy(at(logits, layout.planRow))
  let planWeight = 0
  // C_k: the entropy of everything drawn after choosing kind k
  const conditional = layout.kinds.map((slot, k) => {
    const q = Math.exp(at(logQ, k))
    let c = 0
    if (slot.mode === "subset") {
      for (let i = slot.start; i < slot.end; i++) {
        const b = bernoulliEntropy(at(logits, i))
        c += b.h
        d[i] = at(d, i) + q * b.dh
      }
    } else if (slot.mode === "one") {
      const cat = categoricalEntropy(logits.slice(slot.start, slot.end))
      c += cat.h
      cat.dh.forEach((g, j) => (d[slot.start + j] = at(d, slot.start + j) + q * g))
    }
    if (plan !== undefined && planRowOf(layout, slot) !== undefined) {
      c += plan.h
      planWeight += q
    }
    return c
  })
  let expected = 0
  conditional.forEach((c, k) => (expected += Math.exp(at(logQ, k)) * c))
  rows.forEach((r, k) => {
    const q = Math.exp(at(logQ, k))
    // dH(kind)/dz_k plus d(Σ_j q_j C_j)/dz_k = q_k (C_k − Σ_j q_j C_j)
    d[r] = at(d, r) + at(kindH.dh, k) + q * (at(conditional, k) - expected)
  })
  if (plan !== undefined && layout.planRow !== undefined) d[layout.planRow] = at(d, layout.planRow) + planWeight * plan.dh
  return { entropy: kindH.h + expected, dLogits: d }
}

/** Why a layout is malformed (rows out of range or shared, no kinds, a misplaced plan row, a mode that does not fit its rows), or undefined. */
export const validate = (layout: Layout): string | undefined => {
  if (!Number.isInteger(layout.rows) || layout.rows < 0) return `rows is ${layout.rows}, not a non-negative integer`
  if (layout.kinds.length === 0) return "no kinds"
  const owner = new Map<number, string>()
  const claim = (row: number, what: string): string | undefined => {
    if (!Number.isInteger(row) || row < 0 || row >= layout.rows) return `${what} is row ${row}, outside [0, ${layout.rows})`
    const before = owner.get(row)
    if (before !== undefined) return `row ${row} is both ${before} and ${what}`
    owner.set(row, what)
    return undefined
  }
  for (let k = 0; k < layout.kinds.length; k++) {
    const slot = layout.kinds[k] as KindSlot
    const problem = claim(slot.row, `kind ${k}'s row`)
    if (problem !== undefined) return problem
    if (!Number.isInteger(slot.start) || !Number.isInteger(slot.end) || slot.start > slot.end) {
      return `kind ${k}'s candidates [${slot.start}, ${slot.end}) are not a range`
    }
    if ((slot.mode === "none") !== (slot.start === slot.end)) {
      return `kind ${k} has mode "${slot.mode}" and ${slot.end - slot.start} candidates (mode "none" iff no candidates)`
    }
    for (let r = slot.start; r < slot.end; r++) {
      const overlap = claim(r, `a candidate of kind ${k}`)
      if (overlap !== undefined) return overlap
    }
  }
  const planned = layout.kinds.some((k) => k.plan)
  if (planned && layout.planRow === undefined) return "a kind carries a plan but there is no plan row"
  if (!planned && layout.planRow !== undefined) return "a plan row but no kind carries a plan"
  return layout.planRow === undefined ? undefined : claim(layout.planRow, "the plan row")
}

/**
 * What one factor of a turn's probability decides **[ours]**, so a trainer can give each its own advantage:
 * `kind` the action kind; `candidate` one candidate row's decision (`chosen`: it was picked; `position`: its index
 * in `choice.selected`, −1 when not chosen); `plan` the plan bit.
 */
export type FactorTarget =
  | { readonly _tag: "kind" }
  | { readonly _tag: "candidate"; readonly row: number; readonly chosen: boolean; readonly position: number }
  | { readonly _tag: "plan" }

/** One factor of a turn's log-probability and what it decides. */
export interface Factor {
  readonly logprob: number
  readonly target: FactorTarget
}

/**
 * The turn's log-probability as a sum of factors, in the order they are sampled: the kind; for a subset kind the
 * **first chosen** candidate (a categorical over "candidate i is the first one chosen", given a non-empty subset —
 * exactly the first uniform {@link sample} draws) and then one Bernoulli per later candidate; for a one-of kind the
 * categorical; the plan bit. Σ factors = {@link logProb} exactly: P(S) = P(first = min S | non-empty) ·
 * Π_{i > min S} P(s_i), since the candidates before the first are unchosen by definition. Empty for an impossible
 * choice. Each candidate decision is its own factor, so a trainer can credit a call with its own reward.
 */
export const factors = (layout: Layout, logits: Float64Array, choice: Choice): ReadonlyArray<Factor> => {
  const slot = layout.kinds[choice.kind]
  if (slot === undefined || impossible(layout, choice) !== undefined) return []
  const rows = kindRows(layout)
  const out: Array<Factor> = [{ logprob: at(logits, slot.row) - logSumExp(gather(logits, rows)), target: { _tag: "kind" } }]
  const position = new Map(choice.selected.map((r, i) => [r, i]))
  const mode = factorMode(slot, choice)
  if (mode === "subset") {
    const first = at(choice.selected, 0)
    const { logFirst } = firstChosen(logits, slot.start, slot.end)
    out.push({ logprob: at(logFirst, first - slot.start), target: { _tag: "candidate", row: first, chosen: true, position: 0 } })
    for (let i = first + 1; i < slot.end; i++) {
      const p = position.get(i)
      const z = at(logits, i)
      out.push({
        logprob: p !== undefined ? logSigmoid(z) : logSigmoid(-z),
        target: { _tag: "candidate", row: i, chosen: p !== undefined, position: p ?? -1 }
      })
    }
  } else if (mode === "one") {
    const pick = at(choice.selected, 0)
    out.push({ logprob: at(logits, pick) - logSumExp(logits.subarray(slot.start, slot.end)), target: { _tag: "candidate", row: pick, chosen: true, position: 0 } })
  }
  const planRow = planRowOf(layout, slot)
  if (planRow !== undefined) {
    const z = at(logits, planRow)
    out.push({ logprob: choice.plan ? logSigmoid(z) : logSigmoid(-z), target: { _tag: "plan" } })
  }
  return out
}

/**
 * Σ_f weights[f] · ∂ log p_f / ∂ logits, added into `d`, for the factors of {@link factors} (same order). With every
 * weight 1 it is {@link logProbGrad}'s gradient. Nothing is added for an impossible choice.
 */
export const addFactorGrad = (layout: Layout, logits: Float64Array, choice: Choice, weights: ArrayLike<number>, d: Float64Array): void => {
  const slot = layout.kinds[choice.kind]
  if (slot === undefined || impossible(layout, choice) !== undefined) return
  let f = 0
  const w = (): number => at(weights, f++)
  const rows = kindRows(layout)
  const kindLse = logSumExp(gather(logits, rows))
  const wKind = w()
  rows.forEach((r, k) => (d[r] = at(d, r) + wKind * ((k === choice.kind ? 1 : 0) - Math.exp(at(logits, r) - kindLse))))
  const mode = factorMode(slot, choice)
  if (mode === "subset") {
    const first = at(choice.selected, 0)
    const { logNonEmpty } = firstChosen(logits, slot.start, slot.end)
    // log P(first = f | non-empty) = log σ(z_f) + Σ_{j<f} log σ(−z_j) − log Z, Z = 1 − Π_j (1 − p_j);
    // ∂ log Z / ∂z_j = p_j (1 − Z) / Z
    let logNone = 0
    for (let j = slot.start; j < slot.end; j++) logNone += logSigmoid(-at(logits, j))
    const ratio = Math.exp(logNone - logNonEmpty)
    const wFirst = w()
    for (let j = slot.start; j < slot.end; j++) {
      const z = at(logits, j)
      const p = sigmoid(z)
      const own = j < first ? -p : j === first ? sigmoid(-z) : 0
      d[j] = at(d, j) + wFirst * (own - p * ratio)
    }
    const chosen = new Set(choice.selected)
    for (let i = first + 1; i < slot.end; i++) {
      const wi = w()
      d[i] = at(d, i) + wi * ((chosen.has(i) ? 1 : 0) - sigmoid(at(logits, i)))
    }
  } else if (mode === "one") {
    const pick = at(choice.selected, 0)
    const lse = logSumExp(logits.subarray(slot.start, slot.end))
    const wOne = w()
    for (let i = slot.start; i < slot.end; i++) d[i] = at(d, i) + wOne * ((i === pick ? 1 : 0) - Math.exp(at(logits, i) - lse))
  }
  const planRow = planRowOf(layout, slot)
  if (planRow !== undefined) {
    const wPlan = w()
    d[planRow] = at(d, planRow) + wPlan * ((choice.plan ? 1 : 0) - sigmoid(at(logits, planRow)))
  }
}

/**
 * A bounded entropy bonus **[ours]** and its exact gradient: every factor's entropy divided by its maximum, so the
 * bonus stays in [0, 3] whatever the number of candidates — H(kind)/log K + Σ_k P(k)·H̄_k + P(plan kind)·H(plan)/log 2,
 * where H̄_k is the **mean** Bernoulli entropy of a subset kind's candidates over log 2 (not their sum, which grows
 * with the candidate count, so turns with many candidates dominated {@link entropy}), the categorical entropy over
 * log n for a one-of kind with n ≥ 2 candidates, and 0 otherwise. A kind categorical over one kind contributes 0.
 */
export const entropyNormalised = (layout: Layout, logits: Float64Array): { readonly entropy: number; readonly dLogits: Float64Array } => {
  const d = new Float64Array(layout.rows)
  const rows = kindRows(layout)
  const logQ = logSoftmax(gather(logits, rows))
  const kindScale = rows.length > 1 ? 1 / Math.log(rows.length) : 0
  const kindH = categoricalEntropy(gather(logits, rows))
  const plan = layout.planRow === undefined ? undefined : bernoulliEntropy(at(logits, layout.planRow))
  let planWeight = 0
  const conditional = layout.kinds.map((slot, k) => {
    const q = Math.exp(at(logQ, k))
    const n = slot.end - slot.start
    let c = 0
    if (slot.mode === "subset") {
      const scale = 1 / (n * Math.LN2)
      for (let i = slot.start; i < slot.end; i++) {
        const b = bernoulliEntropy(at(logits, i))
        c += scale * b.h
        d[i] = at(d, i) + q * scale * b.dh
      }
    } else if (slot.mode === "one" && n > 1) {
      const scale = 1 / Math.log(n)
      const cat = categoricalEntropy(logits.slice(slot.start, slot.end))
      c += scale * cat.h
      cat.dh.forEach((g, j) => (d[slot.start + j] = at(d, slot.start + j) + q * scale * g))
    }
    if (plan !== undefined && planRowOf(layout, slot) !== undefined) {
      c += plan.h / Math.LN2
      planWeight += q
    }
    return c
  })
  let expected = 0
  conditional.forEach((c, k) => (expected += Math.exp(at(logQ, k)) * c))
  rows.forEach((r, k) => {
    const q = Math.exp(at(logQ, k))
    d[r] = at(d, r) + kindScale * at(kindH.dh, k) + q * (at(conditional, k) - expected)
  })
  if (plan !== undefined && layout.planRow !== undefined) d[layout.planRow] = at(d, layout.planRow) + (planWeight * plan.dh) / Math.LN2
  return { entropy: kindScale * kindH.h + expected, dLogits: d }
}
