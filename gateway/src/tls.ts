import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { privateFolder, type Logger } from '@scada/platform';

/** A certificate and its private key, PEM encoded; `generated` is true when this call made them. */
export type TlsCertificate = { cert: string; key: string; generated: boolean };

/** A generated certificate is renewed at start-up once it has less than this left. */
const renewBeforeMs = 30 * 24 * 60 * 60 * 1000;

/**
 * The certificate of the HTTPS listener: the configured files when both are given; otherwise the
 * self-signed pair kept in `<dataDir>/tls/`, generated there on first start (and again when it is about
 * to expire or cannot be used), so that clients see the same certificate across restarts.
 */
export async function loadOrCreateCertificate(options: {
  certFile?: string;
  keyFile?: string;
  dataDir: string;
  log: Logger;
}): Promise<TlsCertificate> {
  const { certFile, keyFile, log } = options;
  if (certFile !== undefined || keyFile !== undefined) {
    if (certFile === undefined || keyFile === undefined) throw new Error('TLS: give both a certificate file and a key file, or neither');
    const pair = { cert: await readPem(certFile, 'certificate'), key: await readPem(keyFile, 'private key') };
    checkPair(pair, certFile, keyFile);
    return { ...pair, generated: false };
  }
  await privateFolder(options.dataDir, log);
  const dir = join(options.dataDir, 'tls');
  const files = { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
  const kept = await readKept(files.cert, files.key);
  if (kept.pair) {
    log.debug({ certFile: files.cert }, 'using the self-signed TLS certificate');
    return { ...kept.pair, generated: false };
  }
  const pair = await generateSelfSigned();
  await privateFolder(dir, log);
  // The key first: a certificate without its key is never left behind as if it were usable.
  await writePrivate(files.key, pair.key);
  await writePrivate(files.cert, pair.cert);
  const x509 = new X509Certificate(pair.cert);
  log.info(
    { certFile: files.cert, keyFile: files.key, fingerprint256: x509.fingerprint256, validTo: x509.validTo, reason: kept.reason },
    'generated a self-signed TLS certificate',
  );
  return { ...pair, generated: true };
}

/** Reads a configured PEM file; an error names the file and what it should hold. */
async function readPem(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new Error(`TLS: cannot read the ${what} file ${file} (${code})`, { cause: err });
  }
}

/** Checks that a configured pair parses and belongs together, so a mistake fails at start-up, naming the files. */
function checkPair(pair: { cert: string; key: string }, certFile: string, keyFile: string): void {
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(pair.cert);
  } catch (err) {
    throw new Error(`TLS: ${certFile} holds no PEM certificate`, { cause: err });
  }
  let matches: boolean;
  try {
    matches = x509.checkPrivateKey(createPrivateKey(pair.key));
  } catch (err) {
    throw new Error(`TLS: ${keyFile} holds no PEM private key`, { cause: err });
  }
  if (!matches) throw new Error(`TLS: the key in ${keyFile} does not belong to the certificate in ${certFile}`);
}

/** The generated pair kept from an earlier start, or why there is none to use. */
async function readKept(certFile: string, keyFile: string): Promise<{ pair?: { cert: string; key: string }; reason: string }> {
  let pair: { cert: string; key: string };
  try {
    pair = { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } catch {
    return { reason: 'none kept yet' };
  }
  try {
    checkPair(pair, certFile, keyFile);
  } catch {
    return { reason: 'the kept pair is unusable' };
  }
  const validTo = Date.parse(new X509Certificate(pair.cert).validTo);
  if (validTo - Date.now() < renewBeforeMs) return { reason: 'the kept certificate expires soon' };
  return { pair, reason: 'kept' };
}

/**
 * A self-signed server certificate for localhost, valid one year: RSA 2048 for the widest client support.
 * The generator (with its X.509 and ASN.1 libraries) is loaded only here, on the rare start that makes one.
 */
async function generateSelfSigned(): Promise<{ cert: string; key: string }> {
  const { generate } = await import('selfsigned');
  const notBeforeDate = new Date();
  const notAfterDate = new Date(notBeforeDate);
  notAfterDate.setFullYear(notAfterDate.getFullYear() + 1);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** Writes a file only its owner can read, through a new file renamed into place, never widening access. */
async function writePrivate(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await rm(temporary, { force: true });
  await writeFile(temporary, content, { mode: 0o600, flag: 'wx' });
  await rename(temporary, file);
}
