import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Bytes read from the end of a log: enough for a Python traceback below a C++ stack dump. */
const READ_BYTES = 16384;

/**
 * The last `max_lines` lines (at most `max_bytes`) of a replica log, for the reason a failed job
 * shows; '' when the file is missing or unreadable (a log never decides a job's fate). A run of
 * C++ stack frames (`frame #3: ...`, which torch prints after an uncaught c10::Error, twenty and
 * more of them) counts as one line saying how many were left out: they would push the error
 * itself out of the tail.
 */
export function logTail(path: string | undefined, max_lines = 20, max_bytes = 4096): string {
  if (!path) return '';
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, Math.max(READ_BYTES, max_bytes));
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').split('\n');
    if (length < size) lines.shift(); // a partial first line
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    const tail = collapseFrames(lines).slice(-max_lines);
    while (tail.length > 1 && tail.join('\n').length > max_bytes) tail.shift();
    const text = tail.join('\n');
    return text.length > max_bytes ? text.slice(-max_bytes) : text;
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** `lines` with each run of C++ stack frames replaced by one line that counts them. */
function collapseFrames(lines: readonly string[]): string[] {
  const out: string[] = [];
  let frames = 0;
  const flush = () => {
    if (frames > 0) out.push(`[${frames} C++ stack frame${frames === 1 ? '' : 's'} left out]`);
    frames = 0;
  };
  for (const line of lines) {
    if (/^frame #\d+: /.test(line)) {
      frames++;
      continue;
    }
    flush();
    out.push(line);
  }
  flush();
  return out;
}
