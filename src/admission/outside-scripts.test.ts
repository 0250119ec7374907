/**
 * Admission on scripts shaped like five outside projects (test-support/outside/, issue 52): no
 * false warning, every warning that applies, read from the script and the local modules it
 * imports, with the arguments of the command.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JobSpec } from '../store/types.js';
import { packagePath } from '../util/package-root.js';
import { admit } from './admit.js';

const cpu = (n: number) => Array.from({ length: n }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu' }));
const spec = (project: string, command: string[], extra: Partial<JobSpec> = {}): JobSpec => ({
  name: 'j',
  command,
  workdir: packagePath('test-support', 'outside', project),
  env: {},
  min_replicas: 0,
  max_replicas: 2,
  max_restarts: 0,
  priority: 0,
  ...extra,
});
/** The warnings admission gives (other notes describe how the job runs). */
const warnings = (s: JobSpec): string[] => admit(s, cpu(4)).notes.filter((n) => n.startsWith('warning: '));

describe('admission of outside scripts', () => {
  it('word_language_model under -n 2: two copies of a script with no distributed code, both writing model.pt', () => {
    const [only, ...rest] = warnings(spec('word_language_model', ['python3', 'main.py', '--epochs', '2']));
    assert.deepEqual(rest, []);
    assert.match(
      only!,
      /^warning: main\.py has no distributed code .*so -n 2 runs 2 identical copies that each train the whole model alone and write the same files \(e\.g\. the same model\.pt\)\. Use -n 1/,
    );
    assert.deepEqual(
      warnings(spec('word_language_model', ['python3', 'main.py'], { max_replicas: 1 })),
      [],
      'one copy: nothing to say',
    );
  });

  it('imagenet with --dist-url env:// is not warned about its argparse default tcp://224.66.41.62:23456', () => {
    assert.deepEqual(
      warnings(spec('imagenet', ['python3', 'main.py', '--dummy', '--dist-url', 'env://', '--dist-backend', 'gloo'])),
      [],
    );
    assert.deepEqual(
      warnings(spec('imagenet', ['python3', 'main.py', '--dummy', '--dist-url=env://'])),
      [],
      'the = form too',
    );
    // False friend: another option given; the default stays in force.
    const kept = warnings(spec('imagenet', ['python3', 'main.py', '--dummy', '--dist-backend', 'gloo']));
    assert.equal(kept.length, 1, kept.join('\n'));
    assert.match(kept[0]!, /fixes its rendezvous \(tcp:\/\/224\.66\.41\.62:23456, line 20\)/);
  });

  it("imagenet's upstream recipe under -n 2: every process would be rank 0 of a world of 1; the fix is --dist-url env://", () => {
    const recipe = [
      'python3',
      'main.py',
      '--dummy',
      '--dist-url',
      'tcp://127.0.0.1:29512',
      '--dist-backend',
      'gloo',
      '--multiprocessing-distributed',
      '--world-size',
      '1',
      '--rank',
      '0',
    ];
    const [only, ...rest] = warnings(spec('imagenet', recipe));
    assert.deepEqual(rest, [], 'one warning, not also a port collision');
    assert.match(
      only!,
      /^warning: main\.py is given its rank and world size on the command line \(--world-size 1 --rank 0 --multiprocessing-distributed\), so each of its 2 processes would be the same rank .*a failure there is not a port collision\. Drop --world-size and --rank and --multiprocessing-distributed and pass --dist-url env:\/\/: the script then reads RANK and WORLD_SIZE/,
    );
    assert.deepEqual(
      warnings(spec('imagenet', recipe, { max_replicas: 1 })),
      [],
      'one process: it is rank 0 of 1 indeed',
    );
    const noUrl = warnings(
      spec(
        'imagenet',
        recipe.filter((a, i) => a !== '--dist-url' && recipe[i - 1] !== '--dist-url'),
      ),
    );
    assert.equal(noUrl.length, 1, `the ranks warning already says to pass --dist-url env://: ${noUrl.join('\n')}`);
  });

  it('ddp-tutorial-series multinode.py (torchrun): nothing to say, but --resumable hears of its in-place snapshot', () => {
    const command = ['python3', 'multinode.py', '50', '10'];
    assert.deepEqual(warnings(spec('ddp-tutorial-series', command)), []);
    const [only, ...rest] = warnings(spec('ddp-tutorial-series', command, { resumable: true }));
    assert.deepEqual(rest, []);
    assert.match(
      only!,
      /^warning: multinode\.py is --resumable but saves its snapshot in place \(torch\.save, line 36, and no os\.replace anywhere in the job's code\)/,
    );
  });

  it('minGPT-ddp --resumable: the in-place torch.save is in the trainer.py it imports', () => {
    const [only, ...rest] = warnings(spec('minGPT-ddp', ['python3', 'main.py'], { resumable: true }));
    assert.deepEqual(rest, []);
    assert.match(
      only!,
      /^warning: main\.py is --resumable but saves its snapshot in place \(torch\.save, trainer\.py, line 52, and no os\.replace anywhere in the job's code\)/,
    );
    assert.deepEqual(warnings(spec('minGPT-ddp', ['python3', 'main.py'])), [], 'not resumable: it starts over anyway');
  });

  it('three main.py of three projects get three profile keys (their folders), not one key main', () => {
    const keys = ['imagenet', 'ncf', 'minGPT-ddp'].map(
      (p) => admit(spec(p, ['python3', 'main.py']), cpu(4)).spec.profile,
    );
    assert.deepEqual(keys, ['imagenet.main', 'ncf.main', 'minGPT-ddp.main']);
  });

  it('NCF ported to the SDK: it fixes CUDA_VISIBLE_DEVICES from --gpu, which would replace the devices goodput gives', () => {
    const s = spec('ncf', ['python3', 'main.py', '--epochs', '1']);
    assert.equal(admit(s, cpu(4)).spec.sdk, true);
    const [only, ...rest] = warnings(s);
    assert.deepEqual(rest, []);
    assert.match(
      only!,
      /^warning: main\.py fixes the devices it sees \(CUDA_VISIBLE_DEVICES = args\.gpu, line 27\), but goodput gives each process the devices the policy placed it on/,
    );
    assert.equal(warnings({ ...s, max_replicas: 1 }).length, 1, "at any size: one process on another job's GPU");
  });
});
