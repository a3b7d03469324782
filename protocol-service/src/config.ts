import type { EnvReader } from '@scada/platform';

/** Settings of the protocol service. */
export type ProtocolConfig = { maxSclBytes: number };

/** Reads the protocol service's section of the environment. */
export function readProtocolConfig(env: EnvReader): ProtocolConfig {
  return { maxSclBytes: env.int('MAX_SCL_BYTES', 33554432, { min: 1024, max: 2 ** 31 - 1 }) };
}
