/**
 * `npm run admin -- <command>`: administration from the machine the platform runs on, for when no one can
 * sign in. It opens the store the environment names (`DATABASE_URL`, or the embedded store in
 * `DATA_DIR`, which must not be in use by a running platform) and works on it directly.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  ConfigError,
  EnvReader,
  FolderLockedError,
  framed,
  openStore,
  readPlatformConfig,
  type EnvSource,
  type Store,
} from '@scada/platform';
import { pino } from 'pino';
import { readAuthConfig } from './config.ts';
import { passwordLength, passwords } from './domain/passwords.ts';
import { clearFailures } from './store/lock.ts';
import { logAttempt } from './store/records.ts';
import { revokeUserSessions } from './store/sessions.ts';
import { findUser, updateUserFields } from './store/users.ts';

/** Where the command reads and writes. */
export type AdminIo = {
  /** The whole of standard input, read only when a command asks for it. */
  readStdin(): Promise<string>;
  stdout(text: string): void;
  stderr(text: string): void;
};

const usage = `Usage: npm run admin -- <command>

Commands:
  reset-password <user>          a new generated password, printed once
  reset-password <user> --stdin  the new password from the first line of standard input

The user must choose a new password at the next sign-in; their sessions end, and the reset is written to
the auth log. The store is the one DATABASE_URL names, or the embedded store in DATA_DIR (stop the
platform first: the embedded store is one process's at a time).
`;

/** Runs one command; answers the exit code: 0 done, 1 failed, 2 bad usage or configuration. */
export async function runAdmin(args: readonly string[], source: EnvSource, io: AdminIo): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    (command === undefined ? io.stderr : io.stdout)(usage);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'reset-password') {
    io.stderr(`Unknown command "${command}".\n\n${usage}`);
    return 2;
  }
  const fromStdin = rest.includes('--stdin');
  const names = rest.filter((a) => a !== '--stdin');
  if (names.length !== 1 || names[0]!.startsWith('-')) {
    io.stderr(`reset-password takes one user name${names.length > 1 ? `, not ${names.length}` : ''}.\n\n${usage}`);
    return 2;
  }
  try {
    return await resetPassword(names[0]!, fromStdin, source, io);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    io.stderr(`reset-password failed: ${err instanceof FolderLockedError ? `${err.message}.` : ((err as Error).message ?? String(err))}\n`);
    return 1;
  }
}

async function resetPassword(username: string, fromStdin: boolean, source: EnvSource, io: AdminIo): Promise<number> {
  const env = new EnvReader(source);
  const platform = readPlatformConfig(env);
  const auth = readAuthConfig(env);
  env.finish();
  const password = fromStdin ? firstLine(await io.readStdin()) : randomBytes(18).toString('base64url');
  if (password.length < passwordLength.min || password.length > passwordLength.max) {
    io.stderr(`The password must be ${passwordLength.min} to ${passwordLength.max} characters; nothing was changed.\n`);
    return 2;
  }
  if (platform.databaseUrl === undefined && !existsSync(join(platform.dataDir, 'pgdata', 'PG_VERSION'))) {
    io.stderr(`No embedded store in ${resolve(platform.dataDir)} (DATA_DIR); set DATA_DIR, or DATABASE_URL for PostgreSQL.\n`);
    return 1;
  }
  const store = await openStore(
    { databaseUrl: platform.databaseUrl, dataDir: platform.dataDir, timeoutMs: platform.busTimeoutMs },
    pino({ level: 'silent' }),
  );
  try {
    if (!(await hasAuthSchema(store))) {
      io.stderr('This store holds no platform yet: start the platform once, and it creates the administrator.\n');
      return 1;
    }
    const passwordHash = await passwords(auth.passwordHashCost).hash(password);
    const outcome = await store.transaction(async (tx) => {
      const user = await findUser(tx, { username });
      if (!user) return null;
      await updateUserFields(tx, user.id, { passwordHash, requirePasswordReset: true }, 'admin command');
      const ended = await revokeUserSessions(tx, user.id);
      await clearFailures(tx, user.username.toLowerCase());
      await logAttempt(tx, {
        username: user.username,
        ip: null,
        successful: true,
        msg: 'password reset with the admin command (npm run admin)',
      });
      return { user, ended: ended.length };
    });
    if (!outcome) {
      io.stderr(`No user "${username}" in this store; nothing was changed.\n`);
      return 1;
    }
    const { user, ended } = outcome;
    const lines = [`The password of ${user.username} was reset; ${ended} session${ended === 1 ? '' : 's'} ended.`];
    // Running gateways learn of the ended sessions from the auth service within 15 s.
    if (fromStdin) io.stdout(`${lines[0]} They must choose a new password at the next sign-in.\n`);
    else
      io.stdout(
        framed([
          ...lines,
          '',
          `  user:     ${user.username}`,
          `  password: ${password}`,
          '',
          'It is shown only this once; a new one is chosen at the next sign-in.',
        ]),
      );
    return 0;
  } finally {
    await store.close();
  }
}

async function hasAuthSchema(store: Store): Promise<boolean> {
  const { rows } = await store.query(`select to_regclass('auth.users') is not null as present`);
  return rows[0]?.present === true;
}

/** The first line of the input, without its line end. */
function firstLine(text: string): string {
  return text.split(/\r?\n/, 1)[0] ?? '';
}
