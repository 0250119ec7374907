import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { LaunchRequest, ReplicaExit } from '../backend.js';
import { runFileBase } from '../run-files.js';
import { cpuSlots } from './devices.js';
import { LocalBackend } from './local-backend.js';
import { readLogDrop } from './log-writer.js';
import { isAlive, killGroup } from './process-info.js';
import { backendScratch, launchRequestFixture } from '../testing/launch-request.js';

const { root, backends, pids } = backendScratch('goodput-log-cap-');

const CAP = 64 << 10;
let n = 0;
function request(command: string[]): LaunchRequest {
  return launchRequestFixture(root, `cap${n++}`, command);
}

function backend(): { b: LocalBackend; next: () => Promise<ReplicaExit> } {
  const b = new LocalBackend({ devices: cpuSlots(1), poll_ms: 50, log_limit_bytes: CAP });
  backends.push(b);
  const exits: ReplicaExit[] = [];
  const waiters: ((e: ReplicaExit) => void)[] = [];
  b.onExit((e) => (waiters.length > 0 ? waiters.shift()!(e) : exits.push(e)));
  return {
    b,
    next: () => (exits.length > 0 ? Promise.resolve(exits.shift()!) : new Promise<ReplicaExit>((r) => waiters.push(r))),
  };
}

/** Node writes `lines` numbered lines of about 100 bytes, as fast as the pipe takes them. */
const writer = (lines: number) => [
  process.execPath,
  '-e',
  `for (let i = 0; i < ${lines}; i++) process.stdout.write(\`line \${i} \${'x'.repeat(90)}\\n\`)`,
];

describe('the log cap at write time (issue 47 item 6)', () => {
  it('keeps a log that is written 3 MB at full speed under 2x its cap, losing no line it does not count', async () => {
    const { b, next } = backend();
    const req = request(writer(30_000));
    const [replica] = await b.launch(req);
    pids.push(replica!.pid);
    let max = 0;
    const sampler = setInterval(() => {
      if (existsSync(replica!.log_path)) max = Math.max(max, statSync(replica!.log_path).size);
    }, 2);
    const exit = await next();
    clearInterval(sampler);
    max = Math.max(max, statSync(replica!.log_path).size);
    assert.equal(exit.exit_code, 0);
    assert.ok(max <= 2 * CAP, `largest size seen ${max} bytes, cap ${CAP}`);
    const text = readFileSync(replica!.log_path, 'utf8');
    const lines = text.split('\n').filter((l) => l.startsWith('line '));
    // The newest lines are all there, in order, up to the last one written.
    const numbers = lines.map((l) => Number(l.split(' ')[1]));
    assert.equal(numbers.at(-1), 29_999);
    numbers.forEach((k, i) => i === 0 || assert.equal(k, numbers[i - 1]! + 1));
    // Everything else is counted as dropped: header line, first (cut) line, and the count add up.
    const drop = readLogDrop(runFileBase(req.job_dir, 0, 0));
    assert.ok(drop !== undefined && drop.bytes > 2_500_000, JSON.stringify(drop));
    assert.match(
      text.split('\n')[0]!,
      new RegExp(`^\\[goodput: ${drop.bytes} bytes \\(${drop.lines} lines\\) of this log were dropped`),
    );
    // Dropped: the attempt's header line and every line before the first kept one (a line cut in
    // two keeps its line feed, so it is not counted).
    const whole = text.split('\n')[1]!.startsWith('line ');
    assert.equal(drop.lines, numbers[0]! + (whole ? 1 : 0));
  });

  it("the writer outlives a SIGKILL of the replica's group and writes what it was sent", async () => {
    const { b, next } = backend();
    const req = request(['sh', '-c', 'echo before; sleep 30']);
    const [replica] = await b.launch(req);
    pids.push(replica!.pid);
    await new Promise((r) => setTimeout(r, 300));
    killGroup(replica!.pid, 'SIGKILL');
    await next();
    await new Promise((r) => setTimeout(r, 300));
    assert.match(readFileSync(replica!.log_path, 'utf8'), /^before$/m);
    assert.ok(
      existsSync(runFileBase(req.job_dir, 0, 0) + '.log-done'),
      'the writer ended once the pipe had no writer left',
    );
    assert.equal(isAlive(replica!.pid, ''), false);
  });
});
