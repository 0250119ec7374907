import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foreignLauncher, scriptLaunch } from './script-launch.js';

const selfSpawnCall = (script: string) => scriptLaunch(script).spawn;

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
  assert.deepEqual(selfSpawnCall(tutorial), { call: 'mp.spawn', line: 13 });
});

test('knows torch.multiprocessing by its full name, any alias and its functions imported by name', () => {
  assert.deepEqual(selfSpawnCall('import torch\ntorch.multiprocessing.spawn(f, nprocs=2)\n'), { call: 'torch.multiprocessing.spawn', line: 2 });
  assert.deepEqual(selfSpawnCall('from torch import multiprocessing as tmp\n\ntmp.start_processes(f, nprocs=2)\n'), { call: 'tmp.start_processes', line: 3 });
  assert.deepEqual(selfSpawnCall('from torch.multiprocessing import Queue, spawn as launch\nlaunch(f)\n'), { call: 'launch', line: 2 });
  assert.deepEqual(selfSpawnCall('from torch.multiprocessing import spawn\nspawn (f)\n'), { call: 'spawn', line: 2 });
});

test('leaves alone what is not torch\'s launcher, and scripts that also run under torchrun', () => {
  assert.equal(selfSpawnCall('import multiprocessing as mp\nmp.set_start_method("spawn")\np = mp.Process(target=f)\n'), undefined, "Python's own multiprocessing");
  assert.equal(selfSpawnCall('import pexpect\npexpect.spawn("ls")\n'), undefined);
  assert.equal(selfSpawnCall('import torch.multiprocessing as mp\nmp.set_sharing_strategy("file_system")\n'), undefined);
  assert.equal(selfSpawnCall('import torch.multiprocessing as mp\ndef respawn(x): pass\nrespawn(1)\nmy.spawn(1)\n'), undefined, 'other names ending in spawn');
  const both = tutorial.replace('    world_size = 2\n', '    if "RANK" in os.environ:\n        main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))\n    world_size = 2\n');
  assert.equal(selfSpawnCall(both), undefined);
  assert.equal(selfSpawnCall(tutorial.replace("os.environ['MASTER_PORT'] = '12355'", "local = int(os.getenv('LOCAL_RANK', 0))")), undefined);
});

test('a --local_rank option without LOCAL_RANK read anywhere: every process would get its default', () => {
  const legacy = 'import argparse\np = argparse.ArgumentParser()\np.add_argument("--lr", type=float)\np.add_argument("--local_rank", type=int, default=-1)\n';
  assert.deepEqual(scriptLaunch(legacy), { local_rank_option: { call: '--local_rank', line: 4 } });
  assert.deepEqual(scriptLaunch(legacy.replace('--local_rank', '--local-rank')).local_rank_option, { call: '--local-rank', line: 4 });
  const bridged = legacy + 'args = p.parse_args()\nargs.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))\n';
  assert.deepEqual(scriptLaunch(bridged), {}, 'the HF-style bridge reads LOCAL_RANK');
  assert.deepEqual(scriptLaunch(legacy.replace('p.add_argument("--local_rank"', '# p.add_argument("--local_rank"')), {});
});

test('accelerate launch and deepspeed commands: the script under Python is the direct command', () => {
  assert.deepEqual(foreignLauncher(['accelerate', 'launch', '--num_processes', '2', '--mixed_precision', 'fp16', 'train.py', '--lr', '1e-4']), { launcher: 'accelerate launch', direct: ['python3', 'train.py', '--lr', '1e-4'] });
  assert.deepEqual(foreignLauncher(['/opt/venv/bin/deepspeed', '--num_gpus=2', 'train.py', '--deepspeed', 'ds.json']), { launcher: 'deepspeed', direct: ['python3', 'train.py', '--deepspeed', 'ds.json'] });
  assert.equal(foreignLauncher(['accelerate', 'config']), undefined, 'not a launch');
  assert.equal(foreignLauncher(['accelerate', 'launch', '-m', 'pkg.train']), undefined, 'no script to name');
  assert.equal(foreignLauncher(['python3', 'train.py']), undefined);
});
