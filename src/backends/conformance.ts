/**
 * The conformance suite every Backend must pass: what backend.ts promises (inventory, the
 * contract's environment per rank, argv passed literally, exits reported once with their codes,
 * SIGTERM reaching the program, an attempt no longer held once it runs, new work accepted
 * (launchRefusal), adoption by a new instance after a server restart, abandoning an unrecorded
 * launch), checked with real processes. Call `runBackendConformance(name, setup)` from a
 * `*.test.ts` file; it registers node:test cases. Test support, never shipped code.
 */
import assert from 'node:assert/strict';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Backend, LaunchRequest, ReplicaExit, ReplicaRef } from './backend.js';

/** What a suite run needs from one implementation. */
export interface BackendFixture {
  /** A new backend instance (a second call = the same cluster seen by a restarted server). */
  make(): Backend;
  /** Node index per replica of a two-replica attempt (across two nodes where the backend has them). */
  two_nodes: readonly number[];
  /** Device index per replica of that attempt. */
  two_devices: readonly number[];
  /** Upper bound for one replica to start and end (ms). */
  timeout_ms: number;
  /** Releases everything the fixture made. */
  close(): Promise<void>;
}

/** Prints argv and the contract's variables as JSON into the checkpoint dir, then exits with $EXIT_CODE. */
const DUMP =
  `const fs = require('fs');
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => ` +
  `/^(RANK|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|CUDA_VISIBLE_DEVICES|USER_VAR|GROUP_RANK|ROLE_RANK|ROLE_WORLD_SIZE|OMP_NUM_THREADS)$|^GOODPUT_|^TORCHELASTIC_/.test(k)));
fs.writeFileSync(process.env.GOODPUT_CHECKPOINT_DIR + '/env-' + process.env.RANK + '.json', JSON.stringify({ argv: ` +
  `process.argv.slice(1), env }));
process.exit(Number(process.env['EXIT_' + process.env.RANK] ?? 0));`;
/** Waits for SIGTERM, then exits 143 like a checkpointing trainer; touches a heartbeat file meanwhile. */
const TRAINER = `const fs = require('fs'); const beat = process.env.GOODPUT_CHECKPOINT_DIR + '/beat-' + process.env.RANK;
process.on('SIGTERM', () => { fs.writeFileSync(beat + '.term', 'x'); process.exit(143); });
setInterval(() => fs.writeFileSync(beat, String(Date.now())), 100);
setTimeout(() => process.exit(Number(process.env.EXIT_LATER ?? 0)), Number(process.env.RUN_MS ?? 600000));`;

/**
 * What a backend does not support, each with the reason: its case is skipped with it.
 * `environment`: job environments (venv/conda, env_setup), which need real processes;
 * `subprocesses`: programs that fork processes of their own (the 'stops' case).
 */
export interface Unsupported {
  environment?: string;
  subprocesses?: string;
}

/**
 * Forks a helper process (as a DataLoader worker is forked) that heart-beats and records a
 * SIGTERM of its own; on SIGTERM the main process waits, records whether the helper is still
 * alive and untouched, and exits 143.
 */
const FAMILY =
  `const fs = require('fs'); const { spawn } = require('child_process');
const base = process.env.GOODPUT_CHECKPOINT_DIR + '/family-' + process.env.RANK;
const helper = "const fs = require('fs'); process.on('SIGTERM', () => { fs.writeFileSync(process.argv[1] + '.helper-term', 'x'); ` +
  `process.exit(1); }); setInterval(() => fs.writeFileSync(process.argv[1] + '.helper-beat', String(Date.now())), 100);";
const child = spawn(process.execPath, ['-e', helper, base], { stdio: 'ignore' });
process.on('SIGTERM', () => setTimeout(() => {
  let alive = true; try { process.kill(child.pid, 0); } catch { alive = false; }
  fs.writeFileSync(base + '.main', JSON.stringify({ helper_alive: alive, helper_term: fs.existsSync(base + '.helper-term') }));
  process.exit(143);
}, 800));
setInterval(() => fs.writeFileSync(base + '.beat', 'x'), 100);`;

