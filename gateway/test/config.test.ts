import t from 'tap';
import { ConfigError, EnvReader } from '@scada/platform';
import { readGatewayConfig } from '../src/config.ts';
import { consoleCspOf } from '../src/routes/console.ts';

/** The gateway's settings from `vars`, or the message the start stops with. */
function read(vars: Record<string, string>): string[] | string {
  const env = new EnvReader(vars);
  const config = readGatewayConfig(env);
  try {
    env.finish();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return config.trustedProxies;
}

t.test('TRUSTED_PROXIES takes what the client-address middleware takes, and stops the start on anything else', async (t) => {
  t.same(read({ TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1 ::1/128 ::ffff:127.0.0.1 fd00::/8' }), [
    '10.0.0.0/8',
    '127.0.0.1',
    '::1/128',
    '::ffff:127.0.0.1',
    'fd00::/8',
  ]);
  // Each of these an earlier check let through while the middleware left it out of its list in silence,
  // so every client behind the proxy shared the proxy's address.
  for (const entry of ['fe80::1%eth0', '::ffff:127.0.0.0/8', '10.0.0.0/33', '127.1', 'proxy.local', '10.0.0.0/8/8'])
    t.match(read({ TRUSTED_PROXIES: entry }), /TRUSTED_PROXIES/, `${entry} stops the start`);
});

t.test('DISPLAY_FRAME_ORIGINS takes origins only, and the console CSP frames exactly those', async (t) => {
  const origins = (vars: Record<string, string>) => {
    const env = new EnvReader(vars);
    const config = readGatewayConfig(env);
    try {
      env.finish();
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      throw err;
    }
    return config.frameOrigins;
  };
  t.same(origins({}), []);
  t.same(origins({ DISPLAY_FRAME_ORIGINS: 'https://grafana.plant.local, http://10.0.0.5:3000' }), [
    'https://grafana.plant.local',
    'http://10.0.0.5:3000',
  ]);
  for (const entry of ['https://grafana.plant.local/', 'https://x.local/path', 'javascript:alert(1)', 'ftp://x.local', '*', "'self'"])
    t.match(origins({ DISPLAY_FRAME_ORIGINS: entry }), /DISPLAY_FRAME_ORIGINS/, `${entry} stops the start`);
  t.notMatch(consoleCspOf([]), /frame-src/, 'no origin: frames fall under default-src none');
  t.match(consoleCspOf(['https://a.local', 'http://b.local:3000']), /; frame-src https:\/\/a\.local http:\/\/b\.local:3000$/);
});
