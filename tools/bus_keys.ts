/**
 * `npm run bus-keys -- <folder> [name=role,role …]`: makes the keys that authenticate contexts on the bus.
 * For each name (by default one per role: gateway, auth, config, protocol, history) an X25519 private key
 * `<name>.pem` (0600) for the processes of that name (`BUS_SIGNING_KEY_FILE`), and one public key set
 * `trusted-keys.json` for every process (`BUS_TRUSTED_KEYS_FILE`), which says the roles each key plays.
 * Existing files are never overwritten. `edge=gateway,auth,config,protocol` makes one key for a process
 * that runs every part; give each edge site a key of its own (`site-a=protocol`): every two keys share a
 * secret only their holders can compute, so a site cannot make what the hub's services accept as another's.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { busRoles, newBusKey, trustedKeyEntry, type BusRole } from '@scada/platform';

const [folder, ...specs] = process.argv.slice(2);
if (!folder) {
  process.stderr.write('usage: npm run bus-keys -- <folder> [name=role,role …]\n');
  process.exit(2);
}
const wanted = specs.length > 0 ? specs : busRoles.map((r) => `${r}=${r}`);
const holders: { name: string; roles: BusRole[] }[] = [];
for (const spec of wanted) {
  const [name, list] = spec.split('=');
  const roles = (list ?? '').split(',').filter(Boolean);
  if (!name || !/^[a-z0-9-]+$/.test(name) || roles.length === 0 || !roles.every((r) => (busRoles as readonly string[]).includes(r))) {
    process.stderr.write(`${spec}: expected name=role[,role…] with roles of ${busRoles.join(', ')}\n`);
    process.exit(2);
  }
  holders.push({ name, roles: roles as BusRole[] });
}
const files = [...holders.map((h) => join(folder, `${h.name}.pem`)), join(folder, 'trusted-keys.json')];
const present = files.filter((f) => existsSync(f));
if (present.length > 0) {
  process.stderr.write(`not overwriting ${present.join(', ')}\n`);
  process.exit(1);
}
mkdirSync(folder, { recursive: true, mode: 0o700 });
const keys = [];
for (const holder of holders) {
  const { pem, identity } = await newBusKey();
  writeFileSync(join(folder, `${holder.name}.pem`), pem, { mode: 0o600, flag: 'wx' });
  keys.push(trustedKeyEntry(identity, holder.roles));
}
writeFileSync(join(folder, 'trusted-keys.json'), `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o644, flag: 'wx' });
process.stdout.write(`${files.join('\n')}\n`);
