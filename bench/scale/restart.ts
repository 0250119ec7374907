/**
 * The first round after a restart with the policy's saved memos (issue #49: "memos survive a
 * restart"; goodput/memo-bank.ts): per case, one process decides 3 rounds and saves its memos as
 * the server does (JSON; the server gzips it into its store), then fresh processes decide the
 * first round cold and restored, alternately. Same generators as bench:scale; every process is
 * new, so both first rounds include V8 compiling the policy's code. The restored decisions must
 * equal the cold ones (checked by a digest of allocations and gains).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Allocation } from '../../src/core/cluster.js';
import { MemoBank, memoJson, parsedOrUndefined } from '../../src/goodput/memo-bank.js';
import { createPolicy } from '../../src/policy/registry.js';
import { percentile } from '../../src/sim/metrics.js';
import { benchArgs, positiveIntOrExit, switchFlag, textFlag } from '../bench-args.js';
import { feedBack, generateCase, roundSnapshot } from '../generated-cluster.js';
import { caseTracesDir, scaleCase } from './cases.js';

const USAGE = `
usage: node dist/bench/scale/restart.js [--cases one-2048,one-16384,four-2048,four-16384]
       [--distinct-models] [--runs 3] [--data DIR] [--json]
The goodput policy's first round in a fresh process, cold and with the memos a process that
decided 3 rounds saved (as a server restart finds them), --runs of each alternately (medians).
--distinct-models: every job's models its own (bench:scale's flag). --data: Sia's data directory.
`;
const values = benchArgs(USAGE, {
  cases: textFlag('one-2048,one-16384,four-2048,four-16384'),
  'distinct-models': switchFlag(),
  runs: textFlag('3'),
  data: { type: 'string' },
  json: switchFlag(),
  child: { type: 'string' },
  memo: { type: 'string' },
});

interface Child {
  wall_ms: number;
  cpu_ms: number;
  restore_ms: number;
  seeds: number;
  save_ms: number;
  memo_bytes: number;
  digest: string;
}

/** A child: `save` decides 3 rounds and writes the memo to --memo; `cold`/`restored` decide the first round. */
async function child(mode: string, name: string): Promise<Child> {
  const spec = scaleCase(name);
  const cluster = generateCase(
    spec.types,
    spec.gpus,
    spec.jobs,
    caseTracesDir(spec.types, values.data),
    values['distinct-models'],
  );
  const bank = new MemoBank();
  let restore_ms = 0;
  let seeds = 0;
  if (mode === 'restored') {
    const start = performance.now();
    seeds = bank.restore(parsedOrUndefined(readFileSync(values.memo!, 'utf8')));
    restore_ms = performance.now() - start;
  }
  const policy = await createPolicy('goodput', { seed: 1, memo_bank: bank });
  let allocations: Record<string, Allocation> = cluster.allocations;
  const out: Child = { wall_ms: 0, cpu_ms: 0, restore_ms, seeds, save_ms: 0, memo_bytes: 0, digest: '' };
  for (let round = 0; round < (mode === 'save' ? 3 : 1); round++) {
    const snapshot = roundSnapshot(cluster, round, allocations);
    const wall0 = performance.now();
    const cpu0 = process.cpuUsage();
    const decision = policy.decide(snapshot);
    const cpu = process.cpuUsage(cpu0);
    if (round === 0) {
      out.wall_ms = performance.now() - wall0;
      out.cpu_ms = (cpu.user + cpu.system) / 1000;
      out.digest = createHash('sha256')
        .update(JSON.stringify([decision.allocations, decision.gains ?? {}]))
        .digest('hex')
        .slice(0, 16);
    }
    allocations = decision.allocations;
    feedBack(cluster.jobs, allocations);
  }
  if (mode === 'save') {
    const start = performance.now();
    const json = memoJson(bank) ?? '';
    out.save_ms = performance.now() - start;
    out.memo_bytes = Buffer.byteLength(json);
    writeFileSync(values.memo!, json);
  }
  return out;
}

function run(mode: string, name: string, memo: string): Child {
  const args = [fileURLToPath(import.meta.url), '--child', mode, '--cases', name, '--memo', memo];
  if (values['distinct-models']) args.push('--distinct-models');
  if (values.data) args.push('--data', values.data);
  const result = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (result.status !== 0) {
    console.error(`error: ${name} (${mode}) failed: ${result.stderr.trim().split('\n').pop() ?? ''}`);
    process.exit(1);
  }
  return JSON.parse(result.stdout) as Child;
}

const r1 = (x: number): number => Math.round(x * 10) / 10;
const median = (xs: number[]): number => r1(percentile(xs, 50));

if (values.child) console.log(JSON.stringify(await child(values.child, values.cases)));
else {
  const runs = positiveIntOrExit(values.runs, 'runs');
  const dir = mkdtempSync(join(tmpdir(), 'goodput-restart-'));
  const cases = [];
  try {
    for (const name of values.cases.split(',')) {
      const spec = scaleCase(name);
      const memo = join(dir, 'memo.json');
      const saved = run('save', name, memo);
      const cold: Child[] = [];
      const restored: Child[] = [];
      for (let k = 0; k < runs; k++) {
        cold.push(run('cold', name, memo));
        restored.push(run('restored', name, memo));
      }
      const row = {
        types: spec.types,
        gpus: spec.gpus,
        jobs: spec.jobs,
        distinct_models: values['distinct-models'],
        memo_bytes: saved.memo_bytes,
        save_ms: r1(saved.save_ms),
        seeds: restored[0]!.seeds,
        restore_ms: median(restored.map((c) => c.restore_ms)),
        cold_first_round_ms: median(cold.map((c) => c.wall_ms)),
        cold_first_round_cpu_ms: median(cold.map((c) => c.cpu_ms)),
        restored_first_round_ms: median(restored.map((c) => c.wall_ms)),
        restored_first_round_cpu_ms: median(restored.map((c) => c.cpu_ms)),
        same_decisions: [...cold, ...restored].every((c) => c.digest === cold[0]!.digest),
      };
      cases.push(row);
      if (!values.json)
        console.log(
          `${name}${row.distinct_models ? ' (a model per job)' : ''}: first round cold ${row.cold_first_round_ms} ms ` +
            `(CPU ${row.cold_first_round_cpu_ms}), restored ${row.restored_first_round_ms} ms (CPU ` +
            `${row.restored_first_round_cpu_ms}); memos ${(row.memo_bytes / 1e6).toFixed(2)} MB of JSON, ${row.seeds} ` +
            `entries, saved in ${row.save_ms} ms, read in ${row.restore_ms} ms; ` +
            `decisions ${row.same_decisions ? 'the same' : 'DIFFERENT'} (medians of ${runs} processes each)`,
        );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (values.json) console.log(JSON.stringify({ cases }));
  if (cases.some((c) => !c.same_decisions)) process.exit(1);
}
