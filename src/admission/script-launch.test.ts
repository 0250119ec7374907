import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foreignLauncher, scriptLaunch as fullLaunch, type ScriptLaunch } from './script-launch.js';

/** The conflicts alone: `distributed` and `sdk` describe the script, they are no conflict. */
function scriptLaunch(script: string): Omit<ScriptLaunch, 'distributed' | 'sdk'> {
  const { distributed: _d, sdk: _s, ...conflicts } = fullLaunch(script);
  return conflicts;
}

const selfSpawnCall = (script: string) => scriptLaunch(script).spawn;

/** One case of a finding: the script, the call named and its line, and why the case is there. */
type Found = readonly [script: string, call: string, line: number, why?: string];

/** Asserts that `find` names each case's call at its line. */
function assertFinds(find: (script: string) => { call: string; line: number } | undefined, cases: Found[]): void {
  for (const [script, call, line, why] of cases) assert.deepEqual(find(script), { call, line }, why);
}

const tutorial = `import os
import torch.distributed as dist
import torch.multiprocessing as mp

def main(rank, world_size):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = '12355'
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

if __name__ == "__main__":
    # mp.spawn(old, nprocs=1)
    world_size = 2
    mp.spawn(main, args=(world_size,), nprocs=world_size, join=True)
`;

test('finds the launcher call of a DDP tutorial script, not one in a comment', () => {
  assertFinds(selfSpawnCall, [[tutorial, 'mp.spawn', 13]]);
});

test('knows torch.multiprocessing by its full name, any alias and its functions imported by name', () => {
  assertFinds(selfSpawnCall, [
    ['import torch\ntorch.multiprocessing.spawn(f, nprocs=2)\n', 'torch.multiprocessing.spawn', 2],
    ['from torch import multiprocessing as tmp\n\ntmp.start_processes(f, nprocs=2)\n', 'tmp.start_processes', 3],
    ['from torch.multiprocessing import Queue, spawn as launch\nlaunch(f)\n', 'launch', 2],
    ['from torch.multiprocessing import spawn\nspawn (f)\n', 'spawn', 2],
  ]);
});

test("leaves alone what is not torch's launcher, and scripts that also run under torchrun", () => {
  assert.equal(
    selfSpawnCall('import multiprocessing as mp\nmp.set_start_method("spawn")\np = mp.Process(target=f)\n'),
    undefined,
    "Python's own multiprocessing",
  );
  assert.equal(selfSpawnCall('import pexpect\npexpect.spawn("ls")\n'), undefined);
  assert.equal(
    selfSpawnCall('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'),
    undefined,
  );
  assert.equal(
    selfSpawnCall('import torch.multiprocessing as mp\ndef respawn(x): pass\nrespawn(1)\nmy.spawn(1)\n'),
    undefined,
    'other names ending in spawn',
  );
  const both = tutorial.replace(
    '    world_size = 2\n',
    '    if "RANK" in os.environ:\n        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))\n    world_size = 2\n',
  );
  assert.equal(selfSpawnCall(both), undefined);
  assert.equal(
    selfSpawnCall(tutorial.replace("os.environ['MASTER_PORT'] = '12355'", "local = int(os.getenv('LOCAL_RANK', 0))")),
    undefined,
  );
});

test('a --local_rank option without LOCAL_RANK read anywhere: every process would get its default', () => {
  const legacy =
    'import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", type=float)\np.add_argument("--local_rank", type=int, default=-1)\n';
  assert.deepEqual(scriptLaunch(legacy), { local_rank_option: { call: '--local_rank', line: 4 } });
  assert.deepEqual(scriptLaunch(legacy.replace('--local_rank', '--local-rank')).local_rank_option, {
    call: '--local-rank',
    line: 4,
  });
  const bridged =
    legacy + 'args = p.parse_args()\nargs.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))\n';
  assert.deepEqual(scriptLaunch(bridged), {}, 'the HF-style bridge reads LOCAL_RANK');
  assert.deepEqual(
    scriptLaunch(legacy.replace('p.add_argument("--local_rank"', '# p.add_argument("--local_rank"')),
    {},
  );
});

test('accelerate launch and deepspeed commands: the script under Python is the direct command', () => {
  assert.deepEqual(
    foreignLauncher([
      'accelerate',
      'launch',
      '--num_processes',
      '2',
      '--mixed_precision',
      'fp16',
      'train.py',
      '--lr',
      '1e-4',
    ]),
    { launcher: 'accelerate launch', direct: ['python3', 'train.py', '--lr', '1e-4'] },
  );
  assert.deepEqual(foreignLauncher(['/opt/venv/bin/deepspeed', '--num_gpus=2', 'train.py', '--deepspeed', 'ds.json']), {
    launcher: 'deepspeed',
    direct: ['python3', 'train.py', '--deepspeed', 'ds.json'],
  });
  assert.equal(foreignLauncher(['accelerate', 'config']), undefined, 'not a launch');
  assert.equal(foreignLauncher(['accelerate', 'launch', '-m', 'pkg.train']), undefined, 'no script to name');
  assert.equal(foreignLauncher(['python3', 'train.py']), undefined);
});

