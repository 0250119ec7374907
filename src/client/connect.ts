/**
 * Where the CLI finds its server and token: flags, then environment (GOODPUT_SERVER,
 * GOODPUT_USER_TOKEN, GOODPUT_DATA_DIR), then the data directory (server.json, admin-token).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { usageError } from '../core/errors.js';
import { GoodputClient } from './client.js';

/** Default data directory: $GOODPUT_DATA_DIR or ~/.goodput. */
export function defaultDataDir(): string {
  return resolve(process.env.GOODPUT_DATA_DIR ?? join(homedir(), '.goodput'));
}

/** Connection flags every client command accepts. */
export const connectionFlags = {
  server: { type: 'string' },
  token: { type: 'string' },
  'data-dir': { type: 'string' },
} as const;

/** Builds the client from flag values. */
export function connect(flags: {
  server?: string | undefined;
  token?: string | undefined;
  'data-dir'?: string | undefined;
}): GoodputClient {
  const data_dir = resolve(flags['data-dir'] ?? defaultDataDir());
  let url = flags.server ?? process.env.GOODPUT_SERVER;
  if (url) checkServerUrl(url, flags.server !== undefined ? '--server' : 'GOODPUT_SERVER');
  if (!url) {
    const file = join(data_dir, 'server.json');
    if (existsSync(file)) {
      try {
        url = (JSON.parse(readFileSync(file, 'utf8')) as { url?: string }).url;
      } catch {
        url = undefined;
      }
    }
  }
  let token = flags.token ?? process.env.GOODPUT_USER_TOKEN;
  if (!token) {
    const file = join(data_dir, 'admin-token');
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch {
      token = undefined;
    }
  }
  return new GoodputClient(url ?? 'http://127.0.0.1:7878', token);
}

/**
 * Refuses (E_USAGE) a server address that is not an http(s) URL, naming where it came from: it
 * would otherwise read as a server that is down ('start it with goodput up'), which it is not.
 */
function checkServerUrl(url: string, source: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:')
    throw usageError(`${source} '${url}' is not an http(s) URL; give the server's address, e.g. http://127.0.0.1:7878`);
}
