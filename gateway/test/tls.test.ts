import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { generate } from 'selfsigned';
import t from 'tap';
import { loadOrCreateCertificate } from '../src/tls.ts';

/** A logger whose lines the test can read. */
function capturingLogger() {
  const lines: string[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { log, lines };
}

t.test('without files a self-signed pair for localhost is generated into the data dir, key readable by its owner only', async (t) => {
  const dataDir = t.testdir();
  // A data folder as the platform keeps it (private), so the only line is the certificate's.
  await chmod(dataDir, 0o700);
  const { log, lines } = capturingLogger();

  const result = await loadOrCreateCertificate({ dataDir, log });

  t.equal(result.generated, true);
  t.equal(await readFile(join(dataDir, 'tls', 'cert.pem'), 'utf8'), result.cert);
  t.equal(await readFile(join(dataDir, 'tls', 'key.pem'), 'utf8'), result.key);
  t.equal((await stat(join(dataDir, 'tls', 'key.pem'))).mode & 0o777, 0o600);
  t.equal((await stat(join(dataDir, 'tls', 'cert.pem'))).mode & 0o777, 0o600);
  const x509 = new X509Certificate(result.cert);
  t.match(x509.subject, /CN=localhost/);
  t.match(x509.subjectAltName, /DNS:localhost/);
  t.match(x509.subjectAltName, /IP Address:127\.0\.0\.1/);
  t.match(x509.subjectAltName, /IP Address:0:0:0:0:0:0:0:1/);
  const days = (Date.parse(x509.validTo) - Date.parse(x509.validFrom)) / 86_400_000;
  t.ok(days >= 364 && days <= 367, `valid about one year (${days} days)`);
  t.ok(x509.checkPrivateKey(createPrivateKey(result.key)), 'the key belongs to the certificate');
  t.equal(lines.length, 1, 'logged once');
  t.match(lines[0], join(dataDir, 'tls', 'cert.pem'));
  t.notMatch(lines.join(''), /PRIVATE KEY/, 'the key is never logged');
});

t.test('a second start reuses the kept pair', async (t) => {
  const dataDir = t.testdir();
  const first = await loadOrCreateCertificate({ dataDir, log: pino({ level: 'silent' }) });

  const second = await loadOrCreateCertificate({ dataDir, log: pino({ level: 'silent' }) });

  t.equal(second.generated, false);
  t.equal(second.cert, first.cert);
  t.equal(second.key, first.key);
});

t.test('a kept certificate about to expire is replaced', async (t) => {
  const dataDir = t.testdir();
  const now = new Date();
  const old = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 86_400_000),
    notAfterDate: new Date(now.getTime() + 86_400_000),
  });
  await mkdir(join(dataDir, 'tls'));
  await writeFile(join(dataDir, 'tls', 'cert.pem'), old.cert);
  await writeFile(join(dataDir, 'tls', 'key.pem'), old.private);

  const result = await loadOrCreateCertificate({ dataDir, log: pino({ level: 'silent' }) });

  t.equal(result.generated, true);
  t.not(result.cert, old.cert);
  t.equal(await readFile(join(dataDir, 'tls', 'cert.pem'), 'utf8'), result.cert);
});

t.test('given files are read as they are', async (t) => {
  const pems = await generate([{ name: 'commonName', value: 'scada.example' }], { keyType: 'ec', algorithm: 'sha256' });
  const dir = t.testdir({ 'server.crt': pems.cert, 'server.key': pems.private, data: {} });
  const dataDir = join(dir, 'data');

  const result = await loadOrCreateCertificate({
    certFile: join(dir, 'server.crt'),
    keyFile: join(dir, 'server.key'),
    dataDir,
    log: pino({ level: 'silent' }),
  });

  t.same(result, { cert: pems.cert, key: pems.private, generated: false });
  await t.rejects(stat(join(dataDir, 'tls')), { code: 'ENOENT' }, 'nothing is generated');
});

t.test('a missing given file is an error naming it', async (t) => {
  const pems = await generate([{ name: 'commonName', value: 'scada.example' }], { keyType: 'ec', algorithm: 'sha256' });
  const dir = t.testdir({ 'server.crt': pems.cert });
  const keyFile = join(dir, 'missing.key');

  await t.rejects(loadOrCreateCertificate({ certFile: join(dir, 'server.crt'), keyFile, dataDir: dir, log: pino({ level: 'silent' }) }), {
    message: new RegExp(`private key file ${keyFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(ENOENT\\)`),
  });
});

t.test('a given key that does not belong to the certificate is an error naming both files', async (t) => {
  const [a, b] = await Promise.all(
    [1, 2].map(() => generate([{ name: 'commonName', value: 'x' }], { keyType: 'ec', algorithm: 'sha256' })),
  );
  const dir = t.testdir({ 'a.crt': a!.cert, 'b.key': b!.private });

  await t.rejects(
    loadOrCreateCertificate({ certFile: join(dir, 'a.crt'), keyFile: join(dir, 'b.key'), dataDir: dir, log: pino({ level: 'silent' }) }),
    { message: /b\.key does not belong to the certificate in .*a\.crt/ },
  );
});
