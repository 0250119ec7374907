import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/**
 * The last `max_lines` lines (at most `max_bytes`) of a replica log, for the reason a failed job
 * shows; '' when the file is missing or unreadable (a log never decides a job's fate).
 */
export function logTail(path: string | undefined, max_lines = 20, max_bytes = 4096): string {
  if (!path) return '';
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, max_bytes);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').split('\n');
    if (length < size) lines.shift(); // a partial first line
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-max_lines).join('\n');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
