/**
 * Statistical efficiency from the gradient noise (pollux-spec §3.3, AdaScale).
 */
import type { GradParams } from './types.js';

/**
 * AdaScale gain g(s) = (nu + sigma^2) / (nu / s + sigma^2) for batch scale s = B / B0; it lies
 * in [1, s] for non-negative statistics. Returns 1 when the denominator is <= 0 (as the
 * artifact does), so degenerate statistics never produce a negative or infinite gain.
 */
export function adascaleGain(grad: GradParams, scale: number): number {
  const denom = grad.var / scale + grad.sqr;
  return denom > 0 ? (grad.var + grad.sqr) / denom : 1;
}

/**
 * Progress per sample relative to the reference batch: E(B) = g(B/B0) / (B/B0), in (0, 1] for
 * B >= B0 and non-negative statistics.
 */
export function efficiency(grad: GradParams, init_batch_size: number, total_batch_size: number): number {
  const scale = total_batch_size / init_batch_size;
  return adascaleGain(grad, scale) / scale;
}
