import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { loadPolicyMemo, PolicyMemoSaver } from './policy-memo.js';

describe("the server's policy memos in its store", () => {
  const dir = mkdtempSync(join(tmpdir(), 'goodput-memo-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('saves every interval and at stop, reads back the last; nothing to save writes nothing', async () => {
    const store = new SqliteStore(join(dir, 'a.db'), { background_checkpoint_ms: 0 });
    const log: string[] = [];
    const memo = { json: undefined as string | undefined };
    let asked = 0;
    const saver = new PolicyMemoSaver(
      store,
      async () => {
        asked++;
        return memo.json;
      },
      (l) => log.push(l),
      () => undefined,
      20,
    ).start();
    await new Promise((done) => setTimeout(done, 70));
    assert.ok(asked >= 2, `saved every interval (${asked})`);
    assert.equal(await loadPolicyMemo(store, (l) => log.push(l)), undefined, 'nothing saved yet');
    memo.json = JSON.stringify({ format: 1, kinds: { k: [['key', 'v', [1, null]]] } }).repeat(1000);
    await saver.stop();
    const n = asked;
    await new Promise((done) => setTimeout(done, 50));
    assert.equal(asked, n, 'stopped: no more saves');
    assert.equal(await loadPolicyMemo(store, (l) => log.push(l)), memo.json);
    assert.match(log.at(-1)!, /^policy memos: \d+ kB saved 0 min ago, read back$/);
    assert.ok((await store.getPolicyMemo())!.body.byteLength < memo.json.length / 10, 'gzipped');
    await store.close();
  });

  it('a memo that cannot be read back is said in the log and left to the first round', async () => {
    const store = new SqliteStore(join(dir, 'b.db'), { background_checkpoint_ms: 0 });
    await store.putPolicyMemo({ saved_ms: Date.now(), body: new Uint8Array([1, 2, 3]) });
    const log: string[] = [];
    assert.equal(await loadPolicyMemo(store, (l) => log.push(l)), undefined);
    assert.match(log[0]!, /^policy memos: not read back \(.+\); the first round computes them$/);
    await store.close();
  });

  it('a save that fails is said in the log; the server goes on', async () => {
    const store = new SqliteStore(join(dir, 'c.db'), { background_checkpoint_ms: 0 });
    const log: string[] = [];
    const saver = new PolicyMemoSaver(
      store,
      async () => {
        throw new Error('worker gone');
      },
      (l) => log.push(l),
    );
    await saver.save();
    assert.deepEqual(log, ['policy memos: not saved (worker gone); a restart computes them again']);
    await store.close();
  });

  it("skips a save while the store's disk is nearly full (said once), saves again when there is room", async () => {
    const store = new SqliteStore(join(dir, 'd.db'), { background_checkpoint_ms: 0 });
    const log: string[] = [];
    let free = 1 << 20;
    const saver = new PolicyMemoSaver(
      store,
      async () => 'x'.repeat(1000),
      (l) => log.push(l),
      () => free,
    );
    await saver.save();
    await saver.save();
    assert.equal(await store.getPolicyMemo(), undefined);
    assert.equal(log.length, 1, log.join('\n'));
    assert.match(
      log[0]!,
      /^policy memos: not saved \(1\.0 MiB free on the store's disk, they take 0\.0 MiB\); a restart computes them again$/,
    );
    free = 1 << 30;
    await saver.save();
    assert.ok(await store.getPolicyMemo());
    await store.close();
  });
});
