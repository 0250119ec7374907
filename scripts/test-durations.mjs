// A node:test reporter for `node scripts/run-tests.mjs --durations`: one line per test file,
// "<seconds of its top-level tests>\t<seconds from its first to its last event>\t<tests>\t<path>",
// so that a tier's slow files can be found (node --test reports no file-level time itself).
// The first column is the time its tests took one after the other; the second is wall time as
// the runner received the events, which includes waiting for a core when files run at once.
export default async function* durations(source) {
  const files = new Map();
  for await (const event of source) {
    const file = event.data?.file;
    if (file === undefined) continue;
    const now = Date.now();
    const f = files.get(file) ?? { first: now, last: now, tests_s: 0, tests: 0 };
    f.last = now;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      f.tests_s += (event.data.details?.duration_ms ?? 0) / 1000;
      f.tests += 1;
    }
    files.set(file, f);
  }
  for (const [file, f] of files)
    yield `${f.tests_s.toFixed(1)}\t${((f.last - f.first) / 1000).toFixed(1)}\t${f.tests}\t${file}\n`;
}
