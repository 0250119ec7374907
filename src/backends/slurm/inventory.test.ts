import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partitionRefusal } from './slurm-states.js';
import { batchScript, rankNodes, shellQuote } from './batch-script.js';
import { expandHostlist } from './hostlist.js';
import { buildInventory, parseGres, parseSinfo, parseSqueue, type SlurmNode } from './inventory.js';

/** A node as sinfo --json (22.05) prints it, with only the fields read. */
const sinfoNode = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  hostname: 'vm',
  address: '10.0.0.' + name.slice(-1),
  state: 'idle',
  state_flags: [],
  gres: 'gpu:a100:4(S:0-1)',
  gres_used: 'gpu:a100:0(IDX:N/A)',
  cpus: 64,
  partitions: ['gpu'],
  reason: '',
  ...extra,
});
const squeueJob = (job_id: number, name: string, nodes: string, gres_detail: string[], job_state = 'RUNNING') => ({
  job_id,
  name,
  job_state,
  nodes,
  gres_detail,
  het_job_id: 0,
  state_reason: 'None',
});

describe('Slurm inventory parsing', () => {
  it('expands hostlists', () => {
    assert.deepEqual(expandHostlist('gp[1-3,7],login'), ['gp1', 'gp2', 'gp3', 'gp7', 'login']);
    assert.deepEqual(expandHostlist('n[08-10]'), ['n08', 'n09', 'n10']);
    assert.deepEqual(expandHostlist(''), []);
  });

  it('counts GPUs in GRES strings with and without types', () => {
    assert.deepEqual(parseGres('gpu:a100:4(S:0-1)'), { count: 4, type: 'a100', types: [{ type: 'a100', count: 4 }] });
    assert.deepEqual(parseGres('gpu:2(IDX:0-1),mps:100'), { count: 2, type: '', types: [{ type: '', count: 2 }] });
    assert.deepEqual(parseGres('gpu:a100:2,gpu:v100:1'), {
      count: 3,
      type: 'a100',
      types: [
        { type: 'a100', count: 2 },
        { type: 'v100', count: 1 },
      ],
    });
    assert.deepEqual(parseGres('(null)'), { count: 0, type: '', types: [] });
  });

  it('keeps node positions stable, excludes drained/down nodes and GPUs of foreign jobs', () => {
    const nodes: SlurmNode[] = parseSinfo(
      JSON.stringify({
        nodes: [
          sinfoNode('gp2', { state: 'mixed' }),
          sinfoNode('gp1'),
          sinfoNode('gp3', { state: 'idle', state_flags: ['DRAIN'], reason: 'maintenance' }),
          sinfoNode('cpu1', { gres: '' }),
        ],
      }),
    );
    const jobs = parseSqueue(
      JSON.stringify({
        jobs: [
          squeueJob(1, 'foreign', 'gp2', ['gpu:a100:2(IDX:0-1)']),
          squeueJob(2, 'goodput-abc-j1-0', 'gp[1-2]', ['gpu:a100:1(IDX:2)', 'gpu:a100:1(IDX:3)']),
          squeueJob(3, 'foreign-done', 'gp1', ['gpu:a100:4(IDX:0-3)'], 'COMPLETED'),
        ],
      }),
    );
    const ours = (name: string) => name.startsWith('goodput-abc-');
    const inv = buildInventory(['gp2'], nodes, jobs, ours);
    assert.deepEqual(
      inv.order,
      ['gp2', 'gp1', 'gp3'],
      'known nodes keep their place; new ones follow in name order; no GPU-less nodes',
    );
    assert.deepEqual(
      inv.nodes.map((n) => [n.name, n.devices.length, n.usable, n.note]),
      [
        ['gp2', 4, 2, '2 GPU(s) held by other Slurm jobs'],
        ['gp1', 4, 4, ''],
        ['gp3', 4, 0, 'is drain (maintenance)'],
      ],
    );
    assert.equal(inv.nodes[0]!.address, '10.0.0.2');
    const later = buildInventory(
      inv.order,
      nodes.filter((n) => n.name !== 'gp2'),
      [],
      ours,
      'gpu',
    );
    assert.deepEqual(
      later.nodes.map((n) => [n.name, n.usable]),
      [
        ['gp2', 0],
        ['gp1', 4],
        ['gp3', 0],
      ],
      'a vanished node keeps its position with nothing usable',
    );
    assert.deepEqual(buildInventory([], nodes, [], ours, 'other').nodes, [], 'the partition filter applies');
  });

  it('reads an error answer (exit 0, empty list) as an unreachable slurmctld, not as an empty cluster', () => {
    const answer = JSON.stringify({
      errors: [{ description: 'Failed while looking for jobs', error: 'Unspecified error', source: 'slurm_load_jobs' }],
      jobs: [],
    });
    assert.throws(
      () => parseSqueue(answer),
      (e: unknown) =>
        (e as { code?: string }).code === 'E_BACKEND_UNAVAILABLE' && /slurm_load_jobs/.test((e as Error).message),
    );
    assert.throws(
      () => parseSinfo(JSON.stringify({ errors: [{ error: 'Unspecified error', errno: -1 }], nodes: [] })),
      /slurmctld is up/,
    );
  });
});

