/**
 * An IEC 61850 MMS server simulator: the device of one IED of an SCL model, served over ISO-on-TCP (or
 * over TLS, as IEC 62351-3 has it) to any number of clients, with hooks and faults for tests and
 * benchmarks of MMS clients, and an ACSE password when asked. `startSimulator` listens; `setValue` changes
 * the process (and reports it); `restart` and `stop` drop every association.
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import type { JournalEntry, MmsData, SclModel } from '@scada/iec61850/wire';
import { Association, type AssociationEvents, type Authentication, type Faults } from './association.ts';
import { conform } from './basic_types.ts';
import { ControlEngine, type ControlNotice } from './controls.ts';
import { assignNode, readNode, type DataNode } from './data_tree.ts';
import { buildDevice, findNode, splitReference, type Device } from './device.ts';
import { FileStore, type StoredFile } from './file_store.ts';
import { Journals, type LogOptions } from './journals.ts';
import { ReportEngine, type ReportNotice } from './reports.ts';
import { SettingGroupEngine } from './setting_groups.ts';
import type { Identity, ServiceContext } from './services.ts';

export type { Authentication, Faults } from './association.ts';
export type { Identity } from './services.ts';
export type { LogOptions } from './journals.ts';

/** How to start a simulator. */
export type SimulatorOptions = {
  model: SclModel;
  /** The IED to simulate; the first IED with a server by default. */
  iedName?: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 102; 0 picks a free port. */
  port?: number;
  faults?: Faults;
  /** Most names in one GetNameList response (default 100). */
  nameListPageSize?: number;
  /** The device's file store: files by name (`COMTRADE/DR_0001.CFG`), with their content and (ISO) time; none by default. */
  files?: Record<string, { data: Uint8Array | string; lastModified?: string }>;
  /**
   * The largest MMS PDU the device accepts (65000 by default, as libiec61850's servers): an association
   * gets the smaller of this and the client's proposal, and a FileRead answers as much of a file as it holds.
   */
  maxPduSize?: number;
  /** Most entries in one FileDirectory response (default 100). */
  fileDirectoryPageSize?: number;
  /** The device's logs: each logs the changes of a data set's members. */
  logs?: LogOptions[];
  /** Most entries in one ReadJournal response (default 100). */
  journalPageSize?: number;
  /** Name a one-instance indexed report control block `<name>01`, as libiec61850 servers do (default true). */
  indexSingleReportInstances?: boolean;
  /** What Identify answers (default: the IED's manufacturer and type). */
  identity?: Partial<Identity>;
  /** Accept only associations with this ACSE password. */
  authentication?: Authentication;
  /** Serve TLS instead of plain TCP. */
  tls?: SimulatorTls;
};

/**
 * TLS as a device serves it, PEM text: its certificate (with its chain) and key; with `ca`, client
 * certificates are asked for and checked against it, and with `requireClientCert` a client without one
 * (or with one the CA did not sign) is refused in the handshake. TLS 1.2 and 1.3.
 */
export type SimulatorTls = { cert: string; key: string; ca?: string; requireClientCert?: boolean };

/** Events a simulator emits. */
export type SimulatorEvents = AssociationEvents & {
  connection: { id: number };
  disconnect: { id: number };
  control: ControlNotice;
  report: ReportNotice;
  /** A value changed, by a client's write, a control or `setValue`. */
  change: { reference: string; value: MmsData };
  /** A TLS handshake failed (the client refused the certificate, or had none where one is required). */
  tlsError: { message: string };
};

/** A running simulator. */
export type Simulator = {
  /** The port it listens on (the real one when started with port 0). */
  readonly port: number;
  readonly identity: Identity;
  /** The IED simulated and its MMS domains. */
  readonly iedName: string;
  readonly domains: string[];
  /** Sets a data attribute, object or FC level by reference (`LD/LN$FC$DO$DA`); reports follow. Throws on an unknown reference or a value of the wrong type. */
  setValue(reference: string, value: MmsData): void;
  /** The current value at a reference; throws on an unknown one. */
  value(reference: string): MmsData;
  /** Open TCP connections. */
  connections(): number;
  /** Files the clients have open now (FileOpen without FileClose, on associations still open). */
  openFiles(): number;
  /** The entries a log (`LD/LN$LogName`) holds now. */
  logEntries(name: string): JournalEntry[];
  /** Drops every association and the listener, then listens again on the same port. */
  restart(): Promise<void>;
  /** Closes the listener and every association. */
  stop(): Promise<void>;
  on<K extends keyof SimulatorEvents>(event: K, listener: (payload: SimulatorEvents[K]) => void): Simulator;
  off<K extends keyof SimulatorEvents>(event: K, listener: (payload: SimulatorEvents[K]) => void): Simulator;
};

const LIMITS = { maxPduSize: 65000, maxOutstanding: 5, nesting: 10 };

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

function nodeAt(device: Device, reference: string): DataNode {
  const name = splitReference(reference);
  const node = name ? findNode(device, name) : undefined;
  if (!node) throw new Error(`no data at ${reference}`);
  return node;
}

