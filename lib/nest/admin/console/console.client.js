// The gatekeeper's web console: plain browser JavaScript over the admin API (same origin, same guard).
// It polls every 2 s while the page is visible, counts permits down every second, and never re-renders a row the
// operator is editing. Every instant shows with its zone (the browser's, with its offset, or UTC: the header's
// choice); a banner says when the cluster's store (503) or the app itself cannot be reached, instead of tables that
// are empty or out of date with no word.
(() => {
  'use strict';
  const base = document.querySelector('meta[name="gatekeeper-base"]').content;
  const $ = (id) => document.getElementById(id);
  const POLL_MS = 2000;
  /** Browser clock minus the server's, from each answer's Date header: countdowns use the server's time. */
  let skewMs = 0;
  let lastUpdate = 0;
  let permits = [];
  let elections = [];
  const dirty = new Set();

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) if (child !== undefined && child !== null) node.append(child instanceof Node ? child : String(child));
    return node;
  }

  async function api(method, path, body) {
    let response;
    try {
      response = await fetch(base + path, {
        method,
        credentials: 'same-origin',
        headers: { 'x-gatekeeper-console': '1', ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (error) {
      // No answer at all: the app is down, or the network between.
      throw Object.assign(new Error(`no answer from the app (${error.message})`), { network: true });
    }
    const date = response.headers.get('date');
    if (date) skewMs = Date.now() - Date.parse(date);
    const text = await response.text();
    let data;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = { message: text.slice(0, 200) };
    }
    if (response.status === 401 || response.status === 403) {
      showSignIn();
      throw new Error('not signed in');
    }
    if (!response.ok) throw Object.assign(new Error((data && data.message) || `${method} ${path}: ${response.status}`), { status: response.status, body: data });
    return data;
  }

  function say(message, ok = true) {
    const status = $('status');
    status.textContent = message;
    status.className = `status ${ok ? 'ok' : 'error'}`;
  }

  async function act(what, action) {
    try {
      await action();
      say(`${what}: done`);
      await refresh();
    } catch (error) {
      say(`${what}: ${error.message}`, false);
    }
  }

  const seconds = (ms) => (ms <= 0 ? 'expired' : ms < 60000 ? `${Math.ceil(ms / 1000)} s` : `${Math.floor(ms / 60000)} min ${Math.ceil((ms % 60000) / 1000)} s`);
  const duration = (ms) => (ms % 3600000 === 0 ? `${ms / 3600000}h` : ms % 60000 === 0 ? `${ms / 60000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);
  const serverNow = () => Date.now() - skewMs;

  // Instants, always with their zone: the browser's own (with the offset of that instant, so a daylight-saving
  // change shows) or UTC, as chosen in the header; kept in this browser.
  const ZONE_KEY = 'gatekeeper-console-zone';
  const times = {
    utc: (() => {
      try {
        return localStorage.getItem(ZONE_KEY) === 'utc';
      } catch {
        return false;
      }
    })(),
    /** `UTC` or `UTC+01:00`: the zone an instant is shown in. */
    zone(ms) {
      if (times.utc) return 'UTC';
      const offset = -new Date(ms).getTimezoneOffset();
      const pad = (n) => String(n).padStart(2, '0');
      return `UTC${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
    },
    parts(ms) {
      const d = new Date(ms);
      const u = times.utc;
      const pad = (n) => String(n).padStart(2, '0');
      return {
        date: `${u ? d.getUTCFullYear() : d.getFullYear()}-${pad((u ? d.getUTCMonth() : d.getMonth()) + 1)}-${pad(u ? d.getUTCDate() : d.getDate())}`,
        time: `${pad(u ? d.getUTCHours() : d.getHours())}:${pad(u ? d.getUTCMinutes() : d.getMinutes())}:${pad(u ? d.getUTCSeconds() : d.getSeconds())}`,
      };
    },
    /** Date, time and zone: `2025-03-30 02:30:00 UTC+02:00`. */
    at(ms) {
      if (ms === undefined || ms === null) return '-';
      const { date, time } = times.parts(ms);
      return `${date} ${time} ${times.zone(ms)}`;
    },
    /** Time and zone when on today's date (in the zone shown), else as {@link at}: what a table cell shows. */
    clock(ms) {
      if (ms === undefined || ms === null) return '-';
      const { date, time } = times.parts(ms);
      return date === times.parts(serverNow()).date ? `${time} ${times.zone(ms)}` : times.at(ms);
    },
  };
  function describeZones() {
    let name = '';
    try {
      name = Intl.DateTimeFormat().resolvedOptions().timeZone || '';
    } catch {
      // no name: the offset says enough
    }
    const saved = times.utc;
    times.utc = false;
    $('time-zone').options[0].textContent = `${name || 'this browser\'s zone'} (${times.zone(Date.now())})`;
    times.utc = saved;
    $('time-zone').value = times.utc ? 'utc' : 'local';
  }

  /** On a phone the tables are cards (console.css): each cell names its column, from the table's header. */
  function labelCells(tbody) {
    const heads = [...tbody.closest('table').querySelectorAll('thead th')].map((th) => th.textContent);
    for (const row of tbody.rows) {
      if (row.classList.contains('detail-row')) continue;
      [...row.cells].forEach((cell, i) => {
        if (cell.tagName === 'TD' && !cell.classList.contains('actions') && !cell.hasAttribute('colspan') && !cell.dataset.label && heads[i]) cell.dataset.label = heads[i];
      });
    }
  }

  /**
   * Puts `rows` in `tbody` in that order, moving nothing already in place: rows kept from the last poll (and a row
   * with focus, or an open detail under its job) stay where they are instead of being re-created every 2 s.
   */
  function syncRows(tbody, rows) {
    const wanted = new Set(rows);
    for (const row of [...tbody.children]) if (!wanted.has(row)) row.remove();
    rows.forEach((row, i) => {
      if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] || null);
    });
    labelCells(tbody);
  }

  /**
   * Filters the rows of `tbody` by the words of `query` (each must appear in a row's `data-search`, case ignored); a
   * row's detail row goes with it. Says how many are shown in `count`, and names the filter when none is.
   */
  function filterRows(tbody, query, count, what) {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    let total = 0;
    let previous = true;
    for (const row of tbody.rows) {
      if (row.classList.contains('detail-row')) {
        row.classList.toggle('filtered-out', !previous);
        continue;
      }
      if (row.dataset.search === undefined) continue;
      total++;
      const text = row.dataset.search.toLowerCase();
      previous = words.every((w) => text.includes(w));
      row.classList.toggle('filtered-out', !previous);
      if (previous) shown++;
    }
    let none = tbody.querySelector('tr.no-match');
    if (words.length && total && !shown) {
      if (!none) {
        none = el('tr', { class: 'no-match' }, el('td', { colspan: tbody.closest('table').querySelectorAll('thead th').length }));
        tbody.append(none);
      }
      none.cells[0].textContent = `No ${what} matches “${query.trim()}”.`;
    } else if (none) none.remove();
    count.textContent = words.length ? `${shown} of ${total} shown` : total ? `${total} ${what}${total === 1 ? '' : 's'}` : '';
  }

  const shared = { $, el, api, seconds, duration, serverNow, times, syncRows, filterRows, labelCells };
  // The Jobs panel lives in console.jobs.js (loaded first); it polls and counts down with the rest of the page.
  const jobs = window.gatekeeperJobsPanel(shared);
  // So does the Schedules panel (console.schedules.js).
  const schedules = window.gatekeeperSchedulesPanel(shared);

  // Definitions: inline edits, pause and resume.
  function renderDefinitions(definitions) {
    const body = $('definitions-rows');
    const existing = new Map([...body.rows].map((row) => [row.dataset.name, row]));
    const rows = definitions.map((d) => {
      const old = existing.get(d.name);
      if (old && dirty.has(d.name)) return old;
      const input = (field, value, label, type = 'text') => el('input', { type, name: field, value, 'aria-label': `${label} of ${d.name}`, oninput: () => dirty.add(d.name), ...(type === 'number' && { min: 0, step: 1 }) });
      const paused = d.permits === 0;
      return el('tr', { 'data-name': d.name },
        el('th', { scope: 'row' }, d.name, ' ', paused ? el('span', { class: 'badge paused' }, 'paused') : null),
        // data-label: on a phone the rows are cards (console.css) and each cell shows its column's name.
        el('td', { 'data-label': 'Permits' }, input('permits', d.permits, 'Permits', 'number')),
        el('td', { 'data-label': 'Duration' }, input('duration', duration(d.durationMs), 'Duration')),
        el('td', { 'data-label': 'Group pattern' }, input('groupPattern', d.groupPattern, 'Group pattern')),
        el('td', { 'data-label': 'Acquirer pattern' }, input('acquirerPattern', d.acquirerPattern, 'Acquirer pattern')),
        el('td', { class: 'actions' },
          el('button', { type: 'button', onclick: (e) => save(d.name, e.target.closest('tr')) }, 'Save'),
          paused
            ? el('button', { type: 'button', class: 'secondary', onclick: () => act(`resume ${d.name}`, () => api('POST', `/definitions/${encodeURIComponent(d.name)}/resume`, {})) }, 'Resume')
            : el('button', { type: 'button', class: 'danger', onclick: () => act(`pause ${d.name}`, () => api('POST', `/definitions/${encodeURIComponent(d.name)}/pause`)) }, 'Pause')));
    });
    body.replaceChildren(...rows);
    labelCells(body);
  }

  function save(name, row) {
    const value = (field) => row.querySelector(`input[name="${field}"]`).value;
    const patch = { permits: Number(value('permits')), duration: value('duration'), groupPattern: value('groupPattern'), acquirerPattern: value('acquirerPattern') };
    return act(`save ${name}`, async () => {
      await api('PATCH', `/definitions/${encodeURIComponent(name)}`, patch);
      dirty.delete(name);
    });
  }

  // Migrations: a dry run first, the exact changes shown, then apply; the same for an undo.
  function migrationRequest() {
    const form = $('migrate-form');
    const names = form.names.value.split(',').map((n) => n.trim()).filter(Boolean);
    return { fromGroup: form.fromGroup.value.trim(), toGroup: form.toGroup.value.trim(), ...(names.length && { names }), ...(form.includeWildcards.checked && { includeWildcards: true }) };
  }

  function renderReport(title, report) {
    const changes = report.changes || [];
    const skipped = report.skipped || [];
    $('migration-report').replaceChildren(
      el('h4', {}, title),
      changes.length === 0 ? el('p', {}, 'No change.') : el('div', { class: 'scroll' }, el('table', {},
        el('caption', {}, report.dryRun ? 'Would change (nothing written yet)' : 'Changed'),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Semaphore'), el('th', { scope: 'col' }, 'Group pattern now'), el('th', { scope: 'col' }, 'After'))),
        el('tbody', {}, changes.map((c) => el('tr', {}, el('td', {}, c.name), el('td', {}, c.from), el('td', {}, c.to)))))),
      skipped.length ? el('p', { class: 'hint' }, `Skipped: ${skipped.map((s) => `${s.name} (${s.reason})`).join('; ')}`) : null,
      (report.warnings || []).length ? el('p', { class: 'error' }, report.warnings.join(' ')) : null,
    );
  }

  let previewed;
  $('migrate-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const request = migrationRequest();
    act('preview migration', async () => {
      const report = await api('POST', '/migrate', { ...request, dryRun: true });
      renderReport(`Preview: ${request.fromGroup} → ${request.toGroup}`, report);
      previewed = request;
      $('migrate-apply').disabled = (report.changes || []).length === 0;
    });
  });
  $('migrate-apply').addEventListener('click', () => act('migration', async () => {
    const report = await api('POST', '/migrate', previewed);
    renderReport(`Migrated: ${previewed.fromGroup} → ${previewed.toGroup}`, report);
    $('migrate-apply').disabled = true;
  }));
  $('undo-preview').addEventListener('click', () => act('preview undo', async () => {
    const report = await api('POST', '/migrate/undo', { dryRun: true });
    renderReport('Preview: undo the last migration', report);
    $('undo-apply').disabled = (report.changes || []).length === 0;
  }));
  $('undo-apply').addEventListener('click', () => act('undo migration', async () => {
    renderReport('Undone', await api('POST', '/migrate/undo', {}));
    $('undo-apply').disabled = true;
  }));

  // Permits, with their time left counting down.
  function renderPermits() {
    const now = serverNow();
    const rows = permits.flatMap((s) => s.permits.map((p) => el('tr', {},
      el('th', { scope: 'row' }, s.name), el('td', {}, p.acquirer), el('td', {}, p.group), el('td', { class: 'wrap' }, p.instance), el('td', {}, p.fencingToken),
      el('td', { 'data-expires': p.expiresAt }, seconds(p.expiresAt - now)))));
    $('permits-rows').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 6 }, readYet ? 'No live permit.' : 'Not read yet.'))]));
    labelCells($('permits-rows'));
  }

  /** The cluster as just read (the leases' time left is as the answer says: it was read a moment ago). */
  function renderCluster(cluster) {
    elections = cluster.elections || [];
    $('participants-rows').replaceChildren(...(cluster.participants || []).map((p) => el('tr', {},
      el('th', { scope: 'row' }, p.acquirer), el('td', {}, p.group), el('td', {}, p.version), el('td', {}, seconds(p.ageMs)),
      el('td', {}, (p.leads || []).map((e) => el('span', { class: 'badge leader' }, e))))));
    $('elections-rows').replaceChildren(...elections.map((e) => el('tr', {},
      el('th', { scope: 'row' }, e.name), el('td', {}, e.leader ? e.leader.acquirer : 'nobody'), el('td', {}, e.epoch ?? ''),
      el('td', {}, e.leader ? seconds(e.leaseLeftMs) : ''))));
    labelCells($('participants-rows'));
    labelCells($('elections-rows'));
  }

  function renderAllocations(allocations) {
    $('allocations-list').replaceChildren(...(allocations.length ? allocations.map((a) => el('div', { class: 'owner' },
      el('h3', {}, a.name),
      el('p', {}, `${a.resources} resources, ${a.unowned} unowned, skew ${a.skew}`,
        a.lastRebalance ? `; last rebalance: ${a.lastRebalance.reason} (generation ${a.lastRebalance.generation}, ${a.lastRebalance.moved} moved)` : ''),
      el('div', { class: 'scroll' }, el('table', {},
        el('caption', { class: 'sr-only' }, `Owners of ${a.name}`),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, 'Node'), el('th', { scope: 'col' }, 'Group'), el('th', { scope: 'col' }, 'Resources'))),
        el('tbody', {}, a.owners.map((o) => el('tr', {}, el('th', { scope: 'row' }, o.acquirer), el('td', {}, o.group), el('td', { class: 'wrap' }, `${o.resources.length}: ${o.resources.join(', ')}`)))))))) : [el('p', {}, 'No allocation.')]));
  }

  const STATES = ['pending', 'running', 'done', 'failed', 'invalid', 'cancelled'];
  function renderTasks(counts, tasks) {
    const types = Object.keys(counts).sort();
    $('task-counts').replaceChildren(...(types.length ? types.map((t) => el('tr', {}, el('th', { scope: 'row' }, t), STATES.map((s) => el('td', {}, counts[t][s])))) : [el('tr', {}, el('td', { colspan: 7 }, 'No task.'))]));
    $('task-rows').replaceChildren(...tasks.map((t) => {
      const error = (t.attempts[t.attempts.length - 1] || {}).error || '';
      const id = encodeURIComponent(t.id);
      const retry = ['failed', 'invalid', 'cancelled'].includes(t.state);
      return el('tr', {},
        el('th', { scope: 'row', class: 'wrap' }, t.id), el('td', {}, t.state), el('td', {}, t.attempts.length), el('td', { class: 'wrap' }, error),
        el('td', {}, retry
          ? el('button', { type: 'button', onclick: () => act(`retry ${t.id}`, () => api('POST', `/tasks/${id}/retry`)) }, 'Retry')
          : el('button', { type: 'button', class: 'danger', onclick: () => act(`cancel ${t.id}`, () => api('POST', `/tasks/${id}/cancel`)) }, 'Cancel')));
    }));
    labelCells($('task-counts'));
    labelCells($('task-rows'));
  }

  $('group-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.target;
    act('group progress', async () => {
      const g = await api('GET', `/tasks/groups/${encodeURIComponent(form.type.value.trim())}/${encodeURIComponent(form.name.value.trim())}`);
      $('group-progress').replaceChildren(el('p', {},
        `${g.id}: ${g.finished} of ${g.total ?? '?'} ended, ${g.failed} failed; round ${g.round}; join ${g.joinSubmittedAt ? (g.join || 'submitted') : 'not yet'}`),
        el('p', { class: 'hint' }, STATES.filter((s) => g.states[s]).map((s) => `${s} ${g.states[s]}`).join(', ')));
    });
  });

  /** Whether the permits were read at least once (else their table says "not read yet", not "no permit"). */
  let readYet = false;
  /** When every call of a poll last answered (server time), and whether the last poll found the cluster down. */
  let lastGood = 0;

  /**
   * Reads everything again. A call that fails leaves its table as it was (the Jobs and Schedules panels say so
   * themselves); one that finds the store unreachable (503) or gets no answer at all puts up the banner.
   */
  async function refresh() {
    const failures = [];
    const read = (path, fallback) => api('GET', path).catch((error) => {
      failures.push(error);
      return fallback;
    });
    const [definitions, semaphores, cluster, allocations, taskCounts, failed, open, jobsFailure, schedulesFailure] = await Promise.all([
      read('/definitions'),
      read('/permits'),
      read('/cluster'),
      read('/allocations', []),
      read('/tasks', { counts: {} }),
      read('/tasks/list?state=failed,invalid&limit=50', []),
      read('/tasks/list?state=pending,running&limit=50', []),
      jobs.refresh(),
      schedules.refresh(),
    ]);
    if ($('main').hidden) return; // signed out meanwhile
    for (const failure of [jobsFailure, schedulesFailure]) if (failure) failures.push(failure);
    // Jobs only: elections and allocations have their own sections, and their permits are not a job's (no Save or
    // Pause for them here; the CLI changes them with --force).
    const isJob = (item) => (item.kind || 'job') === 'job';
    // A runtime schedule's semaphore (the API names its schedules) is the schedule's: it writes the permits and patterns
    // back when it changes, so it is edited and paused with the schedule, under Schedules, not here as well.
    const isSchedules = (d) => Boolean(d.schedules && d.schedules.length);
    if (definitions) {
      renderDefinitions(definitions.filter((d) => isJob(d) && !isSchedules(d)));
      const others = definitions.filter((d) => !isJob(d)).map((d) => d.name);
      const scheduled = definitions.filter((d) => isJob(d) && isSchedules(d)).length;
      $('definitions-others').textContent = [
        others.length ? `Not listed here: ${others.join(', ')} (elections and allocations: see Cluster and Allocations).` : '',
        scheduled ? `Nor the semaphores of runtime schedules (${scheduled}): each is edited and paused with its schedule, under Schedules.` : '',
      ].filter(Boolean).join(' ');
    }
    if (semaphores) {
      readYet = true;
      permits = semaphores.filter((s) => s.permits.length > 0 && isJob(s));
    }
    renderPermits();
    if (cluster) renderCluster(cluster);
    if (!failures.some(isOutage)) {
      renderAllocations(allocations);
      renderTasks(taskCounts.counts, [...failed, ...open]);
    }
    health(failures);
    if (!failures.some(isOutage)) {
      lastUpdate = serverNow();
      $('updated').textContent = 'live, updated 0 s ago';
    }
  }

  /** A failure that means the store (503) or the app (no answer) cannot be reached, not a refusal of one call. */
  const isOutage = (error) => Boolean(error && (error.network || error.status === 503));

  /** Puts up the banner when the store or the app cannot be reached, and takes it down once every call answers. */
  function health(failures) {
    const down = failures.find(isOutage);
    document.body.classList.toggle('outage', Boolean(down));
    if (!down) {
      $('banner').hidden = true;
      lastGood = serverNow();
      return;
    }
    const reason = down.body && down.body.reason;
    const seen = lastGood ? `What this page shows was read at ${times.at(lastGood)} and may be out of date` : 'Nothing could be read since this page opened';
    $('banner-title').textContent = down.network ? 'This app does not answer.' : `The cluster's store cannot be reached${reason ? ` (${reason})` : ''}.`;
    $('banner-text').textContent = `${down.message}. ${seen}; changes fail until it answers. Trying again every ${POLL_MS / 1000} s.`;
    $('banner').hidden = false;
    $('updated').textContent = down.network ? 'app not answering' : 'cluster unreachable';
  }

  function showSignIn() {
    $('sign-in').hidden = false;
    $('main').hidden = true;
    $('bar').hidden = true;
    $('zone-pick').hidden = true;
    $('sign-out').hidden = true;
    $('updated').textContent = 'signed out';
  }

  function showConsole(signIn) {
    $('sign-in').hidden = true;
    $('main').hidden = false;
    $('bar').hidden = false;
    $('zone-pick').hidden = false;
    $('sign-out').hidden = signIn !== 'token';
    $('updated').textContent = 'reading…';
    describeZones();
    keepBarHeight();
  }

  /** Headings jumped to land below the sticky bar, however tall it is (the links wrap on a phone; the banner). */
  function keepBarHeight() {
    const set = () => document.documentElement.style.setProperty('--bar-height', `${Math.ceil($('bar').getBoundingClientRect().height)}px`);
    set();
    if (window.ResizeObserver && !keepBarHeight.observer) {
      keepBarHeight.observer = new ResizeObserver(set);
      keepBarHeight.observer.observe($('bar'));
    }
  }

  $('time-zone').addEventListener('change', async (event) => {
    times.utc = event.target.value === 'utc';
    try {
      localStorage.setItem(ZONE_KEY, times.utc ? 'utc' : 'local');
    } catch {
      // not kept: this page shows it all the same
    }
    jobs.rerender();
    schedules.rerender();
    await refresh().catch(() => undefined);
  });

  $('sign-in-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const response = await fetch(`${base}/console/session`, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: $('token').value }) });
    if (!response.ok) {
      $('sign-in-error').textContent = response.status === 401 ? 'Wrong token.' : `Sign-in failed (${response.status}).`;
      return;
    }
    $('token').value = '';
    $('sign-in-error').textContent = '';
    start('token');
  });

  $('sign-out').addEventListener('click', async () => {
    await fetch(`${base}/console/session`, { method: 'DELETE', credentials: 'same-origin' });
    showSignIn();
  });

  let polling;
  async function start(signIn) {
    showConsole(signIn);
    try {
      await refresh();
    } catch (error) {
      say(error.message, false);
    }
    clearInterval(polling);
    polling = setInterval(async () => {
      if (document.hidden || $('main').hidden) return;
      try {
        await refresh();
      } catch (error) {
        $('updated').textContent = `not updated: ${error.message}`;
      }
    }, POLL_MS);
  }

  // Every second: the countdowns, and how fresh the page is.
  setInterval(() => {
    if ($('main').hidden || !lastUpdate) return;
    renderPermits();
    jobs.tick();
    schedules.tick();
    if ($('banner').hidden) $('updated').textContent = `live, updated ${Math.max(0, Math.round((serverNow() - lastUpdate) / 1000))} s ago`;
  }, 1000);

  fetch(`${base}/console/session`, { credentials: 'same-origin' }).then(async (response) => {
    if (response.ok) start((await response.json()).signIn);
    else showSignIn();
  }, () => showSignIn());
})();
