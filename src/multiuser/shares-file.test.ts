import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { GoodputError } from '../core/errors.js';
import { advanceUsage, parseShares, teamOf } from '../policy/shares/index.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { readSharesFile, SharesFile } from './shares-file.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-shares-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const refused = (text: string, pattern: RegExp) =>
  assert.throws(
    () => parseShares(text, 'shares.yaml'),
    (e: unknown) => e instanceof GoodputError && e.code === 'E_SHARES' && pattern.test(e.message),
  );

describe('shares file', () => {
  it('reads teams, members, weights, quotas per type and the half-life', () => {
    const s = parseShares(
      'half_life: 2d\nteams:\n  vision:\n    members: [alice, bob]\n    weight: 2\n    quota: {a100: 8}\n  nlp: {members: [carol]}\n',
      'f',
    );
    assert.equal(s.half_life_s, 2 * 86400);
    assert.deepEqual(s.teams, [
      { name: 'vision', members: ['alice', 'bob'], weight: 2, quota: { a100: 8 } },
      { name: 'nlp', members: ['carol'], weight: 1, quota: {} },
    ]);
    assert.equal(teamOf(s, 'bob'), 'vision');
    assert.equal(teamOf(s, 'dave'), 'dave');
    assert.equal(teamOf(undefined, 'dave'), 'dave');
    assert.deepEqual(parseShares('', 'f').teams, []);
  });

  it('refuses a malformed file with its line and the fix', () => {
    refused('teams:\n  a: {members: [x], weight: -1}\n', /shares\.yaml:2: .*weight must be a number > 0/);
    refused(
      'teams:\n  a: {members: [x]}\n  b:\n    members: [x]\n',
      /shares\.yaml:4: .*user x is in teams a and b; keep one/,
    );
    refused('teams:\n  a: {members: [x], quota: {a100: 2.5}}\n', /:2: .*quota of a100 must be a whole number/);
    refused('team:\n  a: {}\n', /:1: .*unknown key 'team': a shares file has 'teams' and 'half_life'/);
    refused('teams:\n  a: {members: [x], wieght: 2}\n', /:2: .*unknown key 'wieght' \(members, weight, quota\)/);
    refused('teams: [\n', /:\d+: shares file is not valid YAML/);
    refused('half_life: soon\n', /:1: .*half_life must be a duration/);
  });

  it('is re-read when it changes; a malformed edit keeps the last good shares', () => {
    const path = join(dir, 'shares.yaml');
    writeFileSync(path, 'teams:\n  a: {members: [x]}\n');
    const lines: string[] = [];
    const file = new SharesFile(path, (l) => lines.push(l));
    assert.equal(teamOf(file.current(), 'x'), 'a');
    writeFileSync(path, 'teams:\n  b: {members: [x], weight: 3}\n');
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    assert.equal(teamOf(file.current(), 'x'), 'b');
    writeFileSync(path, 'teams:\n  b: {members: [x], weight: 0}\n');
    utimesSync(path, new Date(), new Date(Date.now() + 10_000));
    assert.equal(teamOf(file.current(), 'x'), 'b');
    assert.ok(
      lines.some((l) => /weight must be a number > 0.*; keeping the shares in force/.test(l)),
      lines.join('\n'),
    );
    assert.throws(() => readSharesFile(join(dir, 'none.yaml')), /cannot read shares file/);
  });
});

describe('decayed usage', () => {
  it('halves every half-life, charges the devices held, and survives a reopen of the store', async () => {
    let u = advanceUsage(undefined, [], 0, 100);
    u = advanceUsage(u, [{ user: 'alice', team: 'vision', devices: 2 }], 100, 100);
    assert.equal(u.users['alice'], 200);
    u = advanceUsage(u, [], 200, 100);
    assert.equal(u.teams['vision'], 100);
    const path = join(dir, 'store.sqlite');
    const s1 = new SqliteStore(path);
    assert.equal(await s1.getShareUsage(), undefined);
    await s1.putShareUsage(u);
    await s1.close();
    const s2 = new SqliteStore(path);
    assert.deepEqual(await s2.getShareUsage(), u);
    await s2.close();
  });
});
