import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { packagePath } from '../../util/package-root.js';

// End-to-end: the compiled CLI (run `npx tsc -p .` first), real workloads, real files.
const cli = packagePath('dist', 'src', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'goodput-sim-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const workload = (load: string, k: number) =>
  packagePath('data', 'pollux', load === '1.0' ? 'workloads' : `workloads-${load}`, `workload-${k}.csv`);
const published = JSON.parse(readFileSync(packagePath('data', 'pollux', 'published-results.json'), 'utf8')) as {
  jobload: Record<string, { avg_jct_s: Record<string, number>; job_jct_s: Record<string, Record<string, number>> }>;
};

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function file(name: string, text: string): string {
  const path = join(tmp, name);
  writeFileSync(path, text);
  return path;
}

describe('goodput sim (end to end)', () => {
  it('prints a table per workload', () => {
    const r = run('sim', '--policy', 'tiresias', '--workload', workload('1.0', 1));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /avg JCT s\s+p50 JCT s\s+p99 JCT s\s+makespan s\s+GPU-h\s+restarts\s+GPU util/);
    assert.match(r.stdout, /workload-1\s+160\s+2473\.7\s/);
  });

  it('--json prints exactly one JSON object with the documented shape', () => {
    const r = run('sim', '--policy', 'optimus', '--workload', workload('0.5', 2), '--json');
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      policy: string;
      workloads: Record<string, Record<string, unknown>>;
      mean_avg_jct_s: number;
    };
    assert.equal(out.policy, 'optimus');
    assert.deepEqual(Object.keys(out.workloads), ['workload-2']);
    const w = out.workloads['workload-2']!;
    for (const key of [
      'avg_jct_s',
      'p50_jct_s',
      'p99_jct_s',
      'makespan_s',
      'gpu_hours',
      'restarts',
      'gpu_utilization',
      'ftf_worst',
      'ftf_unfair_share',
    ]) {
      assert.equal(typeof w[key], 'number', key);
    }
    assert.deepEqual(w.jobs, published.jobload['optimus-0.5']!.job_jct_s['workload-2']);
    assert.equal(out.mean_avg_jct_s, published.jobload['optimus-0.5']!.avg_jct_s['workload-2']);
  });

  it('runs every CSV of a directory (worker threads) and writes --out interval logs', () => {
    const dir = join(tmp, 'dir');
    mkdirSync(dir);
    copyFileSync(workload('0.5', 1), join(dir, 'workload-1.csv'));
    copyFileSync(workload('0.5', 3), join(dir, 'workload-3.csv'));
    const out = join(tmp, 'logs');
    const r = run('sim', '--policy', 'tiresias', '--workload', dir, '--json', '--out', out);
    assert.equal(r.status, 0, r.stderr);
    const json = JSON.parse(r.stdout) as {
      workloads: Record<string, { jobs: Record<string, number>; rounds: number }>;
      mean_avg_jct_s: number;
    };
    assert.deepEqual(Object.keys(json.workloads), ['workload-1', 'workload-3']);
    const pub = published.jobload['tiresias-0.5']!;
    assert.deepEqual(json.workloads['workload-3']!.jobs, pub.job_jct_s['workload-3']);
    assert.equal(json.mean_avg_jct_s, (pub.avg_jct_s['workload-1']! + pub.avg_jct_s['workload-3']!) / 2);
    for (const name of ['workload-1', 'workload-3']) {
      const lines = readFileSync(join(out, `${name}.jsonl`), 'utf8')
        .trim()
        .split('\n');
      assert.equal(lines.length, json.workloads[name]!.rounds);
      const first = JSON.parse(lines[0]!) as { timestamp: number; jobs: unknown[] };
      assert.equal(first.timestamp, 60);
      const last = JSON.parse(lines[lines.length - 1]!) as {
        jobs: { name: string; completion_time: number; submission_time: number }[];
      };
      for (const j of last.jobs)
        assert.equal(j.completion_time - j.submission_time, json.workloads[name]!.jobs[j.name]);
    }
    const table = run('sim', '--policy', 'tiresias', '--workload', dir);
    assert.match(table.stdout, /workload-1[\s\S]*workload-3[\s\S]*\nmean\s/);
  });

  it('compare prints one row per policy', () => {
    const r = run('compare', '--workload', workload('0.5', 4), '--policies', 'fifo,tiresias');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /\nfifo\s+\d/);
    assert.match(r.stdout, /\ntiresias\s+1946\.8\s/);
    assert.match(r.stdout, /^JCT: job completion time, from submission to finish/m);
    assert.match(r.stdout, /^FTF: finish-time fairness, a job's JCT divided by its JCT alone on a fair share/m);
    assert.match(r.stdout, /FTF>1: share of jobs that finished later than on their fair share/);
  });

  it('--policy-param reaches the policy, in one process and in worker threads', () => {
    const dir = join(tmp, 'knobs');
    mkdirSync(dir);
    const csv = file('knobs/one-bert.csv', 'name,time,application,num_replicas,batch_size\nb,0,bert,1,12\n');
    const jct = (...extra: string[]) => {
      const r = run('sim', '--policy', 'goodput', '--json', ...extra);
      assert.equal(r.status, 0, r.stderr);
      return (JSON.parse(r.stdout) as { workloads: Record<string, { jobs: Record<string, number> }> }).workloads[
        'one-bert'
      ]!.jobs.b!;
    };
    const free = jct('--workload', csv);
    // explore_factor=1: the job may never grow past the single GPU it starts on.
    const pinned = jct('--workload', csv, '--policy-param', 'explore_factor=1');
    assert.ok(pinned > 5 * free, `${pinned} vs ${free}`);
    assert.equal(jct('--workload', dir, '--policy-param', 'explore_factor=1'), pinned);
  });

  it('--submit-jitter runs a perturbed copy of the workload, the same for the same --seed', () => {
    const avg = (...extra: string[]) => {
      const r = run('sim', '--policy', 'tiresias', '--workload', workload('0.5', 1), '--json', ...extra);
      assert.equal(r.status, 0, r.stderr);
      return (JSON.parse(r.stdout) as { mean_avg_jct_s: number }).mean_avg_jct_s;
    };
    const asWritten = avg();
    const jittered = avg('--submit-jitter', '120', '--seed', '3');
    assert.notEqual(jittered, asWritten);
    assert.equal(avg('--submit-jitter', '120', '--seed', '3'), jittered);
    assert.notEqual(avg('--submit-jitter', '120', '--seed', '4'), jittered);
  });

  const errorCases: [string, string[], RegExp, string][] = [
    [
      'unknown policy',
      ['--policy', 'lottery', '--workload', workload('1.0', 1)],
      /^goodput: error\[E_UNKNOWN_POLICY\]: unknown policy 'lottery'; valid policies: fifo, tiresias, optimus/,
      '',
    ],
    [
      'missing file',
      ['--policy', 'fifo', '--workload', join(tmp, 'absent.csv')],
      /^goodput: error\[E_NOT_FOUND\]: --workload .*absent\.csv: no such file or directory/,
      '',
    ],
    [
      'missing column',
      ['--policy', 'fifo'],
      /^goodput: error\[E_INPUT\]: .*nocol\.csv:1: missing column 'time'/,
      'name,application,num_replicas,batch_size\na,cifar10,1,128\n',
    ],
    [
      'malformed number',
      ['--policy', 'fifo'],
      /^goodput: error\[E_INPUT\]: .*bad\.csv:2: column 'num_replicas': 'x' is not a number/,
      'name,time,application,num_replicas,batch_size\na,0,cifar10,x,128\n',
    ],
    [
      'unknown application',
      ['--policy', 'fifo'],
      /^goodput: error\[E_INPUT\]: .*app\.csv:2: unknown application 'alexnet'/,
      'name,time,application,num_replicas,batch_size\na,0,alexnet,1,128\n',
    ],
    [
      'cluster too small',
      ['--policy', 'tiresias', '--nodes', '2'],
      /^goodput: error\[E_CLUSTER_TOO_SMALL\]: .*small\.csv:2: job big needs 12 GPUs under tiresias but the cluster has 8/,
      'name,time,application,num_replicas,batch_size\nbig,0,cifar10,12,4096\n',
    ],
    [
      'bad flag value',
      ['--policy', 'fifo', '--gpus-per-node', '8', '--workload', workload('1.0', 1)],
      /^goodput: error\[E_USAGE\]: sim: --gpus-per-node must be 1\.\.4/,
      '',
    ],
    [
      'negative jitter',
      ['--policy', 'fifo', '--submit-jitter=-5', '--workload', workload('1.0', 1)],
      /^goodput: error\[E_USAGE\]: sim: --submit-jitter must be a number >= 0, got '-5'/,
      '',
    ],
    [
      'a value starting with a dash',
      ['--policy', 'fifo', '--seed', '-1', '--workload', workload('1.0', 1)],
      /^goodput: error\[E_USAGE\]: sim: option '--seed' got a value starting with '-'; write it as --seed=VALUE\. See 'goodput sim --help'\.$/m,
      '',
    ],
    [
      'unknown policy knob',
      ['--policy', 'goodput', '--policy-param', 'rank_exp=3', '--workload', workload('1.0', 1)],
      /^goodput: error\[E_BAD_POLICY_PARAM\]: --policy-param rank_exp=3: 'rank_exp' is not a parameter of policy 'goodput'; valid: /,
      '',
    ],
  ];
  const names: Record<string, string> = {
    'missing column': 'nocol.csv',
    'malformed number': 'bad.csv',
    'unknown application': 'app.csv',
    'cluster too small': 'small.csv',
  };
  for (const [label, args, pattern, content] of errorCases) {
    it(`reports ${label} as one error line without a stack`, () => {
      const extra = content ? ['--workload', file(names[label]!, content)] : [];
      const r = run('sim', ...args, ...extra);
      assert.notEqual(r.status, 0);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, pattern);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  }

  it('reports a bad workload inside a directory from its worker', () => {
    const dir = join(tmp, 'baddir');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.csv'), 'name,time,application,num_replicas,batch_size\na,0,cifar10,1,128\n');
    writeFileSync(join(dir, 'b.csv'), 'name,time,application,num_replicas,batch_size\nb,0,cifar10,1,oops\n');
    const r = run('sim', '--policy', 'fifo', '--workload', dir);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^goodput: error\[E_INPUT\]: .*b\.csv:2: column 'batch_size': 'oops' is not a number\n$/);
    assert.ok(!existsSync(join(dir, 'out')));
  });
});
