import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createDatabase } from '@scada/testkit/databases';
import { freePort, startMain, waitFor, type MainProcess } from '@scada/testkit/processes';
import { roleBusKeys } from '@scada/testkit/bus_keys';
import { platformNatsEnv } from '@scada/testkit/nats_auth';

const servers = Boolean(process.env.NATS_URL && process.env.DATABASE_URL);

t.test(
  'a gateway and the services in separate processes, over NATS and PostgreSQL',
  { skip: servers ? false : 'needs NATS_URL and DATABASE_URL' },
  async (t) => {
    const database = await createDatabase(process.env.DATABASE_URL as string);
    const dataDir = await mkdtemp(join(tmpdir(), 'scada-split-'));
    const keys = roleBusKeys({ gateway: ['gateway'], services: ['auth', 'config', 'protocol'] });
    const common = {
      ...platformNatsEnv(),
      DATABASE_URL: database.url,
      SECRETS_KEY: randomBytes(32).toString('base64'),
      BUS_SUBJECT_PREFIX: `s${randomBytes(6).toString('hex')}`,
      DATA_DIR: dataDir,
      ADMIN_PASSWORD: 'split-admin-password',
      LOG_LEVEL: 'warn',
    };
    const port = await freePort();
    const running: MainProcess[] = [];
    const start = (env: Record<string, string>) => {
      const run = startMain({ ...common, ...env });
      running.push(run);
      return run;
    };
    t.teardown(async () => {
      for (const run of running) run.child.kill('SIGKILL');
      await Promise.all(running.map((r) => r.exited));
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    start({ SERVICES: 'gateway', HTTP_PORT: String(port), HTTPS_PORT: '0', ...keys.gateway });
    let services = start({ SERVICES: 'auth,config,protocol', HTTP_PORT: '0', HTTPS_PORT: '0', ...keys.services });
    const base = `http://127.0.0.1:${port}`;

    const listed = (r: Response, n: number) =>
      r
        .clone()
        .json()
        .then(
          (b: { services?: Record<string, unknown[]> }) => ['auth', 'config', 'protocol'].every((s) => b.services?.[s]?.length === n),
          () => false,
        );
    const ready = await waitFor(`${base}/readyz`, 60_000, (r) => r.status === 200 && listed(r, 1));
    t.equal(ready.status, 200, 'ready, listing a replica of every service, once both processes run');
    const echo = await waitFor(`${base}/api/echo?text=hi`, 10_000, (r) => r.status === 200);
    t.match(await echo.json(), { text: 'hi', service: 'config' }, 'a request crosses from one process to the other');

    services.child.kill('SIGTERM');
    t.equal(await services.exited, 0, 'the services process stops cleanly on SIGTERM');
    const down = await waitFor(`${base}/readyz`, 10_000, (r) => listed(r, 0));
    t.equal(down.status, 200, 'the gateway stays ready without the services: their own routes answer 503');
    t.ok(await listed(down, 0), 'and lists no replica of any service');
    const unavailable = await fetch(`${base}/api/echo?text=hi`);
    t.equal(unavailable.status, 503, 'a request with no service to answer it');
    t.ok(Number(unavailable.headers.get('retry-after')) > 0, 'with Retry-After');

    services = start({ SERVICES: 'auth,config,protocol', HTTP_PORT: '0', HTTPS_PORT: '0', ...keys.services });
    const back = await waitFor(`${base}/api/echo?text=again`, 60_000, (r) => r.status === 200);
    t.equal(back.status, 200, 'served again once the services return, without restarting the gateway');
  },
);
