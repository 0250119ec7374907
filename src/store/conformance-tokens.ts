/** The part of the Store conformance suite about API tokens, Unix accounts and the policy memo; run by `storeConformance`. */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Store } from './store.js';

/** Registers the cases; `fresh` opens an empty store. */
export function tokenConformance(fresh: () => Promise<Store>): void {
  it('stores tokens by hash', async () => {
    const s = await fresh();
    await s.putToken({ hash: 'h1', user: 'alice', admin: false, created_at_ms: 5 });
    await s.putToken({ hash: 'h1', user: 'mallory', admin: true, created_at_ms: 6 });
    assert.deepEqual(await s.findToken('h1'), { hash: 'h1', user: 'alice', admin: false, created_at_ms: 5 });
    assert.equal(await s.findToken('h2'), undefined);
    await s.close();
  });

  it('lists, expires and revokes tokens; revoking twice changes nothing', async () => {
    const s = await fresh();
    await s.putToken({ hash: 'h1', user: 'alice', admin: false, created_at_ms: 5, expires_at_ms: 100 });
    await s.putToken({ hash: 'h2', user: 'bob', admin: false, created_at_ms: 6 });
    assert.deepEqual(
      (await s.listTokens()).map((t) => t.hash),
      ['h1', 'h2'],
    );
    assert.deepEqual(
      (await s.listTokens('alice')).map((t) => [t.hash, t.expires_at_ms]),
      [['h1', 100]],
    );
    assert.equal(await s.revokeToken('h2', 50), true);
    assert.equal(await s.revokeToken('h2', 60), false);
    assert.equal(await s.revokeToken('nope', 60), false);
    assert.equal((await s.findToken('h2'))!.revoked_at_ms, 50);
    await s.close();
  });

  it('maps users to Unix accounts', async () => {
    const s = await fresh();
    assert.equal(await s.getUnixUser('alice'), undefined);
    await s.setUnixUser('alice', 'al');
    await s.setUnixUser('alice', 'alice2');
    assert.equal(await s.getUnixUser('alice'), 'alice2');
    await s.close();
  });

  it('maps users with a Unix account to Slurm accounts', async () => {
    const s = await fresh();
    assert.equal(await s.setSlurmAccount('bob', 'proj1'), false, 'no Unix account yet');
    assert.equal(await s.getSlurmAccount('bob'), undefined);
    await s.setUnixUser('bob', 'bob');
    assert.equal(await s.getSlurmAccount('bob'), undefined);
    assert.equal(await s.setSlurmAccount('bob', 'proj1'), true);
    await s.setUnixUser('bob', 'bob2');
    assert.equal(await s.getSlurmAccount('bob'), 'proj1', 'a new Unix account keeps the Slurm account');
    await s.close();
  });

  it('keeps the policy memo: none before the first put, then the last one put, bytes exact', async () => {
    const s = await fresh();
    assert.equal(await s.getPolicyMemo(), undefined);
    const first = new Uint8Array([0, 1, 2, 255]);
    await s.putPolicyMemo({ saved_ms: 10, body: first });
    const big = new Uint8Array(3 << 20).map((_, i) => (i * 7) & 255);
    await s.putPolicyMemo({ saved_ms: 20, body: big.subarray(5) });
    const got = await s.getPolicyMemo();
    assert.equal(got?.saved_ms, 20);
    assert.deepEqual(Buffer.from(got!.body), Buffer.from(big.subarray(5)));
    await s.close();
  });
}
