/**
 * Summary statistics for evaluation and training logs: mean, population std, percentiles, the unbiased pass@k
 * estimator, and the paired bootstrap interval models are compared with. Pure; an undefined statistic (the mean of
 * nothing, pass@k with k > n) is NaN, never thrown.
 */
import { rng } from "./Random.ts"

/** Arithmetic mean; NaN for no values. */
export const mean = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return NaN
  let sum = 0
  for (const x of xs) sum += x
  return sum / xs.length
}

/** Population standard deviation (divides by n, as group normalisation does); NaN for no values. */
export const std = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return NaN
  const m = mean(xs)
  let sum = 0
  for (const x of xs) sum += (x - m) * (x - m)
  return Math.sqrt(sum / xs.length)
}

/**
 * The p-th percentile (p in [0, 100]) with linear interpolation between closest ranks (the default of numpy
 * and R type 7): rank (n − 1)·p/100 of the sorted values. NaN for no values or p outside [0, 100].
 */
export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  if (xs.length === 0 || !(p >= 0 && p <= 100)) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  const rank = ((sorted.length - 1) * p) / 100
  const lo = Math.floor(rank)
  const hi = Math.ceil(rank)
  const a = sorted[lo] as number
  const b = sorted[hi] as number
  return a + (b - a) * (rank - lo)
}

/** The median. */
export const p50 = (xs: ReadonlyArray<number>): number => percentile(xs, 50)

/** The 95th percentile. */
export const p95 = (xs: ReadonlyArray<number>): number => percentile(xs, 95)

/** n, mean, std, min, p50, p95, max of a sample. */
export interface Summary {
  readonly n: number
  readonly mean: number
  readonly std: number
  readonly min: number
  readonly p50: number
  readonly p95: number
  readonly max: number
}

/** The {@link Summary} of a sample (NaN fields when it is empty). */
export const summary = (xs: ReadonlyArray<number>): Summary => ({
  n: xs.length,
  mean: mean(xs),
  std: std(xs),
  min: xs.length === 0 ? NaN : xs.reduce((a, b) => Math.min(a, b)),
  p50: p50(xs),
  p95: p95(xs),
  max: xs.length === 0 ? NaN : xs.reduce((a, b) => Math.max(a, b))
})

/**
 * Unbiased pass@k from n samples of which c are correct: 1 − C(n−c, k)/C(n, k), computed as
 * 1 − ∏_{i=n−c+1}^{n} (1 − k/i) so no binomial coefficient is formed (stable for large n).
 * Needs integers 0 ≤ c ≤ n and 1 ≤ k ≤ n; NaN otherwise.
 */
export const passAtK = (n: number, c: number, k: number): number => {
  if (![n, c, k].every(Number.isInteger) || c < 0 || c > n || k < 1 || k > n) return NaN
  if (n - c < k) return 1
  let miss = 1
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i
  return 1 - miss
}

/** A mean with its confidence interval. */
export interface Interval {
  readonly mean: number
  readonly lo: number
  readonly hi: number
}

/**
 * Options of {@link pairedBootstrap}: replicates (default 2,000), confidence level (0.95), the resampling seed (1), and
 * the tasks' clusters (absent: every task its own).
 */
export interface BootstrapOptions {
  readonly resamples?: number
  readonly level?: number
  readonly seed?: number
  /**
   * Each task's cluster, 0 … C − 1 (every index below C used) **[ours]**: a replicate then resamples whole clusters —
   * C draws with replacement, each bringing all of its tasks — instead of single tasks. Tasks that pass or fail
   * together (one provider's, one category's) are then not counted as independent evidence, and the interval widens to
   * say so. Absent, or one cluster per task in order, is the plain task bootstrap, draw for draw.
   */
  readonly clusters?: ReadonlyArray<number>
}