test('a rendezvous fixed in the script: MASTER_ADDR / MASTER_PORT assigned, or a literal tcp:// address', () => {
  const fixed = (script: string) => scriptLaunch(script).fixed_rendezvous;
  assertFinds(fixed, [
    [tutorial, "MASTER_ADDR = 'localhost'", 6],
    ['import os\nrank = int(os.environ["RANK"])\nos.environ["MASTER_PORT"]="29501"\n', 'MASTER_PORT = "29501"', 3],
    ['from os import environ\nenviron["MASTER_PORT"] = str(free_port())\n', 'MASTER_PORT = str(free_port())', 2],
    [
      'import os\nos.environ.update({"MASTER_ADDR": "localhost", "MASTER_PORT": "12355"})\n',
      'MASTER_ADDR = "localhost"',
      2,
    ],
    [
      'dist.init_process_group("gloo", init_method="tcp://127.0.0.1:23456", rank=r, world_size=w)\n',
      'tcp://127.0.0.1:23456',
      1,
    ],
    [
      "parser.add_argument('--dist-url', default='tcp://224.66.41.62:23456', type=str)\n",
      'tcp://224.66.41.62:23456',
      1,
      "pytorch/examples' ImageNet",
    ],
  ]);
});

test('a rendezvous that keeps what the launcher set is not fixed', () => {
  const fixed = (script: string) => scriptLaunch(script).fixed_rendezvous;
  assert.equal(fixed('import os\nos.environ.setdefault("MASTER_PORT", "12355")\n'), undefined);
  assert.equal(fixed('import os\nos.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "12355")\n'), undefined);
  assert.equal(
    fixed(
      'import os\nif "MASTER_ADDR" not in os.environ:\n    os.environ["MASTER_ADDR"] = "localhost"\n\n    os.environ["MASTER_PORT"] = "12355"\n',
    ),
    undefined,
    'under a test of the variable',
  );
  assert.equal(fixed('import os\nif os.environ["MASTER_PORT"] == "1":\n    pass\n'), undefined, 'a comparison');
  assert.equal(
    fixed("url = f\"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}\"\n"),
    undefined,
    'built from the environment',
  );
  assert.equal(
    fixed('dist.init_process_group("gloo", init_method="env://")\n# os.environ["MASTER_PORT"] = "1"\n'),
    undefined,
  );
  assert.equal(fixed('if True:\n    os.environ["MASTER_PORT"] = "1"\n')?.line, 2, 'under another test it is fixed');
});

test('processes that meet through a file', () => {
  const file = (script: string) => scriptLaunch(script).file_rendezvous;
  assertFinds(file, [
    [
      'dist.init_process_group(backend="gloo",\n    init_method="file:///tmp/sharedfile", rank=r, world_size=w)\n',
      'file:///tmp/sharedfile',
      2,
    ],
    ['p.add_argument("--init-method", default=f"file://{os.getcwd()}/rdv")\n', 'file://{os.getcwd()}/rdv', 1],
  ]);
  assert.equal(file('mlflow.set_tracking_uri("file:///tmp/mlruns")\n'), undefined, 'a file URL that is no rendezvous');
});

test('a script written for AdaptDL', () => {
  assertFinds(
    (script) => scriptLaunch(script).adaptdl,
    [
      ['import os\nimport adaptdl.torch as adl\n', 'adaptdl', 2],
      ['from adaptdl.torch import AdaptiveDataLoader\n', 'adaptdl', 1],
    ],
  );
  assert.equal(
    scriptLaunch('import goodput.torch as gt  # was: import adaptdl.torch as adl\nimport adaptdl_helpers\n').adaptdl,
    undefined,
  );
});

test('a snapshot saved in place, with no rename anywhere', () => {
  const save = (script: string) => scriptLaunch(script).in_place_save;
  assertFinds(save, [
    ['import torch\ndef snap(m, path):\n    torch.save(m.state_dict(), path)\n', 'torch.save', 3],
    [
      'name = path.replace(".pt", ".tmp.pt")\ntorch.save(state, path)\n',
      'torch.save',
      2,
      'a string replace is no rename',
    ],
  ]);
  assert.equal(save('torch.save(state, tmp)\nos.replace(tmp, path)\n'), undefined);
  assert.equal(save('torch.save(state, tmp)\ntmp_path.rename(path)\n'), undefined, "pathlib's rename");
  assert.equal(save('torch.save(state, tmp)\nshutil.move(tmp, path)\n'), undefined);
  assert.equal(save('gt.save_checkpoint(state)\n'), undefined);
});
