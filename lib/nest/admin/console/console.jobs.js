// The console's Jobs panel: this node's scheduled jobs (holder, token, expiry, paused, last run, next run), one
// job's description and run history, "Run now", and Pause or Resume by the job's name. Loaded before
// console.client.js, which builds the panel with its helpers and calls refresh() with every poll and tick() every
// second.
(() => {
  'use strict';

  window.gatekeeperJobsPanel = ({ $, el, api, seconds, duration, serverNow }) => {
    let jobs = [];
    /** The job whose description and history are shown, and its last answer. */
    let selected;
    let detail;

    const when = (ms) => (ms === undefined || ms === null ? '-' : new Date(ms).toLocaleString());
    /** An instant in a table cell: its time of day when it is within a day of now, else date and time. */
    const clock = (ms) => (Math.abs(serverNow() - ms) < 86400000 ? new Date(ms).toLocaleTimeString() : when(ms));
    // The server's time is known to a second (its Date header), so nothing closer than that is told apart.
    const ago = (ms) => (serverNow() - ms < 1000 ? 'just now' : `${seconds(serverNow() - ms)} ago`);
    const until = (ms) => (ms - serverNow() < 1000 ? 'now' : `in ${seconds(ms - serverNow())}`);
    const took = (ms) => (ms === undefined ? '-' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
    const outcome = (run) => el('span', { class: `badge outcome ${run.outcome}` }, run.outcome);
    const byReason = (counts) => Object.entries(counts || {}).filter(([, n]) => n).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
    const path = (job) => `/jobs/${encodeURIComponent(job)}`;

    function renderRows() {
      const now = serverNow();
      const rows = jobs.map((j) => {
        const holder = j.holders[0];
        const last = j.lastRun;
        return el('tr', { 'data-job': j.job },
          el('th', { scope: 'row' }, j.job, ' ', j.paused ? el('span', { class: 'badge paused' }, 'paused') : null),
          el('td', { class: 'holders' }, j.holders.length ? j.holders.map((h) => h.node).join(', ') : 'nobody'),
          el('td', {}, holder ? holder.token : ''),
          el('td', holder ? { 'data-expires': holder.expiresAt } : {}, holder ? seconds(holder.expiresAt - now) : ''),
          el('td', { class: 'last-run' }, last ? [outcome(last), ` ${last.trigger}, ${ago(last.startedAt)}`] : 'never'),
          el('td', { class: 'next-run' }, j.nextRun === undefined ? (j.cron ? '-' : 'no cron') : `${clock(j.nextRun)} (${until(j.nextRun)})`),
          el('td', { class: 'actions' },
            el('button', { type: 'button', class: 'secondary', 'aria-label': `Details of ${j.job}`, onclick: () => show(j.job) }, 'Details'),
            el('button', { type: 'button', 'aria-label': `Run ${j.job} now`, onclick: (e) => runNow(j.job, e.target) }, 'Run now'),
            j.paused
              ? el('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${j.job}`, onclick: (e) => setPaused(j, 'resume', e.target) }, 'Resume')
              : el('button', { type: 'button', class: 'danger', 'aria-label': `Pause ${j.job}`, onclick: (e) => setPaused(j, 'pause', e.target) }, 'Pause')));
      });
      $('jobs-rows').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 7 }, 'No scheduled job on this node.'))]));
    }

    function renderDetail() {
      const d = detail;
      if (!d) return $('job-detail').replaceChildren();
      const def = d.definition;
      const facts = [
        ['Semaphore', `${d.semaphore} (${d.mode} mode)${d.paused ? ', paused' : ''}`],
        ['Definition', def ? `permits ${def.permits}, duration ${duration(def.durationMs)}, group ${def.groupPattern}, acquirer ${def.acquirerPattern}` : 'none in this node\'s view'],
        ['Held by', d.holders.length ? d.holders.map((h) => `${h.node} (${h.group}), token ${h.token}, until ${when(h.expiresAt)}`).join('; ') : 'nobody'],
        ['Schedule', d.cron ? `${d.cron} (zone ${d.timeZone || 'the app\'s'})` : 'no cron expression'],
        ['Runs', byReason(d.counts)],
        ['Missed instants', d.missed.count ? `${d.missed.count}, newest ${when(d.missed.last)}` : '0'],
        ['Skipped ticks', byReason(d.skipped)],
        ['Last failure', d.lastFailure ? `${when(d.lastFailure.startedAt)} on ${d.lastFailure.node}: ${d.lastFailure.outcome}${d.lastFailure.error ? `: ${d.lastFailure.error}` : ''}` : 'none'],
      ];
      $('job-detail').replaceChildren(
        el('h3', { id: 'job-detail-title' }, d.job),
        el('dl', { class: 'facts', 'aria-labelledby': 'job-detail-title' }, facts.flatMap(([name, value]) => [el('dt', {}, name), el('dd', { 'data-fact': name }, value)])),
        d.nextRuns.length || d.nextRunsNote ? el('div', {}, el('h4', {}, 'Next runs'), el('ol', { class: 'next-runs' }, d.nextRuns.map((t) => el('li', {}, when(t)))), d.nextRunsNote ? el('p', { class: 'note' }, d.nextRunsNote) : null) : null,
        el('div', { class: 'scroll' }, el('table', {},
          el('caption', {}, `History: ${d.runs.length} run(s) kept, newest first`),
          el('thead', {}, el('tr', {}, ['Trigger', 'Instant', 'Node', 'Token', 'Started', 'Took', 'Outcome', 'Error'].map((h) => el('th', { scope: 'col' }, h)))),
          el('tbody', { id: 'job-runs' }, d.runs.length ? d.runs.map((r) => el('tr', { 'data-trigger': r.trigger },
            el('td', {}, r.trigger), el('td', {}, clock(r.instant)), el('td', {}, r.node), el('td', {}, r.token),
            el('td', {}, clock(r.startedAt)), el('td', {}, took(r.durationMs)), el('td', {}, outcome(r)), el('td', { class: 'wrap' }, r.error || ''))) : [el('tr', {}, el('td', { colspan: 8 }, 'No run kept yet.'))]))));
    }

    async function show(job) {
      selected = job;
      try {
        detail = await api('GET', path(job));
      } catch (error) {
        detail = undefined;
        $('job-detail').replaceChildren(el('p', { class: 'error' }, `${job}: ${error.message}`));
        return;
      }
      renderDetail();
    }

    async function runNow(job, button) {
      const result = $('run-now-result');
      button.disabled = true;
      result.className = 'status';
      result.textContent = `Run now of ${job}: asking the cluster…`;
      try {
        const r = await api('POST', `${path(job)}/run`);
        result.className = 'status ok';
        result.dataset.reason = '';
        result.textContent = `Run now of ${job}: started on ${r.node} under token ${r.token} at ${when(r.startedAt)} (request ${r.requestId}).`;
      } catch (error) {
        result.className = 'status error';
        result.dataset.reason = (error.body && error.body.reason) || '';
        result.textContent = error.message;
      } finally {
        button.disabled = false;
      }
      if (selected === job) await show(job).catch(() => undefined);
    }

    /**
     * Pauses or resumes a job by its name (its semaphore, or its runtime schedule), then reads the jobs again so its
     * row, and those of the jobs sharing its semaphore, say so. Pausing a semaphore other listed jobs share asks first.
     */
    async function setPaused(j, action, button) {
      const sharing = jobs.filter((o) => o.job !== j.job && o.semaphore === j.semaphore).map((o) => o.job);
      if (sharing.length && !window.confirm(`${action === 'pause' ? 'Pause' : 'Resume'} ${j.job}? Its semaphore ${j.semaphore} is shared: ${sharing.join(', ')} ${action === 'pause' ? 'stop' : 'start'} too.`)) return;
      const result = $('run-now-result');
      button.disabled = true;
      try {
        const r = await api('POST', `${path(j.job)}/${action}`);
        const done = r.paused ? 'paused' : 'resumed';
        result.className = 'status ok';
        result.dataset.reason = '';
        result.textContent = `${j.job}: ${done} (${r.by === 'schedule' ? `its runtime schedule, revision ${r.revision}` : `semaphore ${r.semaphore}, permits ${r.permits}`})`
          + `${r.alsoAffected.length ? `; also ${done}: ${r.alsoAffected.join(', ')}` : ''}.`;
      } catch (error) {
        result.className = 'status error';
        result.dataset.reason = (error.body && error.body.reason) || '';
        result.textContent = `${action === 'pause' ? 'Pause' : 'Resume'} of ${j.job}: ${error.message}`;
      } finally {
        button.disabled = false;
      }
      await refresh();
    }

    /** Reads the jobs (and the shown job's description) again; a failure is said in the panel, never thrown. */
    async function refresh() {
      try {
        jobs = await api('GET', '/jobs');
        $('jobs-error').textContent = '';
      } catch (error) {
        $('jobs-error').textContent = `Jobs not updated: ${error.message}`;
        return;
      }
      renderRows();
      if (selected) await show(selected);
    }

    return {
      refresh,
      /** Counts the holders' time left down. */
      tick() {
        const now = serverNow();
        for (const cell of $('jobs-rows').querySelectorAll('[data-expires]')) cell.textContent = seconds(Number(cell.dataset.expires) - now);
      },
    };
  };
})();
