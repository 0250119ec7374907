#!/usr/bin/env node
// Runs the compiled TypeScript tests (dist/**/*.test.js) by tier (scripts/test-tiers.mjs places
// every test file in one) and the Python SDK's pytest suite with the heavy tier.
//
//   node scripts/run-tests.mjs                   every tier and pytest (what `npm test` runs), in lanes
//   node scripts/run-tests.mjs --tier unit       one tier (unit | e2e | heavy; heavy includes pytest)
//   node scripts/run-tests.mjs SUBSTRING...      the test files whose path contains a substring, each
//                                                in its tier's way, one group after another; no pytest
//   --plan                                       prints the lanes and their groups' files; runs nothing
//   --durations                                  also prints each group's files by the time they took
//                                                (scripts/test-durations.mjs), slowest first
//
// The tests run in groups: unit, e2e, heavy-local (torch, chromium), heavy-slurm (the Slurm test
// clusters, two shards) and pytest (two shards). Files run in parallel within a group (node --test
// --test-concurrency), as many at once as CONCURRENCY allows (GOODPUT_TEST_CONCURRENCY_<GROUP>,
// e.g. _HEAVY_SLURM, overrides it). Groups run in LANES: the groups of one lane one after another,
// the lanes at the same time (GOODPUT_TEST_SERIAL=1 runs every group one after another instead).
// The Slurm tests of a shard share one test cluster per shape (a pool this runner lends the shard
// and stops at its end: src/backends/slurm/testing/slurm-cluster.ts, SLURM_POOL_ENV) instead of
// one per file.
// Exit code is non-zero if any group fails.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { classify, startsSlurm, TIERS } from './test-tiers.mjs';

/**
 * Files run at once per group on this project's 2-core reference machine. unit: in-process and
 * CPU-bound, one file per core. e2e: most of a file's time is waiting on scheduling rounds and
 * replica processes that sleep, but each file also starts a server and CLI processes and some
 * assert on seconds (a growth undone within 45 s, 20 s jobs ending in order); two at once keeps a
 * core for each file's bursts, more would turn CPU contention into flaky deadlines. heavy-local:
 * torch training and chromium, one at a time. heavy-slurm: a shard's pooled clusters are shared by
 * shape and a file's `stop()` cancels every job on its cluster: one at a time per shard.
 */
const CONCURRENCY = { unit: 2, e2e: 2, 'heavy-local': 1, 'heavy-slurm': 1, alone: 1 };

/**
 * Test files that run in a group of their own, `alone`, once every lane has finished: they assert
 * what a user sees within a stated time on a machine doing nothing else. The README's quick start
 * must rescale the job and change its batch size, with reasons, within a minute; those decisions
 * wait until the gain is sure by a model of step times measured on the spot, and with every core
 * busy twice over (the lanes) the measurements are noise enough that a job may keep its batch for
 * good reason (CI, 2026-12-07: no batch-size change in 80 s). About a minute more for the suite.
 */
const ALONE = ['e2e-readme'];
const runsAlone = (test) => ALONE.includes(basename(test, '.test.js'));

/**
 * Groups split into shards that run at once, each shard its files one at a time (heavy-slurm: each
 * shard has a pool of clusters of its own, so two shards never cancel each other's jobs; a shape
 * both need starts twice, a few seconds).
 */
const SHARDS = { 'heavy-slurm': 2 };

/**
 * Seconds of the sharded groups' files in a full run on the reference machine (December 2026), to
 * split a group into shards of about equal time: the heaviest first, each to the lighter shard. A
 * file not listed counts DEFAULT_FILE_S.
 */
const FILE_S = {
  'e2e-slurm-recovery': 115,
  'e2e-slurm-sdk-corpus': 93,
  'e2e-slurm-digits': 74,
  'e2e-slurm-partition': 70,
  'e2e-slurm-types': 69,
  'e2e-slurm-ranks': 66,
  'e2e-slurm-corpus': 50,
  'slurm-conformance': 25,
  'e2e-slurm-run-as-owner': 22,
  'e2e-slurm-profile': 18,
  'e2e-slurm-mixed-node': 16,
  'slurm-outside-end': 15,
  'e2e-slurm-containment': 7,
  'e2e-slurm': 7,
  'e2e-slurm-shared-dir': 1,
};
const DEFAULT_FILE_S = 30;

/**
 * The full suite's lanes (groups of a lane run one after another, lanes at the same time; a
 * lane's groups not selected are left out). heavy-local (torch and chromium) has a lane of its own:
 * split into two shards as well, the run took longer (both cores were already busy); each Slurm
 * shard is followed by a pytest shard. Why these: docs/testing.md, "How the full suite runs".
 */
