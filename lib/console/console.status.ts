// The page's shared status line (under Definitions: what an edit, a migration or a task's action did) and the one
// way the sections act: do it, say how it went, read everything again.
import { messageOf } from './console.api';
import { $ } from './console.dom';

let refreshPage: () => Promise<void> = async () => undefined;

/** Sets what reading everything again is (console.main.ts's poll). */
export function whenActed(refresh: () => Promise<void>): void {
  refreshPage = refresh;
}

/** Says `message` on the status line, as done or as failed. */
export function say(message: string, ok = true): void {
  const status = $('status');
  status.textContent = message;
  status.className = `status ${ok ? 'ok' : 'error'}`;
}

/** Runs `action`, says `<what>: done` or why it failed, and reads everything again once it is done. */
export async function act(what: string, action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
    say(`${what}: done`);
    await refreshPage();
  } catch (error) {
    say(`${what}: ${messageOf(error)}`, false);
  }
}
