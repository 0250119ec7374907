import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { LaunchRequest, ReplicaExit } from '../backend.js';
import { cpuSlots, parseGpuSelection, parseNvidiaSmi, resolveDevices } from './devices.js';
import { jobDirs, LocalBackend } from './local-backend.js';
import { isAlive } from './process-info.js';
import { pythonWith } from '../../../test-support/control/python.js';
import { backendScratch, launchRequestFixture } from '../testing/launch-request.js';

const { root, backends, pids } = backendScratch('goodput-backend-');

function backend(devices = cpuSlots(4)): { b: LocalBackend; exits: ReplicaExit[]; next: () => Promise<ReplicaExit> } {
  const b = new LocalBackend({ devices, poll_ms: 50 });
  backends.push(b);
  const exits: ReplicaExit[] = [];
  const waiters: ((e: ReplicaExit) => void)[] = [];
  b.onExit((e) => {
    const w = waiters.shift();
    if (w) w(e);
    else exits.push(e);
  });
  const next = () =>
    exits.length > 0 ? Promise.resolve(exits.shift()!) : new Promise<ReplicaExit>((r) => waiters.push(r));
  return { b, exits, next };
}

let n = 0;
function request(command: string[], devices = [0]): LaunchRequest {
  return launchRequestFixture(root, `job${n++}`, command, {
    env: { USER_VAR: 'x' },
    devices,
    nodes: devices.map(() => 0),
  });
}

const node = process.execPath;
const python = pythonWith(['os']);

/** A replica of `script` launched by a backend that is then closed (a server that went away), and a second backend. */
async function launchedByClosed(script: string) {
  const first = backend();
  const req = request([node, '-e', script]);
  const [r] = await first.b.launch(req);
  pids.push(r!.pid);
  first.b.close();
  return { req, r, second: backend() };
}

