#!/usr/bin/env node
// The test suite's tiers, decided for every test file by the rules below (first match wins):
//   unit  - pure code, the in-process API, FakeBackend + FakeClock: the inner loop (`npm run test:unit`);
//   e2e   - real processes (`goodput up`, the CLI, replicas), run several files at a time;
//   heavy - torch, the Slurm test cluster, chromium: one file at a time, then pytest (python/tests).
// A new test file needs no registration: what it uses places it. OVERRIDES pins a file the rules
// misjudge (each entry must name an existing test file: a stale one fails the check).
//
//   node scripts/test-tiers.mjs           checks that every test file is in exactly one tier and in a
//                                         folder the build compiles; prints the counts
//   node scripts/test-tiers.mjs --list    prints "tier<TAB>path" for every test file
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The tiers, in the order the full suite runs them. */
export const TIERS = ['unit', 'e2e', 'heavy'];

/** Folders tsconfig.json compiles (its "include"): a test file anywhere else would never run. */
export const COMPILED_ROOTS = ['src', 'test-support', 'bench'];

/** Whether a test file's source starts a Slurm test cluster (pooled or its own). */
export const startsSlurm = (text) => /\bstart(?:Own)?SlurmCluster\b/.test(text);

const HEAVY_RULES = [
  { why: 'starts a Slurm test cluster', test: (text) => startsSlurm(text) },
  { why: 'drives chromium', test: (text) => /playwright-core|\bchromium\b/.test(text) },
  {
    why: 'runs torch (a Python with torch, or a script that imports it)',
    // A script text that imports torch counts only in a file that runs processes: parsers' tests
    // hold such scripts as data.
    test: (text, path) =>
      /\bpythonWith\(/.test(text) ||
      (/\bimport (?:[\w.]+, )*torch\b/.test(text) && E2E_RULES.some((r) => r.test(text, path))),
  },
];
const E2E_RULES = [
  { why: 'named e2e-*', test: (_text, path) => /(^|\/)e2e-[^/]*$/.test(path) },
  {
    why: 'starts `goodput up` or the CLI (test-support/control/harness)',
    test: (text) => /control\/harness\.js['"]/.test(text),
  },
  { why: 'starts processes (node:child_process)', test: (text) => /['"]node:child_process['"]/.test(text) },
];

/**
 * Files the rules misjudge, path (from the repository root) -> tier and why. A unit test that
 * spawns one quick process stays in unit here; a pure test that takes minutes goes to e2e.
 */
export const OVERRIDES = {
  'src/backends/local/local-conformance.test.ts': {
    tier: 'e2e',
    why: 'the conformance suite on the LocalBackend: real replica processes and signals (14 s)',
  },
};

/** Every *.test.ts / *.test.tsx file of the repository outside node_modules, dist and dot folders. */
export function listTestSources(root = '.') {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.test\.tsx?$/.test(name)) out.push(relative(root, path).split('\\').join('/'));
    }
  };
  walk(root);
  return out.sort();
}

/** The tier of a test source file (path relative to the repository root) and the rule that put it there. */
export function tierOf(path, root = '.') {
  const override = OVERRIDES[path];
  if (override) return { tier: override.tier, why: `override: ${override.why}` };
  const text = readFileSync(join(root, path), 'utf8');
  const heavy = HEAVY_RULES.find((r) => r.test(text, path));
  if (heavy) return { tier: 'heavy', why: heavy.why };
  const e2e = E2E_RULES.find((r) => r.test(text, path));
  if (e2e) return { tier: 'e2e', why: e2e.why };
  return { tier: 'unit', why: 'in-process (none of the e2e or heavy rules)' };
}

/**
 * Every test source with its tier, and the problems that make the check fail: a test outside the
 * compiled folders, an override naming a missing file or an unknown tier.
 */
export function classify(root = '.') {
  const files = listTestSources(root).map((path) => ({ path, ...tierOf(path, root) }));
  const problems = [];
  for (const f of files) {
    if (!COMPILED_ROOTS.some((r) => f.path.startsWith(`${r}/`))) {
      problems.push(
        `${f.path}: outside ${COMPILED_ROOTS.join(', ')} (tsconfig.json "include"), so no tier would ever run it; move it or extend both lists`,
      );
    }
    if (!TIERS.includes(f.tier)) problems.push(`${f.path}: unknown tier '${f.tier}' (tiers: ${TIERS.join(', ')})`);
  }
  for (const [path, o] of Object.entries(OVERRIDES)) {
    if (!existsSync(join(root, path)))
      problems.push(`scripts/test-tiers.mjs OVERRIDES: ${path} does not exist (renamed or removed?)`);
    if (!TIERS.includes(o.tier)) problems.push(`scripts/test-tiers.mjs OVERRIDES: ${path}: unknown tier '${o.tier}'`);
  }
  return { files, problems };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, problems } = classify();
  if (process.argv.includes('--list')) {
    for (const f of files) console.log(`${f.tier}\t${f.path}\t(${f.why})`);
  }
  if (problems.length > 0) {
    console.error(`test-tiers: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  const counts = TIERS.map((t) => `${t} ${files.filter((f) => f.tier === t).length}`).join(', ');
  console.log(`test-tiers: ${files.length} test files in tiers (${counts}); python/tests (pytest) runs with heavy`);
}
