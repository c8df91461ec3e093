// Debian's chromium, headless, started by playwright-core (which downloads
// no browser), and kept on loopback: every host but 127.0.0.1 and localhost
// fails to resolve, and anything that still tries the network meets a
// closed proxy port. RELSIM_CHROMIUM overrides /usr/bin/chromium.
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.RELSIM_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-domain-reliability', '--no-pings',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
      '--proxy-server=http://127.0.0.1:9', '--proxy-bypass-list=<-loopback>;127.0.0.1;localhost',
    ],
  });
}
