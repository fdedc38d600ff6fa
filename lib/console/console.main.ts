// The gatekeeper's web console, over the admin API (same origin, same guard): signs in, polls every 2 s while the
// page is visible, counts permits down every second, and never redraws a row the operator is editing. Each
// section is a view of its own (*.view.ts); this file reads everything for them and runs the page.
import { api, base, isOutage, messageOf, serverNow, whenSignedOut } from './console.api';
import type { AllocationStatus, ClusterOverview, DefinitionView, PermitsView, TaskCountsView, TaskRecord } from './console-api.types';
import { $ } from './console.dom';
import { times } from './console.format';
import { say, whenActed } from './console.status';
import { renderAllocations } from './allocations.view';
import { renderCluster } from './cluster.view';
import { renderDefinitions } from './definitions.view';
import { redrawJobs, refreshJobs, tickJobs } from './jobs.view';
import './migration.view';
import { POLL_MS, showHealth } from './outage.banner';
import { renderPermits, setPermits } from './permits.view';
import { redrawSchedules, refreshSchedules, tickSchedules } from './schedules.view';
import { renderTasks } from './tasks.view';

/** When the page last read everything (server time): what "updated 3 s ago" counts from. */
let lastUpdate = 0;
/** The number of the last refresh begun, and of the newest one drawn: an older answer never draws over a newer one. */
let begun = 0;
let drawn = 0;

/**
 * Reads everything again. A call that fails leaves its table as it was (the Jobs and Schedules panels say so
 * themselves); one that finds the store unreachable (503) or gets no answer at all puts up the banner.
 */
async function refresh(): Promise<void> {
  const mine = ++begun;
  const failures: unknown[] = [];
  const read = <T>(path: string, fallback?: T): Promise<T | undefined> => api<T>('GET', path).catch((error: unknown) => {
    failures.push(error);
    return fallback;
  });
  const [definitions, semaphores, cluster, allocations, taskCounts, failed, open, jobsFailure, schedulesFailure] = await Promise.all([
    read<DefinitionView[]>('/definitions'),
    read<PermitsView[]>('/permits'),
    read<ClusterOverview>('/cluster'),
    read<AllocationStatus[]>('/allocations', []),
    read<TaskCountsView>('/tasks', { counts: {} }),
    read<TaskRecord[]>('/tasks/list?state=failed,invalid&limit=50', []),
    read<TaskRecord[]>('/tasks/list?state=pending,running&limit=50', []),
    refreshJobs(),
    refreshSchedules(),
  ]);
  if ($('main').hidden) return; // signed out meanwhile
  // A poll begun before an edit and answered after the edit's own refresh holds the values from before it.
  if (mine < drawn) return;
  drawn = mine;
  for (const failure of [jobsFailure, schedulesFailure]) if (failure) failures.push(failure);
  if (definitions) renderDefinitions(definitions);
  if (semaphores) setPermits(semaphores);
  renderPermits();
  if (cluster) renderCluster(cluster);
  const down = failures.some(isOutage);
  if (!down) {
    renderAllocations(allocations ?? []);
    renderTasks(taskCounts?.counts ?? {}, [...(failed ?? []), ...(open ?? [])]);
  }
  showHealth(failures);
  if (!down) {
    lastUpdate = serverNow();
    $('updated').textContent = 'live, updated 0 s ago';
  }
}

/** Names the browser's zone (with its offset now) in the header's choice, and shows the choice kept. */
function describeZones(): void {
  let name = '';
  try {
    name = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
  } catch {
    // no name: the offset says enough
  }
  const select = $<HTMLSelectElement>('time-zone');
  select.options[0].textContent = `${name || 'this browser\'s zone'} (${times.zone(Date.now(), false)})`;
  select.value = times.utc ? 'utc' : 'local';
}

function showSignIn(): void {
  $('sign-in').hidden = false;
  for (const id of ['main', 'bar', 'zone-pick', 'sign-out']) $(id).hidden = true;
  $('updated').textContent = 'signed out';
}

function showConsole(signIn: string): void {
  $('sign-in').hidden = true;
  for (const id of ['main', 'bar', 'zone-pick']) $(id).hidden = false;
  $('sign-out').hidden = signIn !== 'token';
  $('updated').textContent = 'reading…';
  describeZones();
  keepBarHeight();
}

/** Headings jumped to land below the sticky bar, however tall it is (the links wrap on a phone; the banner). */
let barObserver: ResizeObserver | undefined;
function keepBarHeight(): void {
  const set = (): void => document.documentElement.style.setProperty('--bar-height', `${Math.ceil($('bar').getBoundingClientRect().height)}px`);
  set();
  if (window.ResizeObserver && !barObserver) {
    barObserver = new ResizeObserver(set);
    barObserver.observe($('bar'));
  }
}

let polling: ReturnType<typeof setInterval> | undefined;
async function start(signIn: string): Promise<void> {
  showConsole(signIn);
  try {
    await refresh();
  } catch (error) {
    say(messageOf(error), false);
  }
  clearInterval(polling);
  polling = setInterval(async () => {
    if (document.hidden || $('main').hidden) return;
    try {
      await refresh();
    } catch (error) {
      $('updated').textContent = `not updated: ${messageOf(error)}`;
    }
  }, POLL_MS);
}

whenSignedOut(showSignIn);
whenActed(refresh);

$('time-zone').addEventListener('change', async (event) => {
  times.choose((event.target as HTMLSelectElement).value === 'utc');
  redrawJobs();
  redrawSchedules();
  await refresh().catch(() => undefined);
});

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = $<HTMLInputElement>('token');
  const response = await fetch(`${base}/console/session`, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token.value }) });
  if (!response.ok) {
    $('sign-in-error').textContent = response.status === 401 ? 'Wrong token.' : `Sign-in failed (${response.status}).`;
    return;
  }
  token.value = '';
  $('sign-in-error').textContent = '';
  void start('token');
});

$('sign-out').addEventListener('click', async () => {
  await fetch(`${base}/console/session`, { method: 'DELETE', credentials: 'same-origin' });
  showSignIn();
});

// Every second: the countdowns, and how fresh the page is.
setInterval(() => {
  if ($('main').hidden || !lastUpdate) return;
  renderPermits();
  tickJobs();
  tickSchedules();
  if ($('banner').hidden) $('updated').textContent = `live, updated ${Math.max(0, Math.round((serverNow() - lastUpdate) / 1000))} s ago`;
}, 1000);

fetch(`${base}/console/session`, { credentials: 'same-origin' }).then(async (response) => {
  if (response.ok) void start(((await response.json()) as { signIn: string }).signIn);
  else showSignIn();
}, () => showSignIn());
