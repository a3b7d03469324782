/**
 * The OpenAPI document the gateway serves lints clean: Spectral's `spectral:oas` ruleset (every rule it
 * recommends) reports neither an error nor a warning on `/openapi.json` as a running platform answers it.
 */
import spectralCore from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import t from 'tap';
import { startTestPlatform } from '@scada/testkit/platform';

const p = await startTestPlatform();
t.teardown(() => p.stop());

t.test("Spectral's oas ruleset finds nothing in the served document", async (t) => {
  const res = await fetch(`${p.url}/openapi.json`);
  t.equal(res.status, 200);
  const spectral = new spectralCore.Spectral();
  spectral.setRuleset({ extends: [[oas as never, 'recommended']] });
  const findings = await spectral.run(new spectralCore.Document(await res.text(), spectralParsers.Json));
  // Severity 0 is an error, 1 a warning; hints and information (2, 3) are not findings.
  t.same(
    findings.filter((f) => f.severity <= 1).map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`),
    [],
    'no error and no warning',
  );
});
