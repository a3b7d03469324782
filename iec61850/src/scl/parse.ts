/**
 * Parses an SCL file (IEC 61850-6, editions 2003, 2007A/B and 2007B4) into the device model and a parse
 * report. The file is read as a stream: bytes are decoded and tokenised piece by piece, and only the model
 * is kept, so a large upload can be parsed while it arrives.
 */
import type { SclParseReport } from './browse_types.ts';
import type { SclInput } from './decode.ts';
import type { SclModel } from './model.ts';
import { SclReader } from './reader.ts';
import type { ReadContext } from './reader_context.ts';
import { Reporter } from './report.ts';
import { TemplateIndex } from './template_index.ts';
import { validateModel } from './validate_model.ts';
import { validateTemplates } from './validate_templates.ts';
import { readXml } from './xml_stream.ts';

/** Bounds on one document; the defaults suit real SCL files with room to spare. */
export type SclParseOptions = {
  /** Deepest element nesting accepted (default 128). */
  maxDepth?: number;
  /** Longest attribute value or element text accepted, in characters (default 65,536). */
  maxValueLength?: number;
};

/** The model and a report with no errors, or the report of why the file was refused. */
export type SclParseResult = { ok: true; model: SclModel; report: SclParseReport } | { ok: false; report: SclParseReport };

/** An empty model, filled in as the file is read. */
function emptyModel(): SclModel {
  return { edition: 'unknown', ieds: [], subNetworks: [], templates: { lNodeTypes: [], doTypes: [], daTypes: [], enumTypes: [] } };
}

/**
 * Parses an SCL file given as bytes, text, or chunks of either (a Node stream, a web `ReadableStream`, an
 * async generator). Never throws for what the file contains: malformed XML, a DOCTYPE or entity, a root
 * that is not SCL, broken type references or missing names come back as errors with line and column;
 * slips that real files commonly carry come back as warnings.
 */
export async function parseScl(input: SclInput, options: SclParseOptions = {}): Promise<SclParseResult> {
  const reporter = new Reporter();
  const model = emptyModel();
  const ctx: ReadContext = {
    model,
    reporter,
    edition1: false,
    maxValueLength: options.maxValueLength ?? 65_536,
    iedName: '',
    strings: new Map(),
  };
  const complete = await readXml(input, new SclReader(ctx), reporter, { maxDepth: options.maxDepth ?? 128 });
  if (complete) {
    const index = new TemplateIndex(model.templates);
    const lnTypes = model.ieds.flatMap((ied) =>
      ied.accessPoints.flatMap((ap) => ap.server?.logicalDevices.flatMap((ld) => ld.logicalNodes.map((ln) => ln.lnType)) ?? []),
    );
    validateTemplates(reporter, model.templates, index, lnTypes);
    validateModel(reporter, model, index);
  }
  const report = reporter.done();
  return complete && report.errors.length === 0 ? { ok: true, model, report } : { ok: false, report };
}
