/**
 * The SCL parser of the protocol service (IEC 61850-6): `parseScl` reads a file into the device model and a
 * parse report, `toBrowseTree` turns the model into the browse answer, `checkConnection` compares a
 * connection's address with the file.
 */
export { parseScl, type SclParseOptions, type SclParseResult } from './parse.ts';
export type { SclInput } from './decode.ts';
export { browseParts, toBrowseTree, type BrowseOptions } from './browse_tree.ts';
export { checkConnection, canonicalIp, type ConnectionTarget, type ConnectionWarning } from './connection_check.ts';
export { mmsReference, fcdaReference, domainOf } from './references.ts';
export { reportInstances } from './reader_controls.ts';
export type * from './model.ts';
export { TemplateIndex } from './template_index.ts';
export type * from './browse_types.ts';
