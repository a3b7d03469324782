/**
 * Units and descriptions of a data object's attributes as an operator reads them, from the SCL file:
 * the `units` of the data object (or of the sub data object an attribute sits in) give `SIUnit` and
 * `multiplier` (IEC 61850-7-3), configured in the instance (`DAI`) or by the template's default (`Val`),
 * as the enumeration's literal or its `ord`; descriptions come from the instance (`DOI`/`SDI`/`DAI`
 * `desc`, the `dU` attribute) before the templates (`DO`, `DOType`, `DA`, `BDA` `desc`).
 */
import type { EnumType } from './model.ts';

/** What the unit lookup knows of one attribute of a data object, by its dotted path below the data object. */
export type AttributeFacts = { value?: string; type?: string };

/** Basic types whose values are numbers a unit applies to. */
const NUMERIC = /^(FLOAT(32|64)|INT(8|16|24|32|64|128)U?)$/;

/** The literal of an enumeration value as configured: the literal itself, or the literal of its `ord`. */
function literal(value: string | undefined, type: string | undefined, enums: Map<string, EnumType>): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!/^-?\d+$/.test(trimmed)) return trimmed;
  const found = type === undefined ? undefined : enums.get(type)?.values.find((v) => v.ord === Number(trimmed));
  return found?.value;
}

/** The unit the `units` at `prefix` (`''` or `phsA.`) give, e.g. `kV`; undefined without an SIUnit. */
export function unitAt(prefix: string, byPath: Map<string, AttributeFacts>, enums: Map<string, EnumType>): string | undefined {
  const si = byPath.get(`${prefix}units.SIUnit`);
  const unit = literal(si?.value, si?.type, enums);
  // A dimensionless quantity has no unit to show; an ord the file does not name is no unit either.
  if (!unit || unit === 'none' || /^-?\d+$/.test(unit)) return undefined;
  const m = byPath.get(`${prefix}units.multiplier`);
  const multiplier = literal(m?.value, m?.type, enums);
  return `${multiplier && multiplier !== 'none' && !/^-?\d+$/.test(multiplier) ? multiplier : ''}${unit}`;
}

/**
 * The unit of a numeric attribute that carries a measured quantity (`mag.f`, `instMag.i`,
 * `phsA.cVal.mag.f`, `rangeC.hhLim.f`, `setMag.f`): the `units` nearest above it. Angles (`ang`) and
 * attributes of other basic types have none.
 */
export function attributeUnit(
  path: string,
  bType: string,
  byPath: Map<string, AttributeFacts>,
  enums: Map<string, EnumType>,
): string | undefined {
  const parts = path.split('.');
  const leaf = parts[parts.length - 1];
  if (!NUMERIC.test(bType) || (leaf !== 'f' && leaf !== 'i') || parts.includes('ang') || parts.includes('units')) return undefined;
  for (let n = parts.length - 1; n >= 0; n--) {
    const unit = unitAt(
      parts
        .slice(0, n)
        .map((p) => `${p}.`)
        .join(''),
      byPath,
      enums,
    );
    if (unit) return unit;
  }
  return undefined;
}
