import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ReplicaExit } from '../backend.js';
import { cpuSlots } from './devices.js';
import { LocalBackend } from './local-backend.js';
import { markedProcesses } from './containment.js';
import { launchRequestFixture } from '../testing/launch-request.js';

const root = mkdtempSync(join(tmpdir(), 'goodput-contain-'));
const escaped: number[] = [];
const keepAlive = setInterval(() => {}, 1000);
after(() => {
  clearInterval(keepAlive);
  for (const pid of escaped) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone: contained
    }
  }
  rmSync(root, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
};

describe("containment of a replica's processes", () => {
  it('ends a setsid (new session) child and a double-forked one when the replica exits', async () => {
    const b = new LocalBackend({ devices: cpuSlots(2), poll_ms: 50 });
    const exits: ReplicaExit[] = [];
    b.onExit((e) => exits.push(e));
    const files = [join(root, 'setsid.pid'), join(root, 'double.pid')];
    // One child in a session of its own, one re-parented after its parent exits; then the replica ends.
    const script = `setsid sh -c 'echo $$ > ${files[0]}; exec sleep 300' & (sh -c 'echo $$ > ${files[1]}; exec sleep 300' &) ; while [ ! -s ${files[0]} ] || [ ! -s ${files[1]} ]; do sleep 0.05; done; exit 0`;
    const req = launchRequestFixture(root, 'contain1', ['sh', '-c', script]);
    const launched = await b.launch(req);
    for (let i = 0; i < 200 && exits.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(exits[0]?.exit_code, 0);
    const pids = files.map((f) => Number(readFileSync(f, 'utf8')));
    escaped.push(...pids);
    for (let i = 0; i < 40 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(pids.filter(alive), [], 'no process of the replica outlives it');
    assert.deepEqual(markedProcesses('contain1', 0), []);
    assert.ok(launched.length === 1 && existsSync(files[0]!));
    b.close();
  });

  it("leaves alone another server's replica that carries the same job id and attempt", async () => {
    // Two servers on one machine (two users, or a `goodput profile` run beside `goodput up`): job
    // ids are unique per store only.
    const [mine, theirs] = [new LocalBackend({ devices: cpuSlots(1) }), new LocalBackend({ devices: cpuSlots(1) })];
    const sleeper = ['sh', '-c', 'exec sleep 300'];
    const [a] = await mine.launch(launchRequestFixture(join(root, 'mine'), 'same', sleeper));
    const [b] = await theirs.launch(launchRequestFixture(join(root, 'theirs'), 'same', sleeper));
    escaped.push(a!.pid, b!.pid);
    await mine.abandon('same', join(root, 'mine', 'same'), 0);
    for (let i = 0; i < 40 && alive(a!.pid); i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(alive(a!.pid), false, 'its own replica is ended');
    assert.equal(alive(b!.pid), true, "the other server's replica of the same id runs on");
    mine.close();
    theirs.close();
  });
});
