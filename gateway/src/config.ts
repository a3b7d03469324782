import { maxSclBytesSetting, parseIpList } from '@scada/contracts';
import type { EnvReader } from '@scada/platform';
import type { LiveSettings } from './live/hub.ts';
import type { ReadCacheSettings } from './read_cache.ts';

/** Settings of the gateway. */
export type GatewayConfig = {
  httpPort: number;
  httpsPort: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  trustedProxies: string[];
  loginRateLimitPerMinute: number;
  /** `/login` and `/validate` requests one client address may have unanswered at once. */
  loginInFlightPerAddress: number;
  /** Largest JSON, form or text body. */
  bodyLimitBytes: number;
  maxSclBytes: number;
  /** The live channel (`GET /api/live`); the contract's defaults when absent. */
  live?: LiveSettings;
  /** The read cache (`read_cache.ts`); off when absent. */
  readCache?: ReadCacheSettings;
  /** Origins whose pages `Iframe` boards of displays may frame (the console's CSP `frame-src`); none when empty. */
  frameOrigins?: string[];
};

/** Checks one origin an `Iframe` board may frame: `http(s)://host[:port]`, nothing after; null when it is one. */
export function checkFrameOrigin(entry: string): string | null {
  try {
    const url = new URL(entry);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry
      ? null
      : 'is not an origin (http(s)://host[:port])';
  } catch {
    return 'is not an origin (http(s)://host[:port])';
  }
}

/**
 * Checks one CIDR or address of a proxy list; null when it is valid. The rule is the IP filter's own
 * (`parseIpList`), which the client-address middleware builds its list with: an entry it would not take
 * (a zone id, a mapped IPv6 range wider than the IPv4 part) stops the start instead of being left out.
 */
export function checkCidr(entry: string): string | null {
  const { rules, errors } = parseIpList(entry, 'TRUSTED_PROXIES');
  return errors.length === 0 && rules.length === 1 ? null : 'is not an IP address or CIDR';
}

/** Reads the gateway's section of the environment. */
export function readGatewayConfig(env: EnvReader): GatewayConfig {
  const config: GatewayConfig = {
    httpPort: env.port('HTTP_PORT', 8081),
    httpsPort: env.port('HTTPS_PORT', 8082),
    tlsCertFile: env.optionalString('TLS_CERT_FILE'),
    tlsKeyFile: env.optionalString('TLS_KEY_FILE'),
    trustedProxies: env.list('TRUSTED_PROXIES', [], checkCidr),
    loginRateLimitPerMinute: env.int('LOGIN_RATE_LIMIT_PER_MINUTE', 60, { min: 1, max: 1_000_000 }),
    loginInFlightPerAddress: env.int('LOGIN_IN_FLIGHT_PER_ADDRESS', 8, { min: 1, max: 10_000 }),
    bodyLimitBytes: 1024 * 1024,
    maxSclBytes: env.int(maxSclBytesSetting.name, maxSclBytesSetting.fallback, maxSclBytesSetting),
    live: {
      clientBufferBytes: env.int('LIVE_CLIENT_BUFFER_BYTES', 1048576, { min: 4096, max: 2 ** 30 }),
      streamsPerUser: env.int('LIVE_STREAMS_PER_USER', 10, { min: 1, max: 10_000 }),
      heartbeatMs: env.int('LIVE_HEARTBEAT_MS', 15_000, { min: 50, max: 15_000 }),
      retentionMs: env.int('LIVE_EVENT_RETENTION_SECONDS', 120, { min: 60, max: 86_400 }) * 1000,
      accessCheckMs: env.int('LIVE_ACCESS_CHECK_MS', 10_000, { min: 100, max: 60_000 }),
    },
    frameOrigins: env.list('DISPLAY_FRAME_ORIGINS', [], checkFrameOrigin),
    readCache: {
      maxAgeMs: env.int('READ_CACHE_MAX_AGE_MS', 1000, { min: 0, max: 1000 }),
      maxChars: env.int('READ_CACHE_MB', 32, { min: 1, max: 4096 }) * 1024 * 1024,
    },
  };
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    env.fail('TLS_CERT_FILE, TLS_KEY_FILE: set both or neither');
  }
  if (config.httpPort !== 0 && config.httpPort === config.httpsPort) env.fail('HTTP_PORT, HTTPS_PORT: must differ');
  return config;
}
