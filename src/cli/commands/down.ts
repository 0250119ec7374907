import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { dataFiles } from '../../server/server.js';
import { isAlive } from '../../backends/local/process-info.js';
import { defaultDataDir } from '../../client/connect.js';
import { GoodputError } from '../../core/errors.js';
import { numberFlag, parseFlags, type CliCommand } from '../command.js';

/**
 * The pid of the live server owning `data_dir`, if any: server.json and the lock agree and the
 * process is a `goodput up` (a pid left by a server killed with -9 may belong to another
 * process by now; where /proc is missing, the files are trusted).
 */
function livePid(data_dir: string): number | undefined {
  const files = dataFiles(data_dir);
  try {
    const info = JSON.parse(readFileSync(files.server, 'utf8')) as { pid?: unknown };
    const lock = Number(readFileSync(files.lock, 'utf8').trim());
    if (typeof info.pid !== 'number' || info.pid !== lock || !isAlive(lock, '')) return undefined;
    const argv = existsSync(`/proc/${lock}/cmdline`)
      ? readFileSync(`/proc/${lock}/cmdline`, 'utf8').split('\0')
      : ['up'];
    return argv.includes('up') ? lock : undefined;
  } catch {
    return undefined;
  }
}

export const downCommand: CliCommand = {
  name: 'down',
  help: `Usage: goodput down [--data-dir DIR] [--timeout-s S]

Sends SIGTERM to the server that owns DIR (default: $GOODPUT_DATA_DIR or ~/.goodput) and waits
until it has exited (at most --timeout-s, default 30). Running jobs keep running; the next
'goodput up' on DIR re-adopts them ('goodput cancel' a job first to stop it). Succeeds, saying
so, when no server is running.`,
  async run(argv) {
    const { values } = parseFlags(
      'down',
      argv,
      { 'data-dir': { type: 'string' }, 'timeout-s': { type: 'string' } },
      false,
    );
    const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
    const timeout_s = numberFlag('down', 'timeout-s', values['timeout-s'], 30, { min: 0 });
    const pid = livePid(data_dir);
    if (pid === undefined) {
      console.log(`no goodput server is running on ${data_dir}${existsSync(data_dir) ? '' : ' (no such directory)'}`);
      return 0;
    }
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + timeout_s * 1000;
    while (isAlive(pid, '')) {
      if (Date.now() > deadline)
        throw new GoodputError(
          'E_STOP',
          `the server (pid ${pid}) is still running ${timeout_s} s after SIGTERM; see ${data_dir}/server.log, or stop it with kill -9 ${pid}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(
      `stopped the goodput server (pid ${pid}) on ${data_dir}; running jobs keep running and are re-adopted by the next 'goodput up'`,
    );
    return 0;
  },
};
