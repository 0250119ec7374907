import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseGpuSelection, resolveDevices } from '../../backends/local/devices.js';
import { defaultDataDir } from '../../client/connect.js';
import { GoodputError } from '../../core/errors.js';
import { DEFAULT_POLICY, dataFiles, startServer } from '../../server/server.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';

const flags = {
  'data-dir': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  gpus: { type: 'string' },
  'cpu-slots': { type: 'string' },
  policy: { type: 'string' },
  'policy-param': { type: 'string', multiple: true },
  'interval-s': { type: 'string' },
  'grace-s': { type: 'string' },
  detach: { type: 'boolean' },
} as const;

export const upCommand: CliCommand = {
  name: 'up',
  summary: 'Start the goodput server (control plane) on this machine',
  help: `Usage: goodput up [options]

  --data-dir DIR     store, logs and checkpoints (default: $GOODPUT_DATA_DIR or ~/.goodput)
  --port N           HTTP port on --host (default 7878; 0 = any free port)
  --host H           listen address (default 127.0.0.1)
  --gpus SEL         auto (default: every GPU nvidia-smi lists), N (the first N) or 0,1,...
  --cpu-slots N      use N CPU slots instead of GPUs (machines without GPUs, CI, demos)
  --policy NAME      scheduling policy (default goodput)
  --policy-param K=V set a tunable knob of the policy (repeatable; goodput's knobs are listed
                     in docs/policy.md), e.g. --policy-param rank_exponent=3
  --interval-s S     seconds between scheduling rounds (default 60; rounds also run on
                     submit and when a job ends)
  --grace-s S        seconds replicas get to checkpoint after SIGTERM (default 30)
  --detach           run in the background (log in DIR/server.log) and return

The admin token is written to DIR/admin-token (mode 0600) at first start. Stopping the server
leaves running jobs alone; the next 'goodput up' re-adopts them.`,
  async run(argv) {
    const { values } = parseFlags('up', argv, flags, false);
    const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
    const port = numberFlag('up', 'port', values.port, 7878, { integer: true, min: 0 });
    const interval_s = numberFlag('up', 'interval-s', values['interval-s'], 60, { min: 0.1 });
    const grace_s = numberFlag('up', 'grace-s', values['grace-s'], 30, { min: 0 });
    const cpu = values['cpu-slots'] === undefined ? undefined : numberFlag('up', 'cpu-slots', values['cpu-slots'], 1, { integer: true, min: 1 });
    const selection = parseGpuSelection(values.gpus ?? 'auto');
    if (values.detach) return detach(argv, data_dir);
    const log = (line: string) => console.error(`${new Date().toISOString()} ${line}`);
    const devices = resolveDevices(selection, cpu, log);
    const server = await startServer({ data_dir, host: values.host ?? '127.0.0.1', port, devices, policy: values.policy ?? DEFAULT_POLICY, policy_params: values['policy-param'], interval_s, grace_s, log });
    log(`goodput server on ${server.url}: policy ${server.policy}, ${devices.length} ${devices[0]?.kind === 'gpu' ? 'GPU(s)' : 'CPU slot(s)'}, data in ${data_dir}`);
    log(`admin token: ${dataFiles(data_dir).adminToken}`);
    await new Promise<void>((done) => {
      const stop = (signal: string) => {
        log(`${signal}: stopping the server; running jobs keep running and are re-adopted by the next 'goodput up'`);
        void server.close().then(done, done);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
    return 0;
  },
};

/** Starts `goodput up` (same flags, without --detach) in the background and waits until it serves. */
async function detach(argv: readonly string[], data_dir: string): Promise<number> {
  mkdirSync(data_dir, { recursive: true, mode: 0o700 });
  const logPath = join(data_dir, 'server.log');
  const fd = openSync(logPath, 'a', 0o600);
  const args = argv.filter((a) => a !== '--detach');
  const child = spawn(process.execPath, [process.argv[1]!, 'up', ...args], { detached: true, stdio: ['ignore', fd, fd] });
  child.unref();
  const file = dataFiles(data_dir).server;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (existsSync(file)) {
      const info = JSON.parse(readFileSync(file, 'utf8')) as { url: string; pid: number }; // written atomically
      if (info.pid === child.pid) {
        console.log(`goodput server started in the background (pid ${child.pid}) on ${info.url}; log: ${logPath}`);
        return 0;
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new GoodputError('E_START', `the server did not start; see ${logPath}`);
}
