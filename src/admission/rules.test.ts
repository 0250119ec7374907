/**
 * Each rule of issue 52's submit-time reading on its false friends: code that looks like what a
 * rule warns about but is not, and the local imports that reading follows (and what it does not).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { JobSpec } from '../store/types.js';
import { admit, readJobCode } from './admit.js';
import { importedModules } from './script-source.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-rules-'));
after(() => rmSync(root, { recursive: true, force: true }));
let projects = 0;
/** A project folder holding `files` (path -> text); returns a spec running `command` in it. */
function project(files: Record<string, string>, command: string[], extra: Partial<JobSpec> = {}): JobSpec {
  const workdir = join(root, `p${projects++}`);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(workdir, path)), { recursive: true });
    writeFileSync(join(workdir, path), text);
  }
  return {
    name: 'j',
    command,
    workdir,
    env: {},
    min_replicas: 0,
    max_replicas: 2,
    max_restarts: 0,
    priority: 0,
    sdk: false,
    ...extra,
  };
}
const cpu = (n: number) => Array.from({ length: n }, (_, index) => ({ index, kind: 'cpu' as const, name: 'cpu' }));
const warnings = (s: JobSpec): string[] => admit(s, cpu(4)).notes.filter((n) => n.startsWith('warning: '));
const DDP = 'import torch.distributed as dist\ndist.init_process_group("gloo")\n';

describe('local imports', () => {
  it('names the modules of import and from-import lines, relative ones against the package', () => {
    assert.deepEqual(importedModules('import os, data as d\nfrom model import RNN\n# import hidden\n', '__main__'), [
      'os',
      'data',
      'model',
      'model.RNN',
    ]);
    assert.deepEqual(importedModules('from .utils import a, b as c\nfrom .. import top\n', 'pkg.sub.trainer'), [
      'pkg.sub.utils',
      'pkg.sub.utils.a',
      'pkg.sub.utils.b',
      'pkg',
      'pkg.top',
    ]);
  });

  it("follows the script's own folder and packages, through cycles, and never site-packages", () => {
    const s = project(
      {
        'train.py': 'import torch\nfrom mingpt.trainer import Trainer\nimport helpers\n',
        'mingpt/__init__.py': '',
        'mingpt/trainer.py': 'from .utils import save\nimport helpers\n',
        'mingpt/utils.py': 'import torch\ndef save(x, p):\n    torch.save(x, p)\n',
        'helpers.py': 'import train\n',
      },
      ['python3', 'train.py'],
    );
    assert.deepEqual(
      readJobCode(s).source!.files.map((f) => f.name),
      ['train.py', 'mingpt/__init__.py', 'mingpt/trainer.py', 'helpers.py', 'mingpt/utils.py'],
    );
    // `import torch` finds no torch.py next to the script: site-packages is not read.
    assert.equal(
      readJobCode(s).source!.files.some((f) => f.name.includes('torch')),
      false,
    );
  });
});

describe('-n N on a script with no distributed code', () => {
  const plain = 'import torch\nmodel = torch.nn.Linear(2, 2)\ntorch.save(model, "model.pt")\n';
  it('warns, also when init_process_group is only in a comment', () => {
    assert.equal(warnings(project({ 'train.py': plain }, ['python3', 'train.py'])).length, 1);
    assert.equal(
      warnings(project({ 'train.py': `# dist.init_process_group("gloo")\n${plain}` }, ['python3', 'train.py'])).length,
      1,
    );
  });
  it('not when the distributed code is in a local module, with one process, or through the SDK or Accelerate', () => {
    assert.deepEqual(
      warnings(project({ 'train.py': `from engine import fit\n${plain}`, 'engine.py': DDP }, ['python3', 'train.py'])),
      [],
    );
    assert.deepEqual(warnings(project({ 'train.py': plain }, ['python3', 'train.py'], { max_replicas: 1 })), []);
    assert.deepEqual(
      warnings(project({ 'train.py': `import goodput.torch as gt\n${plain}` }, ['python3', 'train.py'], { sdk: true })),
      [],
    );
    assert.deepEqual(
      warnings(project({ 'train.py': `from accelerate import Accelerator\n${plain}` }, ['python3', 'train.py'])),
      [],
    );
    assert.deepEqual(
      warnings(project({ 'train.py': `import os\nrank = int(os.environ["RANK"])\n${plain}` }, ['python3', 'train.py'])),
      [],
      'it shards by RANK itself',
    );
  });
});

describe('ranks fixed on the command line', () => {
  const script = [
    'import argparse',
    'import torch.distributed as dist',
    'p = argparse.ArgumentParser()',
    'p.add_argument("--world-size", type=int, default=-1)',
    'p.add_argument("--rank", type=int, default=-1)',
    'p.add_argument("--dist-url", default="env://")',
    'args = p.parse_args()',
    'dist.init_process_group("gloo", init_method=args.dist_url,',
    '                        world_size=args.world_size, rank=args.rank)',
    '',
  ].join('\n');
  it('warns for --rank / --world-size given to every one of N processes', () => {
    const [w] = warnings(project({ 'main.py': script }, ['python3', 'main.py', '--world-size', '1', '--rank=0']));
    assert.match(
      w!,
      /given its rank and world size on the command line \(--world-size 1 --rank 0\).*Drop --world-size and --rank and pass --dist-url env:\/\//,
    );
  });
  it('not for a --rank that is no process rank (a LoRA rank), nor for ranks left to the environment', () => {
    const lora =
      'import argparse\nimport torch.distributed as dist\np = argparse.ArgumentParser()\np.add_argument("--rank", type=int, default=8)\nargs = p.parse_args()\ndist.init_process_group("gloo")\n';
    assert.deepEqual(warnings(project({ 'lora.py': lora }, ['python3', 'lora.py', '--rank', '16'])), []);
    assert.deepEqual(warnings(project({ 'main.py': script }, ['python3', 'main.py', '--dist-url', 'env://'])), []);
    assert.deepEqual(
      warnings(project({ 'main.py': script }, ['python3', 'main.py', '--rank', '-1'])),
      [],
      'not a fixed rank',
    );
  });
});

