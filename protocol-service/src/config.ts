import {
  centralSite,
  defaultAlarmShelveMaxMinutes,
  deviceRequestsPerConnectionSetting,
  maxFileDownloadBytesSetting,
  maxSclBytesSetting,
  sitePattern,
} from '@scada/contracts';
import { readSecretsKeys, type EnvReader } from '@scada/platform';
import { DEFAULT_BACKOFF_CAP_MS } from './sessions/backoff.ts';

/** Settings of the protocol service. */
export type ProtocolConfig = {
  maxSclBytes: number;
  /** How long a replica's hold on a started connection lasts unrenewed; another replica takes over after it. */
  sessionLeaseMs: number;
  /** Each MMS request, from sending to the answer. */
  mmsRequestTimeoutMs: number;
  /** How long an MMS request may wait for a turn behind the association's outstanding ones; then 504, never sent. */
  mmsQueueWaitMs: number;
  /** The API's device requests one connection takes at once on its holding replica; one more is 503 `overloaded` at once. */
  deviceRequestsPerConnection: number;
  /** Silence from a device after which it is probed (identify); no answer within the request timeout ends the association. */
  mmsIdleProbeMs: number;
  /**
   * Backoff between connection attempts: from the first wait to the cap. The cap bounds how long a
   * session takes to notice a device that answers again, after an outage of any length.
   */
  reconnectMinMs: number;
  reconnectMaxMs: number;
  /** The largest device file a download fetches; a larger one is closed on the device and refused. */
  maxFileDownloadBytes: number;
  /** The key that seals device passwords and TLS keys (the auth service's SECRETS_KEY); null: the embedded mode's `DATA_DIR/secrets.key`. */
  secretsKey: Buffer | null;
  /** Keys before a rotation: they still open, and what they sealed is sealed again at start. */
  previousSecretsKeys: Buffer[];
  dataDir: string;
  /** The longest an alarm may be shelved (ALARM_SHELVE_MAX_MINUTES). */
  alarmShelveMaxMinutes: number;
  /** The site whose connections this service holds (SITE): `central` at the hub, the substation's name at a site. */
  site: string;
  /** At a site: how large its event stream may grow while the uplink is down before the oldest events go (SITE_STREAM_MAX_BYTES). */
  siteStreamMaxBytes: number;
};

/** A site's stream holds 8 GiB unless told otherwise: 24 h of 100 reports a second at ~920 bytes each (`deploy/README.md`). */
export const defaultSiteStreamMaxBytes = 8 * 1024 * 1024 * 1024;

/** Reads the protocol service's section of the environment. */
export function readProtocolConfig(env: EnvReader): ProtocolConfig {
  const keys = readSecretsKeys(env);
  return {
    maxSclBytes: env.int(maxSclBytesSetting.name, maxSclBytesSetting.fallback, maxSclBytesSetting),
    sessionLeaseMs: env.int('SESSION_LEASE_SECONDS', 10, { min: 2, max: 300 }) * 1000,
    mmsRequestTimeoutMs: env.int('MMS_REQUEST_TIMEOUT_MS', 10000, { min: 100, max: 120000 }),
    mmsQueueWaitMs: env.int('MMS_QUEUE_WAIT_MS', 5000, { min: 100, max: 120000 }),
    deviceRequestsPerConnection: env.int(
      deviceRequestsPerConnectionSetting.name,
      deviceRequestsPerConnectionSetting.fallback,
      deviceRequestsPerConnectionSetting,
    ),
    mmsIdleProbeMs: env.int('MMS_IDLE_PROBE_MS', 10000, { min: 0, max: 600000 }),
    reconnectMinMs: env.int('MMS_RECONNECT_MIN_MS', 500, { min: 10, max: 60000 }),
    reconnectMaxMs: env.int('MMS_RECONNECT_MAX_MS', DEFAULT_BACKOFF_CAP_MS, { min: 100, max: 600000 }),
    maxFileDownloadBytes: env.int(maxFileDownloadBytesSetting.name, maxFileDownloadBytesSetting.fallback, maxFileDownloadBytesSetting),
    secretsKey: keys.current,
    previousSecretsKeys: keys.previous,
    dataDir: env.string('DATA_DIR', './data'),
    alarmShelveMaxMinutes: env.int('ALARM_SHELVE_MAX_MINUTES', defaultAlarmShelveMaxMinutes, { min: 1, max: 100_000 }),
    site: siteOf(env),
    siteStreamMaxBytes: env.int('SITE_STREAM_MAX_BYTES', defaultSiteStreamMaxBytes, { min: 1024 * 1024, max: 2 ** 50 }),
  };
}

function siteOf(env: EnvReader): string {
  const site = env.string('SITE', centralSite);
  if (!new RegExp(sitePattern).test(site))
    env.fail(`SITE: a lower-case letter, then up to 31 lower-case letters, digits or '-' (got "${site}")`);
  return site;
}
