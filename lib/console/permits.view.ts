// The live permits of jobs, their time left counting down every second on the server's time.
import { serverNow } from './console.api';
import type { PermitsView } from './console-api.types';
import { $, el, fillRows, wholeRow } from './console.dom';
import { seconds, token } from './console.format';
import { isJob } from './definitions.view';

/** The jobs' semaphores with live permits; `undefined` until a read answered (the table says "not read yet"). */
let permits: PermitsView[] | undefined;

/** Keeps the jobs' semaphores that have live permits from a read of `GET permits`. */
export function setPermits(semaphores: readonly PermitsView[]): void {
  permits = semaphores.filter((s) => s.permits.length > 0 && isJob(s));
}

/** Draws the permits with their time left now. */
export function renderPermits(): void {
  const now = serverNow();
  const rows = (permits ?? []).flatMap((s) => s.permits.map((p) => el('tr', {},
    el('th', { scope: 'row' }, s.name), el('td', {}, p.acquirer), el('td', {}, p.group), el('td', { class: 'wrap' }, p.instance), el('td', { class: 'token', title: String(p.fencingToken) }, token(p.fencingToken)),
    el('td', { 'data-expires': p.expiresAt }, seconds(p.expiresAt - now)))));
  fillRows($('permits-rows'), rows.length ? rows : [wholeRow(6, permits ? 'No live permit.' : 'Not read yet.')]);
}
