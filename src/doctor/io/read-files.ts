import { createReadStream } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';

/** True when the file starts with the gzip magic bytes (content, not the name, decides). */
export async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/**
 * Streams a file as text chunks, gunzipping when its content is gzip. Memory stays bounded by one
 * chunk (64 KiB) however large the file is.
 */
export async function* textChunks(path: string): AsyncGenerator<string> {
  const gz = await isGzip(path);
  const raw = createReadStream(path, { highWaterMark: 1 << 16 });
  const source = gz ? raw.pipe(createGunzip()) : raw;
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of source) {
      const text = decoder.write(chunk as Buffer);
      if (text.length > 0) yield text;
    }
    const rest = decoder.end();
    if (rest.length > 0) yield rest;
  } finally {
    raw.destroy();
  }
}

/** Reads the first `maxChars` characters of a (possibly gzipped) file, for content sniffing. */
export async function readHead(path: string, maxChars = 64 * 1024): Promise<string> {
  let out = '';
  for await (const chunk of textChunks(path)) {
    out += chunk;
    if (out.length >= maxChars) break;
  }
  return out.slice(0, maxChars);
}

/** Reads a whole (possibly gzipped) text file; only for inputs known to be small. */
export async function readAllText(path: string): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of textChunks(path)) parts.push(chunk);
  return parts.join('');
}

/** Expands directories (recursively, sorted) into files; missing paths are returned in `missing`. */
export async function expandInputs(
  paths: readonly string[],
): Promise<{ files: { path: string; group: string }[]; missing: string[] }> {
  const files: { path: string; group: string }[] = [];
  const missing: string[] = [];
  const walk = async (dir: string, group: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p, p);
      else if (e.isFile()) files.push({ path: p, group });
    }
  };
  for (const p of paths) {
    try {
      const s = await stat(p);
      if (s.isDirectory()) await walk(p, p);
      else files.push({ path: p, group: p });
    } catch {
      missing.push(p);
    }
  }
  return { files, missing };
}
