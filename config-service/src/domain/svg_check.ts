/**
 * The check an animation's SVG passes before it is stored: read with saxes (a well-formedness-checking
 * parser that never expands entities), it may hold only drawing elements of the SVG namespace and
 * presentation attributes from an allow list. What can run code or reach out of the page is refused with
 * the element and its line: a DOCTYPE (so no DTD and no entity declaration), an entity reference beyond
 * the predefined ones, a processing instruction, `script`, `foreignObject`, event handlers, an `href`
 * that leaves the document (but a `data:image/…` in `<image>`), `javascript:` anywhere, other `data:`
 * URLs and CSS `url()`. Whatever the console inserts is sanitized again there.
 */
import { maxAnimationElements, maxAnimationSvgBytes, ProblemError } from '@scada/contracts';
import { SaxesParser, type SaxesAttributeNS, type SaxesTagNS } from 'saxes';

const svgNs = 'http://www.w3.org/2000/svg';
const xlinkNs = 'http://www.w3.org/1999/xlink';
const xmlNs = 'http://www.w3.org/XML/1998/namespace';
const xmlnsNs = 'http://www.w3.org/2000/xmlns/';

/** The SVG elements that draw (shapes, text, structure, paint servers, clipping, markers, filters). */
const elements = new Set(
  (
    'svg g defs symbol use title desc path rect circle ellipse line polyline polygon text tspan textPath image ' +
    'linearGradient radialGradient stop pattern clipPath mask marker style filter feBlend feColorMatrix ' +
    'feComponentTransfer feComposite feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur ' +
    'feMerge feMergeNode feMorphology feOffset feTile feTurbulence'
  ).split(' '),
);

/** Geometry, structure and presentation attributes (no event handler, no animation, no link target). */
const attributes = new Set(
  (
    'id class style transform x y x1 y1 x2 y2 cx cy r rx ry fx fy fr width height d points pathLength viewBox ' +
    'preserveAspectRatio version baseProfile href fill fill-opacity fill-rule stroke stroke-width stroke-opacity ' +
    'stroke-linecap stroke-linejoin stroke-dasharray stroke-dashoffset stroke-miterlimit opacity visibility display ' +
    'color font-family font-size font-weight font-style font-variant text-anchor dominant-baseline ' +
    'alignment-baseline baseline-shift letter-spacing word-spacing text-decoration writing-mode dx dy rotate ' +
    'textLength lengthAdjust startOffset method spacing side offset stop-color stop-opacity gradientUnits ' +
    'gradientTransform spreadMethod patternUnits patternContentUnits patternTransform clipPathUnits clip-path ' +
    'clip-rule mask maskUnits maskContentUnits marker-start marker-mid marker-end markerWidth markerHeight ' +
    'markerUnits refX refY orient filter filterUnits primitiveUnits in in2 result stdDeviation mode type values ' +
    'operator k1 k2 k3 k4 flood-color flood-opacity tableValues slope intercept amplitude exponent radius ' +
    'baseFrequency numOctaves seed stitchTiles vector-effect shape-rendering text-rendering image-rendering ' +
    'color-interpolation color-interpolation-filters overflow paint-order role focusable lang'
  ).split(' '),
);
const alsoAllowed = /^(data|aria)-[a-z0-9_.-]+$/;

