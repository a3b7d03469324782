/** Who is signed in, in which space, and the steps of signing in and out (cookie session). */
import { signal } from '@preact/signals';
import { api, ApiError, currentSpace } from './api.ts';

/** The signed-in user as `/api/auth/current-user` answers. */
export type Me = { id: string; name: string; roles: string[]; spaces: string[]; activeSpace: string | null };
/** A space the user may work in. */
export type Space = { id: string; name: string };

/** Where signing in stands: unknown at first, then out, the OTP step, a forced password change, or in. */
export type Stage =
  | { kind: 'loading' }
  | { kind: 'signed-out'; message?: string }
  | { kind: 'otp'; username: string; otpToken: string }
  | { kind: 'change-password' }
  | { kind: 'signed-in'; me: Me; spaces: Space[] };

/** The current stage of signing in; the app draws the screen it names. */
export const stage = signal<Stage>({ kind: 'loading' });

/** Whether the signed-in user is an administrator. */
export const isAdmin = () => {
  const s = stage.value;
  return s.kind === 'signed-in' && s.me.roles.includes('admin');
};

/** Whether the signed-in user may change things (editor or admin). */
export const canEdit = () => {
  const s = stage.value;
  return s.kind === 'signed-in' && (s.me.roles.includes('admin') || s.me.roles.includes('editor'));
};

const spaceKey = 'scada-console-space';
/**
 * Set while this browser holds a session: the cookies are HttpOnly, and asking the platform without one
 * would log a 401 in the console on every visit.
 */
const signedInKey = 'scada-console-signed-in';

/** The first screen: the session when this browser holds one, else the sign-in form. */
export async function startSession(): Promise<void> {
  if (localStorage.getItem(signedInKey)) await loadSession();
  else stage.value = { kind: 'signed-out' };
}

/** Loads the user and their spaces; a forced password change or an ended session shows its own screen. */
export async function loadSession(): Promise<void> {
  try {
    const me = await api<Me>('GET', '/api/auth/current-user');
    // The own profile may be read before a forced password change; asking for anything else would be refused.
    const profile = await api<{ requirePasswordReset?: boolean }>('GET', '/api/users/profile');
    if (profile.requirePasswordReset) return void (stage.value = { kind: 'change-password' });
    const spaces = await api<Space[]>('GET', '/api/spaces');
    const saved = sessionStorage.getItem(spaceKey);
    const chosen = spaces.find((s) => s.id === saved)?.id ?? me.activeSpace ?? spaces[0]?.id ?? null;
    currentSpace.value = chosen;
    localStorage.setItem(signedInKey, '1');
    stage.value = { kind: 'signed-in', me, spaces };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'password_change_required') return void (stage.value = { kind: 'change-password' });
    localStorage.removeItem(signedInKey);
    if (err instanceof ApiError && err.status === 401) stage.value = { kind: 'signed-out' };
    else stage.value = { kind: 'signed-out', message: err instanceof Error ? err.message : undefined };
  }
}

/** Chooses the space to work in (remembered for this tab). */
export function chooseSpace(id: string): void {
  currentSpace.value = id;
  sessionStorage.setItem(spaceKey, id);
}

type LoginAnswer = { otp_required?: boolean; otp_token?: string; username?: string };

/** Signs in with a password; answers when the next screen is set (OTP step or the session). */
export async function signInWithPassword(username: string, password: string): Promise<void> {
  const answer = await api<LoginAnswer>('POST', '/login', { body: { username, password } });
  if (answer?.otp_required) {
    stage.value = { kind: 'otp', username, otpToken: answer.otp_token ?? '' };
    return;
  }
  await loadSession();
}

/** Completes the OTP step with the code from the authenticator. */
export async function signInWithCode(username: string, otpToken: string, code: string): Promise<void> {
  await api('POST', '/validate', { body: { username, otp_token: otpToken, otp_code: code } });
  await loadSession();
}

/** Changes the user's own password (the forced change after an administrator set it). */
export async function changePassword(oldPassword: string, newPassword: string, otpCode?: string): Promise<void> {
  await api('POST', '/api/users/reset-password', {
    body: { oldPassword, newPassword, newPasswordAgain: newPassword, ...(otpCode ? { otpCode } : {}) },
  });
  await loadSession();
}

/** Signs out: the platform revokes the session and clears its cookies. */
export async function signOut(): Promise<void> {
  try {
    await api('POST', '/logout');
  } finally {
    currentSpace.value = null;
    sessionStorage.removeItem(spaceKey);
    localStorage.removeItem(signedInKey);
    stage.value = { kind: 'signed-out', message: 'You are signed out.' };
  }
}