/** Starts a simulator of one IED of `options.model`. */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const device = buildDevice(options.model, options.iedName, options.indexSingleReportInstances ?? true);
  const events = new EventEmitter();
  const emit = <K extends keyof SimulatorEvents>(event: K, payload: SimulatorEvents[K]) => void events.emit(event, payload);
  const faults = options.faults ?? {};
  const identity: Identity = {
    vendor: options.identity?.vendor ?? device.ied.manufacturer ?? 'scada-platform',
    model: options.identity?.model ?? device.ied.type ?? device.ied.name,
    revision: options.identity?.revision ?? device.ied.configVersion ?? '1.0',
  };
  const files = new FileStore(storedFiles(options.files), {
    pageSize: () => options.fileDirectoryPageSize ?? 100,
    refusals: () => faults.refuseFiles,
    deleteRefusals: () => faults.refuseFileDeletes,
  });
  const journals = new Journals(device, options.logs ?? [], {
    pageSize: () => options.journalPageSize ?? 100,
    refuse: () => faults.refuseJournals === true,
  });
  const reports = new ReportEngine(
    device,
    (n) => emit('report', n),
    () => faults.bufferEntries ?? 1000,
  );
  const domainOf = (node: DataNode) =>
    [...device.domains.values()].find((d) => d.lns.get(node.item.split('$')[0]) === rootOf(node))?.name ?? '';
  const apply = (node: DataNode, value: MmsData) => {
    const changed = assignNode(node, value);
    if (changed.length > 0) emit('change', { reference: `${domainOf(node)}/${node.item}`, value: readNode(node) });
    reports.onChanges(changed);
    journals.onChanges(changed);
  };
  const controls = new ControlEngine(device, {
    apply,
    notify: (n) => emit('control', n),
    refuseAll: () => faults.refuseControls === true,
    faults: () => faults,
  });
  const settingGroups = new SettingGroupEngine(device, { apply, reservationMs: () => faults.editReservationMs });
  const services: ServiceContext = {
    device,
    faults,
    reports,
    controls,
    settingGroups,
    identity,
    pageSize: options.nameListPageSize ?? 100,
    apply,
    files,
    journals,
  };
  const associations = new Set<Association>();
  const sockets = new Set<Socket>();
  let nextId = 1;

  const accept = (socket: Socket) => {
    const association = new Association(nextId++, socket, {
      services,
      faults,
      limits: { ...LIMITS, maxPduSize: options.maxPduSize ?? LIMITS.maxPduSize },
      emit,
      ...(options.authentication ? { authentication: options.authentication } : {}),
    });
    sockets.add(socket);
    associations.add(association);
    emit('connection', { id: association.id });
    socket.on('close', () => {
      sockets.delete(socket);
      associations.delete(association);
      reports.release(association);
      controls.release(association);
      files.release(association);
      settingGroups.release(association);
      emit('disconnect', { id: association.id });
    });
  };
  const server = options.tls ? tlsServer(options.tls, accept, (message) => emit('tlsError', { message })) : createServer(accept);
  const host = options.host ?? '127.0.0.1';
  const port = await listen(server, options.port ?? 102, host);

  const dropAll = () => {
    for (const a of associations) a.close();
    for (const s of sockets) s.destroy();
  };
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));

  const simulator: Simulator = {
    port,
    identity,
    iedName: device.ied.name,
    domains: [...device.domains.keys()],
    setValue(reference, value) {
      const node = nodeAt(device, reference);
      const conformed = conform(node.type, value);
      if (!conformed) throw new Error(`the value does not fit the type of ${reference}`);
      apply(node, conformed);
    },
    value: (reference) => readNode(nodeAt(device, reference)),
    connections: () => sockets.size,
    openFiles: () => files.openCount(),
    logEntries: (name) => journals.entries(name),
    async restart() {
      dropAll();
      await close();
      await listen(server, port, host);
    },
    async stop() {
      reports.stop();
      controls.stop();
      settingGroups.stop();
      dropAll();
      if (server.listening) await close();
    },
    on(event, listener) {
      events.on(event, listener);
      return simulator;
    },
    off(event, listener) {
      events.off(event, listener);
      return simulator;
    },
  };
  return simulator;
}

/** A TLS listener handing each connection to `accept` once its handshake is done. */
function tlsServer(tls: SimulatorTls, accept: (socket: Socket) => void, failed: (message: string) => void): Server {
  const server = createTlsServer(
    {
      cert: tls.cert,
      key: tls.key,
      minVersion: 'TLSv1.2',
      maxVersion: 'TLSv1.3',
      ...(tls.ca === undefined ? {} : { ca: tls.ca, requestCert: true, rejectUnauthorized: tls.requireClientCert === true }),
    },
    accept,
  );
  server.on('tlsClientError', (err) => failed(err.message));
  return server;
}

/** The file store's files from the options: text as UTF-8, the time now where none is given. */
function storedFiles(files: SimulatorOptions['files']): Map<string, StoredFile> {
  const now = new Date().toISOString();
  return new Map(
    Object.entries(files ?? {}).map(([name, f]) => [
      name.replace(/^\/+/, ''),
      { data: typeof f.data === 'string' ? new TextEncoder().encode(f.data) : f.data, lastModified: f.lastModified ?? now },
    ]),
  );
}

function rootOf(node: DataNode): DataNode {
  let at = node;
  while (at.parent) at = at.parent;
  return at;
}

export { wander, wanderPace, type WanderPace } from './wander.ts';
