import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jobSpecFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { LOG_DROP_EVENT_EVERY_MS, reportLogDrops } from './log-drops.js';

describe('log-dropped events (issue 47 item 6)', () => {
  it('says what the cap dropped: at once, then at most every 10 minutes, then the final total; never twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'goodput-log-drops-'));
    const store = new SqliteStore(join(dir, 'db.sqlite'), { background_checkpoint_ms: 0 });
    try {
      const spec = jobSpecFixture({ name: 'a' });
      await store.createJob({ id: 'j1', name: 'a', user: 'u', spec }, 't');
      const run = join(dir, 'jobs', 'j1', 'run');
      mkdirSync(run, { recursive: true });
      const base = join(run, 'attempt-0-rank-1');
      const drops = async () => (await store.listEvents('j1')).filter((e) => e.kind === 'log-dropped');
      writeFileSync(base + '.log-dropped', '3145728 40000\n');
      assert.equal(await reportLogDrops(join(dir, 'jobs'), store, 1000), 1);
      writeFileSync(base + '.log-dropped', '6291456 80000\n');
      assert.equal(await reportLogDrops(join(dir, 'jobs'), store, 2000), 0, 'not again within 10 minutes');
      assert.equal(await reportLogDrops(join(dir, 'jobs'), store, 1000 + LOG_DROP_EVENT_EVERY_MS), 1);
      writeFileSync(base + '.log-dropped', '7340032 90000\n');
      writeFileSync(base + '.log-done', '');
      assert.equal(
        await reportLogDrops(join(dir, 'jobs'), store, 2000 + LOG_DROP_EVENT_EVERY_MS),
        1,
        'the final total at once',
      );
      assert.equal(await reportLogDrops(join(dir, 'jobs'), store, 3 * LOG_DROP_EVENT_EVERY_MS), 0, 'nothing new');
      const events = await drops();
      assert.equal(events.length, 3);
      assert.match(
        events[0]!.reason,
        /^replica 1's log reached its cap \(so far\): its oldest 3\.0 MiB \(40000 lines\) were dropped/,
      );
      assert.deepEqual(events[2]!.data, {
        attempt: 0,
        rank: 1,
        dropped_bytes: 7340032,
        dropped_lines: 90000,
        final: true,
      });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