describe('LocalBackend', () => {
  it('passes arguments literally (no shell) and sets the contract environment per rank', async () => {
    const { b, next } = backend();
    const script =
      'console.log(JSON.stringify({argv: process.argv.slice(1), env: Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|CUDA_VISIBLE_DEVICES|USER_VAR)$|^GOODPUT_/.test(k)))}))';
    const evil = ['$(touch pwned)', '; rm -rf /', '`id`', 'a b', '*', '"q"', "'s'", '$HOME'];
    const req = request([node, '-e', script, '--', ...evil], [1, 3]);
    const launched = await b.launch(req);
    launched.forEach((r) => pids.push(r.pid));
    assert.deepEqual(
      launched.map((r) => [r.rank, r.device]),
      [
        [0, 1],
        [1, 3],
      ],
    );
    const codes = [await next(), await next()].map((e) => e.exit_code);
    assert.deepEqual(codes, [0, 0]);
    for (const rank of [0, 1]) {
      const text = readFileSync(join(jobDirs(req.job_dir).logs, `replica-${rank}.log`), 'utf8');
      const out = JSON.parse(text.split('\n')[1]!) as { argv: string[]; env: Record<string, string> };
      assert.deepEqual(out.argv, evil, 'node drops its own -- separator; the rest arrives verbatim');
      assert.equal(out.env.RANK, String(rank));
      assert.equal(out.env.LOCAL_RANK, String(rank));
      assert.equal(out.env.WORLD_SIZE, '2');
      assert.equal(out.env.LOCAL_WORLD_SIZE, '2');
      assert.equal(out.env.MASTER_ADDR, '127.0.0.1');
      assert.match(out.env.MASTER_PORT!, /^\d+$/);
      assert.equal(out.env.CUDA_VISIBLE_DEVICES, undefined, 'CPU slots get no CUDA_VISIBLE_DEVICES');
      assert.equal(out.env.GOODPUT_JOB_ID, req.job_id);
      assert.equal(out.env.GOODPUT_TOKEN, 'tok');
      assert.equal(out.env.GOODPUT_ATTEMPT, '0');
      assert.equal(out.env.GOODPUT_NUM_NODES, '1');
      assert.equal(out.env.GOODPUT_CHECKPOINT_DIR, jobDirs(req.job_dir).checkpoint);
      assert.equal(out.env.USER_VAR, 'x');
    }
    assert.equal(existsSync(join(root, 'pwned')), false);
  });

  it("shows each GPU rank the job's GPUs in rank order, its own at LOCAL_RANK, by nvidia-smi's numbering (as torchrun's workers see them)", async () => {
    const gpus = parseNvidiaSmi(
      [0, 1, 2, 3].map((i) => `${i}, GPU-${i}, NVIDIA ${i < 2 ? 'L40S' : 'H100 80GB HBM3'}, 46068`).join('\n'),
    );
    const { b, next } = backend(gpus);
    const script =
      'console.log(JSON.stringify([process.env.LOCAL_RANK, process.env.CUDA_VISIBLE_DEVICES, process.env.CUDA_DEVICE_ORDER]))';
    const req = request([node, '-e', script], [3, 1]);
    (await b.launch(req)).forEach((r) => pids.push(r.pid));
    assert.deepEqual([(await next()).exit_code, (await next()).exit_code], [0, 0]);
    const seen = [0, 1].map(
      (rank) =>
        JSON.parse(
          readFileSync(join(jobDirs(req.job_dir).logs, `replica-${rank}.log`), 'utf8').split('\n')[1]!,
        ) as string[],
    );
    // cuda.set_device(LOCAL_RANK) picks entry LOCAL_RANK: rank 0 GPU 3, rank 1 GPU 1.
    assert.deepEqual(seen, [
      ['0', '3,1', 'PCI_BUS_ID'],
      ['1', '3,1', 'PCI_BUS_ID'],
    ]);
  });

  it('maps exits: code, SIGTERM-checkpoint 143, SIGKILL 137; kills the whole process group', async () => {
    const { b, next } = backend();
    const [r1] = await b.launch(request([node, '-e', 'process.exit(7)']));
    pids.push(r1!.pid);
    assert.equal((await next()).exit_code, 7);
    const ckpt =
      "process.on('SIGTERM', () => { console.log('saving'); process.exit(143); }); setInterval(() => {}, 1000); console.log('ready')";
    const req = request([node, '-e', ckpt]);
    const [r2] = await b.launch(req);
    pids.push(r2!.pid);
    await waitFile(join(jobDirs(req.job_dir).logs, 'replica-0.log'), 'ready');
    b.signal({ ...req, rank: 0, node: 'local', launch_id: '', pid: r2!.pid, proc_start: r2!.proc_start }, 'SIGTERM');
    assert.equal((await next()).exit_code, 143);
    // A replica that spawns a grandchild: SIGKILL to the group takes both.
    const req3 = request(['/bin/sh', '-c', 'sleep 30 & echo $! > "$0"; wait', join(root, 'grandchild.pid')]);
    const [r3] = await b.launch(req3);
    pids.push(r3!.pid);
    await waitFile(join(root, 'grandchild.pid'), '');
    const grandchild = Number(readFileSync(join(root, 'grandchild.pid'), 'utf8'));
    b.signal({ ...req3, rank: 0, node: 'local', launch_id: '', pid: r3!.pid, proc_start: r3!.proc_start }, 'SIGKILL');
    assert.equal((await next()).exit_code, 137);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(isAlive(grandchild, ''), false, 'grandchild was killed with its group');
  });

  it('adopts a replica started by another backend and reports its recorded exit code', async () => {
    const { req, r, second } = await launchedByClosed('setTimeout(() => process.exit(5), 600)');
    assert.equal(
      await second.b.adopt({ ...req, rank: 0, node: 'local', launch_id: '', pid: r!.pid, proc_start: r!.proc_start }),
      'alive',
    );
    assert.deepEqual(await second.next(), { job_id: req.job_id, attempt: 0, rank: 0, exit_code: 5 });
    // Already gone: the exit file answers at once; a wrong start time means "not ours".
    assert.equal(
      await second.b.adopt({ ...req, rank: 0, node: 'local', launch_id: '', pid: r!.pid, proc_start: r!.proc_start }),
      5,
    );
  });

  it("a closed backend leaves alone a later backend's relaunch of the same attempt when its own replica exits", async () => {
    // A restarted server in the same process abandons the old launch and launches the attempt
    // again; the old backend's exit handling swept that relaunch (found under load: exit 137).
    const { req, r: old, second } = await launchedByClosed('setInterval(() => {}, 1000)');
    const [relaunch] = await second.b.launch(req);
    pids.push(relaunch!.pid);
    process.kill(-old!.pid, 'SIGKILL');
    while (isAlive(old!.pid, old!.proc_start)) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // the old backend's exit handling has run
    assert.ok(isAlive(relaunch!.pid, relaunch!.proc_start), 'the relaunch survives the old replica');
    process.kill(-relaunch!.pid, 'SIGKILL');
    assert.equal((await second.next()).exit_code, 137);
  });

  it(
    'hears every replica that exits while launch still waits for its exec (exit 127 at once)',
    { timeout: 60_000 },
    async () => {
      const { b, next } = backend();
      // The listener is attached before launch awaits anything; before the fix a share of these
      // exits (those that ended during the wait for exec) were never reported.
      const n = 40;
      for (let i = 0; i < n; i++) {
        const [r] = await b.launch(request(['./nonexistent.sh']));
        pids.push(r!.pid);
      }
      const codes: number[] = [];
      for (let i = 0; i < n; i++) {
        codes.push(
          await Promise.race([
            next().then((e) => e.exit_code),
            new Promise<number>((r) => setTimeout(() => r(-1), 10_000)),
          ]),
        );
      }
      assert.deepEqual(codes, Array(n).fill(127));
    },
  );

  it('probes a replica without watching it: alive, then its recorded exit code', async () => {
    const { b, next } = backend();
    const req = request([node, '-e', 'setTimeout(() => process.exit(6), 400)']);
    const [r] = await b.launch(req);
    pids.push(r!.pid);
    const ref = { ...req, rank: 0, node: r!.node, launch_id: r!.launch_id, pid: r!.pid, proc_start: r!.proc_start };
    assert.equal(b.probe(ref), 'alive');
    assert.equal((await next()).exit_code, 6);
    assert.equal(b.probe(ref), 6, 'the exit file answers');
    assert.equal(b.probe(ref), 6, 'idempotent');
    assert.equal(b.probe({ ...ref, attempt: 9 }), 137, 'no exit file: lost');
    assert.equal(
      b.probe({ ...ref, attempt: 9, pid: 0, proc_start: '' }),
      137,
      'a bogus pid is lost, and never signals our own group',
    );
  });

  it('draws MASTER_PORT from the port range when one is set', async () => {
    const { b, next } = backend();
    const req = {
      ...request([node, '-e', 'console.log("port=" + process.env.MASTER_PORT)']),
      port_range: { first: 29650, last: 29659 },
    };
    await b.launch(req);
    assert.equal((await next()).exit_code, 0);
    const port = Number(/port=(\d+)/.exec(readFileSync(join(jobDirs(req.job_dir).logs, 'replica-0.log'), 'utf8'))?.[1]);
    assert.ok(port >= 29650 && port <= 29659, `MASTER_PORT ${port} in 29650-29659`);
  });

  it(
    "shows a Python replica's prints in its log as they happen, also from a server whose environment does not ask for it",
    { skip: python ? undefined : 'no python3' },
    async (t) => {
      const saved = process.env.PYTHONUNBUFFERED;
      delete process.env.PYTHONUNBUFFERED;
      t.after(() => (saved === undefined ? undefined : (process.env.PYTHONUNBUFFERED = saved)));
      const { b, next } = backend();
      const req = request([python!, '-c', 'import time\nprint("epoch 0 done")\ntime.sleep(60)']);
      const [replica] = await b.launch(req);
      pids.push(replica!.pid);
      const log = join(jobDirs(req.job_dir).logs, 'replica-0.log');
      const deadline = Date.now() + 20_000;
      while (!readFileSync(log, 'utf8').includes('epoch 0 done') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      assert.match(
        readFileSync(log, 'utf8'),
        /epoch 0 done/,
        'the print is in the log while the replica still runs (a block buffer would hold it until exit)',
      );
      b.signal(
        { ...req, rank: 0, node: 'local', launch_id: '', pid: replica!.pid, proc_start: replica!.proc_start },
        'SIGKILL',
      );
      assert.equal((await next()).exit_code, 137);
      const user = request([python!, '-c', 'import os\nprint(repr(os.environ.get("PYTHONUNBUFFERED")))']);
      await b.launch({ ...user, env: { PYTHONUNBUFFERED: '' } });
      await next();
      assert.match(
        readFileSync(join(jobDirs(user.job_dir).logs, 'replica-0.log'), 'utf8'),
        /^''$/m,
        "the job's own setting wins",
      );
    },
  );

  it('fails a launch whose working directory does not exist with E_LAUNCH, blaming the directory, not the shell', async () => {
    const { b } = backend();
    const missing = join(root, 'missing');
    await assert.rejects(
      b.launch({ ...request([node, '-e', '0']), workdir: missing }),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, 'E_LAUNCH');
        assert.equal(
          e.message,
          `cannot start ${node} in ${missing}: the workdir does not exist on this machine (removed or renamed since the job was submitted?)`,
        );
        return true;
      },
    );
    const file = join(root, 'a-file');
    writeFileSync(file, '');
    await assert.rejects(
      b.launch({ ...request([node, '-e', '0']), workdir: file }),
      /: the workdir is not a directory$/,
    );
  });
});

