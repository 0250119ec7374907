/** The shell wrapper around each local replica and the pid file it writes. */
import { readFileSync } from 'node:fs';
import { AWAIT_WRITER, START_WRITER } from './log-writer.js';

/**
 * The replica wrapper, a constant script (arguments are positional parameters, never parsed by
 * the shell). It starts the command, then records its own pid and the command's (`launch` waits
 * until the command has exec'd: a signal that hits the forked shell before exec would be
 * swallowed by the inherited trap), waits for the
 * command and writes its exit status to a file atomically, then exits with it. The trap keeps
 * the shell alive through SIGTERM/SIGINT/HUP sent to the group; `wait` interrupted by a trapped
 * signal is repeated until the command really ended (a zombie still answers `kill -0`). The exit
 * file lets a restarted server learn the exit code of a replica it did not start. The umask is
 * narrowed only after the command started (its own umask stays the server's), so the run files
 * are 0600 whatever the umask. With a log cap, the output goes through the replica's log writer
 * (log-writer.ts), started first and awaited last.
 */
export const WRAPPER = [
  'p=$1; log=$2; cap=$3; lw=$4; shift 4; trap : TERM INT HUP',
  START_WRITER,
  '"$@" & c=$!; umask 077',
  'echo "$$ $c" > "$p.pid.tmp" && mv -f "$p.pid.tmp" "$p.pid"',
  'while :; do wait $c; r=$?; kill -0 $c 2>/dev/null || break; done',
  AWAIT_WRITER,
  'echo $r > "$p.exit.tmp" && mv -f "$p.exit.tmp" "$p.exit"; exit $r',
].join('\n');

/**
 * The pids in a wrapper's `.pid` file (written atomically by WRAPPER): the wrapper shell's, which
 * is also its process group, and the command's (NaN if absent); undefined while there is no file.
 */
export function readWrapperPids(pidFile: string): { shell: number; command: number } | undefined {
  let text: string;
  try {
    text = readFileSync(pidFile, 'utf8');
  } catch {
    return undefined;
  }
  const [shell, command] = text.trim().split(' ');
  return { shell: Number(shell), command: Number(command) };
}

/**
 * Waits (at most 5 s) until the wrapper's pid file exists and the command's process has exec'd
 * (its cmdline differs from the wrapper's), or `gone()` says the wrapper already ended.
 */
export async function waitForExec(pidFile: string, gone: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !gone(); i++) {
    const pids = readWrapperPids(pidFile);
    if (pids) {
      const a = cmdline(pids.shell);
      const b = cmdline(pids.command);
      if (a === undefined || b === undefined || a !== b) return;
    }
    await new Promise((r) => setTimeout(r, 2));
  }
}

function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return undefined;
  }
}
