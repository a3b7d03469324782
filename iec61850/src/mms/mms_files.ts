/**
 * The MMS file services a client uses to fetch files from a device's file store (ISO 9506-2, as IEC
 * 61850-8-1 maps them): FileDirectory (one page of entries, with continueAfter and moreFollows), FileOpen,
 * FileRead, FileClose and FileDelete. Requests and responses are encoded and decoded both ways (a client sends the
 * one and reads the other; a server and the tests the reverse). Byte layouts follow libiec61850's client
 * and server: a FileName is a SEQUENCE OF GraphicString sent as one string, the directory's entries sit in
 * a SEQUENCE inside `[0]`, times are GeneralizedTime `YYYYMMDDhhmmss.fffZ`.
 */
import { childrenOf, cons, expectTag, isTag, prim, primitiveOf, tagName, type Tlv } from './ber.ts';
import { boolOf, boolTlv, intOf, intTlv, nullTlv } from './ber_fields.ts';
import { decodeUnsigned, encodeUnsigned } from './ber_values.ts';
import { CodecError } from './codec_error.ts';

/** What a directory entry and FileOpen say of a file: its size and, when the device keeps it, when it last changed (ISO). */
export type FileAttributes = { size: number; lastModified?: string };

/** One entry of a FileDirectory response: the name as the device gives it, with its attributes. */
export type DirectoryEntry = { name: string } & FileAttributes;

/** The file service requests. */
export type FileRequest =
  | { service: 'fileDirectory'; fileSpecification?: string; continueAfter?: string }
  | { service: 'fileOpen'; fileName: string; initialPosition: number }
  | { service: 'fileRead'; frsmId: number }
  | { service: 'fileClose'; frsmId: number }
  | { service: 'fileDelete'; fileName: string };

/** The file service responses. */
export type FileResponse =
  | { service: 'fileDirectory'; entries: DirectoryEntry[]; moreFollows: boolean }
  | ({ service: 'fileOpen'; frsmId: number } & FileAttributes)
  | { service: 'fileRead'; data: Uint8Array; moreFollows: boolean }
  | { service: 'fileClose' }
  | { service: 'fileDelete' };

/** Context tags of the file services in ConfirmedServiceRequest/-Response. */
export const FILE_SERVICE_TAGS = { fileOpen: 72, fileRead: 73, fileClose: 74, fileDelete: 76, fileDirectory: 77 } as const;

const GRAPHIC_STRING = 25;
const utf8 = new TextDecoder('utf-8', { fatal: true });

function fileError(code: string, message: string): CodecError {
  return new CodecError('mms', code, message);
}

/** A FileName (SEQUENCE OF GraphicString) under `tag`: one string, UTF-8 where it is not ASCII. */
function encodeFileName(tag: number, name: string): Uint8Array {
  return cons('context', tag, prim('universal', GRAPHIC_STRING, new TextEncoder().encode(name)));
}

