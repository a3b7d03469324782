/**
 * Security of an association, the client against the simulator: ACSE password authentication (accepted,
 * refused with the AARE's diagnostic, refused by a closed connection as libiec61850 servers do) and TLS
 * (IEC 62351-3): the device's certificate checked against the configured CA, the name checked only when
 * asked for, client certificates where the device requires them. Each refusal says what was refused.
 */
import t from 'tap';
import { MmsClient, MmsConnectionError, type MmsClientOptions } from '@scada/iec61850';
import { startSimulator, type SimulatorOptions } from '../src/server.ts';
import { testPki } from '@scada/testkit/certificates';
import { fixtureModel } from '@scada/testkit/simulator_fixture';

const pki = await testPki();
const model = await fixtureModel();

async function simulator(t: { teardown(fn: () => unknown): void }, options: Partial<SimulatorOptions>) {
  const sim = await startSimulator({ model, port: 0, ...options });
  t.teardown(() => sim.stop());
  return sim;
}

/** Connects, identifies and concludes; answers the identity, or the error the connect failed with. */
async function attempt(port: number, o: Partial<MmsClientOptions> = {}): Promise<{ vendor: string } | MmsConnectionError> {
  try {
    const client = await MmsClient.connect({ host: '127.0.0.1', port, connectTimeoutMs: 5000, ...o });
    const identity = await client.identify();
    await client.conclude();
    return identity;
  } catch (err) {
    if (err instanceof MmsConnectionError) return err;
    throw err;
  }
}

t.test('a device that requires a password associates with the right one only', async (t) => {
  const sim = await simulator(t, { authentication: { password: 'feeder-7' } });
  const refusals: unknown[] = [];
  sim.on('association', (e) => void (e.accepted || refusals.push(e.refusal)));

  t.match(await attempt(sim.port, { password: 'feeder-7' }), { vendor: 'ACME' }, 'the right password');
  t.match(
    await attempt(sim.port, { password: 'feeder-8' }),
    { code: 'association_refused', message: /^the device refused the association: authentication failed \(association rejected/ },
    'a wrong one: the AARE says authentication failure',
  );
  t.match(
    await attempt(sim.port),
    { code: 'association_refused', message: /^the device refused the association: authentication required/ },
    'none: the AARE says authentication required',
  );
  t.same(refusals, ['authentication', 'authentication']);
});

t.test('a device that closes the connection on a refused password, as libiec61850 does, is understood', async (t) => {
  const sim = await simulator(t, { authentication: { password: 'feeder-7', onFailure: 'close' } });
  t.match(await attempt(sim.port, { password: 'feeder-7' }), { vendor: 'ACME' });
  t.match(await attempt(sim.port, { password: 'wrong' }), {
    code: 'association_refused',
    message: /^the device refused the association: authentication failed \(it closed the connection/,
  });
  t.match(await attempt(sim.port), {
    code: 'association_refused',
    message: /closed the connection in answer to the association request .*require a password; the connection has none/,
  });
});

t.test('TLS: a device certificate signed by the configured CA is accepted; another CA is refused and named', async (t) => {
  const sim = await simulator(t, { tls: { cert: pki.device.cert, key: pki.device.key } });
  t.match(await attempt(sim.port, { tls: { ca: pki.ca.cert } }), { vendor: 'ACME' }, 'pinned by the CA, no name checked');
  t.match(await attempt(sim.port, { tls: { ca: pki.otherCa.cert } }), {
    code: 'tls_failed',
    message: "TLS: the device's certificate is not signed by the configured CA",
  });
  t.match(await attempt(sim.port, { tls: { ca: pki.ca.cert, serverName: 'localhost' } }), { vendor: 'ACME' }, 'a name it carries');
  t.match(
    await attempt(sim.port, { tls: { ca: pki.ca.cert, serverName: 'feeder.example' } }),
    { code: 'tls_failed', message: /^TLS: the device's certificate is not for feeder\.example/ },
    'a name it does not carry',
  );
  t.match(
    await attempt(sim.port),
    { code: 'connect_failed', message: /closed the connection in answer to the transport connection request \(a device that expects TLS/ },
    'plain MMS to a TLS port',
  );
  const plain = await simulator(t, {});
  t.match(
    await attempt(plain.port, { tls: { ca: pki.ca.cert } }),
    {
      code: 'tls_failed',
      message: /^TLS: the device (closed the connection during the handshake: it does not speak TLS|does not answer TLS)/,
    },
    'TLS to a plain MMS port',
  );
});

t.test('TLS: a device that requires a client certificate takes only one its CA signed', async (t) => {
  const sim = await simulator(t, {
    tls: { cert: pki.device.cert, key: pki.device.key, ca: pki.ca.cert, requireClientCert: true },
    authentication: { password: 'both' },
  });
  const handshakes: string[] = [];
  sim.on('tlsError', (e) => void handshakes.push(e.message));
  t.match(
    await attempt(sim.port, { password: 'both', tls: { ca: pki.ca.cert, cert: pki.client.cert, key: pki.client.key } }),
    { vendor: 'ACME' },
    'client certificate and password together',
  );
  t.match(await attempt(sim.port, { password: 'both', tls: { ca: pki.ca.cert } }), {
    code: 'tls_failed',
    message:
      /^TLS: the device (requires a client certificate and the connection has none|closed the connection .*require a client certificate)/,
  });
  t.match(
    await attempt(sim.port, { password: 'both', tls: { ca: pki.ca.cert, cert: pki.strangerClient.cert, key: pki.strangerClient.key } }),
    {
      code: 'tls_failed',
      message:
        /^TLS: the device (refused the platform's client certificate|closed the connection .*does not accept the platform's client certificate)/,
    },
  );
  t.ok(handshakes.length >= 2, 'the device saw both handshakes fail');
});
