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
}
