/**
 * A hub and a site on one machine: two NATS servers on free loopback ports (the hub's JetStream domain
 * `hub`, the site's the site's name, the site a leaf node of the hub), the leaf connection through a TCP
 * relay that can cut the link, as a WAN does. The configurations are the ones `deploy/edge/` ships, with
 * ports and folders of the test's own, and the users `npm run nats-config` renders: the hub's roles and its
 * leaf user of each site, the site's protocol service; a harness user with every right on each server for
 * the test's own connections.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allEvents } from '@scada/contracts';
import { freePort } from './processes.ts';
import { authorizationBlock, natsRoles, passwordVariable, type NatsRole } from '../../deploy/nats/permissions.ts';
import { renderSiteAuthorization } from '../../deploy/nats/render.ts';
import { servicePasswordVariable, sitePasswordVariable, siteUser } from '../../deploy/nats/site_permissions.ts';

/** Whether `nats-server` is on this machine (the sites' tests start servers of their own). */
export function hasNatsServer(): boolean {
  try {
    execFileSync('nats-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A NATS server the test started. */
export type NatsServer = {
  url: string;
  port: number;
  child: ChildProcess;
  /** The last of what the server logged. */
  log(): string;
  /** Every permission violation the server logged (a client or a leaf node refused a subject). */
  violations(): string[];
  stop(): Promise<void>;
};

async function startNats(config: string, port: number, dir: string, name: string): Promise<NatsServer> {
  const file = join(dir, `${name}.conf`);
  await writeFile(file, config);
  const child = spawn('nats-server', ['-c', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let partial = '';
  const violations: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    const lines = (partial + String(d)).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.includes('Violation')) violations.push(line.replace(/^.*?\] /, ''));
  });
  // Ready when it says so: an open port alone may be another process's that took the port first, when
  // this server could not bind it.
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no "Server is ready" within 15 s')), 15_000);
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + String(d)).slice(-20_000);
      if (stderr.includes('Server is ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code ?? signal})`));
    });
  });
  try {
    await ready;
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`nats-server ${name} did not start: ${stderr}`, { cause: err });
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    child,
    log: () => stderr,
    violations: () => [...violations],
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What a site's NATS server keeps from the hub's traffic, and what it does not send up (`deploy/edge/nats-site.conf`). */
export function siteLeafRules(): { denyExports: string[]; denyImports: string[] } {
  return {
    // Events leave a site through its stream only, which the hub sources: never also as plain messages.
    denyExports: [allEvents],
    // The general subjects of the services (`protocol.v1.readConnectionValues`) stay the hub's: a request
    // of the hub's queue group never lands at a site. The site's own subjects (`protocol.v1.site.<name>.…`) cross.
    denyImports: ['*.v1.*'],
  };
}

/** Passwords of the servers' users: letters and digits, beginning with a letter (nats-server reads them as values). */
function password(): string {
  return `p${randomBytes(16).toString('hex')}`;
}

/** Who signs in where: the hub's roles and its leaf user of each site, the site's protocol service, a harness user on each. */
export type SiteLinkUsers = {
  roles: Record<NatsRole, string>;
  sites: Record<string, string>;
  protocol: string;
  harness: { user: string; pass: string };
};

function linkUsers(sites: readonly string[]): SiteLinkUsers {
  return {
    roles: Object.fromEntries(natsRoles.map((r) => [r, password()])) as Record<NatsRole, string>,
    sites: Object.fromEntries(sites.map((s) => [s, password()])),
    protocol: password(),
    harness: { user: 'harness', pass: password() },
  };
}

/** Writes a rendered authorization block with the passwords in place of the server's environment variables. */
function withPasswords(block: string, values: Record<string, string>): string {
  return block.replace(/password: \$([A-Z0-9_]+)/g, (_, name: string) => `password: ${JSON.stringify(values[name] ?? '')}`);
}

/**
 * The hub's NATS configuration: JetStream domain `hub`, leaf nodes accepted on `leafPort`, announcing
 * `advertise` (where sites reach it: here the relay) as its leaf address, so a site that reconnects to what
 * it was told goes through the relay too; the shipped users, each site's leaf user among them.
 */
