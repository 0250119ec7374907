/**
 * `goodput shares` and `goodput usage` (issue 48 item 5): the teams of the shares file with their
 * quota, use, borrowed and lent devices, fair-share factor and decayed usage; device-hours per
 * user, team and GPU type over a period.
 */
import { connect, connectionFlags } from '../../client/connect.js';
import { formatTable } from '../../client/table.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

const perType = (m: Record<string, number>) =>
  Object.keys(m).length === 0
    ? '-'
    : Object.entries(m)
        .map(([t, n]) => `${t}:${n}`)
        .join(' ');

export const sharesCommand: CliCommand = {
  name: 'shares',
  help: `Usage: goodput shares [--json] [--data-dir DIR | --server URL] [--token T]

Teams come from the server's shares file (goodput up --shares FILE; docs/control-plane.md
"Shares"); a user in no team is their own team of weight 1. Per GPU type: quota (guaranteed
devices), use (held now), borrowed (used beyond the quota), lent (quota left idle for others).
factor: the fair-share factor 2^-(usage fraction / share), 1 for a team within its share;
usage: device-hours, decayed by the half-life (default 7 days).`,
  async run(argv) {
    const { values } = parseFlags('shares', argv, { ...connectionFlags, json: { type: 'boolean' } }, false);
    const teams = await connect(values).shares();
    if (values.json) {
      console.log(JSON.stringify(teams, null, 2));
      return 0;
    }
    const rows = teams.map((t) => [
      t.team,
      t.members.join(',') || '-',
      String(t.weight),
      `${Math.round(100 * t.share)}%`,
      perType(t.quota),
      perType(t.use),
      perType(t.borrowed),
      perType(t.lent),
      t.fair_share_factor.toFixed(2),
      t.decayed_usage_device_h.toFixed(1),
    ]);
    console.log(
      formatTable(
        ['team', 'members', 'weight', 'share', 'quota', 'use', 'borrowed', 'lent', 'factor', 'usage(h)'],
        rows,
      ),
    );
    return 0;
  },
};

const UNIT_S: Record<string, number> = { m: 60, h: 3600, d: 86400 };

export const usageCommand: CliCommand = {
  name: 'usage',
  help: `Usage: goodput usage [--since 30d] [--json | --csv] [--data-dir DIR | --server URL] [--token T]

Device-hours of every attempt's replicas since --since ago (m, h or d; default 30d), per user,
team (from the shares file) and GPU type ('cpu' for CPU slots). Users see their own; an admin
sees everyone. Jobs removed by retention (goodput up --job-retention-days) are not counted.`,
  async run(argv) {
    const { values } = parseFlags(
      'usage',
      argv,
      { ...connectionFlags, since: { type: 'string' }, json: { type: 'boolean' }, csv: { type: 'boolean' } },
      false,
    );
    const since = values.since ?? '30d';
    const m = /^(\d+)([mhd])$/.exec(since.trim());
    if (!m || Number(m[1]) <= 0)
      throw usageError(`usage: --since must be a duration like 90m, 12h or 30d, got '${since}'.`);
    if (values.json && values.csv) throw usageError('usage: give one of --json and --csv.');
    const rows = await connect(values).usage(Date.now() - Number(m[1]) * UNIT_S[m[2]!]! * 1000);
    if (values.json) console.log(JSON.stringify(rows, null, 2));
    else if (values.csv) {
      const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
      console.log(
        [
          'user,team,gpu_type,device_hours',
          ...rows.map((r) => [r.user, r.team, r.gpu_type].map(cell).join(',') + `,${r.device_hours}`),
        ].join('\n'),
      );
    } else {
      console.log(
        formatTable(
          ['user', 'team', 'gpu type', 'device-hours'],
          rows.map((r) => [r.user, r.team, r.gpu_type, r.device_hours.toFixed(2)]),
        ),
      );
      console.log(`${rows.reduce((s, r) => s + r.device_hours, 0).toFixed(2)} device-hours since ${since} ago`);
    }
    return 0;
  },
};
