/**
 * `npm run bench:live-decisions`: issue #51's live acceptance. A real `goodput up` on 4 CPU slots,
 * kept busy (CPU-burning processes outside Goodput, and a synthetic SDK job arriving after
 * `--rival-at-s`), runs an NCF-style SDK job with Adam (bench/ncf_live.py, AdaptDL's NCF example's
 * shape) for `--duration-s`; then prints the job's replica changes, its direction changes (target:
 * at most 1 in its first 4 minutes), its batch-size events and the largest gain claimed for a
 * batch change under 10% (target: at most x1.5), and the learning-rate rule its events name.
 *   node dist/bench/live-decisions.js [--duration-s 240] [--busy 1] [--interval-s 5] [--cli PATH] [--json]
 * --cli: the CLI to serve with (default this build's dist/src/cli/main.js); pass an older build's
 * to measure the baseline on the same host.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GoodputClient } from '../src/client/client.js';
import { packagePath } from '../src/util/package-root.js';
import { cleanup, killGroup, sleep, tempDataDir, TRAINER } from '../test-support/control/harness.js';
import { benchArgs } from './bench-args.js';
import { batchClaims, directionChanges, largestSmallChangeClaim, sizeChanges } from './decision-events.js';

const USAGE = `
usage: node dist/bench/live-decisions.js [--duration-s 240] [--busy 1] [--interval-s 5] [--rival-at-s 45]
                                         [--python /usr/bin/python3] [--cli PATH] [--json]
An NCF-style SDK job (Adam) on a busy 4-slot 'goodput up': its direction changes in the first
--duration-s seconds and the largest gain claimed for a batch change under 10% (issue #51).
`;
const values = benchArgs(USAGE, {
  'duration-s': { type: 'string', default: '240' },
  busy: { type: 'string', default: '1' },
  'interval-s': { type: 'string', default: '5' },
  'rival-at-s': { type: 'string', default: '45' },
  python: { type: 'string', default: '/usr/bin/python3' },
  cli: { type: 'string', default: packagePath('dist', 'src', 'cli', 'main.js') },
  json: { type: 'boolean', default: false },
});
const duration_s = Number(values['duration-s']);
const data_dir = tempDataDir('goodput-live-decisions-');
const pids: number[] = [];

/** `goodput up` from `cli` on 4 CPU slots; its client once it serves. */
async function up(): Promise<GoodputClient> {
  const args = ['up', '--data-dir', data_dir, '--port', '0', '--cpu-slots', '4', '--interval-s', values['interval-s']];
  const child = spawn(process.execPath, [values.cli, ...args], { detached: true, stdio: 'ignore' });
  pids.push(child.pid!);
  for (let i = 0; i < 1200; i++) {
    try {
      const info = JSON.parse(readFileSync(join(data_dir, 'server.json'), 'utf8')) as { url: string; pid: number };
      if (info.pid === child.pid)
        return new GoodputClient(info.url, readFileSync(join(data_dir, 'admin-token'), 'utf8').trim());
    } catch {
      // not written yet
    }
    await sleep(50);
  }
  throw new Error(`goodput up (${values.cli}) did not start`);
}

async function main(): Promise<void> {
  const client = await up();
  for (let i = 0; i < Number(values.busy); i++) {
    const burner = spawn(process.execPath, ['-e', 'for (;;) {}'], { detached: true, stdio: 'ignore' });
    pids.push(burner.pid!);
  }
  const ncf = await client.submit({
    name: 'ncf',
    command: [values.python, packagePath('bench', 'ncf_live.py'), '--epochs', '200'],
    workdir: data_dir,
    max_replicas: 4,
  });
  const t0 = Date.now();
  await sleep(Number(values['rival-at-s']) * 1000);
  await client.submit({
    name: 'rival',
    command: [process.execPath, TRAINER, '--samples', '100000000'],
    workdir: data_dir,
    max_replicas: 4,
  });
  await sleep(Math.max(0, t0 + duration_s * 1000 - Date.now()));
  const events = (await client.events(ncf.id)).map((e) => ({ ...e, at_ms: Date.parse(e.at) }));
  const inWindow = events.filter((e) => e.at_ms <= t0 + duration_s * 1000);
  const changes = sizeChanges(inWindow);
  const claims = batchClaims(inWindow);
  const rules = [...new Set(claims.map((c) => /learning rate x[\d.]+ \(([^)]*)\)/.exec(c.reason)?.[1] ?? '?'))];
  const result = {
    cli: values.cli,
    duration_s,
    busy: Number(values.busy),
    replica_changes: changes.map((c) => ({ t_s: (c.at_ms - t0) / 1000, from: c.from, to: c.to, reason: c.reason })),
    direction_changes: directionChanges(changes),
    batch_changes: claims.map((c) => ({
      t_s: (c.at_ms - t0) / 1000,
      from: c.from_total,
      to: c.to_total,
      change_pct: 100 * c.change,
      claimed: c.claimed ?? null,
      reason: c.reason,
    })),
    largest_claim_small_batch_change: largestSmallChangeClaim(claims, 0.1),
    lr_rules: rules,
  };
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `NCF-style job (Adam) on a busy 4-slot server, ${duration_s} s, ${result.busy} CPU burner(s), server ${values.cli}`,
    );
    for (const c of changes) console.log(`  ${((c.at_ms - t0) / 1000).toFixed(0).padStart(4)} s  ${c.reason}`);
    for (const c of claims) console.log(`  ${((c.at_ms - t0) / 1000).toFixed(0).padStart(4)} s  ${c.reason}`);
    console.log(`direction changes (target <= 1):                        ${result.direction_changes}`);
    console.log(
      `largest claim for a batch change < 10% (target <= x1.5): x${result.largest_claim_small_batch_change.toFixed(2)}`,
    );
    console.log(
      `learning-rate rule named by the batch events:           ${rules.join(', ') || 'none (no batch change)'}`,
    );
  }
  await client.cancel(ncf.id).catch(() => undefined);
}

try {
  await main();
} finally {
  for (const pid of pids.reverse()) killGroup(pid);
  cleanup(data_dir);
}
