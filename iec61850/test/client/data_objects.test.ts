/**
 * Quality and time belong to the data object: an attribute reported or read takes `q` and `t` of the data
 * object it belongs to, found from the device's model at any depth (MV, CMV, WYE, DEL, SPS, DPS), and only
 * without a model from the values themselves. Through the package's entry point.
 */
import t from 'tap';
import { dataObjectDepth, parseReference, stampsOf, type Json, type MmsType } from '@scada/iec61850';

const struct = (components: Record<string, MmsType>): MmsType => ({
  type: 'structure',
  packed: false,
  components: Object.entries(components).map(([name, type]) => ({ name, type })),
});
const float: MmsType = { type: 'float', formatWidth: 32, exponentWidth: 8 };
const quality: MmsType = { type: 'bit-string', size: 13 };
const time: MmsType = { type: 'utc-time' };
const analogue = struct({ f: float });
const vector = struct({ mag: analogue, ang: analogue });
/** The MX part of each common data class, as a device describes it under `LN$MX$DO`. */
const MV = struct({ mag: analogue, q: quality, t: time });
const CMV = struct({ cVal: vector, q: quality, t: time });
const WYE = struct({ phsA: CMV, phsB: CMV, phsC: CMV, neut: CMV });
const DEL = struct({ phsAB: CMV, phsBC: CMV, phsCA: CMV });
const SPS = struct({ stVal: { type: 'boolean' }, q: quality, t: time });
const DPS = struct({ stVal: { type: 'bit-string', size: 2 }, q: quality, t: time });

const good = (...flags: string[]): Json => ({ validity: 'good', flags, source: 'process' });
const at = (iso: string): Json => ({ time: iso, flags: [], accuracy: 10 });

t.test("the data object of an attribute is found from the model's types at any depth", async (t) => {
  const cases: [string, MmsType, string[], number][] = [
    ['MV mag.f', MV, ['AnIn1', 'mag', 'f'], 1],
    ['MV q', MV, ['AnIn1', 'q'], 1],
    ['CMV cVal.mag.f', CMV, ['Hz', 'cVal', 'mag', 'f'], 1],
    ['WYE phsA.cVal.mag.f: the CMV inside', WYE, ['A', 'phsA', 'cVal', 'mag', 'f'], 2],
    ['WYE phsA.q', WYE, ['A', 'phsA', 'q'], 2],
    ['WYE phsA whole', WYE, ['A', 'phsA'], 2],
    ['DEL phsAB.cVal.ang.f', DEL, ['PPV', 'phsAB', 'cVal', 'ang', 'f'], 2],
    ['SPS stVal', SPS, ['Ind1', 'stVal'], 1],
    ['DPS stVal', DPS, ['Pos', 'stVal'], 1],
    ['a data object whole', MV, ['AnIn1'], 1],
    ['a name the type does not have', MV, ['AnIn1', 'nope', 'f'], 1],
  ];
  for (const [what, type, path, depth] of cases) t.equal(dataObjectDepth(path, type), depth, what);
});

/** One report's values: references, values, and each one's depth from the model (or none). */
function stamps(values: [string, Json, number?][]) {
  return stampsOf(values.map(([ref, value, depth]) => ({ ref: parseReference(ref), value, dataObjectDepth: depth })));
}

