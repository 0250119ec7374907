/**
 * Reading a small input file (a job spec, a shares file) with bounded work: a regular file larger
 * than the bound is refused from its size before any of it is read, and a pipe or device is read
 * to at most one byte past the bound, so a wrong file never fills memory before the error. What
 * could not be read is a value with its reason; the caller words the error.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** The text of a file, or why it was not read. */
export type BoundedText =
  | { text: string }
  /** Over the bound; `size` says by how much in words (`50.0 MiB`, `over 1 MiB`). */
  | { refused: 'too-large'; size: string }
  /** Not a regular file, where only one will do. */
  | { refused: 'not-regular' }
  /** Could not be opened or read: the system's message. */
  | { refused: 'unreadable'; message: string };

/** The UTF-8 text of `path` if it is at most `max_bytes` (and a regular file, with `regular_only`). */
export function readBoundedText(path: string, max_bytes: number, regular_only = false): BoundedText {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    return { refused: 'unreadable', message: (error as Error).message };
  }
  try {
    const stat = fstatSync(fd);
    if (regular_only && !stat.isFile()) return { refused: 'not-regular' };
    if (stat.isFile() && stat.size > max_bytes)
      return { refused: 'too-large', size: `${(stat.size / 2 ** 20).toFixed(1)} MiB` };
    const buffer = Buffer.alloc(max_bytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > max_bytes) return { refused: 'too-large', size: `over ${sizeWords(max_bytes)}` };
    }
    return { text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return { refused: 'unreadable', message: (error as Error).message };
  } finally {
    closeSync(fd);
  }
}

/** `n` bytes in words: whole MiB, else whole KiB, else bytes. */
export function sizeWords(n: number): string {
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n >> 20} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n >> 10} KiB`;
  return `${n} bytes`;
}
