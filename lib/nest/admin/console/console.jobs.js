// The console's Jobs panel: this node's scheduled jobs (holder, token, expiry, paused, last run, next run), a filter,
// one job's description and run history (in a row right under the job's, failures with their stack), "Run now"
// (asked first in a dialog, which then shows how the run ended), and Pause or Resume by the job's name. Loaded
// before console.client.js, which builds the panel with its helpers and calls refresh() with every poll and tick()
// every second.
(() => {
  'use strict';

  window.gatekeeperJobsPanel = ({ $, el, api, seconds, duration, serverNow, times, syncRows, filterRows }) => {
    /** The jobs as last read; `undefined` until a read answered. */
    let jobs;
    /** The job whose description and history are shown, and its last answer. */
    let selected;
    let detail;
    /** Rows built by earlier polls, by job, with what they were built from: an unchanged job keeps its row. */
    const rows = new Map();
    /** The row under the selected job's: one element, moved with it. */
    const detailBox = el('div', { id: 'job-detail' });
    const detailRow = el('tr', { class: 'detail-row', id: 'job-detail-row' }, el('td', { colspan: 7 }, detailBox));
    let detailShown = '';
    /** The runs whose stack the operator opened (kept open across polls). */
    const openStacks = new Set();

    // The server's time is known to a second (its Date header), so nothing closer than that is told apart.
    const ago = (ms) => (serverNow() - ms < 1000 ? 'just now' : `${seconds(serverNow() - ms)} ago`);
    const until = (ms) => (ms - serverNow() < 1000 ? 'now' : `in ${seconds(ms - serverNow())}`);
    const took = (ms) => (ms === undefined ? '-' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
    const outcome = (run) => el('span', { class: `badge outcome ${run.outcome}` }, run.outcome);
    const byReason = (counts) => Object.entries(counts || {}).filter(([, n]) => n).map(([reason, n]) => `${reason} ${n}`).join(', ') || 'none';
    const path = (job) => `/jobs/${encodeURIComponent(job)}`;
    /** Times that count (in 2 s, 5 s ago): kept current by tick(). */
    const agoSpan = (ms) => el('span', { 'data-ago': ms }, ago(ms));
    const untilSpan = (ms) => el('span', { 'data-until': ms }, until(ms));

    /** A failure's stack, folded: the message is on the line above it; the stack opens on a click and stays open. */
    function stack(run, label = 'Stack') {
      if (!run || !run.stack) return null;
      const fold = el('details', { class: 'stack', 'data-run': run.id, open: openStacks.has(run.id) },
        el('summary', {}, label), el('pre', {}, run.stack));
      fold.addEventListener('toggle', () => (fold.open ? openStacks.add(run.id) : openStacks.delete(run.id)));
      return fold;
    }

    /** What a job's row is matched against by the filter: its names and its states. */
    function searchText(j) {
      const last = j.lastRun;
      return [j.job, j.semaphore, j.mode, j.paused ? 'paused' : 'active', j.holders.length ? `held ${j.holders.map((h) => h.node).join(' ')}` : 'nobody unheld',
        last ? `${last.outcome} ${last.trigger}` : 'never', j.lastFailure ? 'has-failed' : '', j.cron || 'no-cron', j.timeZone || ''].join(' ');
    }

    function buildRow(j) {
      const holder = j.holders[0];
      const last = j.lastRun;
      const open = selected === j.job;
      return el('tr', { 'data-job': j.job, 'data-search': searchText(j), class: open ? 'selected' : undefined },
        el('th', { scope: 'row' }, j.job, ' ', j.paused ? el('span', { class: 'badge paused' }, 'paused') : null),
        el('td', { class: 'holders' }, j.holders.length ? j.holders.map((h) => h.node).join(', ') : 'nobody'),
        el('td', { class: 'token' }, holder ? holder.token : ''),
        el('td', holder ? { 'data-expires': holder.expiresAt } : {}, holder ? seconds(holder.expiresAt - serverNow()) : ''),
        el('td', { class: 'last-run' }, last ? [outcome(last), ` ${last.trigger}, `, agoSpan(last.startedAt)] : 'never'),
        el('td', { class: 'next-run' }, j.nextRun === undefined ? (j.cron ? '-' : 'no cron') : [el('span', { class: 'when' }, times.clock(j.nextRun)), ' (', untilSpan(j.nextRun), ')']),
        el('td', { class: 'actions' },
          el('button', { type: 'button', class: 'secondary', 'aria-label': `Details of ${j.job}`, 'aria-expanded': open ? 'true' : 'false', 'aria-controls': 'job-detail-row', onclick: () => toggle(j.job) }, open ? 'Hide details' : 'Details'),
          el('button', { type: 'button', 'aria-label': `Run ${j.job} now`, onclick: () => askToRun(j) }, 'Run now'),
          // A runtime schedule has one Pause, its own, under Schedules: this takes the operator to it.
          j.schedule
            ? el('button', { type: 'button', class: 'secondary', 'aria-label': `${j.job}: its schedule (pause, edit, remove)`, onclick: () => toSchedule(j.job) }, 'Its schedule')
            : j.paused
              ? el('button', { type: 'button', class: 'secondary', 'aria-label': `Resume ${j.job}`, onclick: (e) => setPaused(j, 'resume', e.target) }, 'Resume')
              : el('button', { type: 'button', class: 'danger', 'aria-label': `Pause ${j.job}`, onclick: (e) => setPaused(j, 'pause', e.target) }, 'Pause')));
    }

    /** Brings the schedule `id`'s row under Schedules on screen (shown, if a filter hid it), its Pause or Resume focused. */
    function toSchedule(id) {
      const row = [...$('schedules-rows').rows].find((r) => r.dataset.schedule === id);
      if (row && row.classList.contains('filtered-out')) {
        $('schedules-filter').value = '';
        $('schedules-filter').dispatchEvent(new Event('input'));
      }
      if (!row) {
        $('schedules').scrollIntoView({ block: 'start' });
        return;
      }
      row.scrollIntoView({ block: 'center' });
      const button = [...row.querySelectorAll('button')].find((b) => /^(Pause|Resume) /.test(b.getAttribute('aria-label') || ''));
      if (button) button.focus({ preventScroll: true });
    }

    function renderRows() {
      const body = $('jobs-rows');
      if (jobs === undefined) return;
      const wanted = [];
      const seen = new Set();
      for (const j of jobs) {
        seen.add(j.job);
        const key = JSON.stringify([j, selected === j.job, times.utc]);
        let cached = rows.get(j.job);
        if (!cached || cached.key !== key) rows.set(j.job, (cached = { key, row: buildRow(j) }));
        wanted.push(cached.row);
        if (selected === j.job) wanted.push(detailRow);
      }
      for (const job of rows.keys()) if (!seen.has(job)) rows.delete(job);
      if (selected !== undefined && !seen.has(selected)) selected = undefined;
      syncRows(body, wanted.length ? wanted : [el('tr', {}, el('td', { colspan: 7 }, 'No scheduled job on this node.'))]);
      filterRows(body, $('jobs-filter').value, $('jobs-count'), 'job');
    }

    function renderDetail() {
      const d = detail;
      if (!d) return;
      const key = JSON.stringify([d, times.utc]);
      if (key === detailShown) return;
      detailShown = key;
      const def = d.definition;
      const failure = d.lastFailure;
      const facts = [
        ['Semaphore', `${d.semaphore} (${d.mode} mode)${d.paused ? ', paused' : ''}`],
        ['Definition', def ? `permits ${def.permits}, duration ${duration(def.durationMs)}, group ${def.groupPattern}, acquirer ${def.acquirerPattern}` : 'none in this node\'s view'],
        ['Held by', d.holders.length ? d.holders.map((h) => `${h.node} (${h.group}), token ${h.token}, until ${times.at(h.expiresAt)}`).join('; ') : 'nobody'],
        ['Schedule', d.cron ? `${d.cron} (zone ${d.timeZone || 'the app\'s'})` : 'no cron expression'],
        ['Runs', byReason(d.counts)],
        ['Missed instants', d.missed.count ? `${d.missed.count}, newest ${times.at(d.missed.last)}` : '0'],
        ['Skipped ticks', byReason(d.skipped)],
        ['Last failure', failure ? [`${times.at(failure.startedAt)} on ${failure.node}: ${failure.outcome}${failure.error ? `: ${failure.error}` : ''}`, stack(failure, 'Its stack')] : 'none'],
      ];
      // No heading of its own: the job's row right above names it, and its Hide details button closes it.
      detailBox.dataset.job = d.job;
      detailBox.replaceChildren(
        el('dl', { class: 'facts', 'aria-label': `Details of ${d.job}` }, facts.flatMap(([name, value]) => [el('dt', {}, name), el('dd', { 'data-fact': name }, value)])),
        d.nextRuns.length || d.nextRunsNote ? el('div', {}, el('h4', {}, 'Next runs'), el('ol', { class: 'next-runs' }, d.nextRuns.map((t) => el('li', {}, times.at(t)))), d.nextRunsNote ? el('p', { class: 'note' }, d.nextRunsNote) : null) : null,
        el('table', { class: 'cards history' },
          el('caption', {}, `History: ${d.runs.length} run(s) kept, newest first`),
          el('thead', {}, el('tr', {}, ['Trigger', 'Instant', 'Node', 'Token', 'Started', 'Took', 'Outcome', 'Error'].map((h) => el('th', { scope: 'col' }, h)))),
          el('tbody', { id: 'job-runs' }, d.runs.length ? d.runs.map((r) => el('tr', { 'data-trigger': r.trigger, 'data-run': r.id },
            el('td', { 'data-label': 'Trigger' }, r.trigger), el('td', { 'data-label': 'Instant' }, r.instant === undefined ? '' : times.clock(r.instant)),
            el('td', { 'data-label': 'Node' }, r.node), el('td', { 'data-label': 'Token', class: 'token' }, r.token),
            el('td', { 'data-label': 'Started' }, times.clock(r.startedAt)), el('td', { 'data-label': 'Took' }, took(r.durationMs)), el('td', { 'data-label': 'Outcome' }, outcome(r)),
            el('td', { class: 'wrap full', ...(r.error && { 'data-label': 'Error' }) }, r.error || '', stack(r)))) : [el('tr', {}, el('td', { colspan: 8 }, 'No run kept yet.'))])));
    }

    /** Shows the job's details under its row (reading its description), or hides them when they are shown. */
    async function toggle(job) {
      if (selected === job) {
        selected = undefined;
        detail = undefined;
        detailShown = '';
        renderRows();
        return;
      }
      selected = job;
      detail = undefined;
      detailShown = '';
      delete detailBox.dataset.job;
      detailBox.replaceChildren(el('p', { class: 'hint' }, `Reading ${job}…`));
      renderRows();
      await show(job);
      if (selected === job) reveal(job);
    }

    /** Brings the job's row and its details on screen: the row at the top when the details would end below. */
    function reveal(job) {
      const row = rows.get(job) && rows.get(job).row;
      if (!row || !row.isConnected) return;
      const box = detailRow.getBoundingClientRect();
      const top = row.getBoundingClientRect().top;
      const bar = $('bar').getBoundingClientRect().bottom;
      if (top < bar || box.bottom > window.innerHeight) row.scrollIntoView({ block: 'start' });
    }

    async function show(job) {
      try {
        const answer = await api('GET', path(job));
        if (selected !== job) return;
        detail = answer;
      } catch (error) {
        if (selected !== job) return;
        detail = undefined;
        detailShown = '';
        detailBox.replaceChildren(el('p', { class: 'error' }, `${job}: ${error.message}`));
        return;
      }
      renderDetail();
    }

    // Run now: a dialog asks first (naming where it runs, and that a paused job is refused), then runs it with a
    // bounded wait and shows how it ended, or that it still runs when the wait is over.
    const dialog = $('run-dialog');
    let asked;
    let running = false;

    function askToRun(j) {
      if (running) return;
      asked = j;
      $('run-dialog-title').textContent = `Run ${j.job} now?`;
      $('run-dialog-what').textContent = `It runs once, now, in the cluster: on its holder (${j.holders.length ? j.holders.map((h) => h.node).join(', ') : 'nobody holds it now'}), else on a node its definition admits, under a permit of ${j.semaphore}, marked manual in the history.`;
      $('run-dialog-warning').textContent = j.paused ? 'It is paused: the cluster will refuse the run (PAUSED) until it is resumed.' : '';
      $('run-dialog-warning').hidden = !j.paused;
      $('run-wait').disabled = false;
      $('run-dialog-what').hidden = false;
      $('run-wait').closest('label').hidden = false;
      $('run-outcome').textContent = '';
      $('run-outcome').className = 'status';
      delete $('run-outcome').dataset.outcome;
      $('run-confirm').hidden = false;
      $('run-confirm').disabled = false;
      $('run-details').hidden = true;
      $('run-cancel').textContent = 'Cancel';
      if (typeof dialog.showModal === 'function') dialog.showModal();
      else dialog.setAttribute('open', '');
      $('run-confirm').focus();
    }

    function closeDialog() {
      if (typeof dialog.close === 'function') dialog.close();
      else dialog.removeAttribute('open');
    }

    $('run-cancel').addEventListener('click', closeDialog);
    $('run-details').addEventListener('click', () => {
      const job = asked && asked.job;
      closeDialog();
      if (job && selected !== job) toggle(job);
      else if (job) reveal(job);
    });
    $('run-form').addEventListener('submit', (event) => {
      event.preventDefault();
      if (asked && !running) runNow(asked.job, $('run-wait').value);
    });

    /** The run's outcome, as the dialog and the panel's status line say it. */
    function outcomeText(job, r, waitLabel) {
      const where = `on ${r.node} under token ${r.token}`;
      if (r.outcome === undefined) return `Run now of ${job}: started ${where} at ${times.at(r.startedAt)}, still running after ${waitLabel}; its outcome will show in its history.`;
      const how = r.outcome === 'completed' ? `completed in ${took(r.durationMs)}` : `${r.outcome} after ${took(r.durationMs)}`;
      const error = r.error ? `: ${r.error}` : '';
      const more = r.outcome === 'failed' && !r.stack ? ' Its stack, if it had one, is in the job\'s details.' : '';
      return `Run now of ${job}: ${how} ${where} (started ${times.at(r.startedAt)}, request ${r.requestId})${error}.${more}`;
    }

    async function runNow(job, wait) {
      const status = $('run-outcome');
      const result = $('run-now-result');
      const waitLabel = $('run-wait').selectedOptions[0].textContent;
      running = true;
      $('run-confirm').disabled = true;
      $('run-wait').disabled = true;
      status.className = 'status';
      status.dataset.outcome = 'asking';
      status.textContent = `Asking the cluster to run ${job}, then waiting up to ${waitLabel} for how it ends…`;
      result.className = 'status';
      result.textContent = `Run now of ${job}: asking the cluster…`;
      let text;
      let ok;
      let reason = '';
      let ended;
      let failure;
      try {
        const r = await api('POST', `${path(job)}/run`, { wait });
        failure = r.stack ? { id: `run-now-${r.requestId}`, stack: r.stack } : undefined;
        ended = r.outcome === undefined ? 'running' : r.outcome;
        ok = r.outcome === undefined || r.outcome === 'completed';
        text = outcomeText(job, r, waitLabel);
      } catch (error) {
        ended = 'refused';
        ok = false;
        reason = (error.body && error.body.reason) || '';
        text = error.message;
      } finally {
        running = false;
      }
      for (const line of [status, result]) {
        line.className = `status ${ok ? 'ok' : 'error'}`;
        line.textContent = text;
      }
      // A failed run's stack, folded, in the dialog (the run-now answer carries it as the history keeps it).
      const folded = stack(failure);
      if (folded) status.append(folded);
      status.dataset.outcome = ended;
      result.dataset.outcome = ended;
      $('run-dialog-title').textContent = `Run now of ${job}: ${ended === 'running' ? 'still running' : ended}`;
      $('run-dialog-what').hidden = true;
      $('run-dialog-warning').hidden = true;
      $('run-wait').closest('label').hidden = true;
      result.dataset.reason = reason;
      $('run-confirm').hidden = true;
      $('run-details').hidden = ended === 'refused';
      $('run-cancel').textContent = 'Close';
      if (dialog.open) $('run-cancel').focus();
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

    $('jobs-filter').addEventListener('input', () => filterRows($('jobs-rows'), $('jobs-filter').value, $('jobs-count'), 'job'));

    /**
     * Reads the jobs (and the shown job's description) again; a failure is said in the panel and returned (for the
     * page's banner), never thrown. Until a read answers, the table says it has not been read, not "no job".
     */
    async function refresh() {
      try {
        jobs = await api('GET', '/jobs');
        $('jobs-error').textContent = '';
      } catch (error) {
        $('jobs-error').textContent = `Jobs not updated: ${error.message}`;
        if (jobs === undefined) $('jobs-rows').replaceChildren(el('tr', {}, el('td', { colspan: 7 }, `Not read yet: ${error.message}`)));
        return error;
      }
      renderRows();
      if (selected) await show(selected);
      return undefined;
    }

    return {
      refresh,
      /** Draws the rows and details again (the zone the times are shown in changed). */
      rerender() {
        detailShown = '';
        renderRows();
        renderDetail();
      },
      /** Counts the holders' time left down, and keeps "in 2 s" and "5 s ago" current. */
      tick() {
        for (const cell of $('jobs-rows').querySelectorAll('[data-expires]')) cell.textContent = seconds(Number(cell.dataset.expires) - serverNow());
        for (const span of $('jobs-rows').querySelectorAll('span[data-ago]')) span.textContent = ago(Number(span.dataset.ago));
        for (const span of $('jobs-rows').querySelectorAll('span[data-until]')) span.textContent = until(Number(span.dataset.until));
      },
    };
  };
})();
