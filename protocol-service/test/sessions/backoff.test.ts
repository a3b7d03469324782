/**
 * Reconnect timing: however long a device was away, the session's next attempt after the device answers
 * again comes within the cap (5 s by default), and the cap stays a setting.
 */
import t from 'tap';
import { EnvReader } from '@scada/platform';
import { readProtocolConfig } from '../../src/config.ts';
import { backoffMs, DEFAULT_BACKOFF_CAP_MS } from '../../src/sessions/backoff.ts';

/** When the first attempt at or after `back` falls, attempts waiting as the backoff says (virtual time). */
function firstAttemptAfter(back: number, random: () => number, options: { baseMs?: number; capMs?: number } = {}): number {
  let now = 0;
  for (let attempt = 0; now < back; attempt++) now += backoffMs(attempt, { ...options, random });
  return now;
}

t.test('after an outage of any length the next attempt comes within 5 s of the device answering again', async (t) => {
  const worst = () => 1; // the longest jitter
  for (const outageMs of [1_000, 45_000, 3_600_000, 7 * 86_400_000]) {
    const at = firstAttemptAfter(outageMs, worst);
    t.ok(at - outageMs <= 5_000, `back ${at - outageMs} ms after a ${outageMs} ms outage`);
  }
  for (let attempt = 0; attempt < 200; attempt++) t.ok(backoffMs(attempt, { random: worst }) <= 5_000);
  t.equal(DEFAULT_BACKOFF_CAP_MS, 5_000);
});

t.test('waits still grow from the first step, with jitter between half and all of the step', async (t) => {
  t.equal(backoffMs(0, { random: () => 0 }), 250);
  t.equal(backoffMs(0, { random: () => 1 }), 500);
  t.equal(backoffMs(2, { random: () => 1 }), 2_000);
  t.equal(backoffMs(5, { random: () => 0 }), 2_500, 'past the cap, half the cap at the least');
});

t.test('the cap is a setting: MMS_RECONNECT_MAX_MS, 5000 by default', async (t) => {
  t.equal(readProtocolConfig(new EnvReader({})).reconnectMaxMs, 5_000);
  t.equal(readProtocolConfig(new EnvReader({ MMS_RECONNECT_MAX_MS: '30000' })).reconnectMaxMs, 30_000);
  const longer = firstAttemptAfter(45_000, () => 1, { capMs: 30_000 });
  t.ok(longer - 45_000 > 5_000, 'a longer cap set on purpose is honoured');
});
