/**
 * An animation's SVG made safe to insert, and its ids made unique on the page. The platform checked the
 * drawing when it was saved; this is the second line, for whatever reached the store another way:
 * DOMPurify (SVG profile) drops scripts, handlers and `javascript:`, and a hook here drops every reference
 * out of the document (an `href` other than `#id` or an image's `data:image/…`, a `url()` other than
 * `url(#id)`), every `style` (the CSP allows no inline style) and `<style>`. Each id gets the board's
 * prefix, so one symbol drawn twice keeps two sets of ids, and references to ids follow.
 */
import DOMPurify from 'dompurify';

/** A drawing ready to insert: its root and its elements by the ids the animation gave them. */
export type Drawing = { root: SVGSVGElement; byId: Map<string, SVGElement> };

const localHref = /^\s*#/;
const imageData = /^\s*data:image\/(png|jpeg|gif|webp|bmp);base64,/i;
const outsideUrl = /url\s*\(\s*(?!['"]?#)/i;

let hooked = false;

/** Adds the hook that drops outside references, once. */
function hook(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
    const name = data.attrName.toLowerCase();
    const value = data.attrValue;
    if (name === 'href' || name === 'xlink:href') {
      const image = node.nodeName.toLowerCase() === 'image';
      if (!localHref.test(value) && !(image && imageData.test(value))) data.keepAttr = false;
      return;
    }
    if (outsideUrl.test(value)) data.keepAttr = false;
  });
}

/** The drawing of `svg`, sanitized, with each id prefixed by `prefix`; null when nothing drawable is left. */
export function prepareDrawing(svg: string, prefix: string): Drawing | null {
  hook();
  const fragment = DOMPurify.sanitize(svg, {
    USE_PROFILES: { svg: true, svgFilters: true },
    FORBID_TAGS: ['style', 'foreignObject', 'a', 'animate', 'set', 'animateMotion', 'animateTransform', 'script'],
    FORBID_ATTR: ['style'],
    // Ids such as `target` or `name` are kept: each is prefixed below before the drawing meets the page.
    SANITIZE_DOM: false,
    RETURN_DOM_FRAGMENT: true,
  });
  const root = fragment.querySelector('svg');
  if (!root) return null;
  const byId = new Map<string, SVGElement>();
  const renamed = new Map<string, string>();
  // Every id is renamed (a repeated one too), so no id of the drawing can name a property of the page.
  for (const el of root.querySelectorAll<SVGElement>('[id]')) {
    const id = el.id;
    if (!byId.has(id)) byId.set(id, el);
    renamed.set(id, `${prefix}${id}`);
    el.id = `${prefix}${id}`;
  }
  const rename = (id: string) => renamed.get(id) ?? id;
  for (const el of root.querySelectorAll('*')) {
    for (const attr of [...el.attributes]) {
      if ((attr.name === 'href' || attr.name === 'xlink:href') && attr.value.startsWith('#')) {
        el.setAttributeNS(attr.namespaceURI, attr.name, `#${rename(attr.value.slice(1))}`);
      } else if (attr.value.includes('url(#')) {
        el.setAttribute(
          attr.name,
          attr.value.replace(/url\(\s*#([^)\s]+)\s*\)/g, (_m, id: string) => `url(#${rename(id)})`),
        );
      }
    }
  }
  root.setAttribute('width', '100%');
  root.setAttribute('height', '100%');
  return { root, byId };
}

/** HTML of an `Html` board, sanitized: no script, no handler, no frame, no form, no style. */
export function sanitizeHtml(text: string): DocumentFragment {
  hook();
  return DOMPurify.sanitize(text, {
    FORBID_TAGS: ['style', 'form', 'iframe', 'object', 'embed', 'link', 'meta', 'base', 'input', 'button', 'textarea', 'select'],
    FORBID_ATTR: ['style'],
    RETURN_DOM_FRAGMENT: true,
  });
}
