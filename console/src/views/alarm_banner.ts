/** The alarm banner under the header of every screen: counts by priority, the newest unacknowledged alarm, the sound. */
import { html } from 'htm/preact';
import { useEffect } from 'preact/hooks';
import { alarmSummary, allowAudio, alarmsError, setSound, soundOn } from '../alarms.ts';
import { href } from '../router.ts';

/**
 * The banner: a link to the alarm list that says, most urgent priority first, how many alarms wait for
 * an acknowledgement and how many are active, and the newest unacknowledged alarm's text. It flashes while
 * any alarm waits for an acknowledgement (steady when the person prefers reduced motion).
 */
export function AlarmBanner() {
  useEffect(() => {
    // A sound chosen in an earlier visit may only start after a gesture on this page.
    const gesture = () => allowAudio();
    addEventListener('pointerdown', gesture);
    addEventListener('keydown', gesture);
    return () => {
      removeEventListener('pointerdown', gesture);
      removeEventListener('keydown', gesture);
    };
  }, []);
  const { rows, newest, unacknowledged } = alarmSummary.value;
  const kind = unacknowledged > 0 ? 'alarm-banner unacked' : rows.length > 0 ? 'alarm-banner acked' : 'alarm-banner quiet';
  return html`<section class=${kind} aria-label="Alarm summary">
    <a class="alarm-link" href=${href('alarms')}>
      ${
        rows.length === 0
          ? html`<span>${alarmsError.value ? `Alarms: ${alarmsError.value}` : 'No active alarms'}</span>`
          : html`<span class="alarm-counts">${rows.map(
              (r) =>
                html`<span class="alarm-count" key=${r.priority}>Priority ${r.priority}: ${r.unacknowledged} unacknowledged, ${r.active} active</span>`,
            )}</span>`
      }
      <span class="alarm-newest" aria-live="polite">${newest?.message ?? ''}</span>
    </a>
    <button type="button" class="secondary small" aria-pressed=${soundOn.value ? 'true' : 'false'} onClick=${() => setSound(!soundOn.value)}>
      Alarm sound<span aria-hidden="true">: ${soundOn.value ? 'on' : 'off'}</span>
    </button>
  </section>`;
}
