/**
 * Fault: large request bodies (issue 47 item 5). Six clients post 3 MB job specs of 200,000 env
 * variables back to back while a seventh asks /v1/health every 20 ms. Prints health p50/p99/max
 * (target p99 <= 100 ms; and p99 with no posts, on the same machine, for comparison), what the
 * posts were answered and how fast. The posters run in worker threads, so that sending 3 MB
 * bodies does not delay the health checks' own event loop.
 */
import { Agent } from 'node:http';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { quantile, sleep, startUp, timedCall, type FaultResult } from './input-server.js';

/** A poster thread: once told the end time, posts the body until then, then sends its latencies and statuses. */
async function poster(o: { url: string; admin: string; body: Uint8Array }): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const body = Buffer.from(o.body);
  const end_ms = await new Promise<number>((resolve) => {
    parentPort!.once('message', resolve);
    parentPort!.postMessage('ready');
  });
  const out: { ms: number; status: number }[] = [];
  while (Date.now() < end_ms) {
    const r = await timedCall(agent, new URL(o.url), 'POST', '/v1/jobs', o.admin, body);
    out.push({ ms: r.ms, status: r.status });
  }
  agent.destroy();
  parentPort!.postMessage({ out });
}
if (!isMainThread && (workerData as { role?: string } | null)?.role === 'poster')
  void poster(workerData as { url: string; admin: string; body: Uint8Array });

const TARGET_P99_MS = 100;

export async function bodiesFault(base: string, seconds = 8): Promise<FaultResult> {
  const up = await startUp(join(base, 'bodies'));
  const checker = new Agent({ keepAlive: true, maxSockets: 1 });
  const checkHealth = async (until: number) => {
    const ms: number[] = [];
    let bad = 0;
    while (performance.now() < until) {
      const r = await timedCall(checker, up.url, 'GET', '/v1/health');
      ms.push(r.ms);
      if (r.status !== 200) bad++;
      await sleep(20);
    }
    return { ms, bad };
  };
  try {
    const idle = await checkHealth(performance.now() + 3000);
    const body = Buffer.from(
      JSON.stringify({
        name: 'big',
        command: ['true'],
        workdir: '/tmp',
        env: Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`VAR_${i}`, 'v'])),
      }),
    );
    const workers = Array.from(
      { length: 6 },
      () =>
        new Worker(new URL(import.meta.url), {
          workerData: { role: 'poster', url: up.url.href, admin: up.admin, body },
        }),
    );
    await Promise.all(
      workers.map((w) => new Promise((resolve, reject) => w.once('message', resolve).once('error', reject))),
    );
    const done = workers.map(
      (w) =>
        new Promise<{ out: { ms: number; status: number }[] }>((resolve, reject) =>
          w.once('message', resolve).once('error', reject),
        ),
    );
    const end_ms = Date.now() + seconds * 1000;
    for (const w of workers) w.postMessage(end_ms);
    await sleep(300);
    const { ms: health, bad: healthBad } = await checkHealth(performance.now() + seconds * 1000 - 600);
    const results = await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    const posts = results.flatMap((r) => r.out.map((o) => o.ms));
    const statuses = new Map<number, number>();
    for (const o of results.flatMap((r) => r.out)) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
    const p99 = quantile(health, 0.99);
    const answers = [...statuses].map(([s, n]) => `${n} x ${s}`).join(', ');
    return {
      fault: 'large bodies',
      met: p99 <= TARGET_P99_MS && healthBad === 0,
      lines: [
        `six clients posting ${(body.length / 1e6).toFixed(1)} MB specs of 200,000 env keys for ${seconds} s: ${posts.length} posts answered ${answers}, post p50 ${quantile(posts, 0.5).toFixed(0)} ms, p99 ${quantile(posts, 0.99).toFixed(0)} ms`,
        `/v1/health meanwhile: ${health.length} checks, p50 ${quantile(health, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms, ${healthBad} not 200   target p99 <= ${TARGET_P99_MS} ms: ${p99 <= TARGET_P99_MS ? 'MET' : 'NOT MET'}`,
        `/v1/health with no posts (before them, same machine): p50 ${quantile(idle.ms, 0.5).toFixed(1)} ms, p99 ${quantile(idle.ms, 0.99).toFixed(1)} ms`,
      ],
    };
  } finally {
    checker.destroy();
    up.kill();
  }
}
