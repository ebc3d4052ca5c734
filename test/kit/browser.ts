import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (tools/scripts/prerequisites.sh installs it), driven by playwright-core, which
 * never downloads a browser of its own. CHROMIUM_PATH overrides where it is.
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? which('chromium') ?? which('chromium-browser');
  if (!executablePath) throw new Error('no chromium on PATH: install it (Debian: apt-get install chromium, or bash tools/scripts/prerequisites.sh as root) or set CHROMIUM_PATH');
  // --no-sandbox: CI runs the tests as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

function which(cmd: string): string | undefined {
  try {
    return execFileSync('bash', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Where screenshots go: UI_SCREENSHOT_DIR (docs/screenshots to refresh the committed ones), else the cache. */
export function screenshotDir(cacheDir: string): string {
  const dir = process.env.UI_SCREENSHOT_DIR ? path.resolve(process.env.UI_SCREENSHOT_DIR) : path.join(cacheDir, 'ui-screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
