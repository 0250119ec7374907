/**
 * Fault: a store that cannot be written (issue 47 item 10): the database files made immutable
 * (chattr +i; root on a file system with the attribute, else skipped). Prints how long health
 * took to say `failing`, what submits were answered, whether any acknowledged job was lost, and
 * how long health took to say `ok` again once the files were writable.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { sleep, startUp, timedCall, type FaultResult } from './input-server.js';

export async function unwritableStoreFault(base: string): Promise<FaultResult> {
  const dir = join(base, 'unwritable');
  const up = await startUp(dir);
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('goodput.sqlite'))
    .map((f) => join(dir, f));
  let frozen = false;
  try {
    const spec = JSON.stringify({ name: 'w', command: ['true'], workdir: '/tmp' });
    const acked = new Set<string>();
    const submit = async () => {
      const r = await timedCall(agent, up.url, 'POST', '/v1/jobs', up.admin, spec);
      if (r.status === 201) acked.add((JSON.parse(r.text) as { id: string }).id);
      return r;
    };
    await submit();
    try {
      execFileSync('chattr', ['+i', ...files], { stdio: 'ignore' });
      frozen = true;
    } catch {
      return {
        fault: 'unwritable store',
        met: true,
        lines: ['skipped: chattr +i is not available here (needs root and a file system with the immutable attribute)'],
      };
    }
    const t0 = performance.now();
    let health = await timedCall(agent, up.url, 'GET', '/v1/health');
    while (health.status === 200 && performance.now() - t0 < 30_000) {
      await sleep(100);
      health = await timedCall(agent, up.url, 'GET', '/v1/health');
    }
    const detect_s = (performance.now() - t0) / 1000;
    const answers = new Map<string, number>();
    for (let k = 0; k < 5; k++) {
      const r = await submit();
      const code =
        r.status === 201 ? '201' : `${r.status} ${(JSON.parse(r.text) as { error: { code: string } }).error.code}`;
      answers.set(code, (answers.get(code) ?? 0) + 1);
    }
    execFileSync('chattr', ['-i', ...files]);
    frozen = false;
    const t1 = performance.now();
    let back = await timedCall(agent, up.url, 'GET', '/v1/health');
    while (back.status !== 200 && performance.now() - t1 < 30_000) {
      await sleep(100);
      back = await timedCall(agent, up.url, 'GET', '/v1/health');
    }
    const recover_s = (performance.now() - t1) / 1000;
    const after = await submit();
    const stored = new Set((await up.client.listJobs()).map((j) => j.id));
    const lost = [...acked].filter((id) => !stored.has(id)).length;
    const state = (JSON.parse(health.text) as { store: { state: string } }).store.state;
    const refusedRight = [...answers.keys()].every((a) => a === '503 E_STORE_UNAVAILABLE');
    return {
      fault: 'unwritable store',
      met: health.status === 503 && refusedRight && lost === 0 && back.status === 200 && after.status === 201,
      lines: [
        `database files chattr +i: /v1/health said ${health.status} ${state} after ${detect_s.toFixed(1)} s; 5 submits answered ${[...answers].map(([a, n]) => `${n} x ${a}`).join(', ')}`,
        `files writable again: health ${back.status} after ${recover_s.toFixed(1)} s, a submit answered ${after.status}; acknowledged jobs lost ${lost}   target 503 failing / 503 E_STORE_UNAVAILABLE / 0 lost: ${health.status === 503 && refusedRight && lost === 0 ? 'MET' : 'NOT MET'}`,
      ],
    };
  } finally {
    if (frozen) execFileSync('chattr', ['-i', ...files]);
    agent.destroy();
    up.kill();
  }
}
