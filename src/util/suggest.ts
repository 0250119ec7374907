/** "Did you mean ...?" for mistyped commands and flags. */
import { distance } from 'fastest-levenshtein';

/**
 * The candidate closest to `input` by edit distance, if it is close enough to be a typo (at most
 * a third of the input's length, at least 1 edit allowed) or starts with the input (3 letters or
 * more). No suggestion for one-letter input. Pure.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const bare = input.replace(/^-+/, '');
  if (bare.length < 2) return undefined; // every one-letter flag is one edit from any other
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = c.startsWith(input) && input.length >= 3 ? 0.5 : distance(input, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.floor(bare.length / 3)) ? best : undefined;
}

/** ` Did you mean X?` (with a leading space) or '' when nothing is close. */
export function didYouMean(input: string, candidates: readonly string[]): string {
  const match = closestMatch(input, candidates);
  return match === undefined ? '' : ` Did you mean '${match}'?`;
}