export function hubNatsConfig(port: number, leafPort: number, storeDir: string, advertise: string, users: SiteLinkUsers): string {
  const sites = Object.keys(users.sites);
  const values = {
    ...Object.fromEntries(natsRoles.map((r) => [passwordVariable(r), users.roles[r]])),
    ...Object.fromEntries(sites.map((s) => [sitePasswordVariable(s), users.sites[s]])),
  };
  return `port: ${port}
host: 127.0.0.1
server_name: hub
jetstream { store_dir: "${storeDir}", domain: hub }
leafnodes { host: 127.0.0.1, port: ${leafPort}, advertise: "${advertise}" }
${withPasswords(authorizationBlock('', [{ user: users.harness.user, password: users.harness.pass }], sites), values)}`;
}

/** A site's NATS configuration: JetStream domain = the site, a leaf node of the hub that notices a dead link within seconds; the shipped users. */
export function siteNatsConfig(site: string, port: number, hubLeafUrl: string, storeDir: string, users: SiteLinkUsers): string {
  const rules = siteLeafRules();
  const list = (xs: string[]) => `[${xs.map((x) => `"${x}"`).join(', ')}]`;
  return `port: ${port}
host: 127.0.0.1
server_name: ${site}
jetstream { store_dir: "${storeDir}", domain: ${site} }
ping_interval: "5s"
ping_max: 3
leafnodes {
  reconnect: 1
  remotes: [ { url: "${hubLeafUrl}", deny_exports: ${list(rules.denyExports)}, deny_imports: ${list(rules.denyImports)} } ]
}
${withPasswords(renderSiteAuthorization('', [{ user: users.harness.user, password: users.harness.pass }]), { [servicePasswordVariable]: users.protocol })}`;
}

/** A TCP relay between the site's leaf connection and the hub, whose link can be cut and restored. */
export type Relay = { port: number; cut(): void; restore(): void; isCut(): boolean; close(): Promise<void> };

export async function startRelay(targetPort: number, port?: number): Promise<Relay> {
  const sockets = new Set<Socket>();
  let down = false;
  const server: Server = createServer((client) => {
    if (down) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  const listening = port ?? (await freePort());
  await new Promise<void>((r) => server.listen(listening, '127.0.0.1', r));
  return {
    port: listening,
    cut() {
      down = true;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    isCut: () => down,
    close: async () => {
      down = true;
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A hub NATS server and a site's, linked through a relay, with who signs in where. */
export type SiteLink = {
  hub: NatsServer;
  site: NatsServer;
  relay: Relay;
  users: SiteLinkUsers;
  /** The environment that signs a hub process in as a role. */
  hubEnv(role: NatsRole): Record<string, string>;
  /** The environment that signs the site's protocol service in to the site's server. */
  siteEnv(): Record<string, string>;
  stop(): Promise<void>;
};

/** Starts a hub and the site `site`; the hub also has leaf users for `otherSites` (none of them connected). */
export async function startSiteLink(site: string, otherSites: readonly string[] = []): Promise<SiteLink> {
  // Free ports are only free until somebody takes them: another test of the run may bind one between
  // the look and the servers' start, so a link that does not come up is tried again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await tryLink(site, otherSites);
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
}

async function tryLink(site: string, otherSites: readonly string[]): Promise<SiteLink> {
  const dir = await mkdtemp(join(tmpdir(), 'scada-sites-'));
  const users = linkUsers([site, ...otherSites]);
  const [hubPort, leafPort, sitePort, relayPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const cleanup: (() => Promise<unknown>)[] = [() => rm(dir, { recursive: true, force: true })];
  const undo = async (err: unknown): Promise<never> => {
    for (const step of cleanup.reverse()) await step().catch(() => {});
    throw err;
  };
  const hubConfig = hubNatsConfig(hubPort, leafPort, join(dir, 'hub'), `127.0.0.1:${relayPort}`, users);
  const hub = await startNats(hubConfig, hubPort, dir, 'hub').catch(undo);
  cleanup.push(() => hub.stop());
  const relay = await startRelay(leafPort, relayPort).catch(undo);
  cleanup.push(() => relay.close());
  const leafUrl = `nats-leaf://${siteUser(site)}:${users.sites[site]}@127.0.0.1:${relay.port}`;
  const siteServer = await startNats(siteNatsConfig(site, sitePort, leafUrl, join(dir, site), users), sitePort, dir, site).catch(undo);
  return {
    hub,
    site: siteServer,
    relay,
    users,
    hubEnv: (role) => ({ NATS_URL: hub.url, NATS_USER: role, NATS_PASSWORD: users.roles[role] }),
    siteEnv: () => ({ NATS_URL: siteServer.url, NATS_USER: 'protocol', NATS_PASSWORD: users.protocol }),
    stop: async () => {
      await relay.close();
      await siteServer.stop();
      await hub.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
