/**
 * The simulator as a tool: `npx tsx simulator/src/main.ts <file.cid> [--ied NAME]
 * [--port 10102] [--host 0.0.0.0] [--password PW] [--tls-cert cert.pem --tls-key key.pem [--tls-ca ca.pem
 * [--require-client-cert]]]` serves one IED of an SCL file until interrupted, logging associations,
 * requests, controls and reports to stdout. With `--password` only associations with that ACSE password
 * are accepted; with `--tls-cert` and `--tls-key` it serves TLS (IEC 62351-3), asking for client
 * certificates signed by `--tls-ca` when given. With `--files DIR`, the files below DIR are its file
 * store (MMS file services), each named by its path under DIR (`COMTRADE/DR_0001.CFG`). Each `--wander REF`
 * (an MMS reference, `LD/LN$FC$DO$DA`, given once per attribute) keeps that attribute moving as a plant's
 * would: a float follows a slow wave around its value (a period of a minute), a boolean turns over every
 * 20 s, an integer steps up by one every second, so that values, trends and alarms can be watched.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { parseScl } from '@scada/iec61850';
import { startSimulator, wander } from './server.ts';

const USAGE =
  'usage: main.ts <file.cid|icd|scd> [--ied NAME] [--port 10102] [--host 127.0.0.1] [--password PW] ' +
  '[--tls-cert cert.pem --tls-key key.pem [--tls-ca ca.pem [--require-client-cert]]] [--files DIR] [--wander LD/LN$FC$DO$DA ...]';

/** The files below `dir`, by their path under it, with their times: a simulator's file store. */
async function filesOf(dir: string): Promise<Record<string, { data: Uint8Array; lastModified: string }>> {
  const out: Record<string, { data: Uint8Array; lastModified: string }> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[relative(dir, path).split('\\').join('/')] = { data: await readFile(path), lastModified: (await stat(path)).mtime.toISOString() };
  }
  return out;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      ied: { type: 'string' },
      port: { type: 'string', default: '10102' },
      host: { type: 'string', default: '127.0.0.1' },
      password: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'tls-ca': { type: 'string' },
      'require-client-cert': { type: 'boolean' },
      files: { type: 'string' },
      wander: { type: 'string', multiple: true },
      help: { type: 'boolean' },
    },
  });
  const file = positionals[0];
  if (values.help || file === undefined) {
    console.error(USAGE);
    return values.help ? 0 : 2;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port ${values.port} is not a TCP port`);
    return 2;
  }
  const parsed = await parseScl(await readFile(file));
  if (!parsed.ok) {
    for (const e of parsed.report.errors) console.error(`${file}:${e.line}:${e.column}: ${e.message}`);
    return 1;
  }
  if ((values['tls-cert'] === undefined) !== (values['tls-key'] === undefined)) {
    console.error('--tls-cert and --tls-key go together');
    return 2;
  }
  const tls =
    values['tls-cert'] === undefined || values['tls-key'] === undefined
      ? undefined
      : {
          cert: await readFile(values['tls-cert'], 'utf8'),
          key: await readFile(values['tls-key'], 'utf8'),
          ...(values['tls-ca'] === undefined ? {} : { ca: await readFile(values['tls-ca'], 'utf8') }),
          requireClientCert: values['require-client-cert'] === true,
        };
  const sim = await startSimulator({
    model: parsed.model,
    iedName: values.ied,
    host: values.host,
    port,
    ...(values.password === undefined ? {} : { authentication: { password: values.password } }),
    ...(tls ? { tls } : {}),
    ...(values.files === undefined ? {} : { files: await filesOf(values.files) }),
  });
  const log = (text: string) => console.log(`${new Date().toISOString()} ${text}`);
  sim.on('connection', (e) => log(`#${e.id} connected`));
  sim.on('association', (e) => log(`#${e.id} association ${e.accepted ? 'accepted' : `refused (${e.refusal})`}`));
  sim.on('tlsError', (e) => log(`TLS handshake failed: ${e.message}`));
  sim.on('request', (e) => log(`#${e.id} ${e.request.service} (invoke ${e.invokeId})`));
  sim.on('control', (e) => log(`#${e.sink} ${e.action} ${e.reference} ${e.accepted ? 'accepted' : `refused (AddCause ${e.addCause})`}`));
  sim.on('report', (e) => log(`#${e.sink} report ${e.rcb} (${e.reasons.join(', ')})`));
  sim.on('protocolError', (e) => log(`#${e.id} closed: ${e.message}`));
  sim.on('disconnect', (e) => log(`#${e.id} disconnected`));
  log(`simulating IED ${sim.iedName} (domains ${sim.domains.join(', ')}) on ${values.host}:${sim.port}${tls ? ' (TLS)' : ''}`);
  let stopWandering = () => {};
  try {
    stopWandering = wander(sim, values.wander ?? []);
  } catch (err) {
    console.error((err as Error).message);
    await sim.stop();
    return 2;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  stopWandering();
  await sim.stop();
  return 0;
}

process.exitCode = await main();