const LANES = [['unit', 'e2e'], ['heavy-local'], ['heavy-slurm-1', 'pytest-1'], ['heavy-slurm-2', 'pytest-2']];

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
const planOnly = args.includes('--plan');
const filters = (tierFlag >= 0 ? args.filter((_, i) => i !== tierFlag && i !== tierFlag + 1) : args).filter(
  (a) => a !== '--durations' && a !== '--plan',
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
const slurmSource = new Map();
const usesSlurm = (test) => {
  if (!slurmSource.has(test)) slurmSource.set(test, startsSlurm(readFileSync(sourceOf(test), 'utf8')));
  return slurmSource.get(test);
};
/**
 * The compiled tests of a group (a tier, or heavy-local / heavy-slurm: the heavy tier split by
 * Slurm; `alone`: the ALONE files of the tiers run).
 */
const selected = (group) => {
  const [tier, part] = group.split('-');
  const inGroup = (t) =>
    group === 'alone'
      ? runsAlone(t) && tiers.includes(tierOfSource.get(sourceOf(t)))
      : !runsAlone(t) &&
        tierOfSource.get(sourceOf(t)) === tier &&
        (part === undefined || (part === 'slurm') === usesSlurm(t));
  return live.filter((t) => inGroup(t) && (filters.length === 0 || filters.some((f) => t.includes(f))));
};
/** A group's files at once: its base group's (heavy-slurm for heavy-slurm-1), or the environment's. */
const concurrencyOf = (group) => {
  const base = group.replace(/-\d+$/, '');
  return Number(process.env[`GOODPUT_TEST_CONCURRENCY_${base.toUpperCase().replace('-', '_')}`] ?? CONCURRENCY[base]);
};

/** `items` in `count` shards of about equal weight: the heaviest first, each to the lightest shard so far. */
function shardsOf(items, weight, count) {
  const shards = Array.from({ length: count }, () => ({ items: [], w: 0 }));
  for (const item of [...items].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = shards.reduce((a, b) => (b.w < a.w ? b : a));
    lightest.items.push(item);
    lightest.w += weight(item);
  }
  return shards.map((s) => s.items.sort());
}

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
      console.error(`run-tests: stopped the ${stopped} Slurm test cluster(s) the Slurm tests shared`);
    },
  };
}

/**
 * Runs `command` with its output passed on line by line, each line prefixed with `[label]` when
 * `prefix` (lanes run at the same time); resolves to its exit status.
 */
function runPrefixed(label, command, args, options, prefix) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: prefix ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    if (prefix) {
      for (const [from, to] of [
        [child.stdout, process.stdout],
        [child.stderr, process.stderr],
      ])
        createInterface({ input: from }).on('line', (line) => to.write(`[${label}] ${line}\n`));
    }
    child.on('error', (error) => {
      console.error(`run-tests: ${label}: ${error.message}`);
      resolve(1);
    });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs one group of compiled test files with node --test; resolves to whether it passed. */
async function runNodeGroup(group, tests, prefix) {
  const slurm = group.startsWith('heavy-slurm') ? await slurmPool(tests) : undefined;
  const concurrency = concurrencyOf(group);
  console.error(`run-tests: ${group}, ${tests.length} file(s), ${concurrency} at a time`);
  try {
    const report = durations ? join(mkdtempSync(join(tmpdir(), 'goodput-durations-')), `${group}.tsv`) : undefined;
    const reporters = report
      ? ['--test-reporter=spec', '--test-reporter-destination=stdout'].concat([
          '--test-reporter=./scripts/test-durations.mjs',
          `--test-reporter-destination=${report}`,
        ])
      : ['--test-reporter=spec'];
    const status = await runPrefixed(
      group,
      process.execPath,
      ['--test', ...reporters, `--test-concurrency=${concurrency}`, ...tests],
      { env: { ...process.env, ...slurm?.env } },
      prefix,
    );
    if (report && existsSync(report)) {
      const rows = readFileSync(report, 'utf8').trim().split('\n').filter(Boolean);
      rows.sort((a, b) => Number(b.split('\t')[1]) - Number(a.split('\t')[1]));
      const lines = rows.map((row) => `  ${row.replace(`${process.cwd()}/`, '')}`);
      console.error(`run-tests: ${group} by file (tests s, wall s, tests, file), slowest first:\n${lines.join('\n')}`);
      rmSync(join(report, '..'), { recursive: true, force: true });
    }
    return status === 0;
  } finally {
    await slurm?.stop();
  }
}

