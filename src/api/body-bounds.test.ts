import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateJobSpec } from '../admission/job-spec-file.js';
import { inProcessApi } from './testing/in-process.js';

/** A job spec of `n` env variables: 200,000 make the 3 MB body, 60,000 one under the 1 MiB spec body limit. */
const hugeSpec = (n: number) =>
  JSON.stringify({
    name: 'big',
    command: ['true'],
    workdir: '/tmp',
    env: Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, ''])),
  });

describe('request bodies are bounded before they are parsed (issue 47 item 5)', () => {
  it('refuses a spec of 60,000 env keys in milliseconds, naming the field, and a 3 MB one by its size; health answers meanwhile', async () => {
    const api = await inProcessApi();
    try {
      const huge = await api.app.request('/v1/jobs', {
        method: 'POST',
        headers: { authorization: `Bearer ${api.admin}`, 'content-type': 'application/json' },
        body: hugeSpec(200_000),
      });
      assert.equal(huge.status, 413);
      const body = hugeSpec(60_000);
      assert.ok(body.length > 600_000 && body.length < 1 << 20);
      // The yardstick, measured here because the machine's speed varies: the unbounded path, one
      // JSON.parse and one schema walk of the body (the server spent 0.9 s + 2.8 s in them).
      const p0 = performance.now();
      assert.throws(() => validateJobSpec(JSON.parse(body), '/tmp'));
      const unbounded_ms = performance.now() - p0;
      // The quickest of three answers: a pause of a loaded machine is not the server's work.
      let ms = Infinity;
      let r = await api.call('POST', '/v1/jobs', api.admin, body);
      for (let k = 0; k < 3; k++) {
        const t0 = performance.now();
        r = await api.call('POST', '/v1/jobs', api.admin, body);
        ms = Math.min(ms, performance.now() - t0);
      }
      assert.equal(r.status, 400);
      assert.equal(r.json.error.code, 'E_BAD_REQUEST');
      assert.match(r.json.error.message, /^job spec is invalid: env: more than 1024 keys \(refused before parsing/);
      assert.ok(
        ms < unbounded_ms / 3,
        `answered in ${ms.toFixed(0)} ms; parsing and checking the body takes ${unbounded_ms.toFixed(0)} ms`,
      );
      // Six in parallel, and a health check among them.
      const posts = Array.from({ length: 6 }, () => api.call('POST', '/v1/jobs', api.admin, body));
      const h0 = performance.now();
      const health = await api.call('GET', '/v1/health');
      const health_ms = performance.now() - h0;
      assert.deepEqual(
        (await Promise.all(posts)).map((p) => p.status),
        [400, 400, 400, 400, 400, 400],
      );
      assert.equal(health.status, 200);
      // Unbounded, health waited for six parses and six schema walks.
      assert.ok(
        health_ms < 2 * unbounded_ms,
        `health answered in ${health_ms.toFixed(0)} ms; parsing and checking the body takes ${unbounded_ms.toFixed(0)} ms`,
      );
      // A spec within the bounds still gets the schema's precise message.
      const over = await api.call('POST', '/v1/jobs', api.admin, {
        name: 'x',
        command: ['true'],
        workdir: '/tmp',
        env: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`V${i}`, 'v'])),
      });
      assert.equal(over.status, 400);
      assert.match(over.json.error.message, /env: more than 256 variables/);
    } finally {
      await api.close();
    }
  });
});
