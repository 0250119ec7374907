/**
 * failureHint against what real Python and Debian's torch print for each mistake (the scripts
 * below make them), so that a change in those messages fails here, not in front of a user.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { noPython, pythonWith } from '../../../test-support/control/python.js';
import { failureHint } from './failure-hint.js';
import { logTail } from './log-tail.js';

const python = pythonWith(['torch']);
const dir = mkdtempSync(join(tmpdir(), 'goodput-hint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;

/** The tail of the log of a replica that ran `code`, as the supervisor reads it for the failed job's reason. */
function tailOf(code: string): Promise<string> {
  const { SLURM_PROCID: _, ...env } = process.env; // as outside srun, even when the tests run under it
  const log = join(dir, `replica-${runs++}.log`);
  return new Promise((resolve, reject) => {
    const out = openSync(log, 'w');
    const child = spawn(python!, ['-c', code], { env, stdio: ['ignore', out, out] });
    closeSync(out);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? reject(new Error(`expected a failure, got exit 0:\n${readFileSync(log, 'utf8')}`))
        : resolve(logTail(log)),
    );
  });
}

const PROCESS_GROUP = 'import datetime, os, torch.distributed as dist\n';

describe('failure hints, against real output', { skip: python ? undefined : noPython(['torch']) }, () => {
  it('a module the interpreter lacks', async () => {
    assert.match(
      failureHint(await tailOf('import os\nimport goodput_no_such_module.sub\n')) ?? '',
      /^the Python that ran it has no module 'goodput_no_such_module': run the job with one that has it \(its full path, --venv DIR or --conda DIR\).*check --workdir$/,
    );
  });

  it('a rendezvous port that is taken', async () => {
    const code = `${PROCESS_GROUP}import socket\ns = socket.socket(socket.AF_INET6)\ns.bind(("::", 0))\ns.listen()\nport = s.getsockname()[1]\nprint("port", port)\nos.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))\ndist.init_process_group("gloo", rank=0, world_size=1)\n`;
    const tail = await tailOf(code);
    const port = /^port (\d+)$/m.exec(tail)![1]!;
    assert.match(
      failureHint(tail) ?? '',
      new RegExp(
        `^port ${port} was already taken when rank 0 opened the rendezvous: a script that fixes MASTER_PORT.*leave both to goodput`,
      ),
    );
  });

  it('a file rendezvous left by a killed process', async () => {
    const url = `file://${join(dir, 'rdv')}`;
    await tailOf(
      `${PROCESS_GROUP}dist.init_process_group("gloo", init_method="${url}", rank=0, world_size=1)\nos.kill(os.getpid(), 9)\n`,
    );
    const tail = await tailOf(
      `${PROCESS_GROUP}dist.init_process_group("gloo", init_method="${url}", rank=0, world_size=1, timeout=datetime.timedelta(seconds=2))\n`,
    );
    assert.match(
      failureHint(tail) ?? '',
      /^the rendezvous counted 2 processes for a world of 1: it still holds an earlier attempt's, as a file rendezvous .*use init_method="env:\/\/"/,
    );
  });

  it('a checkpoint cut short by a kill during torch.save, or left empty', async () => {
    const path = join(dir, 'snapshot.pt');
    const [truncated, empty] = await Promise.all([
      tailOf(
        `import os, torch\ntorch.save({"w": torch.randn(1000)}, "${path}")\nos.truncate("${path}", os.path.getsize("${path}") // 2)\ntorch.load("${path}")\n`,
      ),
      tailOf(`import torch\nopen("${path}.empty", "wb").close()\ntorch.load("${path}.empty")\n`),
    ]);
    for (const tail of [truncated, empty])
      assert.match(
        failureHint(tail) ?? '',
        /^a checkpoint the script loads with torch\.load is truncated or empty.*os\.replace\(\) it into place/,
        tail,
      );
    assert.equal(
      failureHint(
        'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    pickle.load(f)\nEOFError: Ran out of input',
      ),
      undefined,
      'not from torch.load',
    );
  });

  it('a full disk, as Python and torch.save report it (/dev/full answers every write with ENOSPC)', async () => {
    const [python_write, torch_save] = await Promise.all([
      tailOf('with open("/dev/full", "w") as f:\n    f.write("loss 0.1\\n")\n'),
      tailOf('import torch\ntorch.save({"w": torch.randn(100000)}, "/dev/full")\n'),
    ]);
    for (const tail of [python_write, torch_save])
      assert.match(failureHint(tail) ?? '', /^a write failed because a disk is full \(or a quota is reached\)/, tail);
  });

  it("another launcher's variables, CUDA on a CPU build, NCCL without it", async () => {
    const [slurm, cuda, nccl] = await Promise.all([
      tailOf('import os\nrank = int(os.environ["SLURM_PROCID"])\n'),
      tailOf('import torch\ntorch.zeros(1).cuda()\n'),
      tailOf(
        `${PROCESS_GROUP}dist.init_process_group("nccl", rank=0, world_size=1, init_method="tcp://127.0.0.1:1")\n`,
      ),
    ]);
    assert.match(
      failureHint(slurm) ?? '',
      /^the script reads SLURM_PROCID, which another launcher \(srun, mpirun\) sets; goodput sets torchrun's variables instead: RANK, WORLD_SIZE/,
    );
    assert.match(
      failureHint(cuda) ?? '',
      /^the script asks for CUDA, but the torch of the Python that ran it is a CPU build/,
    );
    assert.match(failureHint(nccl) ?? '', /^backend "nccl" needs a torch with CUDA and GPUs; on CPU slots use "gloo"/);
  });
});

describe('failure hints, what they leave alone', () => {
  it('an ordinary error, and a rendezvous timeout that holds no stale process, have no hint', () => {
    assert.equal(
      failureHint(
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\nValueError: bad learning rate',
      ),
      undefined,
    );
    assert.equal(
      failureHint(
        'RuntimeError: Timed out initializing process group in store based barrier on rank: 1, for key: store_based_barrier_key:1 (world_size=2, worker_count=1, timeout=0:30:00)',
      ),
      undefined,
    );
    assert.equal(failureHint(''), undefined);
  });

  it("a library missing is the interpreter's fault, the SDK missing says how to install it", () => {
    assert.doesNotMatch(failureHint("ModuleNotFoundError: No module named 'torch'") ?? '', /workdir/);
    assert.match(
      failureHint("ModuleNotFoundError: No module named 'goodput'") ?? '',
      /or install the Goodput SDK into it \(pip install \.\/python, docs\/sdk\.md\)$/,
    );
    assert.match(
      failureHint("ModuleNotFoundError: No module named 'adaptdl'") ?? '',
      /^the script is written for AdaptDL.*port it to goodput\.torch.*docs\/migrating-from-adaptdl\.md\)$/,
    );
    assert.match(
      failureHint("ModuleNotFoundError: No module named 'models.resnet'") ?? '',
      /no module 'models\.resnet'.*if 'models\.resnet' is the job's own code, check --workdir$/,
    );
  });

  it('the last known line decides', () => {
    const tail =
      "ModuleNotFoundError: No module named 'torch'\n--- goodput: attempt 1, rank 0/1 ---\nKeyError: 'SLURM_LOCALID'";
    assert.match(failureHint(tail) ?? '', /reads SLURM_LOCALID/);
  });
});
