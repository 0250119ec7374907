#!/usr/bin/env node
// Runs the compiled TypeScript tests (dist/**/*.test.js) tier by tier (scripts/test-tiers.mjs
// places every test file in one), then the Python SDK's pytest suite with the heavy tier.
//
//   node scripts/run-tests.mjs                   every tier, then pytest (what `npm test` runs)
//   node scripts/run-tests.mjs --tier unit       one tier (unit | e2e | heavy; heavy includes pytest)
//   node scripts/run-tests.mjs SUBSTRING...      the test files whose path contains a substring, each
//                                                in its tier's way; no pytest
//   --durations                                  also prints each tier's files by the time they took
//                                                (scripts/test-durations.mjs), slowest first
//
// Files run in parallel within a tier (node --test --test-concurrency), as many at once as the
// tier allows (CONCURRENCY; GOODPUT_TEST_CONCURRENCY_<TIER> overrides it). The heavy tier's Slurm
// tests share one test cluster per shape (a pool this runner lends them and stops at the end:
// src/backends/slurm/testing/slurm-cluster.ts, SLURM_POOL_ENV) instead of one per file. Exit code
// is non-zero if any tier fails.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { classify, TIERS } from './test-tiers.mjs';

/**
 * Files run at once per tier on this project's 2-core reference machine. unit: in-process and
 * CPU-bound, one file per core. e2e: most of a file's time is waiting on scheduling rounds and
 * replica processes that sleep, but each file also starts a server and CLI processes and some
 * assert on seconds (a growth undone within 45 s, 20 s jobs ending in order); two at once keeps a
 * core for each file's bursts, more would turn CPU contention into flaky deadlines. heavy: torch
 * training, chromium and the one shared Slurm cluster (its GPUs are per test): one at a time.
 */
const CONCURRENCY = { unit: 2, e2e: 2, heavy: 1 };

function listCompiled(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return listCompiled(path);
    return name.endsWith('.test.js') ? [path] : [];
  });
}

const args = process.argv.slice(2);
const tierFlag = args.indexOf('--tier');
const onlyTier = tierFlag >= 0 ? args[tierFlag + 1] : undefined;
if (tierFlag >= 0 && !TIERS.includes(onlyTier)) {
  console.error(`run-tests: --tier takes one of ${TIERS.join(', ')}, got ${onlyTier ?? 'nothing'}`);
  process.exit(2);
}
const durations = args.includes('--durations');
const filters = (tierFlag >= 0 ? args.filter((_, i) => i !== tierFlag && i !== tierFlag + 1) : args).filter(
  (a) => a !== '--durations',
);

const { files, problems } = classify();
if (problems.length > 0) {
  console.error(
    `run-tests: the test tiers are inconsistent (node scripts/test-tiers.mjs):\n  ${problems.join('\n  ')}`,
  );
  process.exit(1);
}
const tierOfSource = new Map(files.map((f) => [f.path, f.tier]));
// A compiled test whose TypeScript source was renamed or removed stays in dist/ (tsc does not
// delete outputs): it would run against today's modules and fail for no reason in the source.
const sourceOf = (test) =>
  ['.ts', '.tsx']
    .map((ext) =>
      test
        .replace(/^dist[\\/]/, '')
        .replace(/\.js$/, ext)
        .split('\\')
        .join('/'),
    )
    .find((s) => existsSync(s));
const compiled = listCompiled('dist').sort();
const stale = compiled.filter((t) => !sourceOf(t));
if (stale.length > 0)
  console.error(
    `run-tests: skipping ${stale.length} compiled test(s) without a source (stale in dist/; 'rm -rf dist && npm run build' clears them): ${stale.join(', ')}`,
  );
const live = compiled.filter((t) => sourceOf(t));
const unbuilt = files.filter((f) => !live.some((t) => sourceOf(t) === f.path));
if (unbuilt.length > 0 && filters.length === 0) {
  console.error(
    `run-tests: ${unbuilt.length} test source(s) not compiled (run npm run build): ${unbuilt.map((f) => f.path).join(', ')}`,
  );
  process.exit(1);
}

