/**
 * The TOTP window below the HTTP API, on an injected clock: the current step and the one before are
 * taken, nothing older or newer, and never a step at or before the last one used.
 */
import { generateSync } from 'otplib';
import t from 'tap';
import { matchTotp, newTotpSecret, totpUrl } from '../src/domain/totp.ts';

const secret = newTotpSecret();
/** A moment in the middle of step `step`. */
const during = (step: number) => step * 30_000 + 15_000;
const codeAt = (step: number) => generateSync({ strategy: 'totp', secret, epoch: step * 30, period: 30 });
const now = 58_000_000;

t.test('the code of the current step and of the one before match, and answer their step', async (t) => {
  t.equal(matchTotp(secret, codeAt(now), null, during(now)), now);
  t.equal(matchTotp(secret, codeAt(now - 1), null, during(now)), now - 1);
  t.equal(matchTotp(secret, codeAt(now), null, now * 30_000), now, 'at the first millisecond of a step');
  t.equal(matchTotp(secret, codeAt(now), null, now * 30_000 + 29_999), now, 'at its last millisecond');
});

t.test('older and future codes are refused', async (t) => {
  for (const step of [now - 2, now - 10, now + 1]) {
    const code = codeAt(step);
    // A code of another step may by chance equal the current or previous one (1 in 10^6): not a refusal to test.
    if (code === codeAt(now) || code === codeAt(now - 1)) continue;
    t.equal(matchTotp(secret, code, null, during(now)), null, `step ${step - now}`);
  }
});

t.test('no code works twice: a step at or before the last used one is refused', async (t) => {
  t.equal(matchTotp(secret, codeAt(now), now, during(now)), null, 'the same step again');
  t.equal(matchTotp(secret, codeAt(now - 1), now, during(now)), null, 'an older step after a newer one');
  t.equal(matchTotp(secret, codeAt(now), now - 1, during(now)), now, 'the next step after the last used one');
});

t.test('only six digits are a code', async (t) => {
  const code = codeAt(now);
  for (const bad of ['', code.slice(0, 5), `${code}0`, ` ${code}`, code.replace(/./, 'a'), '１２３４５６']) {
    t.equal(matchTotp(secret, bad, null, during(now)), null, JSON.stringify(bad));
  }
});

t.test('a secret is 160 random bits in base32, and the URL names the issuer and the user', async (t) => {
  t.match(secret, /^[A-Z2-7]{32}$/);
  t.not(newTotpSecret(), secret);
  const url = new URL(totpUrl(secret, 'operator-1'));
  t.equal(url.protocol, 'otpauth:');
  t.equal(url.searchParams.get('secret'), secret);
  t.equal(url.searchParams.get('issuer'), 'SCADA platform');
  t.match(decodeURIComponent(url.pathname), /operator-1$/);
});