describe('batch script', () => {
  const base = {
    job_name: 'goodput-x-j-0',
    run_dir: '/d/run',
    logs_dir: '/d/logs',
    attempt: 0,
    workdir: '/w',
    command: ['python3', "it's", '$(x)'],
  };
  it('asks for exactly the chosen nodes, one task per GPU; even layouts are one plain job', () => {
    const s = batchScript({
      ...base,
      shares: [
        { node: 'gp1', count: 4 },
        { node: 'gp2', count: 4 },
      ],
      partition: 'gpu',
      account: 'ml',
    });
    assert.match(s, /^#SBATCH --nodes=2 --nodelist=gp1,gp2 --ntasks-per-node=4 --gres=gpu:4$/m);
    assert.match(s, /^#SBATCH --partition="gpu"$/m);
    assert.match(s, /^#SBATCH --account="ml"$/m);
    assert.match(
      s,
      /^#SBATCH --chdir="\/d\/run"$/m,
      'the batch shell starts in the run dir; the workdir is an argument of each task',
    );
    assert.match(s, /^#SBATCH --no-requeue$/m, 'a node failure must not make Slurm rerun the attempt');
    assert.doesNotMatch(s, /hetjob/);
    assert.match(
      s,
      /^srun --kill-on-bad-exit=0 \/bin\/sh -c '.*' goodput-replica '\/d\/run' '\/d\/logs' '\/w' 'python3' 'it'\\''s' '\$\(x\)'$/ms,
    );
  });
  it('asks for GPUs of the chosen GRES type when given one (a node of several types), and refuses a type sbatch cannot read', () => {
    const even = batchScript({ ...base, shares: [{ node: 'gp1', count: 2 }], gpu_type: 't4' });
    assert.match(even, /^#SBATCH --nodes=1 --nodelist=gp1 --ntasks-per-node=2 --gres=gpu:t4:2$/m);
    const uneven = batchScript({
      ...base,
      shares: [
        { node: 'gp1', count: 2 },
        { node: 'gp2', count: 1 },
      ],
      gpu_type: 'a100',
    });
    assert.deepEqual(
      uneven
        .split('\n')
        .filter((l) => /--gres/.test(l))
        .map((l) => l.split(' ').pop()),
      ['--gres=gpu:a100:2', '--gres=gpu:a100:1'],
    );
    assert.throws(
      () => batchScript({ ...base, shares: [{ node: 'gp1', count: 1 }], gpu_type: 'a100 --x' }),
      /not a GRES type name/,
    );
  });
  it('uses a heterogeneous job for uneven layouts, partition per component', () => {
    const s = batchScript({
      ...base,
      shares: [
        { node: 'gp1', count: 3 },
        { node: 'gp2', count: 1 },
      ],
      partition: 'gpu',
    });
    assert.deepEqual(
      s.split('\n').filter((l) => /--nodes|hetjob|partition/.test(l)),
      [
        '#SBATCH --partition="gpu"',
        '#SBATCH --nodes=1 --nodelist=gp1 --ntasks=3 --gres=gpu:3',
        '#SBATCH hetjob',
        '#SBATCH --partition="gpu"',
        '#SBATCH --nodes=1 --nodelist=gp2 --ntasks=1 --gres=gpu:1',
      ],
    );
    assert.match(s, /srun --kill-on-bad-exit=0 --het-group=0-1 /);
    assert.deepEqual(
      rankNodes([
        { node: 'gp1', count: 3 },
        { node: 'gp2', count: 1 },
      ]),
      ['gp1', 'gp1', 'gp1', 'gp2'],
    );
  });
  it('quotes any string as one literal shell word; #SBATCH values keep their blanks', () => {
    assert.equal(shellQuote("a'b"), `'a'\\''b'`);
    assert.match(
      batchScript({ ...base, run_dir: '/my data/run', shares: [{ node: 'gp1', count: 1 }] }),
      /^#SBATCH --chdir="\/my data\/run"$/m,
    );
    for (const dir of ['/a"b', '/a\\b', '/a%j', '/a\nb'])
      assert.throws(
        () => batchScript({ ...base, run_dir: dir, shares: [{ node: 'gp1', count: 1 }] }),
        /cannot pass .* to sbatch/,
      );
    // A workdir is one quoted argument of the task wrapper, whatever it holds.
    assert.match(
      batchScript({ ...base, workdir: '/a"b\\c\nd', shares: [{ node: 'gp1', count: 1 }] }),
      / '\/d\/logs' '\/a"b\\c\nd' 'python3'/,
    );
  });
});

describe('partition availability (launchRefusal)', () => {
  it('says why the partition jobs go to accepts no new jobs: --partition, else the default one', () => {
    const sinfo = 'gpu*|drain\ncpu|up\nold|inact\nspare|down\n';
    assert.match(partitionRefusal(sinfo) ?? '', /^Slurm partition gpu is draining \(State=DRAIN/);
    assert.equal(partitionRefusal(sinfo, 'cpu'), undefined);
    assert.match(partitionRefusal(sinfo, 'old') ?? '', /^Slurm partition old is inactive/);
    assert.match(partitionRefusal(sinfo, 'spare') ?? '', /^Slurm partition spare is down/);
    assert.equal(partitionRefusal(sinfo, 'missing'), undefined, 'a partition sinfo does not list: sbatch says why');
    assert.equal(partitionRefusal('gpu*|up\n'), undefined);
    assert.equal(partitionRefusal('cpu|drain\n'), undefined, 'no default partition listed');
  });
});