t.test('each attribute takes q and t of its data object from the same values, per common measurement layout', async (t) => {
  const L = 'LD0/MMXU1';
  const got = stamps([
    [`${L}.TotW.mag.f[MX]`, 1.5, 1],
    [`${L}.TotW.q[MX]`, good(), 1],
    [`${L}.TotW.t[MX]`, at('2026-01-01T00:00:00.001Z'), 1],
    [`${L}.Hz.cVal.mag.f[MX]`, 50, 1],
    [`${L}.Hz.q[MX]`, good('oldData'), 1],
    [`${L}.A.phsA.cVal.mag.f[MX]`, 101, 2],
    [`${L}.A.phsA.q[MX]`, good('test'), 2],
    [`${L}.A.phsA.t[MX]`, at('2026-01-01T00:00:00.002Z'), 2],
    [`${L}.A.phsB.cVal.mag.f[MX]`, 102, 2],
    [`${L}.PPV.phsAB.cVal.mag.f[MX]`, 400, 2],
    [`${L}.PPV.phsAB.q[MX]`, { validity: 'questionable', flags: [], source: 'substituted' }, 2],
    ['LD0/GGIO1.Ind1.stVal[ST]', true, 1],
    ['LD0/GGIO1.Ind1.q[ST]', { validity: 'invalid', flags: ['failure'], source: 'process' }, 1],
    ['LD0/GGIO1.Ind1.t[ST]', at('2026-01-01T00:00:00.003Z'), 1],
    ['LD0/XCBR1.Pos.stVal[ST]', 'on', 1],
    ['LD0/XCBR1.Pos.t[ST]', at('2026-01-01T00:00:00.004Z'), 1],
  ]);
  t.same(got[0], { quality: good(), timestamp: at('2026-01-01T00:00:00.001Z') }, 'MV: mag.f takes TotW.q and TotW.t');
  t.same(got[3], { quality: good('oldData') }, 'CMV: cVal.mag.f takes Hz.q; no t came');
  t.same(got[5], { quality: good('test'), timestamp: at('2026-01-01T00:00:00.002Z') }, 'WYE: phsA.cVal.mag.f takes phsA.q and phsA.t');
  t.same(got[8], {}, "WYE: phsB's value takes nothing of phsA");
  t.same(got[9], { quality: { validity: 'questionable', flags: [], source: 'substituted' } }, 'DEL: phsAB.cVal.mag.f takes phsAB.q');
  t.same(
    got[11],
    { quality: { validity: 'invalid', flags: ['failure'], source: 'process' }, timestamp: at('2026-01-01T00:00:00.003Z') },
    'SPS',
  );
  t.same(got[14], { timestamp: at('2026-01-01T00:00:00.004Z') }, 'DPS: stVal takes Pos.t; no q came');
  t.same(got[1], { quality: good(), timestamp: at('2026-01-01T00:00:00.001Z') }, 'q itself belongs to its data object too');
});

t.test('a data object reported whole carries its own q and t; another FC or data object lends none', async (t) => {
  const got = stamps([
    ['LD0/MMXU1.TotW[MX]', { mag: { f: 2 }, q: good(), t: at('2026-01-01T00:00:01.000Z') }, 1],
    ['LD0/MMXU1.A.phsA[MX]', { cVal: { mag: { f: 3 } }, q: good('test'), t: at('2026-01-01T00:00:02.000Z') }, 2],
    ['LD0/MMXU1.TotW.db[CF]', 100, 1],
    ['LD0/MMXU1.TotVA.mag.f[MX]', 4, 1],
  ]);
  t.same(got[0], { quality: good(), timestamp: at('2026-01-01T00:00:01.000Z') });
  t.same(got[1], { quality: good('test'), timestamp: at('2026-01-01T00:00:02.000Z') }, 'a sub data object whole');
  t.same(got[2], {}, 'TotW.db is CF: TotW has no q there');
  t.same(got[3], {}, 'TotVA: its data object came without q');
});

t.test('the model decides over the values: an attribute of a WYE phase does not take a q of the WYE itself', async (t) => {
  const got = stamps([
    ['LD0/MMXU1.A.phsA.cVal.mag.f[MX]', 1, 2],
    ['LD0/MMXU1.A.q[MX]', good('oldData'), 1],
  ]);
  t.same(got[0], {}, 'A.q is not the q of A.phsA');
});

t.test('without a model, the innermost element whose q or t the same values carry is taken', async (t) => {
  const got = stamps([
    ['LD0/MMXU1.A.phsA.cVal.mag.f[MX]', 1],
    ['LD0/MMXU1.A.phsA.q[MX]', good('test')],
    ['LD0/GGIO1.AnIn1.mag.f[MX]', 2],
    ['LD0/GGIO1.AnIn1.q[MX]', good()],
    ['LD0/GGIO1.AnIn2.mag.f[MX]', 3],
  ]);
  t.same(got[0], { quality: good('test') });
  t.same(got[2], { quality: good() }, 'the basic_io Measurements layout: mag.f and q as members');
  t.same(got[4], {}, 'nothing to take');
});
