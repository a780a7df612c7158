import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_PATH } from './requirements.ts';

/**
 * Debian's Chromium, headless, with the flags that keep it off the network (this machine's
 * network is closed; Chromium's background services would otherwise dial out at every start).
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `no Chromium at ${CHROMIUM_PATH}: ` +
        "install Debian's package (apt-get install -y chromium, as .ci/run does) or set CHROMIUM_PATH",
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
