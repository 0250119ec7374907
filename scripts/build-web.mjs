#!/usr/bin/env node
// Bundles the dashboard (web/) into dist/web with esbuild: one JS and one CSS file, minified,
// no CDN (clusters are often offline). Run by `npm run build` after tsc.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const out = 'dist/web';
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: 'web/main.tsx' },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outdir: out,
  legalComments: 'linked',
  logLevel: 'warning',
});
copyFileSync('web/index.html', `${out}/index.html`);
// The bundle contains preact and uPlot (both MIT): their licences ship beside it.
const licences = ['preact', 'uplot'].map(
  (name) => `${name}\n${'='.repeat(name.length)}\n${readFileSync(`node_modules/${name}/LICENSE`, 'utf8')}`,
);
writeFileSync(`${out}/THIRD-PARTY-LICENSES.txt`, licences.join('\n'));
