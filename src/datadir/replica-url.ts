/**
 * The URL running replicas report to (GOODPUT_API) is fixed at their launch. The server keeps
 * it in `<data dir>/replica-url`; a restart while replicas of an earlier start still run must
 * listen on the same host and port, so their job tokens never go to whatever else listens there.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { GoodputError } from '../core/errors.js';

/** The URL recorded by the previous start, if any. */
export function readReplicaUrl(path: string): URL | undefined {
  try {
    return new URL(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
}

/** Records the URL replicas are given (0600). */
export function writeReplicaUrl(path: string, url: string): void {
  writeFileSync(path, `${url}\n`, { mode: 0o600 });
}

/**
 * The port to listen on: `requested`, or the previous one when replicas still run and the port
 * was left to the system (0). Throws E_PORT_CHANGED when running replicas report elsewhere.
 */
export function listenPort(
  requested: number,
  reported_host: string,
  previous: URL | undefined,
  live_replicas: number,
): number {
  if (!previous || live_replicas === 0) return requested;
  const port = Number(previous.port);
  if (requested === 0 && previous.hostname === reported_host) return port;
  if (requested !== port || previous.hostname !== reported_host) {
    throw new GoodputError(
      'E_PORT_CHANGED',
      `${live_replicas} running replica(s) report to ${previous.origin}; start the server on ` +
        `--host ${previous.hostname} --port ${port} (or cancel those jobs first)`,
    );
  }
  return requested;
}

/**
 * The host replicas are told to report to (the host of GOODPUT_API) when the report endpoint
 * listens on `listen_host`: this machine's host name when it listens on every interface and the
 * replicas run on other nodes (`remote`: Slurm), 127.0.0.1 when it listens everywhere for
 * replicas on this machine, else the address it listens on. Shared by `goodput up` and
 * `goodput profile --backend slurm`, so both give compute nodes the same kind of address.
 */
export function reportedHost(listen_host: string, remote: boolean): string {
  if (listen_host !== '0.0.0.0') return listen_host;
  return remote ? hostname() : '127.0.0.1';
}
