import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { jobSpecFixture } from '../job-fixture.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-crc-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('stored event text integrity', () => {
  it('shows an event whose text was altered in the store as altered, not as true', async () => {
    const path = join(dir, 'db.sqlite');
    const store = new SqliteStore(path, { background_checkpoint_ms: 0 });
    await store.createJob(
      {
        id: 'j',
        name: 'j',
        user: 'u',
        spec: jobSpecFixture(),
      },
      'u',
    );
    await store.finishJob('j', 'cancelled', 'alice', 'cancelled by alice');
    const raw = new Database(path);
    // A byte of the reason changed behind the store's back (what a flipped bit on disk does).
    raw.prepare("UPDATE events SET reason = 'cancelled by alicf' WHERE kind = 'cancelled'").run();
    raw.close();
    const events = await store.listEvents('j');
    assert.equal(events[0]!.reason, 'submitted', 'an intact event is shown as stored');
    assert.match(events[1]!.reason, /^\[this event was altered in the store: its checksum does not match\]/);
    assert.deepEqual(events[1]!.data, { integrity: 'altered' });
    await store.close();
  });
});
