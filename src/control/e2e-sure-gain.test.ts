/**
 * End to end (real `goodput up`, the NCF-style SDK script bench/ncf_live.py with Adam under CPU
 * torch): a job just grown is not shrunk again before it has reported at its new size, though
 * another job arrives meanwhile; its batch-size events name Adam's learning-rate rule (the SDK
 * reports it) and claim no more than x1.5 for a change under 10% (issue #51, docs/policy.md
 * "Decisions that need the gain to be sure"). bench:live-decisions runs the 4-minute version.
 * Skipped, saying why, without a Python that has torch.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchClaims, largestSmallChangeClaim, sizeChanges } from '../../bench/decision-events.js';
import { sleep, testServers, trainerCommand, waitFor } from '../../test-support/control/harness.js';
import { noPython, pythonWith } from '../../test-support/control/python.js';
import { packagePath } from '../util/package-root.js';

const python = pythonWith(['torch']);
const skip = python ? undefined : noPython(['torch']);

describe('no reversal without evidence, live', { skip }, () => {
  const servers = testServers('goodput-sure-gain-');
  const { data_dir } = servers;

  it(
    "keeps a grown NCF job at its size until it reports there; batch events name Adam's rule",
    { timeout: 300_000 },
    async () => {
      // Decided in a worker thread: the gains the resize events show come back with the decision.
      const { client } = await servers.start([
        '--cpu-slots',
        '4',
        '--interval-s',
        '1',
        '--grace-s',
        '5',
        '--policy-thread',
        'on',
      ]);
      const ncf = await client.submit({
        name: 'ncf',
        command: [python!, packagePath('bench', 'ncf_live.py'), '--epochs', '200'],
        workdir: data_dir,
        max_replicas: 4,
      });
      const events = async () => (await client.events(ncf.id)).map((e) => ({ ...e, at_ms: Date.parse(e.at) }));
      const grown = await waitFor('the NCF job to grow', 150_000, async () =>
        sizeChanges(await events()).find((c) => c.from > 0 && c.to > c.from),
      );
      await client.submit({
        name: 'rival',
        command: trainerCommand(100000000, 1),
        workdir: data_dir,
        max_replicas: 4,
      });
      // Up to a minute with the rival: every shrink of the grown job comes after a report at its new
      // size. The rule is decided once that report is in (a shrink before it breaks the rule, any
      // later one keeps it) or a shrink came, and a batch-size event since the growth names the
      // learning-rate rule: the window ends there instead of always after a minute.
      const reportedAtNewSize = async () =>
        (await client.reports(ncf.id, 10_000)).some(
          (r) => r.received_at_ms > grown.at_ms && r.num_replicas === grown.to,
        );
      for (const until = Date.now() + 60_000; Date.now() < until; await sleep(500)) {
        const seen = await events();
        const shrunk = sizeChanges(seen).some((c) => c.at_ms > grown.at_ms && c.to > 0 && c.to < c.from);
        const batched = batchClaims(seen).some((c) => c.at_ms > grown.at_ms);
        if (batched && (shrunk || (await reportedAtNewSize()))) break;
      }
      const all = await events();
      const reports = await client.reports(ncf.id, 10_000);
      const shrink = sizeChanges(all).find((c) => c.at_ms > grown.at_ms && c.to > 0 && c.to < c.from);
      if (shrink) {
        const measured = reports.find((r) => r.received_at_ms > grown.at_ms && r.num_replicas === grown.to);
        assert.ok(
          measured && measured.received_at_ms <= shrink.at_ms,
          `${shrink.reason} before a report at ${grown.to}`,
        );
      }
      const claims = batchClaims(all);
      assert.ok(largestSmallChangeClaim(claims, 0.1) <= 1.5, claims.map((c) => c.reason).join('\n'));
      for (const c of claims) assert.match(c.reason, /learning rate x[\d.]+ \(square root of AdaScale, for Adam\)/);
      await client.cancel(ncf.id);
    },
  );
});
