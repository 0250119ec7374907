import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { JobSpec } from '../store/types.js';
import { admit, readJobCode } from './admit.js';
import { launchNotes as notesOf } from './notes.js';

const workdir = mkdtempSync(join(tmpdir(), 'goodput-notes-'));
after(() => rmSync(workdir, { recursive: true, force: true }));

/** The DDP tutorial's launcher, as people copy it. */
writeFileSync(
  join(workdir, 'tutorial.py'),
  [
    'import os',
    'import torch.distributed as dist',
    'import torch.multiprocessing as mp',
    'def main(rank, world_size):',
    "    os.environ['MASTER_PORT'] = '12355'",
    "    dist.init_process_group('gloo', rank=rank, world_size=world_size)",
    "if __name__ == '__main__':",
    '    mp.spawn(main, args=(2,), nprocs=2)',
  ].join('\n'),
);

const cpu = (n: number) => Array.from({ length: n }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu' }));
/** The launch notes of a spec, from one read of its code (as admit reads it). */
const launchNotes = (spec: Pick<JobSpec, 'command' | 'workdir' | 'max_replicas' | 'resumable'>): string[] =>
  notesOf(spec, readJobCode(spec).launch);
const spec = (max_replicas: number): JobSpec => ({
  name: 'tut',
  command: ['python3', 'tutorial.py'],
  workdir,
  env: {},
  min_replicas: 0,
  max_replicas,
  max_restarts: 0,
  preemptible: false,
  priority: 0,
  sdk: false,
});

test('a script that starts its own processes is told how to run under goodput when -n is above 1', async () => {
  const notes = admit(spec(2), cpu(4)).notes;
  const warning = notes.find((n) => n.includes('starts its own processes'));
  assert.ok(warning, notes.join('\n'));
  assert.match(
    warning,
    /^warning: tutorial\.py starts its own processes \(mp\.spawn, line 8\).*with -n 2 each of its processes would start a group of its own\. Call the function mp\.spawn starts once, with the rank from RANK.*or use -n 1\.$/,
  );
  const alone = admit(spec(1), cpu(4)).notes;
  assert.equal(
    alone.some((n) => n.includes('starts its own processes')),
    false,
    'one process: nothing to say',
  );
  assert.deepEqual(launchNotes(spec(2)), [warning], 'goodput run says the same');
});

test('a script that takes its local rank from --local_rank is told how to get it', async () => {
  writeFileSync(
    join(workdir, 'legacy.py'),
    'import argparse\np = argparse.ArgumentParser()\np.add_argument("--local_rank", type=int, default=-1)\nargs = p.parse_args()\n',
  );
  const notes = launchNotes({ command: ['python3', 'legacy.py', '--lr', '0.1'], workdir, max_replicas: 4 });
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(
    notes[0]!,
    /^warning: legacy\.py takes its local rank from --local_rank \(line 3\).*each of its 4 processes would get the option's default\. Default the option to int\(os\.environ\.get\("LOCAL_RANK", -1\)\).*--no-sdk -- sh -c 'exec python3 legacy\.py --lr 0\.1 --local_rank "\$LOCAL_RANK"'\.$/,
  );
  assert.match(
    launchNotes({ command: ['python3', 'legacy.py', '--name', "it's"], workdir, max_replicas: 2 })[0]!,
    /sh -c 'exec python3 legacy\.py \.\.\. --local_rank/,
    'a word that needs quoting: the start only',
  );
  assert.deepEqual(launchNotes({ command: ['python3', 'legacy.py'], workdir, max_replicas: 1 }), []);
});

test('a command through accelerate launch is told the direct command, with -n above 1 only', () => {
  const command = ['accelerate', 'launch', '--mixed_precision', 'fp16', 'tutorial.py', '--epochs', '3'];
  const notes = launchNotes({ command, workdir, max_replicas: 2 });
  assert.match(
    notes[0]!,
    /^warning: accelerate launch starts processes of its own, on the devices each of the job's 2 processes sees.*Give goodput the script: -n 2 -- python3 tutorial\.py --epochs 3 \(with your environment's Python\); Accelerate reads those variables as under torchrun/,
  );
  assert.match(notes[1]!, /^warning: tutorial\.py starts its own processes/, 'and what its script does');
  assert.deepEqual(launchNotes({ command, workdir, max_replicas: 1 }), []);
});

test('a script that fixes its rendezvous is told to leave it to goodput, with -n above 1 only', () => {
  writeFileSync(
    join(workdir, 'fixed.py'),
    'import os\nrank = int(os.environ["RANK"])\nos.environ["MASTER_ADDR"] = "localhost"\nos.environ["MASTER_PORT"] = "12355"\n',
  );
  const notes = launchNotes({ command: ['python3', 'fixed.py'], workdir, max_replicas: 2 });
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(
    notes[0]!,
    /^warning: fixed\.py fixes its rendezvous \(MASTER_ADDR = "localhost", line 3\).*two jobs of it on one node would bind the same port \(the second fails with "Address already in use"\).*Use os\.environ\.setdefault\(\.\.\.\) instead of the assignment, or init_method="env:\/\/"/,
  );
  assert.deepEqual(launchNotes({ command: ['python3', 'fixed.py'], workdir, max_replicas: 1 }), []);
  assert.equal(launchNotes(spec(2)).length, 1, 'an mp.spawn script hears it once, in the spawn warning');
});

test('a script whose processes meet through a file is warned at any size: every restart would hang', () => {
  writeFileSync(
    join(workdir, 'filestore.py'),
    'import torch.distributed as dist\ndist.init_process_group("gloo", init_method="file:///tmp/rdv")\n',
  );
  for (const max_replicas of [1, 2]) {
    const notes = launchNotes({ command: ['python3', 'filestore.py'], workdir, max_replicas });
    assert.equal(notes.length, 1, notes.join('\n'));
    assert.match(
      notes[0]!,
      /^warning: filestore\.py meets its other processes through a file \(file:\/\/\/tmp\/rdv, line 2\).*waits out the rendezvous timeout.*every rescale, preemption or restart of the job would hang\. Use init_method="env:\/\/"/,
    );
  }
});

test('a script written for AdaptDL is pointed to the migration guide, at any size', () => {
  writeFileSync(join(workdir, 'adl.py'), 'import adaptdl.torch as adl\nadl.init_process_group("gloo")\n');
  const notes = launchNotes({ command: ['python3', 'adl.py'], workdir, max_replicas: 1 });
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(
    notes[0]!,
    /^warning: adl\.py is written for AdaptDL \(it imports adaptdl, line 1\).*Port it to goodput\.torch, mostly a change of imports \(docs\/migrating-from-adaptdl\.md\)\.$/,
  );
});

test('a --resumable script that saves its snapshot in place is told to save atomically', () => {
  writeFileSync(
    join(workdir, 'inplace.py'),
    'import torch\nimport os\nrank = int(os.environ["RANK"])\ntorch.save({"epoch": 1}, "snapshot.pt")\n',
  );
  const notes = launchNotes({ command: ['python3', 'inplace.py'], workdir, max_replicas: 2, resumable: true });
  assert.equal(notes.length, 1, notes.join('\n'));
  assert.match(
    notes[0]!,
    /^warning: inplace\.py is --resumable but saves its snapshot in place \(torch\.save, line 4, and no os\.replace anywhere in the job's code\).*Save to a temporary file and os\.replace\(\) it into place/,
  );
  assert.deepEqual(
    launchNotes({ command: ['python3', 'inplace.py'], workdir, max_replicas: 2 }),
    [],
    'not resumable: it restarts from its beginning anyway',
  );
});
