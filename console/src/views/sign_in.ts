/** Signing in: the password, then the OTP step when the user has one, and the forced password change. */
import { html } from 'htm/preact';
import { useState } from 'preact/hooks';
import { changePassword, signInWithCode, signInWithPassword, signOut, stage } from '../session.ts';
import { Alert, Field, useAction } from './common.ts';

/** The sign-in form. */
export function SignIn({ message }: { message?: string }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signInWithPassword(username, password));
  };
  return html`<main class="narrow" id="main">
    <h1>Sign in to the SCADA console</h1>
    <${Alert} message=${message} kind="info" />
    <form onSubmit=${submit} aria-busy=${busy}>
      <${Field} label="User name" name="username" autocomplete="username" required value=${username} onInput=${setUsername} />
      <${Field} label="Password" name="password" type="password" autocomplete="current-password" required value=${password} onInput=${setPassword} />
      <${Alert} message=${error} />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
    </form>
  </main>`;
}

/** The OTP step: the code from the user's authenticator app. */
export function OtpStep({ username, otpToken }: { username: string; otpToken: string }) {
  const [code, setCode] = useState('');
  const [run, busy, error] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(() => signInWithCode(username, otpToken, code));
  };
  return html`<main class="narrow" id="main">
    <h1>One-time code</h1>
    <p>Enter the six-digit code your authenticator app shows for ${username}.</p>
    <form onSubmit=${submit}>
      <${Field} label="Code" name="otp" autocomplete="one-time-code" required value=${code} onInput=${setCode} />
      <${Alert} message=${error} />
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Continue'}</button>
      <button type="button" class="secondary" onClick=${() => (stage.value = { kind: 'signed-out' })}>Back</button>
    </form>
  </main>`;
}

/** The forced password change after an administrator set the password. */
export function ChangePassword() {
  const [old, setOld] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [otp, setOtp] = useState('');
  const [run, busy, error, setError] = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    if (next !== again) return setError('The two new passwords are not the same.');
    void run(() => changePassword(old, next, otp || undefined));
  };
  return html`<main class="narrow" id="main">
    <h1>Choose your own password</h1>
    <p>Your password was set by someone else. Choose your own before you go on.</p>
    <form onSubmit=${submit}>
      <${Field} label="Current password" name="old" type="password" autocomplete="current-password" required value=${old} onInput=${setOld} />
      <${Field} label="New password" name="new" type="password" autocomplete="new-password" required value=${next} onInput=${setNext} />
      <${Field} label="New password again" name="again" type="password" autocomplete="new-password" required value=${again} onInput=${setAgain} />
      <${Field} label="One-time code (if you use one)" name="otp" autocomplete="one-time-code" value=${otp} onInput=${setOtp} />
      <${Alert} message=${error} />
      <button type="submit" disabled=${busy}>${busy ? 'Saving…' : 'Change password'}</button>
      <button type="button" class="secondary" onClick=${() => void signOut()}>Sign out</button>
    </form>
  </main>`;
}
