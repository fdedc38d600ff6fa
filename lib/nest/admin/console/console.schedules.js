// The console's Schedules panel: the runtime schedules in the cluster (id, cron, zone, handler, paused, revision,
// next fire, last run from the job history kept under the schedule's id), with pause, resume and remove. Every
// change names the revision the row shows, so an edit made meanwhile elsewhere is refused (409), never overwritten.
// Loaded before console.client.js, which builds the panel with its helpers and calls refresh() with every poll.
(() => {
  'use strict';

  window.gatekeeperSchedulesPanel = ({ $, el, api, seconds, serverNow }) => {
    let schedules = [];

    const when = (ms) => new Date(ms).toLocaleString();
    const ago = (ms) => (serverNow() - ms < 1000 ? 'just now' : `${seconds(serverNow() - ms)} ago`);
    const until = (ms) => (ms - serverNow() < 1000 ? 'now' : `in ${seconds(ms - serverNow())}`);
    const path = (id) => `/schedules/${encodeURIComponent(id)}`;

    function say(message, ok, reason) {
      const result = $('schedule-result');
      result.className = `status ${ok ? 'ok' : 'error'}`;
      result.dataset.reason = reason || '';
      result.textContent = message;
    }

    function render() {
      const rows = schedules.map((s) => {
        const d = s.definition;
        const last = s.lastRun;
        const next = s.nextRuns[0];
        return el('tr', { 'data-schedule': s.id },
          el('th', { scope: 'row' }, s.id, ' ', d.paused ? el('span', { class: 'badge paused' }, 'paused') : null),
          el('td', { class: 'cron' }, d.cron),
          el('td', {}, d.timeZone),
          el('td', { class: 'handler' }, d.handler, s.handledHere ? '' : el('span', { class: 'hint', title: 'This node has no @ScheduleHandler of this name' }, ' (not on this node)')),
          el('td', { class: 'revision' }, s.revision),
          el('td', { class: 'next-run' }, d.paused ? 'paused' : next === undefined ? '-' : `${when(next)} (${until(next)})`),
          el('td', { class: 'last-run' }, last ? [el('span', { class: `badge outcome ${last.outcome}` }, last.outcome), ` on ${last.node}, ${ago(last.startedAt)}`] : 'never'),
          el('td', { class: 'actions' },
            d.paused
              ? el('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${s.id}`, onclick: (e) => change(s, 'resume', e.target) }, 'Resume')
              : el('button', { type: 'button', class: 'secondary', 'aria-label': `Pause ${s.id}`, onclick: (e) => change(s, 'pause', e.target) }, 'Pause'),
            el('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${s.id}`, onclick: (e) => change(s, 'remove', e.target) }, 'Remove')));
      });
      $('schedules-rows').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 8 }, 'No runtime schedule in the cluster.'))]));
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

    async function refresh() {
      try {
        schedules = await api('GET', '/schedules');
        $('schedules-error').textContent = '';
      } catch (error) {
        $('schedules-error').textContent = `Schedules not updated: ${error.message}`;
        return;
      }
      render();
    }

    return {
      /** Reads the schedules again; a failure is said in the panel, never thrown. */
      refresh,
    };
  };
})();