const pythonTests = 'python/tests';
/**
 * Seconds of a pytest file on the reference machine where it is far from DEFAULT_PYTEST_S, to
 * split the files into shards of about equal time (none measured yet: files count alike, the
 * heaviest first to the lightest shard). Fill it from pytest's --durations when shards drift apart.
 */
const PYTEST_S = {};
const DEFAULT_PYTEST_S = 5;
function pytestShards(count) {
  const files = readdirSync(pythonTests).filter((f) => /^test_.*\.py$/.test(f));
  return shardsOf(files, (f) => PYTEST_S[f] ?? DEFAULT_PYTEST_S, count).map((shard) =>
    shard.map((f) => join(pythonTests, f)),
  );
}

/** Runs one shard of the pytest suite, in a temp dir of its own; resolves to whether it passed. */
async function runPytest(group, files, prefix) {
  const python = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const basetemp = mkdtempSync(join(tmpdir(), `goodput-${group}-`));
  console.error(`run-tests: ${group}, ${files.length} file(s)`);
  try {
    const args = [
      '-m',
      'pytest',
      '-q',
      '--durations=10',
      '-p',
      'no:cacheprovider',
      `--basetemp=${join(basetemp, 't')}`,
      ...files,
    ];
    return (await runPrefixed(group, python, args, {}, prefix)) === 0;
  } finally {
    rmSync(basetemp, { recursive: true, force: true });
  }
}

const withPytest = filters.length === 0 && tiers.includes('heavy') && existsSync(pythonTests);
const shards = withPytest ? pytestShards(2) : [];
const groups = new Map();
const addNodeGroup = (group, tests) => {
  if (tests.length > 0)
    groups.set(group, { run: (prefix) => runNodeGroup(group, tests, prefix), n: tests.length, files: tests });
};
const fileWeight = (test) => FILE_S[basename(test, '.test.js')] ?? DEFAULT_FILE_S;
for (const tier of tiers)
  for (const group of tier === 'heavy' ? ['heavy-local', 'heavy-slurm'] : [tier]) {
    if (!SHARDS[group]) addNodeGroup(group, selected(group));
    else
      shardsOf(selected(group), fileWeight, SHARDS[group]).forEach((tests, i) =>
        addNodeGroup(`${group}-${i + 1}`, tests),
      );
  }
shards.forEach((files, i) => {
  if (files.length > 0)
    groups.set(`pytest-${i + 1}`, { run: (prefix) => runPytest(`pytest-${i + 1}`, files, prefix), files });
});
addNodeGroup('alone', selected('alone'));

// GOODPUT_TEST_SERIAL=1 runs the groups one after another (about twice as long): the way around a
// test that fails only under the lanes' load while it is fixed (docs/testing.md).
const serial = filters.length > 0 || process.env.GOODPUT_TEST_SERIAL === '1';
const lanes = (serial ? [[...groups.keys()]] : LANES.map((lane) => lane.filter((g) => groups.has(g)))).filter(
  (lane) => lane.length > 0,
);
// After the lanes, by itself (a serial run has it last in its one lane).
const after = !serial && groups.has('alone') ? ['alone'] : [];
const prefix = lanes.length > 1;
if (planOnly) {
  lanes.forEach((lane, i) => {
    console.log(`lane ${i + 1}:`);
    for (const group of lane) console.log(`  ${group}: ${groups.get(group).files.join(' ')}`);
  });
  for (const group of after) console.log(`then, alone:\n  ${group}: ${groups.get(group).files.join(' ')}`);
  process.exit(0);
}
const timings = [];
let failed = false;
const startedAll = Date.now();
const runLane = async (lane) => {
  for (const group of lane) {
    const started = Date.now();
    const passed = await groups.get(group).run(prefix);
    failed ||= !passed;
    const n = groups.get(group).n;
    const s = ((Date.now() - started) / 1000).toFixed(0);
    timings.push(`${group} ${s} s${n ? ` (${n} files)` : ''}${passed ? '' : ' FAILED'}`);
    console.error(`run-tests: ${group} ${passed ? 'passed' : 'FAILED'} in ${s} s`);
  }
};
await Promise.all(lanes.map(runLane));
await runLane(after);
if (timings.length > 0) {
  const lanesText = prefix
    ? `; ${lanes.map((l) => l.join(' > ')).join(' | ')} at the same time${after.length ? ', then alone' : ''}`
    : '';
  const wall = ((Date.now() - startedAll) / 1000).toFixed(0);
  console.error(`run-tests: ${failed ? 'FAILED' : 'passed'} in ${wall} s${lanesText}; ${timings.join(', ')}`);
}
process.exit(failed ? 1 : 0);
