import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReplicaRecord } from '../../store/types.js';
import { KillDeadlines, replicasByJob } from './kill-deadlines.js';

const replica = (job_id: string, rank: number): ReplicaRecord => ({
  job_id,
  attempt: 0,
  rank,
  device: rank,
  node: 'gp1',
  launch_id: '44',
  pid: 0,
  proc_start: '',
  log_path: '',
  started_at_ms: 0,
  exit_code: null,
  exited_at_ms: null,
});

describe('KillDeadlines', () => {
  it('asks for SIGKILL from the deadline on, again at every call while a replica lives (an undelivered kill is retried), then forgets the job', () => {
    const kills = new KillDeadlines();
    kills.set('a', 1000);
    kills.set('b', 5000);
    const live = [replica('a', 0), replica('a', 1), replica('b', 0)];
    assert.deepEqual(kills.due(999, live), [], 'before the deadline');
    assert.deepEqual(
      kills.due(1000, live).map((r) => `${r.job_id}/${r.rank}`),
      ['a/0', 'a/1'],
    );
    // The backend could not deliver it (slurmctld down): the replicas still live, so again.
    assert.deepEqual(
      kills.due(1250, live).map((r) => `${r.job_id}/${r.rank}`),
      ['a/0', 'a/1'],
    );
    const exited = live.filter((r) => r.job_id !== 'a');
    assert.deepEqual(kills.due(1500, exited), [], 'every replica of a exited');
    assert.deepEqual(kills.due(2000, live), [], 'and a is forgotten, even if a stale list shows it again');
    assert.deepEqual(
      kills.due(5000, live).map((r) => r.job_id),
      ['b'],
    );
  });

  it('dueJobs names the jobs past their deadline (the launcher reads their live replicas), until forgotten', () => {
    const kills = new KillDeadlines();
    assert.deepEqual(kills.dueJobs(0), [], 'no deadline');
    kills.set('a', 1000);
    assert.deepEqual(kills.dueJobs(999), []);
    assert.deepEqual(kills.dueJobs(1000), ['a']);
    kills.due(1000, []);
    assert.deepEqual(kills.dueJobs(2000), [], 'forgotten once no replica of it lives');
  });
});

describe('replicasByJob', () => {
  it('groups the live replicas by job, in their order', () => {
    const grouped = replicasByJob([replica('a', 0), replica('b', 0), replica('a', 1)]);
    assert.deepEqual([...grouped.keys()], ['a', 'b']);
    assert.deepEqual(
      grouped.get('a')!.map((r) => r.rank),
      [0, 1],
    );
  });
});
