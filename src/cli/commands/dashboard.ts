/**
 * `goodput dashboard`: a login link to the running server's dashboard. The link carries a
 * short-lived, single-use code in its fragment (dashboard/login-link.ts), never in a query
 * string, so a browser lands logged in and no server log ever holds it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { connect, connectionFlags, defaultDataDir } from '../../client/connect.js';
import { GoodputError } from '../../core/errors.js';
import { dashboardFile } from '../../dashboard/live.js';
import { LOGIN_FRAGMENT } from '../../dashboard/login-link.js';
import { parseFlags, type CliCommand } from '../command.js';

/** The dashboard URL the server in `data_dir` wrote (DIR/dashboard.json). */
function dashboardUrl(data_dir: string): string {
  try {
    const url = (JSON.parse(readFileSync(dashboardFile(data_dir), 'utf8')) as { url?: unknown }).url;
    if (typeof url === 'string') return url;
  } catch {
    // absent or unreadable: said below
  }
  throw new GoodputError(
    'E_SERVER_DOWN',
    `no dashboard in ${data_dir} (no dashboard.json): start the server with 'goodput up' (its ` +
      `dashboard is on unless --dashboard-port off), or pass --url`,
  );
}

export const dashboardCommand: CliCommand = {
  name: 'dashboard',
  help: `Usage: goodput dashboard [--open] [--url DASHBOARD_URL] [--json] [--data-dir DIR | --server URL] [--token T]

Prints a link to the running server's dashboard that logs the browser in as you (the token
the CLI uses: GOODPUT_USER_TOKEN, --token, or the data directory's admin-token). The link
works once, for 2 minutes; its code is in the URL fragment (#login=...), which browsers never
send to a server. Through an SSH tunnel, open it with the tunnel's host and port instead.

  --open    also open it with xdg-open (a desktop browser)
  --url U   the dashboard's URL (default: DIR/dashboard.json, written by 'goodput up')
  --json    {"url", "expires_in_s"}
See docs/dashboard.md.`,
  async run(argv) {
    const flags = {
      ...connectionFlags,
      open: { type: 'boolean' },
      url: { type: 'string' },
      json: { type: 'boolean' },
    } as const;
    const { values } = parseFlags('dashboard', argv, flags, false);
    const base = (values.url ?? dashboardUrl(resolve(values['data-dir'] ?? defaultDataDir()))).replace(/\/+$/, '');
    const { code, expires_in_s } = await connect(values).dashboardLoginCode(base);
    const url = `${base}/#${LOGIN_FRAGMENT}${code}`;
    if (values.json) console.log(JSON.stringify({ url, expires_in_s }));
    else
      console.log(
        `${url}\n(logs the browser in once, within ${expires_in_s} s; run 'goodput dashboard' again for a new link)`,
      );
    if (values.open) {
      const opener = spawn('xdg-open', [url], { detached: true, stdio: 'ignore' });
      opener.on('error', () => console.error('dashboard: could not run xdg-open; open the link above in a browser'));
      opener.unref();
    }
    return 0;
  },
};
