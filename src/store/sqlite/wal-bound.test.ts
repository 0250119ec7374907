/**
 * The WAL must stay bounded: it grew without bound (319 MB next to a 22 MB database after 80k
 * reports): under a steady stream of commits the PASSIVE checkpoints never reach the end of the
 * WAL, so SQLite never starts it over. With the truncating checkpoint (threshold lowered to
 * 1 MiB here) the WAL stays within a small multiple of the threshold while many times more is
 * written.
 */
import { reportBatch } from '../report-batch.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from './sqlite-store.js';
import { jobSpecFixture } from '../job-fixture.js';
import { measuredStepFixture } from '../../goodput/testing/perf-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-wal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const walBytes = (db: string) => {
  try {
    return statSync(`${db}-wal`).size;
  } catch {
    return 0;
  }
};

describe('bounded WAL', () => {
  it('stays bounded under a steady stream of reports', { timeout: 120_000 }, async () => {
    const db = join(dir, 'db.sqlite');
    const store = new SqliteStore(db, { background_checkpoint_ms: 20, wal_truncate_bytes: 1 << 20 });
    const spec = jobSpecFixture({ name: 'j', workdir: '/' });
    await store.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'test');
    const m = measuredStepFixture({
      time_s: 0,
      step: 0,
      breakdown: { forward_s: 0.05, backward_s: 0.04, optimizer_s: 0.01 },
    });
    let peak = 0;
    // 100k reports: about 16 MiB of database pages, 16 times the threshold.
    const deadline = Date.now() + 90_000;
    let step = 0;
    while (step < 100_000 && Date.now() < deadline) {
      await store.addReports(
        reportBatch(
          'j',
          0,
          undefined,
          Array.from({ length: 50 }, () => ({ ...m, step: step++ })),
        ),
      );
      peak = Math.max(peak, walBytes(db));
      await new Promise((r) => setTimeout(r, 1)); // the server's report batches come with gaps
    }
    await store.close();
    assert.equal(step, 100_000, 'wrote every report in time');
    assert.ok(statSync(db).size > 8 << 20, `wrote ${statSync(db).size} bytes of database`);
    // Without the truncating checkpoint this loop's WAL peaks near 90 MiB; with it, 1.5 MiB on an
    // idle machine and up to 7.2 MiB seen while the whole suite ran on 2 cores (the worker's timer
    // falls behind the writer). 16 MiB keeps the test about the bound, not about the machine's load.
    assert.ok(peak < 16 << 20, `WAL peaked at ${(peak / 2 ** 20).toFixed(1)} MiB with a 1 MiB threshold`);
  });
});