const tiers = onlyTier ? [onlyTier] : TIERS;
const selected = (tier) =>
  live.filter(
    (t) => tierOfSource.get(sourceOf(t)) === tier && (filters.length === 0 || filters.some((f) => t.includes(f))),
  );
const concurrencyOf = (tier) =>
  Number(process.env[`GOODPUT_TEST_CONCURRENCY_${tier.toUpperCase()}`] ?? CONCURRENCY[tier]);

/**
 * A pool of Slurm test clusters for the tier's Slurm tests (one per shape, started by the first file
 * that asks for it: src/backends/slurm/testing/slurm-cluster.ts), when one of them needs Slurm.
 */
async function slurmPool(tests) {
  const uses = tests.some((t) => /\bstartSlurmCluster\b/.test(readFileSync(sourceOf(t), 'utf8')));
  const module = join('dist', 'src', 'backends', 'slurm', 'testing', 'slurm-cluster.js');
  if (!uses || !existsSync(module)) return undefined;
  const slurm = await import(pathToFileURL(module).href);
  const dir = mkdtempSync(join(tmpdir(), 'goodput-slurm-pool-'));
  return {
    env: { [slurm.SLURM_POOL_ENV]: dir },
    async stop() {
      const stopped = await slurm.stopSlurmPool(dir);
      rmSync(dir, { recursive: true, force: true });
      console.error(`run-tests: stopped the ${stopped} Slurm test cluster(s) the heavy tier shared`);
    },
  };
}

const timings = [];
let failed = false;
for (const tier of tiers) {
  const tests = selected(tier);
  if (tests.length === 0) continue;
  const started = Date.now();
  const slurm = tier === 'heavy' ? await slurmPool(tests) : undefined;
  const concurrency = concurrencyOf(tier);
  console.error(`run-tests: ${tier} tier, ${tests.length} file(s), ${concurrency} at a time`);
  try {
    const report = durations ? join(mkdtempSync(join(tmpdir(), 'goodput-durations-')), `${tier}.tsv`) : undefined;
    const reporters = report
      ? ['--test-reporter=spec', '--test-reporter-destination=stdout'].concat([
          '--test-reporter=./scripts/test-durations.mjs',
          `--test-reporter-destination=${report}`,
        ])
      : ['--test-reporter=spec'];
    const node = spawnSync(process.execPath, ['--test', ...reporters, `--test-concurrency=${concurrency}`, ...tests], {
      stdio: 'inherit',
      env: { ...process.env, ...slurm?.env },
    });
    failed ||= node.status !== 0;
    if (report && existsSync(report)) {
      const rows = readFileSync(report, 'utf8').trim().split('\n').filter(Boolean);
      rows.sort((a, b) => Number(b.split('\t')[1]) - Number(a.split('\t')[1]));
      console.error(`run-tests: ${tier} tier by file (tests s, wall s, tests, file), slowest first:`);
      for (const row of rows) console.error(`  ${row.replace(`${process.cwd()}/`, '')}`);
      rmSync(join(report, '..'), { recursive: true, force: true });
    }
  } finally {
    await slurm?.stop();
  }
  timings.push(`${tier} ${((Date.now() - started) / 1000).toFixed(0)} s (${tests.length} files)`);
}
const pythonTests = 'python/tests';
if (filters.length === 0 && tiers.includes('heavy') && existsSync(pythonTests)) {
  const started = Date.now();
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const py = spawnSync(python, ['-m', 'pytest', '-q', pythonTests], { stdio: 'inherit' });
  failed ||= py.status !== 0;
  timings.push(`pytest ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
if (timings.length > 0) console.error(`run-tests: ${failed ? 'FAILED' : 'passed'}; ${timings.join(', ')}`);
process.exit(failed ? 1 : 0);
