/** Issue 52: four of nine jobs got nearly the same teal (a hash of the job id picked the hue). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { JOB_PALETTE, jobColorAt, jobColorMap, OTHER_COLOR } from './colors.js';

/** CIE L*a*b* of an sRGB colour `#rrggbb`. */
function lab(hex: string): [number, number, number] {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((c) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4)) as [number, number, number];
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}
const deltaE = (a: string, b: string): number => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]!));
const hsl = (h: number, s: number, l: number): string => {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const ch = (n: number) =>
    Math.round(255 * (l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))))
      .toString(16)
      .padStart(2, '0');
  return `#${ch(0)}${ch(8)}${ch(4)}`;
};
/** The rule this replaces: FNV-1a of the job id picked the hue of hsl(h 62% 52%). */
const hashed = (key: string): string => {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return hsl((h >>> 0) % 360, 0.62, 0.52);
};
const minDelta = (colors: readonly string[]): number => {
  let min = Infinity;
  for (let i = 0; i < colors.length; i++)
    for (let j = i + 1; j < colors.length; j++) min = Math.min(min, deltaE(colors[i]!, colors[j]!));
  return min;
};
const ids = Array.from({ length: 12 }, (_, i) => `j${(0x3a7f + i * 7919).toString(16)}`);

describe('job colours', () => {
  it("12 jobs get 12 clearly distinct colours (CIE76 difference >= 29), none the grey of other users' jobs", () => {
    const color = jobColorMap(ids);
    const colors = ids.map(color);
    assert.ok(minDelta(colors) >= 29, `closest pair ${minDelta(colors).toFixed(1)}`);
    assert.ok(Math.min(...colors.map((c) => deltaE(c, OTHER_COLOR))) >= 15);
    assert.equal(JOB_PALETTE.length, 12);
  });
  it('the hashed hue it replaces gives near-twins among these 12 jobs', () => {
    assert.ok(minDelta(ids.map(hashed)) < 10, `closest pair ${minDelta(ids.map(hashed)).toFixed(1)}`);
  });
  it('a page\'s views agree: same order, same colours; a key met later takes the next colour; "" is grey', () => {
    const a = jobColorMap(['x', 'y']);
    const b = jobColorMap(['x', 'y']);
    assert.deepEqual(['y', 'x'].map(a), ['y', 'x'].map(b));
    assert.equal(a('z'), jobColorAt(2));
    assert.equal(a('z'), jobColorAt(2), 'stable once given');
    assert.equal(a(''), OTHER_COLOR);
    assert.match(jobColorAt(12), /^hsl\(/);
  });
});
