import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { jobSpecFixture } from '../store/job-fixture.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { backupStore, restoreStore } from './backup.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-backup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('backup and restore leave nothing behind and overwrite nothing silently', async () => {
  const db = join(dir, 'data', 'goodput.sqlite');
  mkdirSync(join(dir, 'data'));
  const store = new SqliteStore(db);
  await store.createJob(
    {
      id: 'a',
      name: 'a',
      user: 'u',
      spec: jobSpecFixture({ name: 'a' }),
    },
    'u',
  );
  await store.close();

  it('writes into a directory given with a trailing slash (or existing), and nowhere else', async () => {
    const out = join(dir, 'out');
    mkdirSync(out);
    const copy = await backupStore(db, `${out}/`);
    assert.match(copy.path, /out\/goodput-.*\.sqlite$/);
    assert.equal(copy.jobs, 1);
    assert.deepEqual(readdirSync(out), [copy.path.split('/').pop()]);
    assert.deepEqual(readdirSync(dir).sort(), ['data', 'out']);
  });

  it('refuses to replace an existing file without force', async () => {
    const file = join(dir, 'b.sqlite');
    await backupStore(db, file);
    await assert.rejects(backupStore(db, file), /exists; pass --force/);
    assert.equal((await backupStore(db, file, { force: true })).jobs, 1);
  });

  it('a refused restore leaves no goodput.sqlite.restore* behind', () => {
    const bad = join(dir, 'not-a-store');
    writeFileSync(bad, 'this is no sqlite file at all, just text'.repeat(100));
    assert.throws(
      () => restoreStore(db, bad, join(dir, 'data', 'server.pid')),
      (error: unknown) => error instanceof GoodputError && error.message.startsWith(`${bad} is not a goodput store`),
    );
    assert.deepEqual(
      readdirSync(join(dir, 'data')).filter((f) => f.includes('restore')),
      [],
    );
  });

  it('restores into a data directory that does not exist yet (a new machine), and refuses a directory as the backup', async () => {
    const file = join(dir, 'for-new-machine.sqlite');
    await backupStore(db, file);
    const fresh = join(dir, 'new-machine', 'data');
    const restored = restoreStore(join(fresh, 'goodput.sqlite'), file, join(fresh, 'server.pid'));
    assert.equal(restored.jobs, 1);
    assert.equal(statSync(fresh).mode & 0o777, 0o700 & ~process.umask());
    assert.throws(
      () => restoreStore(join(fresh, 'goodput.sqlite'), dir, join(fresh, 'server.pid')),
      (error: unknown) =>
        error instanceof GoodputError && error.code === 'E_INPUT' && /is not a backup file/.test(error.message),
    );
  });
});