const javascriptUrl = /j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:/i;
const dataUrl = /(^|[^a-z0-9_-])d\s*a\s*t\s*a\s*:/i;
const imageDataUrl = /^\s*data:image\/(png|jpeg|gif|webp|bmp);base64,[a-z0-9+/=\s]*$/i;
const cssUrl = /url\s*\(|@import|expression\s*\(|\\/i;
const localUrl = /url\s*\(\s*['"]?#[^)'"]*['"]?\s*\)/gi;

/** What a checked SVG holds that bindings refer to. */
export type CheckedSvg = { ids: Set<string>; elements: number };

/** Why one place of the document is refused. */
class Refusal extends Error {}

/** The 400 naming where the document is refused. */
function refused(message: string): ProblemError {
  return new ProblemError('validation_failed', `The SVG is refused: ${message}`, { errors: [{ path: '/body/svg', message }] });
}

/** The display name of a tag or attribute, with its prefix as written. */
const named = (x: { name: string }) => x.name;

/** Why an attribute is refused on its element, or null when it passes. */
function attributeProblem(tag: SaxesTagNS, a: SaxesAttributeNS): string | null {
  const what = `attribute ${named(a)} of <${named(tag)}>`;
  if (a.uri === xmlnsNs || a.name === 'xmlns')
    return a.value === svgNs || a.value === xlinkNs ? null : `${what} declares another namespace`;
  const local = a.uri === xlinkNs || a.uri === xmlNs ? a.local : a.name;
  if (a.uri === xmlNs && a.local !== 'space' && a.local !== 'lang') return `${what} is not allowed`;
  if (a.uri !== '' && a.uri !== xlinkNs && a.uri !== xmlNs) return `${what} is in a namespace other than SVG's`;
  if (a.uri === xlinkNs && local !== 'href' && local !== 'title') return `${what} is not allowed`;
  if (/^on/i.test(local)) return `${what} is an event handler`;
  if (!attributes.has(local) && !alsoAllowed.test(local) && a.uri !== xmlNs && a.uri !== xlinkNs) return `${what} is not allowed`;
  const value = a.value;
  if (javascriptUrl.test(value)) return `${what} holds a javascript: URL`;
  if (local === 'href') {
    if (value.trimStart().startsWith('#')) return null;
    if (tag.local === 'image' && imageDataUrl.test(value)) return null;
    return `${what} refers outside the document (only #id, or data:image/… in <image>)`;
  }
  if (dataUrl.test(value)) return `${what} holds a data: URL`;
  if (local === 'style') return cssUrl.test(value) ? `${what} holds CSS url(), @import, expression() or an escape` : null;
  if (/url\s*\(/i.test(value) && /url\s*\(/i.test(value.replace(localUrl, ''))) return `${what} holds a url() other than #id`;
  return null;
}

/**
 * Checks an animation's SVG; answers the element ids it holds. Throws 400 `validation_failed` naming the
 * first refused element or attribute with its line, or 413 past the size bound.
 */
export function checkSvg(svg: string): CheckedSvg {
  const bytes = Buffer.byteLength(svg, 'utf8');
  if (bytes > maxAnimationSvgBytes) {
    throw new ProblemError('payload_too_large', `The SVG is ${bytes} bytes; at most ${maxAnimationSvgBytes} are kept`);
  }
  const parser = new SaxesParser({ xmlns: true, position: true });
  const ids = new Set<string>();
  let count = 0;
  let line = 1;
  let inStyle = false;
  const at = (message: string, where = line) => {
    throw new Refusal(`line ${where}: ${message}`);
  };
  parser.on('error', (err) => at(`malformed XML: ${err.message.replace(/^\d+:\d+: /, '')}`, parser.line));
  parser.on('doctype', () => at('a <!DOCTYPE is not allowed (no DTD, no entity declarations)', parser.line));
  parser.on('processinginstruction', (pi) => at(`the processing instruction <?${pi.target}?> is not allowed`, parser.line));
  parser.on('opentagstart', () => {
    line = parser.line;
  });
  parser.on('opentag', (tag) => {
    if (++count > maxAnimationElements) at(`more than ${maxAnimationElements} elements`);
    if (count === 1 && (tag.local !== 'svg' || tag.uri !== svgNs))
      at(`the root element is <${named(tag)}>, not <svg> of the SVG namespace`);
    if (tag.uri !== svgNs) at(`element <${named(tag)}> is not of the SVG namespace`);
    if (!elements.has(tag.local)) at(`element <${named(tag)}> is not allowed`);
    for (const a of Object.values(tag.attributes)) {
      const problem = attributeProblem(tag, a);
      if (problem) at(problem);
    }
    const id = tag.attributes.id?.value;
    if (id !== undefined) ids.add(id);
    inStyle = tag.local === 'style';
  });
  parser.on('closetag', () => {
    inStyle = false;
  });
  const styleText = (text: string) => {
    if (!inStyle) return;
    if (cssUrl.test(text) || javascriptUrl.test(text))
      at('<style> holds CSS url(), @import, expression(), an escape or javascript:', parser.line);
  };
  parser.on('text', styleText);
  parser.on('cdata', styleText);
  try {
    parser.write(svg).close();
  } catch (err) {
    if (err instanceof Refusal) throw refused(err.message);
    throw err;
  }
  if (count === 0) throw refused('line 1: no <svg> element');
  return { ids, elements: count };
}
