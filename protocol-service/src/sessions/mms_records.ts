/**
 * What a device keeps of its past, through the platform's IEC 61850 client: its file store (MMS file
 * services, deletion included) and its logs (MMS journals). Whatever the device answers in refusal
 * becomes the problem the API answers (`device_errors.ts`): a name it has no file of is 404, a refusal
 * `device_refused` with its reason.
 */
import { deleteFile, DeviceFile, fileDirectory, queryLog, type Iec61850Device } from '@scada/iec61850';
import { answer } from './device_errors.ts';
import type { LiveDevice } from './live_device.ts';

function fromHex(hex: string): Uint8Array {
  return Uint8Array.from(hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16));
}

/**
 * The file store and the logs of a device on one association, through `device`'s requests (a caller's
 * deadline, when it is a view); an opened file's reads and close through the association's own.
 */
export function deviceRecords(device: Iec61850Device): Pick<LiveDevice, 'listFiles' | 'openFile' | 'deleteFile' | 'queryLog'> {
  const client = device.requests;
  return {
    listFiles: (path, continueAfter) => answer('file-directory', path || '/', () => fileDirectory(client, path, continueAfter)),
    openFile: (path) =>
      answer('file-open', path, async () => {
        const file = await DeviceFile.open(client, path, device.client);
        return {
          name: file.name,
          ...file.attributes,
          read: () => answer('file-read', path, () => file.read()),
          close: () => file.close(),
        };
      }),
    deleteFile: (path) => answer('file-delete', path, () => deleteFile(client, path)),
    queryLog: (log, query) =>
      answer('read-journal', log, () =>
        queryLog(client, log, 'after' in query ? { after: fromHex(query.after), entryTime: query.entryTime } : query, (ref) =>
          device.typeOf(ref),
        ),
      ),
  };
}
