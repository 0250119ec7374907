/**
 * The query of `GET /v1/jobs` (state, user, name, since, limit, cursor, order): parsed once for
 * the API and the dashboard, so both page the same way.
 */
import { ACTIVE_STATES, TERMINAL_STATES } from '../store/lifecycle.js';
import type { JobPageQuery, Store } from '../store/store.js';
import type { JobRecord, JobState } from '../store/types.js';
import { badRequest, forbidden } from './http-error.js';

/** Jobs of one page unless `limit` says otherwise. */
export const DEFAULT_PAGE_JOBS = 100;
/** Most jobs of one page. */
export const MAX_PAGE_JOBS = 1000;

const ALL_STATES: readonly JobState[] = [...ACTIVE_STATES, ...TERMINAL_STATES];
const GROUPS: Record<string, readonly JobState[]> = {
  active: ACTIVE_STATES,
  finished: TERMINAL_STATES,
  ended: TERMINAL_STATES,
};
const UNITS_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** `since`: an ISO-8601 time or an age (`90s`, `30m`, `24h`, `7d`, `2w`); epoch ms. */
export function parseSince(text: string, now_ms: number): number {
  const age = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text.trim());
  if (age) return now_ms - Number(age[1]) * UNITS_S[age[2]!]! * 1000;
  const at = Date.parse(text);
  if (!Number.isFinite(at))
    throw badRequest(
      `since must be an ISO-8601 time (2026-01-31T12:00:00Z) or an age such as 30m, 24h or 7d; got '${text.slice(0, 40)}'`,
    );
  return at;
}

/** `state`: comma-separated states or groups (`active`, `finished`). */
export function parseStates(text: string): JobState[] {
  const states = new Set<JobState>();
  for (const part of text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const group = GROUPS[part];
    if (group) group.forEach((s) => states.add(s));
    else if ((ALL_STATES as readonly string[]).includes(part)) states.add(part as JobState);
    else
      throw badRequest(
        `state '${part.slice(0, 40)}' is not one of ${[...ALL_STATES, 'active', 'finished'].join(', ')}`,
      );
  }
  return [...states];
}

/** What a caller may list: its own jobs, an admin anyone's (all when it names no user). */
export interface Lister {
  user: string;
  admin: boolean;
}

/** The store query of a listing request's query parameters. */
export function jobListQuery(q: (name: string) => string | undefined, who: Lister, now_ms: number): JobPageQuery {
  const user = q('user');
  if (!who.admin && user !== undefined && user !== who.user)
    throw forbidden("only an admin may list other users' jobs");
  const limitText = q('limit');
  const limit = limitText === undefined ? DEFAULT_PAGE_JOBS : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_JOBS)
    throw badRequest(`limit must be an integer in [1, ${MAX_PAGE_JOBS}]`);
  const order = q('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc')
    throw badRequest("order must be 'asc' (oldest first) or 'desc' (newest first)");
  const query: JobPageQuery = { limit, order };
  if (!who.admin) query.user = who.user;
  else if (user !== undefined && user !== '') query.user = user;
  const state = q('state');
  if (state !== undefined && state !== '') query.states = parseStates(state);
  const name = q('name');
  if (name !== undefined && name !== '') query.name = name;
  const since = q('since');
  if (since !== undefined && since !== '') query.since_ms = parseSince(since, now_ms);
  const cursor = q('cursor');
  if (cursor !== undefined && cursor !== '') query.cursor = cursor;
  return query;
}

/** Rows read (and views built) between two yields to the event loop. */
const CHUNK_JOBS = 50;

/**
 * One page of `query`, read as keyset sub-pages of CHUNK_JOBS with a yield to the event loop
 * between them (and `view` applied per sub-page), so a page of any size holds the loop for a few
 * milliseconds at a time and reports are served in between. Returns the views and the page's
 * next cursor.
 */
export async function readPage<V>(
  store: Pick<Store, 'listJobsPage'>,
  query: JobPageQuery,
  view: (jobs: JobRecord[]) => Promise<V[]>,
): Promise<{ views: V[]; next_cursor: string | null }> {
  const views: V[] = [];
  let cursor = query.cursor;
  for (;;) {
    const want = Math.min(CHUNK_JOBS, query.limit - views.length);
    const chunk = await store.listJobsPage({ ...query, limit: want, ...(cursor !== undefined ? { cursor } : {}) });
    views.push(...(await view(chunk.jobs)));
    if (chunk.next_cursor === null || views.length >= query.limit) return { views, next_cursor: chunk.next_cursor };
    cursor = chunk.next_cursor;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
