// The gatekeeper's web console: plain browser JavaScript over the admin API (same origin, same guard).
// It polls every 2 s while the page is visible, counts permits down every second, and never re-renders a row the
// operator is editing.
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
    const response = await fetch(base + path, {
      method,
      credentials: 'same-origin',
      headers: { 'x-gatekeeper-console': '1', ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    const date = response.headers.get('date');
    if (date) skewMs = Date.now() - Date.parse(date);
    const text = await response.text();
    const data = text ? JSON.parse(text) : undefined;
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
  // The Jobs panel lives in console.jobs.js (loaded first); it polls and counts down with the rest of the page.
  const jobs = window.gatekeeperJobsPanel({ $, el, api, seconds, duration, serverNow });
  // So does the Schedules panel (console.schedules.js).
  const schedules = window.gatekeeperSchedulesPanel({ $, el, api, seconds, serverNow });

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
    $('permits-rows').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 6 }, 'No live permit.'))]));
  }

  function renderCluster(cluster) {
    const now = serverNow();
    elections = cluster.elections || [];
    $('participants-rows').replaceChildren(...(cluster.participants || []).map((p) => el('tr', {},
      el('th', { scope: 'row' }, p.acquirer), el('td', {}, p.group), el('td', {}, p.version), el('td', {}, seconds(p.ageMs)),
      el('td', {}, (p.leads || []).map((e) => el('span', { class: 'badge leader' }, e))))));
    $('elections-rows').replaceChildren(...elections.map((e) => el('tr', {},
      el('th', { scope: 'row' }, e.name), el('td', {}, e.leader ? e.leader.acquirer : 'nobody'), el('td', {}, e.epoch ?? ''),
      el('td', {}, e.leader ? seconds(e.leaseLeftMs - (now - lastUpdate)) : ''))));
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

  async function refresh() {
    const [definitions, semaphores, cluster, allocations, taskCounts, failed, open] = await Promise.all([
      api('GET', '/definitions'),
      api('GET', '/permits'),
      api('GET', '/cluster'),
      api('GET', '/allocations').catch(() => []),
      api('GET', '/tasks').catch(() => ({ counts: {} })),
      api('GET', '/tasks/list?state=failed,invalid&limit=50').catch(() => []),
      api('GET', '/tasks/list?state=pending,running&limit=50').catch(() => []),
      jobs.refresh(),
      schedules.refresh(),
    ]);
    lastUpdate = serverNow();
    // Jobs only: elections and allocations have their own sections, and their permits are not a job's (no Save or
    // Pause for them here; the CLI changes them with --force).
    const isJob = (item) => (item.kind || 'job') === 'job';
    renderDefinitions(definitions.filter(isJob));
    const others = definitions.filter((d) => !isJob(d)).map((d) => d.name);
    $('definitions-others').textContent = others.length ? `Not listed here: ${others.join(', ')} (elections and allocations: see Cluster and Allocations).` : '';
    permits = semaphores.filter((s) => s.permits.length > 0 && isJob(s));
    renderPermits();
    renderCluster(cluster);
    renderAllocations(allocations);
    renderTasks(taskCounts.counts, [...failed, ...open]);
  }

  function showSignIn() {
    $('sign-in').hidden = false;
    $('main').hidden = true;
    $('sections').hidden = true;
    $('sign-out').hidden = true;
    $('updated').textContent = 'signed out';
  }

  function showConsole(signIn) {
    $('sign-in').hidden = true;
    $('main').hidden = false;
    $('sections').hidden = false;
    $('sign-out').hidden = signIn !== 'token';
  }

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
    $('updated').textContent = `live, updated ${Math.max(0, Math.round((serverNow() - lastUpdate) / 1000))} s ago`;
  }, 1000);

  fetch(`${base}/console/session`, { credentials: 'same-origin' }).then(async (response) => {
    if (response.ok) start((await response.json()).signIn);
    else showSignIn();
  }, () => showSignIn());
})();
