/**
 * Certificates for TLS tests (IEC 62351-3), made fresh per run with the `selfsigned` generator the gateway
 * already uses: a CA, a device certificate it signs (for localhost and 127.0.0.1, CN `SIM`), a client
 * certificate it signs, and a second CA that signed nothing here, as a wrong one. EC P-256: quick to make.
 */
import { generate } from 'selfsigned';

/** A certificate and its key, PEM. */
export type Pair = { cert: string; key: string };

/** What a TLS test needs. */
export type TestPki = { ca: Pair; otherCa: Pair; device: Pair; client: Pair; strangerClient: Pair };

const lifetime = () => {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(notBeforeDate.getTime() + 365 * 24 * 3600 * 1000);
  return { notBeforeDate, notAfterDate };
};

async function authority(name: string): Promise<Pair> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...lifetime(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

async function issued(name: string, by: Pair, usage: 'serverAuth' | 'clientAuth'): Promise<Pair> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...lifetime(),
    ca: by,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyAgreement: true, critical: true },
      { name: 'extKeyUsage', [usage]: true },
      ...(usage === 'serverAuth'
        ? [
            {
              name: 'subjectAltName' as const,
              altNames: [
                { type: 2 as const, value: 'localhost' },
                { type: 7 as const, ip: '127.0.0.1' },
              ],
            },
          ]
        : []),
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A fresh set of test certificates. */
export async function testPki(): Promise<TestPki> {
  const ca = await authority('Test Substation CA');
  const otherCa = await authority('Another CA');
  return {
    ca,
    otherCa,
    device: await issued('SIM', ca, 'serverAuth'),
    client: await issued('scada-platform', ca, 'clientAuth'),
    strangerClient: await issued('stranger', otherCa, 'clientAuth'),
  };
}
