import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import type { ApiEnv } from './auth.js';
import { limitBody } from './body-limit.js';
import { errorBody, statusOf } from './http-error.js';

describe('memory for request bodies is bounded', () => {
  it('answers 503 E_BUSY to a large body while others hold the in-flight budget, and takes it once they are done', async () => {
    const app = new Hono<ApiEnv>();
    app.onError((error, c) => {
      const body = errorBody(error);
      return c.json(body, statusOf(body.error.code));
    });
    app.use('*', limitBody(4 << 20, 8 << 20));
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    app.post('/x', async (c) => {
      await c.req.text();
      await held;
      return c.text('ok');
    });
    const big = 'x'.repeat(3 << 20);
    const post = (body: string) =>
      app.request('/x', { method: 'POST', body, headers: { 'content-length': String(body.length) } });
    const first = [post(big), post(big)];
    await new Promise((r) => setTimeout(r, 20));
    const third = await post(big);
    assert.equal(third.status, 503);
    assert.equal(third.headers.get('retry-after'), '1');
    assert.equal(((await third.json()) as { error: { code: string } }).error.code, 'E_BUSY');
    const small = post('{"a":1}');
    release();
    assert.deepEqual(
      (await Promise.all([...first, small])).map((r) => r.status),
      [200, 200, 200],
      'small bodies are never refused',
    );
    assert.equal((await post(big)).status, 200, 'the budget is released');
  });
});
