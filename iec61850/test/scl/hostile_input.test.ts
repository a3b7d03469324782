/**
 * Input an attacker or a broken tool sends: DTDs and entities, malformed and truncated XML, other
 * documents, oversized values, deep nesting, types that explode or loop, bytes that are not text.
 */
import t from 'tap';
import { parseScl } from '../../src/scl/mod.ts';
import { sclText, validParts } from './fixtures.ts';

const NS = 'xmlns="http://www.iec.ch/61850/2003/SCL"';
/** The errors of a file that must be refused. */
const errorsOf = async (input: string | Uint8Array) => {
  const result = await parseScl(input);
  if (result.ok) throw new Error('the file was accepted');
  return result.report.errors;
};

t.test('an external entity (XXE) is refused at its DOCTYPE and the local file is never read', async (t) => {
  const doc = `<?xml version="1.0"?>\n<!DOCTYPE SCL [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<SCL ${NS}><Header id="&xxe;"/></SCL>`;
  const result = await parseScl(doc);
  t.equal(result.ok, false);
  t.same(result.report.errors, [
    { message: 'a DOCTYPE is not allowed in an SCL file (no DTD, no entity declarations)', line: 2, column: 1 },
  ]);
  t.notMatch(JSON.stringify(result), /root:/);
});

t.test('a billion-laughs document is refused at once, without expanding anything', async (t) => {
  let dtd = '<!ENTITY lol0 "lol">';
  for (let i = 1; i <= 9; i++) dtd += `<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`;
  const started = performance.now();
  const errors = await errorsOf(`<?xml version="1.0"?><!DOCTYPE SCL [${dtd}]><SCL ${NS}><Header id="&lol9;"/></SCL>`);
  t.equal(errors.length, 1);
  t.match(errors[0], { message: /DOCTYPE is not allowed/, line: 1, column: 22 });
  t.ok(performance.now() - started < 1000, 'answers within a second');
});

t.test('a DOCTYPE with only an internal subset of element declarations is an error too', async (t) => {
  const errors = await errorsOf(`<!DOCTYPE SCL [<!ELEMENT SCL ANY>]>\n<SCL ${NS}/>`);
  t.match(errors, [{ message: /DOCTYPE/, line: 1, column: 1 }]);
});

t.test('a DOCTYPE naming an external DTD is an error', async (t) => {
  t.match(await errorsOf(`<?xml version="1.0"?>\n\n<!DOCTYPE SCL SYSTEM "http://example.invalid/scl.dtd">\n<SCL ${NS}/>`), [
    { line: 3, column: 1 },
  ]);
});

t.test('an entity reference beyond the five predefined ones is an error even without a DOCTYPE', async (t) => {
  const errors = await errorsOf(`<?xml version="1.0"?>\n<SCL ${NS}>\n  <Header id="x"/>\n  <IED name="a&foo;"/>\n</SCL>`);
  t.match(errors, [{ message: /entity reference refused/, line: 4, column: 19 }]);
});

t.test('the predefined entities and character references are read as text', async (t) => {
  const result = await parseScl(sclText({ header: '<Header id="a &amp; b &#x41;&#66; &lt;&gt;&quot;&apos;"/>' }));
  t.equal(result.ok, true);
  t.equal(result.ok && result.model.header?.id, 'a & b AB <>"\'');
});

t.test('malformed XML is refused with the line and column of the fault', async (t) => {
  const unquoted = `<?xml version="1.0"?>\n<SCL ${NS}>\n  <Header id="x"/>\n  <IED name="a">\n    <AccessPoint name=b/>\n  </IED>\n</SCL>`;
  t.same(await errorsOf(unquoted), [{ message: 'malformed XML: unquoted attribute value', line: 5, column: 23 }]);
  const mismatched = `<?xml version="1.0"?>\n<SCL ${NS}>\n  <Header id="x"/>\n  <IED name="a">\n  </IDE>\n</SCL>`;
  t.same(await errorsOf(mismatched), [{ message: 'malformed XML: unexpected close tag', line: 5, column: 8 }]);
  const doubled = `<SCL ${NS}>\n<Header id="x" id="y"/></SCL>`;
  t.match(await errorsOf(doubled), [{ message: /duplicate attribute/, line: 2 }]);
});

t.test('a truncated file is refused at its end', async (t) => {
  const text = sclText();
  const cut = text.slice(0, text.indexOf('<DataTypeTemplates>') + 40);
  const lines = cut.split('\n');
  t.match(await errorsOf(cut), [{ message: /^malformed XML: unclosed tag/, line: lines.length }]);
});

t.test('an empty file, plain text and a PNG renamed .icd are not SCL', async (t) => {
  t.match(await errorsOf(''), [{ message: /must contain a root element/, line: 1, column: 1 }]);
  t.match(await errorsOf('just some text'), [{ message: /^malformed XML/ }]);
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0xff, 0xd8]);
  t.match(await errorsOf(png), [{ message: /not valid UTF-8|malformed XML/ }]);
});

