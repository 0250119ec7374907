import { connect, connectionFlags } from '../../client/connect.js';
import { formatTable } from '../../client/table.js';
import { usageError } from '../../core/errors.js';
import { parseFlags, type CliCommand } from '../command.js';

const flags = {
  ...connectionFlags,
  json: { type: 'boolean' },
  user: { type: 'string' },
  'unix-user': { type: 'string' },
  'slurm-account': { type: 'string' },
  'expires-in': { type: 'string' },
} as const;

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Parses a duration like 90s, 30m, 12h or 7d into seconds. */
export function parseDuration_s(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0)
    throw usageError(`token: --expires-in must be a positive duration like 3600s, 30m, 12h or 7d, got '${text}'.`);
  return Number(m[1]) * UNIT_S[m[2]!]!;
}

export const tokenCommand: CliCommand = {
  name: 'token',
  help: `Usage: goodput token create [--user U] [--unix-user ACCOUNT] [--slurm-account ACCT] [--expires-in 7d]
                            [--json]
       goodput token ls [--user U] [--json]
       goodput token revoke <id>
  (each also takes --data-dir DIR | --server URL, --token T)

create   a new token, printed once (store it: the server keeps only its hash). Users create
         tokens for themselves, never outliving their own; an admin for any --user, and sets
         with --unix-user the Unix account that user's jobs run as (goodput up --run-as-owner)
         and with --slurm-account the Slurm account they are charged to (--backend slurm; needs
         a Unix account; without one: the server's --account, else the user's default account).
ls       tokens by id (never the tokens themselves): your own; an admin's: all, or --user's.
revoke   refuses the token from now on. An id prefix of 6 or more characters is enough.`,
  async run(argv) {
    const { values, positionals } = parseFlags('token', argv, flags);
    const [action, ...rest] = positionals;
    const client = connect(values);
    if (action === 'create' && rest.length === 0) {
      const options = {
        ...(values['expires-in'] !== undefined ? { expires_in_s: parseDuration_s(values['expires-in']) } : {}),
        ...(values['unix-user'] !== undefined ? { unix_user: values['unix-user'] } : {}),
        ...(values['slurm-account'] !== undefined ? { slurm_account: values['slurm-account'] } : {}),
      };
      const created = await client.createToken(values.user, options);
      console.log(values.json ? JSON.stringify(created, null, 2) : created.token);
      if (!values.json)
        console.error(
          `token ${created.id} for ${created.user}${created.expires_at ? `, expires ${created.expires_at}` : ''}`,
        );
      return 0;
    }
    if (action === 'ls' && rest.length === 0) {
      const tokens = await client.listTokens(values.user);
      if (values.json) console.log(JSON.stringify(tokens, null, 2));
      else
        console.log(
          formatTable(
            ['id', 'user', 'admin', 'created', 'expires', 'revoked'],
            tokens.map((t) => [
              t.id,
              t.user,
              t.admin ? 'yes' : '',
              t.created_at,
              t.expires_at ?? '-',
              t.revoked_at ?? '-',
            ]),
          ),
        );
      return 0;
    }
    if (action === 'revoke' && rest.length === 1) {
      const revoked = await client.revokeToken(rest[0]!);
      console.log(values.json ? JSON.stringify(revoked, null, 2) : `revoked token ${revoked.id} of ${revoked.user}`);
      return 0;
    }
    throw usageError("token: expected 'create', 'ls' or 'revoke <id>'. See 'goodput token --help'.");
  },
};
