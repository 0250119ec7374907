import assert from 'node:assert/strict';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jobSpecFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { capLog, sweepRetention } from './retention.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-retention-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const spec = jobSpecFixture({ name: 'x' });

describe('retention of logs and checkpoints', () => {
  it('caps a log to its newest part while its writer keeps appending after it', () => {
    const path = join(dir, 'replica-0.log');
    const writer = openSync(path, 'a');
    for (let i = 0; i < 30_000; i++) writeSync(writer, `line ${i}\n`);
    assert.ok(statSync(path).size > 200_000);
    assert.equal(capLog(path, 100_000), true);
    writeSync(writer, 'after the cut\n');
    closeSync(writer);
    const text = readFileSync(path, 'utf8');
    assert.ok(statSync(path).size <= 100_000, `${statSync(path).size}`);
    assert.match(text, /^\[goodput: \d+ earlier bytes of this log were dropped/);
    assert.match(text, /line 29999\nafter the cut\n$/);
    assert.equal(capLog(path, 100_000), false, 'under the cap: left alone');
  });

  it("removes an ended job's checkpoints after the retention time, never an active job's", async () => {
    let now = 1_000_000;
    const store = new SqliteStore(':memory:', { now_ms: () => now });
    const jobs = join(dir, 'jobs');
    for (const id of ['ended', 'active']) {
      await store.createJob({ id, name: id, user: 'u', spec }, 'u');
      mkdirSync(join(jobs, id, 'checkpoint'), { recursive: true });
      writeFileSync(join(jobs, id, 'checkpoint', 'model.pt'), 'x'.repeat(1000));
    }
    await store.finishJob('ended', 'succeeded', 'test', 'done');
    const o = { log_limit_bytes: 0, checkpoint_retention_ms: 3_600_000 };
    assert.equal((await sweepRetention(jobs, store, o, now + 1_800_000)).checkpoints_removed, 0);
    assert.ok(existsSync(join(jobs, 'ended', 'checkpoint')));
    assert.equal((await sweepRetention(jobs, store, o, now + 2 * 3_600_000)).checkpoints_removed, 1);
    assert.ok(!existsSync(join(jobs, 'ended', 'checkpoint')));
    now += 100 * 3_600_000;
    await sweepRetention(jobs, store, o, now);
    assert.ok(existsSync(join(jobs, 'active', 'checkpoint', 'model.pt')));
    await store.close();
  });
});
