import { centralSite } from '@scada/contracts';
import { loadMigrations, secretBox, secretsKeyOf, serve, type ServiceDefinition } from '@scada/platform';
import { readProtocolConfig, type ProtocolConfig } from './config.ts';
import { AlarmEvaluator } from './alarms/evaluator.ts';
import { alarmHandlers } from './handlers/alarms.ts';
import { connectionHandlers } from './handlers/connections.ts';
import { connectionSetHandlers } from './handlers/connection_sets.ts';
import { plainConnectionHandlers } from './handlers/plain_connections.ts';
import { liveHandlers } from './handlers/live.ts';
import { liveSnapshotHandler } from './handlers/live_snapshot.ts';
import { siteHandlers } from './handlers/sites.ts';
import { controlLogKept } from './handlers/device_ops.ts';
import { startSiteHub, type SiteHub } from './sites/hub.ts';
import { atSite, startSite } from './sites/site.ts';
import { deviceTargets } from './sessions/device_target.ts';
import { mmsConnector } from './sessions/mms_connector.ts';
import { startSupervisor, type Supervisor } from './sessions/supervisor.ts';
import { resealSecurity } from './store/connections.ts';
import { dropStaleUploads } from './store/files.ts';

/** Staged uploads nobody committed are dropped after this long. */
const staleUploadSeconds = 3600;

/** The protocol service: IEC 61850 connections, their SCL files and device models, live MMS sessions. */
export const protocolService: ServiceDefinition<ProtocolConfig> = {
  name: 'protocol',
  version: '0.1.0',
  description: 'IEC 61850 connections, SCL files and device models, live MMS sessions',
  readConfig: readProtocolConfig,
  schema: 'protocol',
  migrations: () => loadMigrations(new URL('../migrations/', import.meta.url)),
  setup: async ({ store, bus, config, log, instance }) => {
    // Device passwords and TLS keys are sealed under the same key as the auth service's secrets.
    const secrets = secretBox(await secretsKeyOf(config.secretsKey, config.dataDir, log), config.previousSecretsKeys);
    const resealed = await resealSecurity(store, secrets);
    if (resealed > 0) log.info({ connections: resealed }, 'sealed device passwords and TLS keys again under the current secrets key');
    const sweep = setInterval(() => {
      dropStaleUploads(store, staleUploadSeconds).catch((err: unknown) => log.warn({ err }, 'dropping stale uploads failed'));
    }, 600_000);
    sweep.unref();
    // Alarms are evaluated where values arrive, by the replica that holds the connection.
    let supervised: Supervisor | null = null;
    const evaluator = new AlarmEvaluator({
      store,
      bus,
      log: log.child({ part: 'alarms' }),
      owner: instance,
      held: () => supervised?.held() ?? [],
      lastValues: (space, id) => supervised?.local(space, id)?.values.list() ?? [],
    });
    // At the hub: the sites' links. At a site: its copy of its connections and its stream.
    const atHub = config.site === centralSite;
    const hub: SiteHub | null = atHub ? await startSiteHub({ store, bus, log, instance }) : null;
    const supervisor = startSupervisor({
      store,
      bus,
      log,
      owner: instance,
      site: config.site,
      connector: mmsConnector({
        requestTimeoutMs: config.mmsRequestTimeoutMs,
        queueWaitMs: config.mmsQueueWaitMs,
        idleProbeMs: config.mmsIdleProbeMs,
        log,
      }),
      maxDeviceRequests: config.deviceRequestsPerConnection,
      target: deviceTargets(store, secrets),
      leaseMs: config.sessionLeaseMs,
      tickMs: Math.max(500, Math.round(config.sessionLeaseMs / 5)),
      backoff: { baseMs: config.reconnectMinMs, capMs: config.reconnectMaxMs },
      onValues: (connection, values) => evaluator.values(connection, values),
    });
    supervised = supervisor;
    evaluator.start();
    const live = liveHandlers({
      store,
      bus,
      supervisor,
      instance,
      maxFileDownloadBytes: config.maxFileDownloadBytes,
      site: config.site,
      reachable: (site) => hub?.reachable(site) ?? false,
      lost: (site) => hub?.lost(site),
    });
    // Operations on a device this replica holds, on subjects of its own, for the replica a request reached.
    const holder = await serve(
      bus,
      { name: 'protocol-holder', version: '0.1.0', description: 'live device operations of one replica', instance },
      live.holderImplementations,
      log,
    );
    const stopAll = async () => {
      clearInterval(sweep);
      await holder.stop();
      await supervisor.stop();
      await evaluator.stop();
      await hub?.stop();
      await controlLogKept(store);
    };
    if (!hub) {
      // A site serves the hub's forwarded device requests and its ping on the site's own subjects, nothing else.
      const site = startSite({
        store,
        bus,
        log,
        site: config.site,
        instance,
        streamMaxBytes: config.siteStreamMaxBytes,
        kick: () => supervisor.kick(),
      });
      return {
        implementations: [
          ...site.implementations,
          ...live.deviceImplementations.map((impl) => ({ ...impl, op: atSite(impl.op, config.site) })),
        ],
        stop: async () => {
          await site.stop();
          await stopAll();
        },
      };
    }
    return {
      implementations: [
        ...siteHandlers({ store, hub }),
        ...connectionHandlers({ store, bus, config, secrets, liveBrowse: live.liveBrowse }),
        ...live.implementations,
        ...plainConnectionHandlers({ store, bus, config, supervisor, secrets }),
        ...connectionSetHandlers({ store, bus, config, supervisor, secrets }),
        liveSnapshotHandler({ store, bus, supervisor, instance }),
        ...alarmHandlers({ store, evaluator, shelveMaxMinutes: config.alarmShelveMaxMinutes }),
      ],
      stop: stopAll,
    };
  },
};
