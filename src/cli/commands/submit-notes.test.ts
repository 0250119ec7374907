import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { NodeView } from '../../api/views.js';
import type { JobSpec } from '../../store/types.js';
import { selfSpawnNote, submitNotes } from './submit-notes.js';

const workdir = mkdtempSync(join(tmpdir(), 'goodput-notes-'));
after(() => rmSync(workdir, { recursive: true, force: true }));

/** The DDP tutorial's launcher, as people copy it. */
writeFileSync(join(workdir, 'tutorial.py'), [
  'import os',
  'import torch.distributed as dist',
  'import torch.multiprocessing as mp',
  'def main(rank, world_size):',
  "    os.environ['MASTER_PORT'] = '12355'",
  "    dist.init_process_group('gloo', rank=rank, world_size=world_size)",
  "if __name__ == '__main__':",
  '    mp.spawn(main, args=(2,), nprocs=2)',
].join('\n'));

const client = {
  nodes: async (): Promise<NodeView[]> => [],
  listJobs: async () => [],
};
const spec = (max_replicas: number): JobSpec => ({ name: 'tut', command: ['python3', 'tutorial.py'], workdir, env: {}, min_replicas: 0, max_replicas, max_restarts: 0, preemptible: false, priority: 0, sdk: false });

test('a script that starts its own processes is told how to run under goodput when -n is above 1', async () => {
  const notes = await submitNotes(client, { id: 'j1', name: 'tut', spec: spec(2) });
  const warning = notes.find((n) => n.includes('starts its own processes'));
  assert.ok(warning, notes.join('\n'));
  assert.match(warning, /^warning: tutorial\.py starts its own processes \(mp\.spawn, line 8\).*with -n 2 each of its processes would start a group of its own\. Call the function mp\.spawn starts once, with the rank from RANK.*or use -n 1\.$/);
  const alone = await submitNotes(client, { id: 'j2', name: 'tut', spec: spec(1) });
  assert.equal(alone.some((n) => n.includes('starts its own processes')), false, 'one process: nothing to say');
  assert.equal(selfSpawnNote(spec(2)), warning, 'goodput run says the same');
});
