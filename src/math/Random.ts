/**
 * Deterministic hashing and pseudo-random numbers: everything seeded in ParaAgent (world, tasks, faults,
 * sampling, training) derives from these, so a seed reproduces a run on any machine.
 */

/** 32-bit FNV-1a hash of a string, mixed with a seed. */
export const hash32 = (text: string, seed = 0): number => {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  // final avalanche (murmur3 fmix32) so nearby strings land far apart
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/**
 * {@link hash32} of the string whose char codes are `bytes` (`String.fromCharCode(...bytes)`), without building it:
 * the same number, for hashing a typed array's bytes.
 */
export const hash32Bytes = (bytes: Uint8Array, seed = 0): number => {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i] as number
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** Hashes several parts (joined unambiguously) into one 32-bit value. */
export const hashParts = (seed: number, ...parts: ReadonlyArray<string | number>): number =>
  hash32(parts.join("\u241f"), seed)

/** A uniform float in [0, 1) from a hash of the parts. */
export const unitHash = (seed: number, ...parts: ReadonlyArray<string | number>): number =>
  hashParts(seed, ...parts) / 4294967296

/** A seeded generator (mulberry32): fast, 32-bit state, good enough for simulation and sampling. */
export interface Rng {
  /** Uniform float in [0, 1). */
  readonly next: () => number
  /** Uniform integer in [0, n). */
  readonly int: (n: number) => number
  /** A uniformly chosen element (the array must not be empty). */
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** A new array with the items in random order (Fisher–Yates). */
  readonly shuffle: <A>(items: ReadonlyArray<A>) => Array<A>
  /** A standard normal variate (Box–Muller). */
  readonly normal: () => number
  /** An independent generator derived from this one and a label. */
  readonly fork: (label: string) => Rng
}

/** Creates a generator from a 32-bit seed. */
export const rng = (seed: number): Rng => {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number): number => Math.floor(next() * n)
  return {
    next,
    int,
    pick: <A>(items: ReadonlyArray<A>): A => items[int(items.length)] as A,
    shuffle: <A>(items: ReadonlyArray<A>): Array<A> => {
      const out = [...items]
      for (let i = out.length - 1; i > 0; i--) {
        const j = int(i + 1)
        const tmp = out[i] as A
        out[i] = out[j] as A
        out[j] = tmp
      }
      return out
    },
    normal: () => {
      const u = 1 - next()
      const v = next()
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    },
    fork: (label) => rng(hash32(label, int(4294967296)))
  }
}