describe('device discovery', () => {
  it('parses nvidia-smi csv and selections', () => {
    const text = '0, GPU-aaaa, NVIDIA H100 80GB HBM3, 81559\n1, GPU-bbbb, NVIDIA H100 80GB HBM3, 81559\n';
    const gpus = parseNvidiaSmi(text);
    assert.deepEqual(gpus[1], {
      index: 1,
      kind: 'gpu',
      uuid: 'GPU-bbbb',
      name: 'NVIDIA H100 80GB HBM3',
      memory_mib: 81559,
    });
    assert.deepEqual(parseGpuSelection('0,1'), [0, 1]);
    assert.equal(parseGpuSelection('2'), 2);
    assert.throws(() => parseGpuSelection('x'), /--gpus/);
    assert.deepEqual(parseGpuSelection('3,'), [3], 'a trailing comma makes one index a list');
    assert.throws(() => parseGpuSelection('0'), /--gpus 0 selects no GPU .*--gpus 0, \(a list of one index\)/);
    assert.deepEqual(
      resolveDevices(
        [1],
        undefined,
        () => {},
        () => gpus,
      ).map((g) => g.uuid),
      ['GPU-bbbb'],
    );
    assert.throws(
      () =>
        resolveDevices(
          3,
          undefined,
          () => {},
          () => gpus,
        ),
      /only 2/,
    );
    const warnings: string[] = [];
    assert.deepEqual(
      resolveDevices(
        'auto',
        undefined,
        (w) => warnings.push(w),
        () => [],
      ).map((d) => d.kind),
      ['cpu'],
    );
    assert.equal(warnings.length, 1);
    assert.equal(
      resolveDevices(
        'auto',
        3,
        () => {},
        () => gpus,
      ).length,
      3,
    );
  });
});

async function waitFile(path: string, text: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(path) && readFileSync(path, 'utf8').includes(text) && readFileSync(path, 'utf8').length > 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${path}`);
}
