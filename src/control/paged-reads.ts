/**
 * The controller's large reads a page at a time, the event loop given way between pages: at
 * 16,384 GPUs the 16,000 live replicas (the supervisor's watch, every few seconds) and the 3,000
 * active jobs (every round) were each one synchronous read of 35-85 ms, and every report that
 * arrived meanwhile waited behind it (issue #49). Each page is a keyset range, so it costs the
 * same wherever it starts; the order is that of the whole read.
 */
import type { Store } from '../store/store.js';
import type { JobRecord, JobState, ReplicaRecord } from '../store/types.js';
import type { Turns } from '../util/turns.js';

/** Replica rows per page: a few milliseconds of reading. */
const PAGE = 1000;

/**
 * Job rows per page: a job row carries JSON (its spec, model, allocation) parsed as it is read,
 * so 1,000 of them took 15-30 ms, several times the turn budget, and the reports behind them
 * waited that long (the round's read of the active jobs, the watch's of the running ones).
 * 250 take 4-5 ms, and the whole read costs the same (a keyset range per page).
 */
const JOB_PAGE = 250;

/** Store.listLiveReplicas() in its order, in pages of `page`, pausing on `turns` between them. */
export async function liveReplicasInTurns(store: Store, turns: Turns, page = PAGE): Promise<ReplicaRecord[]> {
  const out: ReplicaRecord[] = [];
  for (;;) {
    const last = out[out.length - 1];
    const got = await store.listLiveReplicas({ limit: page, ...(last ? { after: last } : {}) });
    out.push(...got);
    if (got.length < page) return out;
    await turns.pause();
  }
}

/** Store.listJobs({ states }) in its order (submission, oldest first), in pages of `page`, pausing on `turns` between them. */
export async function jobsInTurns(
  store: Store,
  states: readonly JobState[],
  turns: Turns,
  page = JOB_PAGE,
): Promise<JobRecord[]> {
  const out: JobRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const got = await store.listJobsPage({ states, order: 'asc', limit: page, ...(cursor ? { cursor } : {}) });
    out.push(...got.jobs);
    if (got.next_cursor === null) return out;
    cursor = got.next_cursor;
    await turns.pause();
  }
}
