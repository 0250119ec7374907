import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jobSpecSchema } from './job-spec.js';
import { defaultProfileKey, PROFILE_KEY, profileKeyOf, pythonScript } from './profile-key.js';

describe('default profile key', () => {
  const cases: [string[], string][] = [
    [['python', 'train.py'], 'train'],
    [['python3', 'train.py', '--seed', '1', '--lr', '0.1'], 'train'],
    [['/usr/bin/python3.11', '-u', '-W', 'ignore', 'examples/digits/train.py', '--epochs', '3'], 'digits.train'],
    [['python3', 'a/main.py'], 'a.main'],
    [['python3', 'b/main.py'], 'b.main'],
    [['python3', './main.py'], 'main'],
    [['python3', 'models/resnet50.py'], 'resnet50'],
    [['python3', '-m', 'pkg.train', '--seed', '2'], 'pkg.train'],
    [['python3', '-mpkg.train'], 'pkg.train'],
    [['torchrun', '--nproc_per_node', '4', '--standalone', 'bert.py', '--lr', '3e-5'], 'bert'],
    [['torchrun', '--nproc-per-node=4', '-m', 'models.bert'], 'models.bert'],
    [['python', '-m', 'torch.distributed.run', '--nnodes', '1', 'resnet.py', '--seed', '3'], 'resnet'],
    [['accelerate', 'launch', '--num_processes', '2', 'finetune.py'], 'finetune'],
    [['env', 'A=1', 'B=2', 'python3', 'train.py'], 'train'],
    [['mpirun', '-np', '4', 'python', 'train.py'], 'train'],
    [['node', '/x/dist/test-support/control/synthetic-trainer.js', '--samples', '9'], 'synthetic-trainer'],
    [['./train.sh', '--x'], 'train'],
    [['/opt/bin/trainer'], 'trainer'],
    [['python3'], 'python3'],
    [['python', '-c', 'print(1)'], 'python-c-' + defaultProfileKey(['python', '-c', 'print(1)']).slice(-8)],
    [['python3', 'my script (v2).py'], 'my-script-v2-'],
    [
      ['node', '-e', 'console.log(process.argv)', 'x'],
      'node-e-' + defaultProfileKey(['node', '-e', 'console.log(process.argv)']).slice(-8),
    ],
    [['...'], 'job'],
  ];
  for (const [command, key] of cases) {
    it(`${command.join(' ')} -> ${key}`, () => {
      const got = defaultProfileKey(command);
      assert.equal(got, key);
      assert.match(got, PROFILE_KEY);
    });
  }

  it('tells a/main.py from b/main.py (generic script names take their directory)', () => {
    assert.notEqual(defaultProfileKey(['python3', 'a/main.py']), defaultProfileKey(['python3', 'b/main.py']));
  });

  it("gives a generic script name its folder in the job's workdir: three main.py of three projects, three keys", () => {
    const keys = [
      '/home/u/examples/imagenet',
      '/home/u/adaptdl/examples/NCF',
      '/home/u/examples/distributed/minGPT-ddp/mingpt',
    ].map((w) => defaultProfileKey(['python3', 'main.py', '--epochs', '1'], w));
    assert.deepEqual(keys, ['imagenet.main', 'NCF.main', 'mingpt.main']);
    assert.equal(defaultProfileKey(['python3', './train.py'], '/x/cnn'), 'cnn.train');
    assert.equal(defaultProfileKey(['python3', '../main.py'], '/x/imagenet/runs'), 'imagenet.main', '.. is followed');
    assert.equal(
      defaultProfileKey(['python3', 'sub/main.py'], '/x/proj'),
      'sub.main',
      'a path of its own names its folder',
    );
    assert.equal(
      defaultProfileKey(['python3', '/opt/ncf/main.py'], '/x/proj'),
      'ncf.main',
      'an absolute script: its folder',
    );
    assert.equal(
      defaultProfileKey(['torchrun', '--nproc_per_node', '2', 'main.py'], '/x/minGPT-ddp'),
      'minGPT-ddp.main',
    );
    // False friends: a specific name keeps its name alone, and so does a generic one in the root.
    assert.equal(defaultProfileKey(['python3', 'resnet50.py'], '/x/imagenet'), 'resnet50');
    assert.equal(defaultProfileKey(['python3', 'main.py'], '/'), 'main');
    assert.equal(defaultProfileKey(['python3', '-m', 'pkg.main'], '/x/imagenet'), 'pkg.main');
    // Two checkouts of one project still share the key.
    assert.equal(
      defaultProfileKey(['python3', 'main.py'], '/home/a/examples/imagenet'),
      defaultProfileKey(['python3', 'main.py'], '/home/b/examples/imagenet'),
    );
    assert.equal(profileKeyOf({ command: ['python3', 'main.py'], workdir: '/x/ncf' }), 'ncf.main');
    assert.equal(
      profileKeyOf({ command: ['python3', 'main.py'], workdir: '/x/ncf', profile: 'main' }),
      'main',
      'a stored key stays',
    );
  });

  it('finds the Python script a command runs', () => {
    assert.equal(pythonScript(['python3', '-u', 'a/train.py', '--cfg', 'x.py']), 'a/train.py');
    assert.equal(pythonScript(['torchrun', '--nproc_per_node', '2', 'ddp.py']), 'ddp.py');
    assert.equal(pythonScript(['env', 'A=1', 'python3', 'main.py']), 'main.py');
    assert.equal(pythonScript(['./run.py', '--x']), './run.py');
    assert.equal(pythonScript(['python3', '-m', 'pkg.train', 'x.py']), undefined);
    assert.equal(pythonScript(['python3', '-c', 'import x', 'x.py']), undefined);
    assert.equal(pythonScript(['sh', 'x.py']), undefined);
  });

  it('ignores arguments, so reruns with other seeds and hyper-parameters share a key', () => {
    assert.equal(
      defaultProfileKey(['python3', 'train.py', '--seed', '1']),
      defaultProfileKey(['python3', 'train.py', '--seed', '2', '--lr', '1']),
    );
    assert.notEqual(defaultProfileKey(['python', '-c', 'a()']), defaultProfileKey(['python', '-c', 'b()']));
  });

  it("takes the spec's profile first", () => {
    assert.equal(profileKeyOf({ profile: 'bert-large', command: ['python', 'train.py'] }), 'bert-large');
    assert.equal(profileKeyOf({ command: ['python', 'train.py'] }), 'train');
  });

  it("validates a spec's profile", () => {
    const base = { name: 'a', command: ['x'] };
    assert.equal(jobSpecSchema.safeParse({ ...base, profile: 'bert_large-1.0' }).success, true);
    for (const bad of ['', '-x', 'a/b', 'a b', 'x'.repeat(129), 'é']) {
      const r = jobSpecSchema.safeParse({ ...base, profile: bad });
      assert.equal(r.success, false, bad);
      assert.match(r.error!.issues[0]!.message, /letters, digits/);
    }
  });
});
