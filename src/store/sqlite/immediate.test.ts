/**
 * Every write of the store begins with BEGIN IMMEDIATE. A deferred transaction that reads and
 * then writes fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT, no busy wait) when
 * another connection commits in between: bench:api saw 1-36 such 500s in 30-50k reports while
 * the checkpoint worker truncated the WAL, all from recordEvent. Here another process holds the
 * write lock and commits while the store's write waits.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { SqliteStore } from './sqlite-store.js';
import { jobSpecFixture } from '../job-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-immediate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a process that holds the write lock of `db`, writes, and commits after `hold_ms`. */
function holdWriteLock(db: string, hold_ms: number): Promise<() => Promise<void>> {
  const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const script = `
    const Database = require(${JSON.stringify(betterSqlite)});
    const db = new Database(${JSON.stringify(db)});
    db.exec('BEGIN IMMEDIATE');
    db.prepare("UPDATE jobs SET name = name || ''").run();
    process.stdout.write('locked\\n');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${hold_ms});
    db.exec('COMMIT');
    db.close();`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`lock holder exited with ${code}`)))),
  );
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('locked') && resolve(() => exited));
    child.on('error', reject);
    exited.catch(reject);
  });
}

it(
  'a write waits for another connection\'s commit instead of failing with "database is locked"',
  { timeout: 30_000 },
  async () => {
    const db = join(dir, 'db.sqlite');
    const store = new SqliteStore(db, {});
    const spec = jobSpecFixture({ name: 'j', workdir: '/' });
    await store.createJob({ id: 'j', name: 'j', user: 'u', spec }, 'test');
    const done = await holdWriteLock(db, 300);
    await store.recordEvent('j', 'batch-size', 'test', 'written while another connection commits', {});
    await done();
    assert.ok((await store.listEvents('j')).some((e) => e.reason === 'written while another connection commits'));
    store.close();
  },
);