/**
 * Each key's cluster index for {@link BootstrapOptions.clusters}: the keys in order of first appearance, numbered from
 * 0 (`["a", "b", "a"]` → `[0, 1, 0]`). Equal keys share a cluster; every index below the number of distinct keys is used.
 */
export const clusterIndex = (keys: ReadonlyArray<string>): ReadonlyArray<number> => {
  const order = new Map<string, number>()
  return keys.map((k) => {
    const known = order.get(k)
    if (known !== undefined) return known
    order.set(k, order.size)
    return order.size - 1
  })
}

/** The tasks of each cluster (in task order), or undefined when `clusters` is not one index in 0 … C − 1 per task with every index used. */
const clusterMembers = (tasks: number, clusters: ReadonlyArray<number> | undefined): ReadonlyArray<ReadonlyArray<number>> | undefined => {
  if (clusters === undefined) return Array.from({ length: tasks }, (_, t) => [t])
  if (clusters.length !== tasks || clusters.some((c) => !Number.isInteger(c) || c < 0)) return undefined
  const members: Array<Array<number>> = Array.from({ length: Math.max(...clusters) + 1 }, () => [])
  clusters.forEach((c, t) => (members[c] as Array<number>).push(t))
  return members.some((m) => m.length === 0) ? undefined : members
}

/**
 * The mean of paired differences and its percentile-bootstrap interval **[ours]**. `diffs[s][t]` is model A's score
 * minus model B's on task t under training seed s (each averaged over that task's rollouts), the same tasks for every
 * seed. A replicate resamples the seeds and the tasks independently, with replacement — the same task draw for every
 * seed, so each difference stays paired on its task — and takes the mean over the resampled cells; the interval is
 * the (1 − level)/2 and (1 + level)/2 percentiles of the replicates. Resampling seeds as well as tasks makes the
 * interval cover the spread between training runs, not only task sampling and rollout noise (with one seed it is
 * the plain task bootstrap). With `options.clusters` whole clusters of tasks are resampled instead of tasks, and a
 * replicate is the mean over the cells its clusters bring. Deterministic for a seed; NaN fields when there is no
 * difference, the rows differ in length, or the clusters are not one index per task in 0 … C − 1 with every index used.
 */
export const pairedBootstrap = (diffs: ReadonlyArray<ReadonlyArray<number>>, options: BootstrapOptions = {}): Interval => {
  const seeds = diffs.length
  const tasks = diffs[0]?.length ?? 0
  if (seeds === 0 || tasks === 0 || diffs.some((row) => row.length !== tasks)) return { mean: NaN, lo: NaN, hi: NaN }
  const members = clusterMembers(tasks, options.clusters)
  if (members === undefined) return { mean: NaN, lo: NaN, hi: NaN }
  const resamples = options.resamples ?? 2_000
  const level = options.level ?? 0.95
  let total = 0
  for (const row of diffs) for (const d of row) total += d
  const m = total / (seeds * tasks)
  const r = rng(options.seed ?? 1)
  const replicates = new Float64Array(resamples)
  const rows = new Int32Array(seeds)
  const drawn = new Int32Array(members.length)
  for (let b = 0; b < resamples; b++) {
    for (let s = 0; s < seeds; s++) rows[s] = r.int(seeds)
    for (let c = 0; c < members.length; c++) drawn[c] = r.int(members.length)
    let sum = 0
    let cells = 0
    for (let s = 0; s < seeds; s++) {
      const row = diffs[rows[s] as number] as ReadonlyArray<number>
      for (let c = 0; c < members.length; c++) {
        const cluster = members[drawn[c] as number] as ReadonlyArray<number>
        for (const t of cluster) sum += row[t] as number
        cells += cluster.length
      }
    }
    replicates[b] = sum / cells
  }
  const sorted = Array.from(replicates)
  const tail = (100 * (1 - level)) / 2
  return { mean: m, lo: percentile(sorted, tail), hi: percentile(sorted, 100 - tail) }
}