/** Registers the suite for `name`. `skip` (a reason) skips it with that message. */
export function runBackendConformance(
  name: string,
  setup: () => Promise<BackendFixture>,
  skip?: string,
  unsupported: Unsupported = {},
): void {
  describe(`Backend conformance: ${name}`, { skip }, () => {
    let fx: BackendFixture;
    let root: string;
    const made: Backend[] = [];
    let n = 0;
    // Replicas are detached by design; keep this test's event loop alive while waiting on them.
    const keepAlive = setInterval(() => {}, 1000);
    before(async () => {
      fx = await setup();
      root = mkdtempSync(join(tmpdir(), 'goodput-conformance-'));
    });
    after(async () => {
      clearInterval(keepAlive);
      for (const b of made) b.close();
      await fx?.close();
      rmSync(root, { recursive: true, force: true });
    });

    const open = async () => {
      const b = fx.make();
      made.push(b);
      await b.refresh();
      const exits: ReplicaExit[] = [];
      b.onExit((e) => exits.push(e));
      return { b, exits };
    };
    const request = (script: string, env: Record<string, string> = {}, args: string[] = []): LaunchRequest => {
      const id = `job${n++}`;
      return {
        job_id: id,
        attempt: 0,
        command: [process.execPath, '-e', script, '--', ...args],
        workdir: root,
        env: { USER_VAR: 'x', ...env },
        devices: fx.two_devices,
        nodes: fx.two_nodes,
        num_nodes: new Set(fx.two_nodes).size,
        api_url: 'http://127.0.0.1:1',
        token: 'tok',
        job_dir: join(root, id),
      };
    };
    const until = async <T>(what: string, f: () => T | undefined): Promise<T> => {
      const deadline = Date.now() + fx.timeout_ms;
      for (;;) {
        const v = f();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const codes = (exits: ReplicaExit[], job_id: string, count: number) =>
      until(`${count} exit(s) of ${job_id}`, () => {
        const mine = exits.filter((e) => e.job_id === job_id).sort((a, b) => a.rank - b.rank);
        return mine.length >= count ? mine.map((e) => e.exit_code) : undefined;
      });

    it('reports an inventory of nodes with devices', async () => {
      const { b } = await open();
      const nodes = b.nodes();
      assert.ok(nodes.length >= 1);
      assert.equal(new Set(nodes.map((x) => x.name)).size, nodes.length, 'node names are unique');
      for (const node of nodes)
        assert.ok(node.usable >= 0 && node.usable <= node.devices.length, `${node.name}: usable within devices`);
      for (const i of fx.two_nodes) assert.ok(nodes[i]!.usable > 0, 'the fixture places replicas on usable nodes');
    });

    it('starts each rank with the contract environment and literal argv; reports each exit once', async () => {
      const { b, exits } = await open();
      const evil = ['$(touch pwned)', "'s'", 'a b', '*', '$HOME'];
      const req = { ...request(DUMP, { EXIT_1: '7' }, evil), gpu_type: 'conformance-type' };
      process.env.GOODPUT_SERVER_ONLY = 'not for replicas';
      const launched = await b.launch(req).finally(() => delete process.env.GOODPUT_SERVER_ONLY);
      assert.deepEqual(
        launched.map((r) => r.rank),
        [0, 1],
      );
      assert.deepEqual(await codes(exits, req.job_id, 2), [0, 7]);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(exits.filter((e) => e.job_id === req.job_id).length, 2, 'each exit is reported once');
      const ports = new Set<string>();
      const gpus = new Map<number, { node: number; visible: string[]; own: string }>();
      for (const rank of [0, 1]) {
        const out = JSON.parse(readFileSync(join(req.job_dir, 'checkpoint', `env-${rank}.json`), 'utf8')) as {
          argv: string[];
          env: Record<string, string>;
        };
        assert.deepEqual(out.argv, evil);
        const e = out.env;
        assert.equal(e.RANK, String(rank));
        assert.equal(e.WORLD_SIZE, '2');
        const local = new Set(fx.two_nodes).size === 2 ? 0 : rank;
        assert.equal(e.LOCAL_RANK, String(local));
        assert.equal(e.LOCAL_WORLD_SIZE, new Set(fx.two_nodes).size === 2 ? '1' : '2');
        // As torchrun sets them (docs/contract.md).
        assert.equal(e.GROUP_RANK, new Set(fx.two_nodes).size === 2 ? String(rank) : '0');
        assert.equal(e.ROLE_RANK, String(rank));
        assert.equal(e.ROLE_WORLD_SIZE, '2');
        assert.equal(e.TORCHELASTIC_RUN_ID, req.job_id);
        assert.equal(e.TORCHELASTIC_RESTART_COUNT, '0');
        assert.equal(e.TORCHELASTIC_USE_AGENT_STORE, 'False');
        if (process.env.OMP_NUM_THREADS === undefined)
          assert.equal(e.OMP_NUM_THREADS, new Set(fx.two_nodes).size === 2 ? undefined : '1');
        assert.equal(
          Object.keys(e).some((k) => k.startsWith('GOODPUT_RANKS')),
          false,
          'no helper variables are left',
        );
        assert.equal(e.MASTER_ADDR, b.nodes()[fx.two_nodes[0]!]!.address);
        ports.add(e.MASTER_PORT!);
        assert.equal(e.GOODPUT_JOB_ID, req.job_id);
        assert.equal(e.GOODPUT_TOKEN, 'tok');
        assert.equal(e.GOODPUT_ATTEMPT, '0');
        assert.equal(e.GOODPUT_NUM_NODES, String(new Set(fx.two_nodes).size));
        assert.equal(e.GOODPUT_GPU_TYPE, 'conformance-type', 'the launch request names the GPU type of its devices');
        assert.equal(e.GOODPUT_CHECKPOINT_DIR, join(req.job_dir, 'checkpoint'));
        assert.equal(e.USER_VAR, 'x');
        assert.equal(e.GOODPUT_SERVER_ONLY, undefined, "the server's own GOODPUT_* variables do not reach replicas");
        const kind = b.nodes()[fx.two_nodes[rank]!]!.devices[0]!.kind;
        if (kind === 'cpu') assert.equal(e.CUDA_VISIBLE_DEVICES, undefined);
        else {
          // As torchrun's workers see their node: the job's GPUs there, the rank's own at LOCAL_RANK.
          const visible = e.CUDA_VISIBLE_DEVICES!.split(',');
          assert.ok(
            visible.every((d) => /^\d+$/.test(d)),
            e.CUDA_VISIBLE_DEVICES,
          );
          assert.equal(
            visible.length,
            Number(e.LOCAL_WORLD_SIZE),
            `CUDA_VISIBLE_DEVICES=${e.CUDA_VISIBLE_DEVICES} lists the job's GPUs on the rank's node`,
          );
          gpus.set(rank, { node: fx.two_nodes[rank]!, visible, own: visible[local]! });
        }
      }
      assert.equal(ports.size, 1, 'one MASTER_PORT for all ranks');
      const sameNode = gpus.size === 2 && gpus.get(0)!.node === gpus.get(1)!.node;
      if (sameNode) {
        assert.deepEqual(gpus.get(0)!.visible, gpus.get(1)!.visible, 'ranks on one node see the same list');
        assert.notEqual(gpus.get(0)!.own, gpus.get(1)!.own, 'cuda.set_device(LOCAL_RANK) gives each rank its own GPU');
      }
      assert.equal(existsSync(join(root, 'pwned')), false);
      assert.ok(
        readFileSync(launched[0]!.log_path, 'utf8').includes('goodput: attempt 0'),
        'the log carries a header per attempt',
      );
    });

    it('delivers SIGTERM to the program (exit 143) and SIGKILL ends it', async () => {
      const { b, exits } = await open();
      const req = request(TRAINER);
      const launched = await b.launch(req);
      await until('the replicas to run', () =>
        existsSync(join(req.job_dir, 'checkpoint', 'beat-0')) && existsSync(join(req.job_dir, 'checkpoint', 'beat-1'))
          ? true
          : undefined,
      );
      // Its processes run: the backend no longer says the cluster holds the attempt.
      await until('held() to say the attempt runs', () =>
        b.held?.(launched[0]!.launch_id) === undefined ? true : undefined,
      );
      assert.equal(
        b.refuseSpec?.(req),
        undefined,
        'an ordinary spec (argv with quotes and $, a plain variable) is carried as given',
      );
      await b.refresh();
      assert.equal(
        b.launchRefusal?.(),
        undefined,
        'a cluster that just started an attempt accepts new work: no running job is kept from a rescale',
      );
      for (const r of launched) b.signal(refOf(req, r), 'SIGTERM');
      assert.deepEqual(await codes(exits, req.job_id, 2), [143, 143]);
      const req2 = request(
        `process.on('SIGTERM', () => {}); ${TRAINER.split('\n')[0]} setInterval(() => fs.writeFileSync(beat, 'x'), 100);`,
      );
      const l2 = await b.launch(req2);
      await until('the replicas to run', () =>
        existsSync(join(req2.job_dir, 'checkpoint', 'beat-0')) ? true : undefined,
      );
      for (const r of l2) b.signal(refOf(req2, r), 'SIGKILL');
      const killed = await codes(exits, req2.job_id, 2);
      assert.ok(
        killed.every((c) => c !== 0 && c !== 143),
        `killed replicas end with a failure code, got ${killed.join(',')}`,
      );
    });

    it(
      'stops: SIGTERM reaches the main process alone, the rest of the replica is killed once it exited',
      { skip: unsupported.subprocesses },
      async () => {
        const { b, exits } = await open();
        const req = request(FAMILY);
        const launched = await b.launch(req);
        const file = (rank: number, suffix: string) => join(req.job_dir, 'checkpoint', `family-${rank}.${suffix}`);
        await until('the replicas and their helpers to run', () =>
          [0, 1].every((r) => existsSync(file(r, 'beat')) && existsSync(file(r, 'helper-beat'))) ? true : undefined,
        );
        for (const r of launched) b.signal(refOf(req, r), 'SIGTERM');
        assert.deepEqual(await codes(exits, req.job_id, 2), [143, 143]);
        for (const rank of [0, 1]) {
          const seen = JSON.parse(readFileSync(file(rank, 'main'), 'utf8')) as {
            helper_alive: boolean;
            helper_term: boolean;
          };
          assert.deepEqual(
            seen,
            { helper_alive: true, helper_term: false },
            `rank ${rank}: the helper neither got SIGTERM nor died while the main process saved`,
          );
        }
        // The helper outlives nothing: once the main process exited, the replica's rest is killed.
        await until('the helpers to stop', () => {
          const t = [0, 1].map((r) => statSync(file(r, 'helper-beat')).mtimeMs);
          return t.every((ms) => Date.now() - ms > 1500) ? true : undefined;
        });
      },
    );

    it('lets a new instance adopt running replicas and report their recorded exits', async () => {
      const first = await open();
      const req = request(TRAINER, { RUN_MS: '4000', EXIT_LATER: '5' });
      const launched = await first.b.launch(req);
      first.b.close();
      const second = await open();
      for (const r of launched) assert.equal(await second.b.adopt(refOf(req, r)), 'alive');
      assert.deepEqual(await codes(second.exits, req.job_id, 2), [5, 5]);
      const third = await open();
      assert.equal(
        await third.b.adopt(refOf(req, launched[0]!)),
        5,
        'an ended replica answers its recorded code at once',
      );
    });

    it(
      "runs every rank in the job's environment: its venv first on PATH, env_setup once per host",
      { skip: unsupported.environment },
      async () => {
        const { b, exits } = await open();
        // A stand-in venv whose python3 says where it runs from (a real one needs no more: bin/ first on PATH).
        const venv = join(root, `venv${n}`);
        mkdirSync(join(venv, 'bin'), { recursive: true });
        writeFileSync(
          join(venv, 'bin', 'python3'),
          '#!/bin/sh\necho "venv python3 $VIRTUAL_ENV" > "$GOODPUT_CHECKPOINT_DIR/python-$RANK"\n',
        );
        chmodSync(join(venv, 'bin', 'python3'), 0o755);
        const setups = join(root, `setups${n}`);
        mkdirSync(setups);
        const req = {
          ...request(''),
          command: ['python3'],
          environment: { venv, env_setup: `mktemp -p ${setups} ran.XXXXXX` },
        };
        await b.launch(req);
        assert.deepEqual(await codes(exits, req.job_id, 2), [0, 0]);
        for (const rank of [0, 1])
          assert.equal(
            readFileSync(join(req.job_dir, 'checkpoint', `python-${rank}`), 'utf8'),
            `venv python3 ${venv}\n`,
          );
        const hosts = new Set(fx.two_nodes.map((i) => b.nodes()[i]!.address)).size;
        assert.ok(
          readdirSync(setups).length >= 1 && readdirSync(setups).length <= hosts,
          `env_setup ran ${readdirSync(setups).length} time(s) for 2 ranks on ${hosts} host(s)`,
        );
      },
    );

    it('abandon ends what an unrecorded launch left running', async () => {
      const first = await open();
      const req = request(TRAINER);
      await first.b.launch(req);
      first.b.close();
      const beat = join(req.job_dir, 'checkpoint', 'beat-0');
      await until('the orphan to run', () => (existsSync(beat) ? true : undefined));
      const second = await open();
      await second.b.abandon(req.job_id, req.job_dir, req.attempt);
      await new Promise((r) => setTimeout(r, 500));
      const t = statSync(beat).mtimeMs;
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(statSync(beat).mtimeMs, t, 'the orphan no longer runs');
    });
  });
}

function refOf(
  req: LaunchRequest,
  r: { rank: number; node: string; launch_id: string; pid: number; proc_start: string },
): ReplicaRef {
  return {
    job_id: req.job_id,
    attempt: req.attempt,
    rank: r.rank,
    node: r.node,
    launch_id: r.launch_id,
    pid: r.pid,
    proc_start: r.proc_start,
    job_dir: req.job_dir,
  };
}
