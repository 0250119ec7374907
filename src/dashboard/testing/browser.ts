/**
 * Debian's chromium driven by playwright-core, for the dashboard's browser tests and bench:
 * never a downloaded browser, a fresh profile per launch, and screenshots in one folder.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** The system browser (Debian package `chromium`, listed in scripts/test-packages.txt). */
export const CHROMIUM = process.env.GOODPUT_CHROMIUM ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches chromium with a fresh user-data-dir (removed on close). */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install the Debian package chromium (apt-get install chromium), or set GOODPUT_CHROMIUM`,
    );
  const profile = mkdtempSync(join(tmpdir(), 'goodput-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Folder of the screenshots the tests take: $GOODPUT_SCREENSHOT_DIR or a fixed temp folder. */
export function screenshotDir(): string {
  const dir = process.env.GOODPUT_SCREENSHOT_DIR ?? join(tmpdir(), 'goodput-dashboard-screenshots');
  mkdirSync(dir, { recursive: true });
  return dir;
}
