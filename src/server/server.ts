/**
 * Composition root of the control-plane server: data directory, store, secrets, backend,
 * policy, controller and the HTTP listener. Used by `goodput up` and `goodput run`.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import type { DeviceInfo } from '../backends/backend.js';
import { LocalBackend } from '../backends/local/local-backend.js';
import { isAlive } from '../backends/local/process-info.js';
import { Controller } from '../control/controller.js';
import { hashToken, newSecret, newToken } from '../control/tokens.js';
import { GoodputError } from '../core/errors.js';
import type { Policy } from '../policy/policy.js';
import { parsePolicyParams } from '../policy/policy-params.js';
import { findPolicy, policyNames } from '../policy/registry.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { createApp } from '../api/app.js';

/** The policy `goodput up` and `goodput run` use unless told otherwise. */
export const DEFAULT_POLICY = 'goodput';

/** Version reported by /v1/health and the OpenAPI document. */
export const SERVER_VERSION = '0.1.0';

export interface ServerOptions {
  data_dir: string;
  host: string;
  /** 0 = any free port. */
  port: number;
  devices: readonly DeviceInfo[];
  policy: string;
  /** NAME=VALUE overrides of the policy's knobs (`--policy-param`), validated at start. */
  policy_params?: readonly string[];
  interval_s: number;
  grace_s: number;
  restart_backoff_s?: number;
  log: (line: string) => void;
}

/** A running server. `close` stops it; replicas keep running (they are re-adopted at restart). */
export interface RunningServer {
  url: string;
  controller: Controller;
  store: SqliteStore;
  policy: string;
  close(): Promise<void>;
}

/** Paths of the files in a data directory. */
export function dataFiles(data_dir: string) {
  return {
    db: join(data_dir, 'goodput.sqlite'),
    secret: join(data_dir, 'secret'),
    adminToken: join(data_dir, 'admin-token'),
    server: join(data_dir, 'server.json'),
    lock: join(data_dir, 'server.pid'),
  };
}

/** Reads a 0600 file, creating it with `make()` on first use. */
function privateFile(path: string, make: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = make();
  writeFileSync(path, value + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return value;
}

/**
 * The registered policy called `name` with its knobs set by `param_assignments` (NAME=VALUE); an
 * unknown name is a usage error listing the valid ones, a bad knob an E_BAD_POLICY_PARAM error.
 */
export function choosePolicy(name: string, param_assignments: readonly string[] = []): Policy {
  const factory = findPolicy(name);
  if (!factory) throw new GoodputError('E_USAGE', `unknown policy '${name}'; registered: ${policyNames().join(', ')}`, 2);
  return factory.create({ seed: 0, params: parsePolicyParams(factory, param_assignments) });
}

/** Starts the server; refuses (E_RUNNING) when another live server owns the data directory. */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const policy = choosePolicy(o.policy, o.policy_params);
  mkdirSync(o.data_dir, { recursive: true, mode: 0o700 });
  const files = dataFiles(o.data_dir);
  if (existsSync(files.lock)) {
    const pid = Number(readFileSync(files.lock, 'utf8').trim());
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid, '')) {
      throw new GoodputError('E_RUNNING', `a goodput server (pid ${pid}) already uses ${o.data_dir}; stop it first or pass another --data-dir`);
    }
  }
  writeFileSync(files.lock, `${process.pid}\n`, { mode: 0o600 });
  const secret = privateFile(files.secret, newSecret);
  const store = new SqliteStore(files.db);
  const adminToken = privateFile(files.adminToken, () => newToken('gpa'));
  await store.putToken({ hash: hashToken(adminToken), user: 'admin', admin: true, created_at_ms: Date.now() });
  const backend = new LocalBackend({ devices: o.devices });
  let controller: Controller | undefined;
  let server: ServerType | undefined;
  try {
    const apiUrl = { value: '' };
    controller = new Controller({
      store, backend, policy, secret, data_dir: o.data_dir, api_url: '', interval_s: o.interval_s, grace_s: o.grace_s, log: o.log,
      ...(o.restart_backoff_s !== undefined ? { restart_backoff_s: o.restart_backoff_s } : {}),
    });
    const app = createApp({ store, controller, secret, version: SERVER_VERSION });
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: o.host, port: o.port }, () => resolve(s));
      s.once('error', (error: NodeJS.ErrnoException) =>
        reject(new GoodputError('E_LISTEN', error.code === 'EADDRINUSE' ? `port ${o.port} on ${o.host} is in use; pass --port` : error.message)));
    });
    const port = (server.address() as AddressInfo).port;
    apiUrl.value = `http://${o.host === '0.0.0.0' ? '127.0.0.1' : o.host}:${port}`;
    controller.setApiUrl(apiUrl.value);
    await controller.start();
    // Atomic (write + rename): the CLI and tests poll this file while the server starts.
    writeFileSync(files.server + '.tmp', JSON.stringify({ url: apiUrl.value, pid: process.pid, policy: policy.name }) + '\n', { mode: 0o600 });
    renameSync(files.server + '.tmp', files.server);
    const running = server;
    const ctl = controller;
    return {
      url: apiUrl.value,
      controller: ctl,
      store,
      policy: policy.name,
      async close() {
        await ctl.stop();
        await new Promise<void>((resolve) => running.close(() => resolve()));
        await store.close();
        rmSync(files.lock, { force: true });
        rmSync(files.server, { force: true });
      },
    };
  } catch (error) {
    await controller?.stop();
    server?.close();
    await store.close();
    rmSync(files.lock, { force: true });
    throw error;
  }
}
