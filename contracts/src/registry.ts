import type { Operation, ServiceName } from './operation.ts';
import { adminOperations } from './auth/admin_ops.ts';
import { membershipOperations } from './auth/membership_ops.ts';
import { profileOperations } from './auth/profile_ops.ts';
import { sessionOperations } from './auth/session_ops.ts';
import { configOperations } from './config/mod.ts';
import { plainConnectionOperations } from './protocol/connection_ops.ts';
import { connectionOperations } from './protocol/connections.ts';
import { deviceRecordOperations } from './protocol/device_records.ts';
import { sessionOperations61850 } from './protocol/live.ts';
import { liveChannelOperations } from './protocol/live_channel.ts';
import { alarmOperations } from './protocol/alarms.ts';
import { settingGroupOperations } from './protocol/setting_groups.ts';
import { authPing, configPing, echo, historyPing, protocolPing } from './system.ts';
import { historyOperations } from './history/ops.ts';
import { siteOperations } from './protocol/sites.ts';
import { allStagingOperations } from './staging.ts';

/**
 * Every operation of the platform, in one list. The gateway routes from it, the services serve from it,
 * and the OpenAPI document is generated from it: no subject string is written anywhere else.
 */
export const operations: readonly Operation[] = [
  authPing,
  configPing,
  protocolPing,
  echo,
  ...sessionOperations,
  ...adminOperations,
  ...profileOperations,
  ...membershipOperations,
  ...configOperations,
  ...connectionOperations,
  ...plainConnectionOperations,
  ...sessionOperations61850,
  ...deviceRecordOperations,
  ...settingGroupOperations,
  ...liveChannelOperations,
  historyPing,
  ...historyOperations,
  ...alarmOperations,
  ...siteOperations,
  ...allStagingOperations,
];

/** The operations one service serves. */
export function operationsOf(service: ServiceName): Operation[] {
  return operations.filter((op) => op.service === service);
}

/** The ping operation of each service, for readiness checks. */
export const pings: Record<ServiceName, Operation> = {
  auth: authPing,
  config: configPing,
  protocol: protocolPing,
  history: historyPing,
};

/** Version label of the API, shared with the reference interface description. */
export const apiVersion = '20260422-7';
