import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { storeConformance } from '../conformance.js';
import { MIGRATIONS } from './migrations.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeConformance('sqlite', async (now_ms) => new SqliteStore(join(dir, `db-${n++}.sqlite`), { now_ms }));

describe('SqliteStore specifics', () => {
  it('migrates to the latest version, persists across reopen, uses WAL', async () => {
    const path = join(dir, 'persist.sqlite');
    const s1 = new SqliteStore(path);
    assert.equal(s1.schemaVersion(), MIGRATIONS.length);
    await s1.createJob({ id: 'x', name: 'x', user: 'u', spec: { name: 'x', command: ['true'], workdir: '/', env: {}, min_replicas: 0, max_replicas: 1, max_restarts: 0, preemptible: true, priority: 0 } }, 'u');
    await s1.close();
    const s2 = new SqliteStore(path);
    assert.equal((await s2.getJob('x'))?.state, 'queued');
    await s2.close();
  });
});
