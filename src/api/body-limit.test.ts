/**
 * Every body is limited, however it is sent: a chunked body (no Content-Length) bypassed the 4 MiB limit; a 50 MB
 * job spec got 201 and grew the server to 625 MB. Against a real `goodput up` process: chunked
 * bodies over the limit get 413 on every route, and the server's resident memory (read from
 * /proc) stays under 150 MB.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { jobToken } from '../control/tokens.js';
import { cleanup, startServerProcess, tempDataDir, type ServerProcess } from '../../test-support/control/harness.js';

const data_dir = tempDataDir('goodput-body-');
let server: ServerProcess;
let admin = '';
before(async () => {
  server = await startServerProcess(data_dir, ['--cpu-slots', '1', '--interval-s', '60']);
  admin = readFileSync(join(data_dir, 'admin-token'), 'utf8').trim();
});
after(() => cleanup(data_dir, server ? [server] : []));

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status). */
function rssBytes(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/**
 * POSTs `total_bytes` as a chunked body (64 KiB chunks, a JSON string that never ends) and
 * resolves with the status, stopping to send once the server answered. Tracks the peak RSS.
 */
function postChunked(
  path: string,
  token: string,
  total_bytes: number,
  pid: number,
  peak: { rss: number },
): Promise<number> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', (error) => (answered ? undefined : reject(error)));
    assert.equal(req.getHeader('content-length'), undefined);
    const chunk = Buffer.alloc(64 << 10, 'a');
    let sent = 0;
    const pump = () => {
      while (!answered && sent < total_bytes) {
        if (sent % (1 << 20) === 0) peak.rss = Math.max(peak.rss, rssBytes(pid));
        const ok = req.write(sent === 0 ? Buffer.concat([Buffer.from('{"name":"x","command":["'), chunk]) : chunk);
        sent += chunk.length;
        if (!ok) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

describe('body limit on the bytes read (real server)', () => {
  it(
    'answers 413 to a 50 MB chunked job spec and a 25 MB chunked report; the server stays under 150 MB',
    { timeout: 60_000 },
    async () => {
      const peak = { rss: rssBytes(server.pid) };
      assert.equal(await postChunked('/v1/jobs', admin, 50e6, server.pid, peak), 413);
      // Runs on the one slot for the whole test (its token stays valid); cleanup ends it.
      const job = await server.client.submit({
        name: 'small',
        command: ['sleep', '600'],
        workdir: data_dir,
        max_replicas: 1,
      });
      const secret = readFileSync(join(data_dir, 'secret'), 'utf8').trim();
      assert.equal(
        await postChunked(`/v1/jobs/${job.id}/reports`, jobToken(secret, job.id), 25e6, server.pid, peak),
        413,
      );
      peak.rss = Math.max(peak.rss, rssBytes(server.pid));
      assert.ok(peak.rss < 150e6, `server RSS peaked at ${(peak.rss / 1e6).toFixed(0)} MB`);
      assert.equal((await server.client.health()).ok, true, 'still serving');
    },
  );

  it('still accepts a chunked body under the limit', async () => {
    const url = new URL(server.url);
    const body = JSON.stringify({ name: 'chunked', command: ['true'], workdir: data_dir, max_replicas: 1 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/v1/jobs',
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      req.end(body.slice(10));
    });
    assert.equal(status, 201);
  });
});
