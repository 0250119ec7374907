/**
 * The browser assets built by `npm run build` (scripts/build-web.mjs) into dist/web and shipped
 * in the npm package. Loaded once into memory with a gzip copy each (a few hundred KB in all).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { packagePath } from '../util/package-root.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
}

/** Folder of the built assets. */
const ASSET_DIR = packagePath('dist', 'web');

/** Every built asset by URL path ('/index.html', '/app.js', ...); empty when the build has not run. */
export function loadAssets(dir = ASSET_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(dir)) return assets;
  for (const name of readdirSync(dir)) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(dir, name));
    assets.set(`/${name}`, { type, body, gzip: gzipSync(body) });
  }
  return assets;
}