t.test('a root other than SCL in the SCL namespace is refused', async (t) => {
  t.match(await errorsOf('<html><body/></html>'), [
    { message: /not an SCL file: the root element is html in no namespace/, line: 1, column: 1 },
  ]);
  t.match(await errorsOf('<SCL><Header id="x"/></SCL>'), [{ message: /root element is SCL in no namespace/ }]);
  t.match(await errorsOf('<SCL xmlns="http://www.iec.ch/61850/2007/SCL"/>'), [
    { message: /in namespace http:\/\/www.iec.ch\/61850\/2007\/SCL/ },
  ]);
  t.equal(
    (await parseScl(`<scl:SCL xmlns:scl="http://www.iec.ch/61850/2003/SCL"><scl:Header id="p"/></scl:SCL>`)).ok,
    true,
    'a prefixed root is fine',
  );
});

t.test('a huge attribute value is refused instead of being kept', async (t) => {
  const huge = 'x'.repeat(2_000_000);
  const errors = await errorsOf(sclText({ ied: validParts.ied.replace('desc="feeder relay"', `desc="${huge}"`) }));
  t.match(errors, [{ message: 'attribute desc is longer than 65536 characters', path: /^\/SCL\/IED\[relay1\]$/ }]);
  const inPrivate = sclText({ header: `<Header id="h"><Private type="vendor" data="${huge}"/></Header>` });
  t.equal((await parseScl(inPrivate)).ok, true, 'nothing is read from a skipped element, so its size does not matter');
  const longValue = sclText({ ied: validParts.ied.replace('<Val>status-only</Val>', `<Val>${'y'.repeat(70_000)}</Val>`) });
  t.match(await errorsOf(longValue), [{ message: 'the text of Val is longer than 65536 characters' }]);
});

t.test('deeply nested elements stop at the depth bound without overflowing the stack', async (t) => {
  const depth = 200_000;
  const doc = `<SCL ${NS}>${'<Private>'.repeat(depth)}${'</Private>'.repeat(depth)}</SCL>`;
  t.match(await errorsOf(doc), [{ message: 'elements are nested deeper than 128 levels', line: 1 }]);
  const shallow = await parseScl(`<SCL ${NS}><Header id="h"/>${'<Private>'.repeat(100)}${'</Private>'.repeat(100)}</SCL>`);
  t.equal(shallow.ok, true, 'nesting within the bound is fine');
});

t.test('data types that expand without bound (a template billion laughs) are an error, found quickly', async (t) => {
  let types = '<DAType id="T9"><BDA name="f" bType="FLOAT32"/></DAType>';
  for (let i = 0; i < 9; i++) {
    const bdas = Array.from({ length: 10 }, (_, k) => `<BDA name="b${k}" bType="Struct" type="T${i + 1}"/>`).join('');
    types += `<DAType id="T${i}">${bdas}</DAType>`;
  }
  const templates = validParts.templates
    .replace('<DAType id="T_AV">', `${types}<DAType id="T_AV">`)
    .replace('<BDA name="f" bType="FLOAT32"/></DAType>\n<Enum', '<BDA name="f" bType="Struct" type="T0"/></DAType>\n<Enum');
  const started = performance.now();
  const errors = await errorsOf(sclText({ templates }));
  t.match(errors, [
    { message: 'DOType T_MV cannot be expanded: expands to more than 20000 attributes', path: '/SCL/DataTypeTemplates/DOType[T_MV]' },
  ]);
  t.ok(performance.now() - started < 2000, 'answers within two seconds');
});

t.test('a data type that contains itself is an error', async (t) => {
  const templates = validParts.templates.replace(
    '<BDA name="f" bType="FLOAT32"/>',
    '<BDA name="f" bType="FLOAT32"/><BDA name="again" bType="Struct" type="T_AV"/>',
  );
  t.match(await errorsOf(sclText({ templates })), [{ message: 'DOType T_MV cannot be expanded: DAType T_AV contains itself' }]);
});

t.test('a UTF-16 file with a byte-order mark reads like its UTF-8 twin, with a warning', async (t) => {
  const text = sclText().replace('encoding="UTF-8"', 'encoding="UTF-16"');
  const le = new Uint8Array(2 + text.length * 2);
  le.set([0xff, 0xfe]);
  for (let i = 0; i < text.length; i++) new DataView(le.buffer).setUint16(2 + i * 2, text.charCodeAt(i), true);
  const [utf16, utf8] = [await parseScl(le), await parseScl(new TextEncoder().encode(sclText()))];
  t.equal(utf16.ok, true);
  t.same(utf16.ok && utf16.model, utf8.ok && utf8.model);
  t.match(utf16.report.warnings, [{ message: /UTF-16 \(little-endian\)/ }]);
});

t.test('bytes that are not UTF-8 are refused with the line they are on', async (t) => {
  const bytes = new TextEncoder().encode(sclText());
  const at = new TextDecoder().decode(bytes).indexOf('feeder relay');
  bytes[at] = 0xc3;
  bytes[at + 1] = 0x28;
  const line = sclText().slice(0, at).split('\n').length;
  t.match(await errorsOf(bytes), [{ message: 'the file is not valid UTF-8 text', line }]);
});

t.test('a byte-order mark before the declaration is accepted', async (t) => {
  const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(sclText())]);
  t.same((await parseScl(bytes)).report, { edition: '2007B4', errors: [], warnings: [] });
});