/** A FileName's text: its strings joined by `/` (devices send one); UTF-8 when it is, else one character an octet. */
function decodeFileName(t: Tlv): string {
  const parts = childrenOf(t).map((s) => {
    const octets = primitiveOf(expectTag(s, 'universal', GRAPHIC_STRING, 'file name'));
    try {
      return utf8.decode(octets);
    } catch {
      return String.fromCharCode(...octets);
    }
  });
  if (parts.length === 0) throw fileError('bad_file_name', 'a file name without a string');
  return parts.join('/');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A GeneralizedTime as libiec61850 writes it: `YYYYMMDDhhmmss.fffZ`. */
export function generalizedTimeOf(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) throw fileError('bad_time', `${iso} is not a time`);
  const date = `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}`;
  return `${date}${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}

/**
 * The ISO time of a GeneralizedTime (`YYYYMMDDhh[mm[ss[.f…]]]` with `Z`, an offset, or neither, read as
 * UTC as devices mean it); undefined when it is not one, so that a device's odd time costs only the time.
 */
export function timeOfGeneralized(text: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,](\d+))?(Z|[+-]\d{4})?$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const ms = Math.floor(Number(`0.${frac || '0'}`) * 1000);
  let at = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (zone !== 'Z') at -= (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3))) * 60_000;
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}

function encodeAttributes(tag: number, a: FileAttributes): Uint8Array {
  return cons(
    'context',
    tag,
    prim('context', 0, encodeUnsigned(a.size)),
    a.lastModified === undefined ? new Uint8Array(0) : prim('context', 1, new TextEncoder().encode(generalizedTimeOf(a.lastModified))),
  );
}

function decodeAttributes(t: Tlv): FileAttributes {
  const fields = childrenOf(t);
  const size = fields.find((f) => isTag(f, 'context', 0));
  if (!size) throw fileError('bad_response', 'file attributes without sizeOfFile');
  const out: FileAttributes = { size: Number(decodeUnsigned(primitiveOf(size))) };
  const modified = fields.find((f) => isTag(f, 'context', 1));
  const time = modified ? timeOfGeneralized(String.fromCharCode(...primitiveOf(modified))) : undefined;
  if (time !== undefined) out.lastModified = time;
  return out;
}

function encodeEntry(e: DirectoryEntry): Uint8Array {
  return cons('universal', 16, encodeFileName(0, e.name), encodeAttributes(1, e));
}

function decodeEntry(t: Tlv): DirectoryEntry {
  const fields = childrenOf(expectTag(t, 'universal', 16, 'directory entry'));
  const name = fields.find((f) => isTag(f, 'context', 0));
  const attributes = fields.find((f) => isTag(f, 'context', 1));
  if (!name || !attributes) throw fileError('bad_response', 'a directory entry without file name or attributes');
  return { name: decodeFileName(name), ...decodeAttributes(attributes) };
}

/** The entries of listOfDirectoryEntry: in a SEQUENCE as libiec61850 sends them, or straight inside `[0]`. */
function decodeEntries(t: Tlv): DirectoryEntry[] {
  const kids = childrenOf(t);
  const wrapped = kids.length === 1 && isTag(kids[0], 'universal', 16) && childrenOf(kids[0]).every((k) => isTag(k, 'universal', 16));
  return (wrapped ? childrenOf(kids[0]) : kids).map(decodeEntry);
}

/** A file service request as the CHOICE TLV of ConfirmedServiceRequest. */
export function encodeFileRequest(r: FileRequest): Uint8Array {
  switch (r.service) {
    case 'fileDirectory':
      return cons(
        'context',
        FILE_SERVICE_TAGS.fileDirectory,
        r.fileSpecification === undefined ? new Uint8Array(0) : encodeFileName(0, r.fileSpecification),
        r.continueAfter === undefined ? new Uint8Array(0) : encodeFileName(1, r.continueAfter),
      );
    case 'fileOpen':
      return cons(
        'context',
        FILE_SERVICE_TAGS.fileOpen,
        encodeFileName(0, r.fileName),
        prim('context', 1, encodeUnsigned(r.initialPosition)),
      );
    case 'fileRead':
    case 'fileClose':
      return intTlv('context', FILE_SERVICE_TAGS[r.service], r.frsmId);
    case 'fileDelete':
      // [76] IMPLICIT FileName: the GraphicString straight inside the service's tag
      return encodeFileName(FILE_SERVICE_TAGS.fileDelete, r.fileName);
  }
}

/** A file service request from its CHOICE TLV (`t.tag` is one of {@link FILE_SERVICE_TAGS}). */
export function decodeFileRequest(t: Tlv): FileRequest {
  switch (t.tag) {
    case FILE_SERVICE_TAGS.fileDirectory: {
      const fields = childrenOf(t);
      const spec = fields.find((f) => isTag(f, 'context', 0));
      const after = fields.find((f) => isTag(f, 'context', 1));
      return {
        service: 'fileDirectory',
        ...(spec ? { fileSpecification: decodeFileName(spec) } : {}),
        ...(after ? { continueAfter: decodeFileName(after) } : {}),
      };
    }
    case FILE_SERVICE_TAGS.fileOpen: {
      const fields = childrenOf(t);
      const name = fields.find((f) => isTag(f, 'context', 0));
      const position = fields.find((f) => isTag(f, 'context', 1));
      if (!name) throw fileError('bad_request', 'FileOpen without a file name');
      return {
        service: 'fileOpen',
        fileName: decodeFileName(name),
        initialPosition: position ? Number(decodeUnsigned(primitiveOf(position))) : 0,
      };
    }
    case FILE_SERVICE_TAGS.fileRead:
      return { service: 'fileRead', frsmId: intOf(t) };
    case FILE_SERVICE_TAGS.fileClose:
      return { service: 'fileClose', frsmId: intOf(t) };
    case FILE_SERVICE_TAGS.fileDelete:
      return { service: 'fileDelete', fileName: decodeFileName(t) };
    default:
      throw fileError('unknown_tag', `${tagName(t)} is not a file service`);
  }
}

/** A file service response as the CHOICE TLV of ConfirmedServiceResponse. */
export function encodeFileResponse(r: FileResponse): Uint8Array {
  switch (r.service) {
    case 'fileDirectory':
      return cons(
        'context',
        FILE_SERVICE_TAGS.fileDirectory,
        cons('context', 0, cons('universal', 16, ...r.entries.map(encodeEntry))),
        r.moreFollows ? boolTlv('context', 1, true) : new Uint8Array(0),
      );
    case 'fileOpen':
      return cons('context', FILE_SERVICE_TAGS.fileOpen, intTlv('context', 0, r.frsmId), encodeAttributes(1, r));
    case 'fileRead':
      return cons(
        'context',
        FILE_SERVICE_TAGS.fileRead,
        prim('context', 0, r.data),
        r.moreFollows ? new Uint8Array(0) : boolTlv('context', 1, false),
      );
    case 'fileClose':
    case 'fileDelete':
      return nullTlv('context', FILE_SERVICE_TAGS[r.service]);
  }
}

/** A file service response from its CHOICE TLV (`t.tag` is one of {@link FILE_SERVICE_TAGS}). */
export function decodeFileResponse(t: Tlv): FileResponse {
  switch (t.tag) {
    case FILE_SERVICE_TAGS.fileDirectory: {
      const fields = childrenOf(t);
      const list = fields.find((f) => isTag(f, 'context', 0));
      const more = fields.find((f) => isTag(f, 'context', 1));
      return { service: 'fileDirectory', entries: list ? decodeEntries(list) : [], moreFollows: more ? boolOf(more) : false };
    }
    case FILE_SERVICE_TAGS.fileOpen: {
      const fields = childrenOf(t);
      const frsm = fields.find((f) => isTag(f, 'context', 0));
      const attributes = fields.find((f) => isTag(f, 'context', 1));
      if (!frsm || !attributes) throw fileError('bad_response', 'FileOpen response without frsmID or file attributes');
      return { service: 'fileOpen', frsmId: intOf(frsm), ...decodeAttributes(attributes) };
    }
    case FILE_SERVICE_TAGS.fileRead: {
      const fields = childrenOf(t);
      const data = fields.find((f) => isTag(f, 'context', 0));
      const more = fields.find((f) => isTag(f, 'context', 1));
      if (!data) throw fileError('bad_response', 'FileRead response without file data');
      return { service: 'fileRead', data: primitiveOf(data), moreFollows: more ? boolOf(more) : true };
    }
    case FILE_SERVICE_TAGS.fileClose:
      primitiveOf(t);
      return { service: 'fileClose' };
    case FILE_SERVICE_TAGS.fileDelete:
      primitiveOf(t);
      return { service: 'fileDelete' };
    default:
      throw fileError('unknown_tag', `${tagName(t)} is not a file service`);
  }
}
