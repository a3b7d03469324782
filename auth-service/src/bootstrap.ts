import { randomBytes, randomUUID } from 'node:crypto';
import type { Notices, Store } from '@scada/platform';
import type { Logger } from 'pino';
import type { AuthConfig } from './config.ts';
import type { Passwords } from './domain/passwords.ts';
import { defaultSpaceId } from './handlers/spaces.ts';
import { insertUser } from './store/users.ts';

/**
 * On an empty store: the `default` space and the bootstrap administrator in it. Runs under an advisory
 * lock, so replicas starting together create them once. Without `ADMIN_PASSWORD` a password is generated
 * and shown once, framed on stderr with the URL to open (`notices`), never in a log line; without
 * notices (a service started outside a process) it goes to stderr alone. A generated password must be
 * changed at the first sign-in (`requirePasswordReset`); one given in `ADMIN_PASSWORD` need not.
 */
export async function bootstrap(store: Store, config: AuthConfig, passwords: Passwords, log: Logger, notices?: Notices): Promise<void> {
  const { rows } = await store.query('select (select count(*) from auth.users) as users, (select count(*) from auth.spaces) as spaces');
  if (Number(rows[0]?.users) > 0 && Number(rows[0]?.spaces) > 0) return;
  const generated = config.adminPassword === undefined ? randomBytes(18).toString('base64url') : null;
  const passwordHash = await passwords.hash(config.adminPassword ?? (generated as string));
  const created = await store.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('auth.bootstrap'))`);
    await tx.query(`insert into auth.spaces (id, name) values ($1, $1) on conflict do nothing`, [defaultSpaceId]);
    const { rows: users } = await tx.query('select 1 from auth.users limit 1');
    if (users.length > 0) return false;
    await insertUser(tx, {
      id: randomUUID(),
      username: config.adminUsername,
      passwordHash,
      email: null,
      phone: null,
      enabled: true,
      roles: ['admin'],
      spaces: [defaultSpaceId],
      actor: null,
      // A generated password was chosen by no one: the administrator replaces it before anything else.
      // One from ADMIN_PASSWORD is the operator's own choice and stands.
      requirePasswordReset: generated !== null,
    });
    return true;
  });
  if (!created) return;
  if (generated) {
    log.warn(
      { username: config.adminUsername },
      'created the administrator with a generated password, shown once on stderr: sign in and change it',
    );
    const lines = [
      'First start: the administrator was created with a generated password.',
      '',
      `  user:     ${config.adminUsername}`,
      `  password: ${generated}`,
      '',
      'It is shown only this once: sign in and change it first',
      '(POST /api/users/reset-password; nothing else works until then). If it is lost:',
      `  npm run admin -- reset-password ${config.adminUsername}`,
      '(on the embedded store, with the platform stopped first).',
    ];
    if (notices) notices.add(lines);
    else process.stderr.write(`${lines.join('\n')}\n`);
  } else {
    log.info({ username: config.adminUsername }, 'created the administrator');
  }
}
