import { resolve } from 'node:path';
import { dataFiles } from '../../server/server.js';
import { defaultDataDir } from '../../client/connect.js';
import { usageError } from '../../core/errors.js';
import { backupStore, restoreStore, type StoreCopy } from '../../datadir/backup.js';
import { parseFlags, type CliCommand } from '../command.js';

const flags = { 'data-dir': { type: 'string' }, json: { type: 'boolean' } } as const;
const backupFlags = { ...flags, force: { type: 'boolean' } } as const;

function show(copy: StoreCopy, json: boolean | undefined, what: string): void {
  console.log(
    json
      ? JSON.stringify(copy, null, 2)
      : `${what} ${copy.path}: ${copy.jobs} job(s), ${copy.bytes} bytes, newest event #${copy.newest_event}`,
  );
}

export const backupCommand: CliCommand = {
  name: 'backup',
  help: `Usage: goodput backup <file | directory/> [--force] [--data-dir DIR] [--json]

Writes a consistent copy of DIR/goodput.sqlite to <file> (mode 0600) through SQLite's backup
API, while the server runs or not, and checks it (quick_check). Given a directory, it writes
goodput-<time>.sqlite into it. An existing file is replaced only with --force. Restore it with
'goodput restore <file>'. Run it as the server's Unix account (root in multi-user mode).`,
  async run(argv) {
    const { values, positionals } = parseFlags('backup', argv, backupFlags);
    if (positionals.length !== 1) throw usageError("backup: expected one output file. See 'goodput backup --help'.");
    const data_dir = resolve(values['data-dir'] ?? defaultDataDir());
    // resolve() drops a trailing '/', which says "a directory": keep it.
    const dest = resolve(positionals[0]!) + (positionals[0]!.endsWith('/') ? '/' : '');
    show(
      await backupStore(dataFiles(data_dir).db, dest, { force: values.force === true }),
      values.json,
      'backup written to',
    );
    return 0;
  },
};

export const restoreCommand: CliCommand = {
  name: 'restore',
  help: `Usage: goodput restore <file> [--data-dir DIR] [--json]

Checks <file> (a 'goodput backup'), then puts it in place of DIR/goodput.sqlite, removes the
old WAL and sets the high-water mark to the backup's newest event, so that 'goodput up' serves
from it. Refused while a server uses DIR. Work committed after the backup is lost; replicas
started after it are not known to the restored store (stop them by hand).`,
  async run(argv) {
    const { values, positionals } = parseFlags('restore', argv, flags);
    if (positionals.length !== 1) throw usageError("restore: expected one backup file. See 'goodput restore --help'.");
    const files = dataFiles(resolve(values['data-dir'] ?? defaultDataDir()));
    show(restoreStore(files.db, resolve(positionals[0]!), files.lock), values.json, 'restored');
    return 0;
  },
};
