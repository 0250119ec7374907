/**
 * The server's answer to a submit carries admission's notes (in-process API): the warnings of
 * the one read of the job's code, other active jobs of the name (one filtered store query, no
 * paging), the profile key with the script's folder, and a note when a profile under the key of
 * earlier versions is left unused.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { inProcessApi } from '../api/testing/in-process.js';
import { scopedKey } from '../core/profile-scope.js';
import { profilePoint } from '../goodput/profile.js';
import { packagePath } from '../util/package-root.js';
import { measuredStepFixture } from '../goodput/testing/perf-fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'goodput-answer-'));
after(() => rmSync(dir, { recursive: true, force: true }));
for (const p of ['imagenet', 'ncf'])
  cpSync(packagePath('test-support', 'outside', p), join(dir, p), { recursive: true });

describe('the submit answer', () => {
  it('carries the notes, one per thing to say, and names jobs of the same name from one query', async () => {
    const api = await inProcessApi();
    try {
      const body = {
        name: 'imnet',
        // Debian's python3, which has torch: the server's own first python3 (a pyenv one here)
        // would add admission's interpreter warning (admission/interpreter.test.ts checks it).
        command: ['/usr/bin/python3', 'main.py', '--dummy', '--dist-backend', 'gloo'],
        workdir: join(dir, 'imagenet'),
        max_replicas: 2,
      };
      const first = await api.call('POST', '/v1/jobs', api.admin, body);
      assert.equal(first.status, 201, first.text);
      assert.equal(first.json.profile_key, 'imagenet.main');
      assert.deepEqual(
        first.json.notes.map((n: string) => n.slice(0, 40)),
        ['main.py does not import goodput, so it r', 'warning: main.py fixes its rendezvous (t'],
      );
      const second = await api.call('POST', '/v1/jobs', api.admin, body);
      assert.match(
        second.json.notes.at(-1),
        new RegExp(
          `^warning: 1 other active job\\(s\\) are named 'imnet' \\(${first.json.id}\\); .*give this one as ${second.json.id}`,
        ),
      );
      const ncf = await api.call('POST', '/v1/jobs', api.admin, {
        name: 'ncf',
        command: ['python3', 'main.py'],
        workdir: join(dir, 'ncf'),
      });
      assert.equal(ncf.json.profile_key, 'ncf.main', "another project's main.py, another key");
      assert.equal(ncf.json.spec.sdk, true);
      assert.match(ncf.json.notes.join('\n'), /fixes the devices it sees/);
    } finally {
      await api.close();
    }
  });

  it("says when a profile under the key of earlier versions (the script's name alone) is not used", async () => {
    const api = await inProcessApi();
    try {
      const body = { name: 'ncf', command: ['python3', 'main.py'], workdir: join(dir, 'ncf') };
      assert.equal(
        (await api.call('POST', '/v1/jobs', api.admin, body)).json.notes.some((n: string) => n.includes('profile key')),
        false,
        'no old profile: nothing to say',
      );
      const point = profilePoint(measuredStepFixture());
      await api.store.mergeKeyProfile({
        key: scopedKey('main', 'admin'),
        gpu_type: 'cpu',
        job_id: 'old',
        points: [point],
        grad: [],
        limits: null,
      });
      const notes: string[] = (await api.call('POST', '/v1/jobs', api.admin, body)).json.notes;
      assert.ok(
        notes.some((n) =>
          /^profile key 'ncf\.main': .*the profile measured under 'main' .* is not used\. If it is this model's, submit with --profile main\.$/.test(
            n,
          ),
        ),
        notes.join('\n'),
      );
      const kept = await api.call('POST', '/v1/jobs', api.admin, { ...body, profile: 'main' });
      assert.equal(kept.json.profile_key, 'main');
      assert.equal(
        kept.json.notes.some((n: string) => n.includes('profile key')),
        false,
      );
    } finally {
      await api.close();
    }
  });
});