describe('argparse defaults overridden on the command line', () => {
  const script =
    'import argparse\nimport torch.distributed as dist\np = argparse.ArgumentParser()\np.add_argument("--init-method", default="file:///tmp/rdv",\n               help="rendezvous")\nargs = p.parse_args()\ndist.init_process_group("gloo", init_method=args.init_method)\n';
  it('a file rendezvous default replaced by env:// is no rendezvous through a file; one given on the command line is', () => {
    assert.deepEqual(warnings(project({ 'f.py': script }, ['python3', 'f.py', '--init-method', 'env://'])), []);
    assert.match(
      warnings(project({ 'f.py': script }, ['python3', 'f.py']))[0]!,
      /through a file \(file:\/\/\/tmp\/rdv, line 4\)/,
    );
    const given = warnings(
      project({ 'f.py': script.replace('file:///tmp/rdv', 'env://') }, [
        'python3',
        'f.py',
        '--init-method',
        'file:///shared/rdv',
      ]),
    );
    assert.match(given[0]!, /through a file \(--init-method file:\/\/\/shared\/rdv, on the command line\)/);
  });
  it('a tcp rendezvous given on the command line is fixed; a default of another option is not overridden', () => {
    const tcp =
      'import argparse\nimport torch.distributed as dist\np = argparse.ArgumentParser()\np.add_argument("--dist-url", default="env://")\np.add_argument("--seed", default=1)\n';
    assert.match(
      warnings(project({ 't.py': tcp }, ['python3', 't.py', '--dist-url', 'tcp://10.0.0.1:23456']))[0]!,
      /fixes its rendezvous \(--dist-url tcp:\/\/10\.0\.0\.1:23456, on the command line\)/,
    );
    assert.deepEqual(warnings(project({ 't.py': tcp }, ['python3', 't.py', '--seed', '2'])), []);
  });
});

describe('fixed device lists', () => {
  const base = 'import os\nimport torch.distributed as dist\n';
  it('warns for an assignment of CUDA_VISIBLE_DEVICES, in the script or a local module', () => {
    assert.match(
      warnings(
        project({ 'n.py': `${base}os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"\n` }, ['python3', 'n.py'], {
          max_replicas: 1,
        }),
      )[0]!,
      /fixes the devices it sees \(CUDA_VISIBLE_DEVICES = "0,1", line 3\)/,
    );
    assert.match(
      warnings(
        project(
          {
            'n.py': `${base}import setup_env\n`,
            'setup_env.py': 'import os\nos.environ.update({"CUDA_VISIBLE_DEVICES": "3"})\n',
          },
          ['python3', 'n.py'],
        ),
      )[0]!,
      /setup_env\.py, line 2/,
    );
  });
  it('not for reading it, setdefault, a comparison, or an assignment under a test of the variable', () => {
    for (const line of [
      'print(os.environ["CUDA_VISIBLE_DEVICES"])',
      'os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")',
      'same = os.environ["CUDA_VISIBLE_DEVICES"] == "0"',
      'if "CUDA_VISIBLE_DEVICES" not in os.environ:\n    os.environ["CUDA_VISIBLE_DEVICES"] = "0"',
      'os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("LOCAL_DEVICES", "0")',
    ])
      assert.deepEqual(warnings(project({ 'n.py': `${base}${line}\n` }, ['python3', 'n.py'])), [], line);
  });
});

describe("non-atomic saves anywhere in the job's code (--resumable)", () => {
  const main = 'import torch.distributed as dist\nfrom trainer import Trainer\n';
  it('warns for torch.save in an imported module; not when any file of the job renames into place', () => {
    const save = 'import torch\ndef snap(m, p):\n    torch.save(m.state_dict(), p)\n';
    assert.match(
      warnings(project({ 'main.py': main, 'trainer.py': save }, ['python3', 'main.py'], { resumable: true }))[0]!,
      /torch\.save, trainer\.py, line 3/,
    );
    const atomic =
      'import os\nimport torch\ndef snap(m, p):\n    torch.save(m.state_dict(), p + ".tmp")\n    os.replace(p + ".tmp", p)\n';
    assert.deepEqual(
      warnings(project({ 'main.py': main, 'trainer.py': atomic }, ['python3', 'main.py'], { resumable: true })),
      [],
    );
    assert.deepEqual(
      warnings(
        project(
          {
            'main.py': `${main}import utils\n`,
            'trainer.py': save,
            'utils.py': 'import shutil\nshutil.move("a", "b")\n',
          },
          ['python3', 'main.py'],
          { resumable: true },
        ),
      ),
      [],
    );
  });
  it("not for a torch.save outside the job's folder (site-packages is never read)", () => {
    assert.deepEqual(
      warnings(
        project({ 'main.py': 'import torch.distributed as dist\nimport lightning_helpers\n' }, ['python3', 'main.py'], {
          resumable: true,
        }),
      ),
      [],
    );
  });
});
