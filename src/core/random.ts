/**
 * A small seedable pseudo-random generator (sfc32, seeded through splitmix32) shared by every
 * randomized policy. Pure: the whole state lives in the instance, so the same seed always
 * yields the same sequence on every platform (only 32-bit integer arithmetic is used, kept in
 * int32 so V8 never boxes it).
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** Any finite number is a valid seed; it is reduced to 32 bits. */
  constructor(seed: number) {
    let x = Math.trunc(seed) | 0;
    const mix = (): number => {
      x = (x + 0x9e3779b9) | 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) | 0;
    };
    this.a = mix();
    this.b = mix();
    this.c = mix();
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextInt32();
  }

  /** Next raw 32-bit value as a signed int32. */
  nextInt32(): number {
    const a = this.a;
    const b = this.b;
    const c = this.c;
    const t = (((a + b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = b ^ (b >>> 9);
    this.b = (c + (c << 3)) | 0;
    const r = (c << 21) | (c >>> 11);
    this.c = (r + t) | 0;
    return t;
  }

  /** Uniform float in [0, 1) with 32 bits of randomness. */
  next(): number {
    return (this.nextInt32() >>> 0) / 4294967296;
  }

  /** Uniform integer in [lo, hi], both inclusive. Requires lo <= hi (integers). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** A uniformly random permutation of 0..n-1 (Fisher-Yates). */
  permutation(n: number): number[] {
    const p = new Array<number>(n);
    for (let i = 0; i < n; i++) p[i] = i;
    this.shuffle(p);
    return p;
  }

  /** Shuffles `items` in place (Fisher-Yates) and returns it. */
  shuffle<T extends number[] | Int32Array>(items: T): T {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = items[i] as number;
      items[i] = items[j] as number;
      items[j] = tmp;
    }
    return items;
  }
}
