/**
 * The scope of a stored profile: whose jobs' measurements it holds and whose jobs start from it
 * (docs/control-plane.md "Profiles"). A profile is per user by default, so that one user's jobs
 * cannot change how another user's jobs start; a server started with `--shared-profiles` keeps
 * one shared profile per key instead. The scope is part of the stored key: `KEY~USER` for a
 * user's profile, the bare `KEY` for the shared one (profiles stored before scopes existed are
 * therefore shared). A profile key never holds `~` (PROFILE_KEY), so the split is unambiguous
 * whatever the user's name. Pure.
 */

/** Separates a profile key from the user whose profile it is in a stored key. */
export const SCOPE_SEPARATOR = '~';

/** The stored key of `key`'s profile in `scope` (a user name; '' for the shared profile). */
export function scopedKey(key: string, scope: string): string {
  return scope === '' ? key : `${key}${SCOPE_SEPARATOR}${scope}`;
}

/** The profile key and scope ('' = shared) of a stored key. */
export function splitScopedKey(stored: string): { key: string; scope: string } {
  const at = stored.indexOf(SCOPE_SEPARATOR);
  return at < 0 ? { key: stored, scope: '' } : { key: stored.slice(0, at), scope: stored.slice(at + 1) };
}
