import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { inProcessApi } from './testing/in-process.js';

/**
 * Makes the store's files immutable (chattr +i, as root on a file system that has the attribute)
 * or, failing that, its connection read-only (PRAGMA query_only): either way a real SQLite write
 * error. Returns the undo.
 */
function freeze(api: Awaited<ReturnType<typeof inProcessApi>>): () => void {
  const files = readdirSync(api.dir)
    .filter((f) => f.startsWith('db.sqlite'))
    .map((f) => join(api.dir, f));
  try {
    execFileSync('chattr', ['+i', ...files], { stdio: 'ignore' });
    return () => execFileSync('chattr', ['-i', ...files]);
  } catch {
    const db = (api.store as unknown as { db: { pragma(s: string): unknown } }).db;
    db.pragma('query_only = 1');
    return () => db.pragma('query_only = 0');
  }
}

const spec = { name: 'w', command: ['true'], workdir: '/tmp' };

describe('a store that cannot be written (issue 47 item 10)', () => {
  it('health says failing (503) and writes answer 503 E_STORE_UNAVAILABLE saying what to check; both recover', async () => {
    const api = await inProcessApi();
    let thaw: (() => void) | undefined;
    try {
      assert.equal((await api.call('POST', '/v1/jobs', api.admin, spec)).status, 201);
      thaw = freeze(api);
      // No write needed first: the health check's own probe writes.
      const health = await api.call('GET', '/v1/health');
      assert.equal(health.status, 503);
      assert.equal(health.json.store.state, 'failing');
      assert.match(health.json.store.detail, /cannot be written .*lsattr/);
      const refused = await api.call('POST', '/v1/jobs', api.admin, spec);
      assert.equal(refused.status, 503);
      assert.equal(refused.json.error.code, 'E_STORE_UNAVAILABLE');
      assert.match(
        refused.json.error.message,
        /^the store cannot be written \(SQLITE_\w+: .*\); the change was not made\. An admin should check the data directory's database files/,
      );
      assert.equal((await api.call('GET', '/v1/jobs', api.admin)).json.length, 1, 'nothing half-applied');
      thaw();
      thaw = undefined;
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await api.call('GET', '/v1/health')).status, 200);
      assert.equal((await api.call('POST', '/v1/jobs', api.admin, spec)).status, 201);
    } finally {
      thaw?.();
      await api.close();
    }
  });
});
