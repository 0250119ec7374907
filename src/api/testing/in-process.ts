/** In-process API for tests: a real SQLite store, a controller that never starts, and `call`. */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSlots } from '../../backends/local/devices.js';
import { LocalBackend } from '../../backends/local/local-backend.js';
import { Controller } from '../../control/controller.js';
import { hashToken } from '../../control/tokens.js';
import { findPolicy } from '../../policy/registry.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { UserJobLimits } from '../../store/store.js';
import type { Hono } from 'hono';
import { createApp } from '../app.js';
import type { ApiEnv } from '../auth.js';

/** A response as tests read it: status, parsed JSON (or the text) and the raw text. */
export interface Called {
  status: number;
  json: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
  headers: Headers;
}

/** One request to an in-process app; a string body is sent as is, anything else as JSON. */
export async function callApp(
  app: Hono<ApiEnv>,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<Called> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await app.request(path, {
    method,
    headers,
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json: json as Called['json'], text, headers: res.headers };
}

/**
 * An API over a store in a temp dir (fresh, or the file `db_file` copied there); the admin token
 * is `admin`. `policy`: the controller's (default fifo; goodput where profiles are kept);
 * `shared_profiles`: see ControllerOptions.shared_profiles.
 */
export async function inProcessApi(
  options: {
    now_ms?: () => number;
    db_file?: string;
    policy?: string;
    shared_profiles?: boolean;
    user_limits?: UserJobLimits;
  } = {},
) {
  const dir = mkdtempSync(join(tmpdir(), 'goodput-api-'));
  const secret = 'test-secret';
  if (options.db_file) copyFileSync(options.db_file, join(dir, 'db.sqlite'));
  const store = new SqliteStore(join(dir, 'db.sqlite'), options.now_ms ? { now_ms: options.now_ms } : {});
  const policy = findPolicy(options.policy ?? 'fifo')!.create({ seed: 0 });
  const controller = new Controller({
    store,
    backend: new LocalBackend({ devices: cpuSlots(2) }),
    policy,
    data_dir: dir,
    secret,
    api_url: '',
    interval_s: 60,
    grace_s: 1,
    shared_profiles: options.shared_profiles === true,
    ...(options.user_limits ? { user_limits: options.user_limits } : {}),
  });
  const app = createApp({
    store,
    controller,
    secret,
    version: 'test',
    ...(options.now_ms ? { now_ms: options.now_ms } : {}),
  });
  const admin = 'gpa_admin';
  await store.putToken({ hash: hashToken(admin), user: 'admin', admin: true, created_at_ms: 0 });
  const call = (method: string, path: string, token?: string, body?: unknown) =>
    callApp(app, method, path, token, body);
  const close = async () => {
    await controller.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, secret, store, controller, app, admin, call, close };
}
