// The banner in the sticky bar that says when the cluster's store (503) or the app itself cannot be reached,
// instead of tables that are empty or out of date with no word; it goes once every call answers.
import { isOutage, serverNow } from './console.api';
import { $ } from './console.dom';
import { times } from './console.format';

/** How often the page reads everything again. */
export const POLL_MS = 2000;
/** When every call of a poll last answered (server time); 0: never since the page opened. */
let lastGood = 0;

/** Puts up the banner when one of a poll's `failures` is an outage, and takes it down when none is. */
export function showHealth(failures: readonly unknown[]): void {
  const down = failures.find(isOutage);
  document.body.classList.toggle('outage', Boolean(down));
  if (!down) {
    $('banner').hidden = true;
    lastGood = serverNow();
    return;
  }
  const reason = down.body?.reason;
  const seen = lastGood ? `What this page shows was read at ${times.at(lastGood)} and may be out of date` : 'Nothing could be read since this page opened';
  $('banner-title').textContent = down.network ? 'This app does not answer.' : `The cluster's store cannot be reached${reason ? ` (${reason})` : ''}.`;
  $('banner-text').textContent = `${down.message}. ${seen}; changes fail until it answers. Trying again every ${POLL_MS / 1000} s.`;
  $('banner').hidden = false;
  $('updated').textContent = down.network ? 'app not answering' : 'cluster unreachable';
}
