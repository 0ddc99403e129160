/**
 * Seeded pseudo-random numbers. The engine never uses Math.random: the same seed and input
 * give the same tokens on every run and platform.
 * Algorithm: xoshiro128** (Blackman & Vigna, 2018), seeded through splitmix32.
 */
export interface Rng {
  /** Uniform float in [0, 1). */
  next(): number;
  /** An independent generator derived from this one (for parallel samples). */
  split(): Rng;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

class Xoshiro128 implements Rng {
  private s0: number; private s1: number; private s2: number; private s3: number;
  constructor(seed: number) {
    const sm = splitmix32(seed);
    this.s0 = sm(); this.s1 = sm(); this.s2 = sm(); this.s3 = sm();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }
  private nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0; this.s3 ^= this.s1; this.s1 ^= this.s2; this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }
  next(): number {
    // 53 random bits → a double in [0, 1).
    const hi = this.nextU32() >>> 5, lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }
  split(): Rng {
    return new Xoshiro128(this.nextU32());
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** A generator from a 32-bit seed. */
export function createRng(seed: number): Rng {
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${seed}`);
  return new Xoshiro128(Math.trunc(seed) >>> 0);
}
