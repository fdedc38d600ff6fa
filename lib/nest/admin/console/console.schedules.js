// The console's Schedules panel: the runtime schedules in the cluster (id, cron, zone, handler, paused, revision,
// next fire, last run from the job history kept under the schedule's id), a filter, pause, resume and remove, and an
// editor that creates a schedule or edits one. Every change names the revision the operator saw (0 for a new one),
// so an edit made meanwhile elsewhere is refused (409 REVISION_CONFLICT), never overwritten: the editor then says so
// and offers to reload the current version. Loaded before console.client.js, which builds the panel with its
// helpers and calls refresh() with every poll.
(() => {
  'use strict';

  window.gatekeeperSchedulesPanel = ({ $, el, api, seconds, duration, serverNow, times, syncRows, filterRows }) => {
    /** The schedules as last read; `undefined` until a read answered. */
    let schedules;
    const rows = new Map();
    /** What the editor is doing: `{ mode: 'create' | 'edit', id, revision }` (revision 0: it must not exist yet). */
    let editing;

    const ago = (ms) => (serverNow() - ms < 1000 ? 'just now' : `${seconds(serverNow() - ms)} ago`);
    const until = (ms) => (ms - serverNow() < 1000 ? 'now' : `in ${seconds(ms - serverNow())}`);
    const path = (id) => `/schedules/${encodeURIComponent(id)}`;
    const form = $('schedule-form');

    function say(message, ok, reason) {
      const result = $('schedule-result');
      result.className = `status ${ok ? 'ok' : 'error'}`;
      result.dataset.reason = reason || '';
      result.textContent = message;
    }

    function searchText(s) {
      const d = s.definition;
      const last = s.lastRun;
      return [s.id, d.cron, d.timeZone, d.handler, d.semaphore, d.paused ? 'paused' : 'active', last ? last.outcome : 'never',
        s.handledHere ? 'handled-here' : 'not-on-this-node'].join(' ');
    }

    function buildRow(s) {
      const d = s.definition;
      const last = s.lastRun;
      const next = s.nextRuns[0];
      return el('tr', { 'data-schedule': s.id, 'data-search': searchText(s) },
        el('th', { scope: 'row' }, s.id, ' ', d.paused ? el('span', { class: 'badge paused' }, 'paused') : null),
        el('td', { class: 'cron' }, d.cron),
        el('td', { class: 'zone' }, d.timeZone),
        el('td', { class: 'handler' }, d.handler, s.handledHere ? '' : el('span', { class: 'hint', title: 'This node has no @ScheduleHandler of this name' }, ' (not on this node)')),
        el('td', { class: 'revision' }, s.revision),
        el('td', { class: 'next-run' }, d.paused ? 'paused' : next === undefined ? '-' : [el('span', { class: 'when' }, times.clock(next)), ' (', el('span', { 'data-until': next }, until(next)), ')']),
        el('td', { class: 'last-run' }, last ? [el('span', { class: `badge outcome ${last.outcome}` }, last.outcome), ` on ${last.node}, `, el('span', { 'data-ago': last.startedAt }, ago(last.startedAt))] : 'never'),
        el('td', { class: 'actions' },
          el('button', { type: 'button', class: 'secondary', 'aria-label': `Edit ${s.id}`, onclick: () => edit(s) }, 'Edit'),
          d.paused
            ? el('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${s.id}`, onclick: (e) => change(s, 'resume', e.target) }, 'Resume')
            : el('button', { type: 'button', class: 'secondary', 'aria-label': `Pause ${s.id}`, onclick: (e) => change(s, 'pause', e.target) }, 'Pause'),
          el('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${s.id}`, onclick: (e) => change(s, 'remove', e.target) }, 'Remove')));
    }

    function render() {
      if (schedules === undefined) return;
      const wanted = [];
      const seen = new Set();
      for (const s of schedules) {
        seen.add(s.id);
        const key = JSON.stringify([s, times.utc]);
        let cached = rows.get(s.id);
        if (!cached || cached.key !== key) rows.set(s.id, (cached = { key, row: buildRow(s) }));
        wanted.push(cached.row);
      }
      for (const id of rows.keys()) if (!seen.has(id)) rows.delete(id);
      syncRows($('schedules-rows'), wanted.length ? wanted : [el('tr', {}, el('td', { colspan: 8 }, 'No runtime schedule in the cluster.'))]);
      filterRows($('schedules-rows'), $('schedules-filter').value, $('schedules-count'), 'schedule');
      const handlers = [...new Set(schedules.map((s) => s.definition.handler))].sort();
      $('schedule-handlers').replaceChildren(...handlers.map((h) => el('option', { value: h })));
    }

    /** Pauses, resumes or removes `s` at the revision shown; a remove asks first. */
    async function change(s, action, button) {
      if (action === 'remove' && !window.confirm(`Remove the schedule ${s.id} (revision ${s.revision})? It stops firing on every node; its history stays.`)) return;
      button.disabled = true;
      const query = `?expectedRevision=${s.revision}`;
      try {
        const r = action === 'remove' ? await api('DELETE', path(s.id) + query) : await api('POST', `${path(s.id)}/${action}${query}`);
        say(`${s.id}: ${r.outcome === 'unchanged' ? 'nothing to change' : `${action === 'remove' ? 'removed' : `${action}d`}, revision ${r.revision}`}.`, true);
      } catch (error) {
        const reason = error.body && error.body.reason;
        say(reason === 'REVISION_CONFLICT' ? `${s.id}: not changed, it was edited meanwhile (now revision ${error.body.actualRevision || 'none'}); look again and retry.` : `${s.id}: ${error.message}`, false, reason);
      } finally {
        button.disabled = false;
      }
      await refresh();
    }

    // The editor. A new schedule is written with expectedRevision 0 (it must not exist yet); an edit with the
    // revision it was opened at. A conflict keeps what the operator typed and offers the current version instead.
    const field = (name) => form.elements.namedItem(name);
    const TEXT_FIELDS = ['id', 'cron', 'timeZone', 'handler', 'duration', 'semaphore', 'groupPattern', 'acquirerPattern', 'catchUpWindow', 'replaceWait'];

    function clearErrors() {
      $('schedule-form-error').textContent = '';
      delete $('schedule-form-error').dataset.reason;
      $('schedule-conflict').hidden = true;
      for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
    }

    function fill(definition) {
      const d = definition || {};
      for (const name of TEXT_FIELDS) field(name).value = '';
      field('id').value = d.id || '';
      field('cron').value = d.cron || '';
      field('timeZone').value = d.timeZone || '';
      field('handler').value = d.handler || '';
      field('duration').value = d.durationMs === undefined ? '' : duration(d.durationMs);
      field('permits').value = d.permits === undefined ? 1 : d.permits;
      field('paused').checked = Boolean(d.paused);
      field('data').value = JSON.stringify(d.data === undefined ? null : d.data, null, 2);
      field('semaphore').value = d.semaphore || '';
      field('groupPattern').value = d.groupPattern || '';
      field('acquirerPattern').value = d.acquirerPattern || '';
      field('missedRuns').value = d.missedRuns || 'skip';
      field('catchUpWindow').value = d.catchUpWindowMs === undefined ? '' : duration(d.catchUpWindowMs);
      field('overlap').value = d.overlap || 'skip';
      field('replaceWait').value = d.replaceWaitMs === undefined ? '' : duration(d.replaceWaitMs);
      // Options set away from their defaults are shown, not hidden under "More options".
      form.querySelector('details.more').open = Boolean(d.missedRuns === 'runOnce' || d.overlap === 'replace'
        || (d.groupPattern && d.groupPattern !== '.*') || (d.acquirerPattern && d.acquirerPattern !== '.*') || (d.semaphore && d.id && d.semaphore !== `schedule:${d.id}`));
    }

    function describeBase(record) {
      $('schedule-form-title').textContent = editing.mode === 'create' ? 'New schedule' : `Edit ${editing.id}`;
      $('schedule-save').textContent = editing.mode === 'create' ? 'Create schedule' : 'Save changes';
      field('id').readOnly = editing.mode === 'edit';
      $('schedule-form-base').textContent = editing.mode === 'create'
        ? 'Written only if no schedule of this id exists (revision 0 expected). The handler is not checked: a node deployed later may have it.'
        : `Based on revision ${editing.revision}${record ? `, changed by ${record.updatedBy} at ${times.at(record.updatedAt)}` : ''}: saving is refused if it changed since.`;
    }

    function open(mode, s) {
      editing = { mode, id: s ? s.id : '', revision: s ? s.revision : 0 };
      clearErrors();
      say('', true);
      fill(s ? s.definition : undefined);
      describeBase(s);
      form.hidden = false;
      form.scrollIntoView({ block: 'start' });
      field(mode === 'create' ? 'id' : 'cron').focus({ preventScroll: true });
    }

    function edit(s) {
      open('edit', s);
    }

    function close() {
      form.hidden = true;
      editing = undefined;
      clearErrors();
    }

    function invalid(name, message) {
      const input = field(name);
      if (input) {
        input.setAttribute('aria-invalid', 'true');
        const more = form.querySelector('details.more');
        if (more.contains(input)) more.open = true;
        input.focus();
      }
      $('schedule-form-error').textContent = message;
    }

    /** The definition in the form, as the admin API takes it; `undefined` (and the field marked) when one is wrong. */
    function read() {
      const text = (name) => field(name).value.trim();
      for (const name of ['id', 'cron', 'handler', 'duration']) {
        if (!text(name)) return invalid(name, `${field(name).closest('label').firstChild.textContent.trim()}: required.`);
      }
      let data;
      try {
        data = text('data') === '' ? null : JSON.parse(field('data').value);
      } catch (error) {
        return invalid('data', `Data: not JSON (${error.message}).`);
      }
      const body = { cron: text('cron'), handler: text('handler'), duration: text('duration'), data, paused: field('paused').checked };
      if (text('timeZone')) body.timeZone = text('timeZone');
      if (text('permits')) body.permits = Number(text('permits'));
      for (const name of ['semaphore', 'groupPattern', 'acquirerPattern']) if (text(name)) body[name] = text(name);
      body.missedRuns = field('missedRuns').value;
      if (body.missedRuns === 'runOnce' && text('catchUpWindow')) body.catchUpWindow = text('catchUpWindow');
      body.overlap = field('overlap').value;
      if (body.overlap === 'replace' && text('replaceWait')) body.replaceWait = text('replaceWait');
      return { id: text('id'), body };
    }

    async function save() {
      clearErrors();
      const request = read();
      if (!request) return;
      const { id, body } = request;
      const expected = editing.revision;
      $('schedule-save').disabled = true;
      try {
        const r = await api('PUT', `${path(id)}?expectedRevision=${expected}`, body);
        say(`${id}: ${r.outcome === 'unchanged' ? 'nothing to change (the same definition)' : `${r.outcome}, revision ${r.revision}`}.`, true);
        close();
        await refresh();
      } catch (error) {
        const answer = error.body || {};
        if (answer.reason === 'REVISION_CONFLICT') conflict(id, expected, answer.actualRevision);
        else if (answer.reason === 'WRITE_CONFLICT') $('schedule-form-error').textContent = `Not saved: other writers changed ${id} at the same moment every time; save again.`;
        else if (error.status === 400 && answer.field) invalid(answer.field, `Not saved: ${answer.message}`);
        else $('schedule-form-error').textContent = `Not saved: ${error.message}`;
      } finally {
        $('schedule-save').disabled = false;
      }
    }

    /** Says what the stale revision means, keeps the form as typed, and offers the current version. */
    function conflict(id, expected, actual) {
      let text;
      if (editing.mode === 'create') text = `Not created: a schedule "${id}" exists already (revision ${actual}). Load it to edit it instead; what you typed here is replaced.`;
      else if (!actual) text = `Not saved: "${id}" was removed since you opened it at revision ${expected}. Reload to write it anew as a new schedule, or cancel.`;
      else text = `Not saved: "${id}" was changed by someone else since you opened it (you edited revision ${expected}; it is at revision ${actual} now). Your changes are still in the form: reload the current version (it replaces them) and make your change again.`;
      $('schedule-conflict-text').textContent = text;
      $('schedule-reload').textContent = editing.mode === 'create' ? 'Load the existing schedule' : 'Reload the current version';
      $('schedule-conflict').hidden = false;
      $('schedule-form-error').dataset.reason = 'REVISION_CONFLICT';
      $('schedule-conflict').scrollIntoView({ block: 'nearest' });
    }

    async function reload() {
      const id = field('id').value.trim() || (editing && editing.id);
      clearErrors();
      try {
        const s = await api('GET', path(id));
        editing = { mode: 'edit', id: s.id, revision: s.revision };
        fill(s.definition);
        describeBase(s);
        say(`${id}: reloaded revision ${s.revision}.`, true);
      } catch (error) {
        if (error.status === 404) {
          editing = { mode: 'create', id, revision: 0 };
          describeBase();
          field('id').value = id;
          say(`${id}: it no longer exists; saving creates it again.`, true);
        } else $('schedule-form-error').textContent = `Not reloaded: ${error.message}`;
      }
      await refresh();
    }

    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void save();
    });
    $('schedule-cancel').addEventListener('click', close);
    $('schedule-reload').addEventListener('click', () => void reload());
    $('schedule-new').addEventListener('click', () => open('create'));
    $('schedules-filter').addEventListener('input', () => filterRows($('schedules-rows'), $('schedules-filter').value, $('schedules-count'), 'schedule'));
    try {
      const zones = Intl.supportedValuesOf ? Intl.supportedValuesOf('timeZone') : [];
      $('time-zones').replaceChildren(...['UTC', ...zones.filter((z) => z !== 'UTC')].map((z) => el('option', { value: z })));
    } catch {
      // no list: the field takes any zone name all the same
    }

    /** Reads the schedules again; a failure is said in the panel and returned (for the page's banner), never thrown. */
    async function refresh() {
      try {
        schedules = await api('GET', '/schedules');
        $('schedules-error').textContent = '';
      } catch (error) {
        $('schedules-error').textContent = `Schedules not updated: ${error.message}`;
        if (schedules === undefined) $('schedules-rows').replaceChildren(el('tr', {}, el('td', { colspan: 8 }, `Not read yet: ${error.message}`)));
        return error;
      }
      render();
      return undefined;
    }

    return {
      refresh,
      /** Draws the rows again (the zone the times are shown in changed). */
      rerender: render,
      /** Keeps "in 2 s" and "5 s ago" current. */
      tick() {
        for (const span of $('schedules-rows').querySelectorAll('span[data-ago]')) span.textContent = ago(Number(span.dataset.ago));
        for (const span of $('schedules-rows').querySelectorAll('span[data-until]')) span.textContent = until(Number(span.dataset.until));
      },
    };
  };
})();
