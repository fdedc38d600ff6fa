/// <reference lib="dom" />
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { testCluster, uniquePrefix } from '../support/test-cluster';

const ROOT = join(__dirname, '../..');
const RUN_LINE = /ran (\S+) on (\S+) \(group (\S+), fencing token (\d+), tick (\d+)\)/;
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const TOKEN = 'sample-admin-token-change-me';
/** Debian's chromium (`apt-get install chromium`, as .ci/run does); GATEKEEPER_CHROMIUM names another. */
const CHROMIUM = process.env.GATEKEEPER_CHROMIUM ?? '/usr/bin/chromium';
/** Where screenshots go: CONSOLE_SCREENSHOTS=docs refreshes the ones the operating page shows. */
const SHOTS = process.env.CONSOLE_SCREENSHOTS ? join(ROOT, process.env.CONSOLE_SCREENSHOTS) : join(tmpdir(), 'gatekeeper-console-shots');
const nowTick = () => Math.floor(Date.now() / 1000);

/**
 * The web console in real Chromium against the real three-instance sample (`node scripts/sample.mjs`): sign in with
 * the admin token, edit a definition and watch the job move in the sample's logs, pause it, migrate and undo with a
 * preview of the exact changes first; see a job's description and run history, and run it now. The logs are the
 * instances' own "ran <job> on <node>" lines.
 */
describe('the web console (headless Chromium, three-instance sample)', () => {
  const { clusterName, addresses } = testCluster();
  const env = { ...process.env, GATEKEEPER_HZ_MEMBERS: addresses.join(','), GATEKEEPER_HZ_CLUSTER_NAME: clusterName, SAMPLE_MAP_PREFIX: uniquePrefix('console') };
  let sample: ChildProcess | undefined;
  let browser: Browser | undefined;
  let output = '';
  let ports: number[] = [];
  let url = '';
  const runs = (job: string) => output.replace(ANSI, '').split('\n').flatMap((line) => {
    const m = RUN_LINE.exec(line);
    return m && m[1] === job ? [{ node: m[2], tick: Number(m[5]) }] : [];
  });

  /** Signs `page` in with the admin token if it asks for it (a page of the same browser shares the session cookie). */
  async function signIn(page: Page): Promise<void> {
    await page.waitForSelector('#sign-in:not([hidden]), #main:not([hidden])');
    if (await page.$('#sign-in:not([hidden])')) {
      await page.type('#token', TOKEN);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#main:not([hidden])');
    }
  }

  beforeAll(async () => {
    expect(existsSync(CHROMIUM)).toBe(true); // .ci/run installs Debian's chromium
    mkdirSync(SHOTS, { recursive: true });
    ports = [await freePort(), await freePort(), await freePort()];
    sample = spawn(process.execPath, [join(ROOT, 'scripts/sample.mjs'), '--ports', ports.join(',')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    sample.stdout?.on('data', (c) => (output += String(c)));
    sample.stderr?.on('data', (c) => (output += String(c)));
    await eventually('all three instances to listen', () => (output.match(/listening on http/g) ?? []).length === 3, { timeoutMs: 60_000, intervalMs: 200 });
    url = `http://127.0.0.1:${ports[0]}/gatekeeper/console`;
    expect(output).toContain(`Console: ${url}`);
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (sample && sample.exitCode === null) {
      sample.kill('SIGTERM');
      await once(sample, 'exit');
    }
  });

  it('signs in, moves a job by editing its definition, pauses it, migrates and undoes, live', async () => {
    const page: Page = await browser!.newPage();
    // The rows are re-rendered by every poll (2 s); page.click takes several round trips and failed now and then on a
    // button replaced meanwhile ("Node is detached from document"). A click in the page is one step.
    const clickInRow = (selector: string) => page.$eval(selector, (button) => (button as HTMLElement).click());
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(url);

    // Sign in: a wrong token is refused, the right one opens the console.
    await page.waitForSelector('#sign-in:not([hidden])');
    await page.type('#token', 'not-the-token-0123456789');
    await page.click('#sign-in-form button[type="submit"]');
    await page.waitForFunction(() => document.getElementById('sign-in-error')!.textContent === 'Wrong token.');
    await page.$eval('#token', (input) => ((input as HTMLInputElement).value = ''));
    await page.type('#token', TOKEN);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#definitions-rows tr[data-name="billing"]');
    // Jobs only: the sample's election and allocation are named apart, with no Save or Pause of theirs.
    expect(await page.$$eval('#definitions-rows tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.name).filter((n) => /^(election|allocation):/.test(n!)))).toEqual([]);
    expect(await page.$eval('#definitions-others', (p) => p.textContent)).toContain('Not listed here: allocation:queues, election:leader');
    // Every input has a label a screen reader reads.
    expect(await page.$$eval('input', (inputs) => inputs.filter((i) => !i.getAttribute('aria-label') && !i.closest('label') && !document.querySelector(`label[for="${i.id}"]`)).length)).toBe(0);

    // 1. Edit billing's acquirer pattern to another instance: the job moves there, as the logs show.
    await eventually('billing to run', () => runs('billing').length > 0, { timeoutMs: 30_000, intervalMs: 200 });
    const holder = runs('billing').at(-1)!.node;
    const target = [`app-${ports[0]}`, `app-${ports[1]}`].find((n) => n !== holder)!;
    const field = 'tr[data-name="billing"] input[name="acquirerPattern"]';
    await page.$eval(field, (input) => ((input as HTMLInputElement).value = ''));
    await page.type(field, target);
    await clickInRow('tr[data-name="billing"] button');
    await page.waitForFunction(() => document.getElementById('status')!.textContent === 'save billing: done');
    const edited = nowTick();
    await eventually(`billing to run on ${target}`, () => runs('billing').some((r) => r.tick > edited && r.node === target), { timeoutMs: 20_000, intervalMs: 200 });
    const moved = runs('billing').find((r) => r.tick > edited && r.node === target)!.tick;
    await eventually('two more billing ticks', () => runs('billing').some((r) => r.tick >= moved + 4), { timeoutMs: 15_000, intervalMs: 200 });
    expect(new Set(runs('billing').filter((r) => r.tick >= moved).map((r) => r.node))).toEqual(new Set([target]));
    // The permit shows live, held by the target, its time left counting.
    await page.waitForFunction((t) => Array.from(document.querySelectorAll('#permits-rows tr')).some((tr) => tr.textContent!.startsWith('billing') && tr.textContent!.includes(t)), {}, target);
    // The cluster and the queues' allocation show too: three participants, one leader, 4 queues each.
    await page.waitForFunction(() => document.querySelectorAll('#participants-rows tr').length === 3 && document.querySelectorAll('#participants-rows .badge.leader').length === 1);
    await page.waitForFunction(() => document.getElementById('allocations-list')!.textContent!.includes('12 resources, 0 unowned'));
    await page.screenshot({ path: join(SHOTS, 'console-desktop.png'), fullPage: true });

    // 2. Pause: billing stops everywhere; the row says paused.
    await clickInRow('tr[data-name="billing"] button.danger');
    await page.waitForSelector('tr[data-name="billing"] .badge.paused');
    const paused = nowTick();
    await eventually('reports ticks after the pause', () => runs('reports').some((r) => r.tick >= paused + 6), { timeoutMs: 20_000, intervalMs: 200 });
    expect(runs('billing').filter((r) => r.tick >= paused + 3)).toEqual([]);
    await clickInRow('tr[data-name="billing"] button.secondary'); // resume
    await page.waitForFunction(() => !document.querySelector('tr[data-name="billing"] .badge.paused'));

    // 3. Migrate production → dr-site: the preview lists the exact change, nothing is written until Apply; then undo.
    const billingPattern = async () => ((await page.evaluate(async () => (await fetch(`${location.pathname.replace(/\/console$/, '')}/definitions/billing`)).json())) as { groupPattern: string }).groupPattern;
    await page.type('#migrate-form input[name="fromGroup"]', 'production');
    await page.type('#migrate-form input[name="toGroup"]', 'dr-site');
    await page.click('#migrate-form button[name="preview"]');
    await page.waitForFunction(() => document.getElementById('migration-report')!.textContent!.includes('Would change'));
    const preview = await page.$eval('#migration-report', (report) => report.textContent);
    expect(preview).toContain('billingproduction|dr-sitedr-site');
    expect(preview).not.toMatch(/election:|allocation:/); // no "skipped" line for them
    expect(await billingPattern()).toBe('production|dr-site');
    await page.click('#migrate-apply');
    await page.waitForFunction(() => document.getElementById('migration-report')!.textContent!.startsWith('Migrated'));
    expect(await billingPattern()).toBe('dr-site');
    await page.click('#undo-preview');
    await page.waitForFunction(() => document.getElementById('migration-report')!.textContent!.includes('Preview: undo'));
    expect(await page.$eval('#migration-report', (report) => report.textContent)).toContain('billingdr-siteproduction|dr-site');
    await page.click('#undo-apply');
    await page.waitForFunction(() => document.getElementById('migration-report')!.textContent!.startsWith('Undone'));
    expect(await billingPattern()).toBe('production|dr-site');

    // On a phone: the same page, one column, tables scrolling sideways.
    await page.setViewport({ width: 390, height: 844 });
    await page.waitForSelector('#definitions-rows tr[data-name="billing"]');
    await page.screenshot({ path: join(SHOTS, 'console-phone.png') });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

    // Save and Pause of a definition are on the phone's screen once the page scrolls down to its row (no sideways
    // scrolling), nothing covers them, and a tap on Pause pauses. The page scrolls by hand: scrollIntoView would
    // also scroll a table sideways and hide what this checks.
    // One evaluate reads the box and what is on top at its centre: the rows are re-rendered by every poll (2 s), so a
    // handle kept across calls may be detached; a click at the point lands on the re-rendered button all the same.
    // Polled briefly: the 2 s refresh re-renders the rows, and a layout still settling (a status line appearing) can
    // cover the point for a moment, as it would under a finger; what must hold is that the button comes on screen.
    const tap = async (selector: string) => {
      const look = () => page.$eval(selector, (button) => {
        window.scrollTo(0, button.getBoundingClientRect().top + window.scrollY - window.innerHeight / 2);
        const box = button.getBoundingClientRect();
        const [x, y] = [box.left + box.width / 2, box.top + box.height / 2];
        const hit = document.elementFromPoint(x, y);
        return {
          x, y, left: box.left >= 0, right: box.right <= window.innerWidth, top: box.top >= 0, bottom: box.bottom <= window.innerHeight,
          onTop: hit !== null && (hit === button || button.contains(hit)),
          cover: hit === null || hit === button || button.contains(hit) ? '' : hit.outerHTML.slice(0, 120),
        };
      });
      let seen = await look();
      const fits = (s: typeof seen) => s.left && s.right && s.top && s.bottom && s.onTop;
      await eventually(`${selector} on screen and on top`, async () => fits((seen = await look())), { timeoutMs: 5_000, intervalMs: 100 }).catch(() => undefined);
      expect({ selector, ...seen, x: 0, y: 0, cover: seen.onTop ? '' : seen.cover })
        .toEqual({ selector, left: true, right: true, top: true, bottom: true, onTop: true, x: 0, y: 0, cover: '' });
      await page.mouse.click(seen.x, seen.y);
    };
    const save = await page.$eval('tr[data-name="billing"] button:not(.danger):not(.secondary)', (b) => b.textContent);
    expect(save).toBe('Save');
    await tap('tr[data-name="billing"] button:not(.danger):not(.secondary)');
    await page.waitForFunction(() => document.getElementById('status')!.textContent === 'save billing: done');
    await tap('tr[data-name="billing"] button.danger');
    await page.waitForSelector('tr[data-name="billing"] .badge.paused');
    await page.screenshot({ path: join(SHOTS, 'console-phone-paused.png') });
    await tap('tr[data-name="billing"] button.secondary'); // resume, the same way
    await page.waitForFunction(() => !document.querySelector('tr[data-name="billing"] .badge.paused'));
  });

  it("shows a job's description and run history, runs it now, says why a paused one is refused, and pauses and resumes it by name", async () => {
    const page: Page = await browser!.newPage();
    const clickInRow = (selector: string) => page.$eval(selector, (button) => (button as HTMLElement).click());
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(url);
    await signIn(page);

    // The panel lists the node's jobs: billing's holder, its token counting down, and its last run once written.
    const row = 'tr[data-job="BillingJob.charge"]';
    await page.waitForSelector(row);
    await page.waitForFunction((r) => {
      const [holderCell, , , lastRun] = Array.from(document.querySelectorAll(`${r} td`));
      return /^app-\d+$/.test(holderCell?.textContent ?? '') && /^completed schedule, /.test(lastRun?.textContent ?? '');
    }, { timeout: 30_000 }, row);
    const cells = await page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent ?? ''));
    expect(cells[0]).toMatch(/^app-\d+$/);
    expect(cells[1]).toMatch(/^\d+$/);
    expect(cells[4]).toMatch(/ \((in [12] s|now)\)$/); // the next tick, at most 2 s away
    const holder = cells[0];

    // Details: the description (schedule, next 10 runs, counts) and the history, newest first.
    await clickInRow(`${row} button.secondary`);
    await page.waitForFunction(() => document.getElementById('job-detail-title')?.textContent === 'BillingJob.charge');
    expect(await text('#job-detail dd[data-fact="Schedule"]')).toBe("*/2 * * * * * (zone the app's)");
    expect(await text('#job-detail dd[data-fact="Semaphore"]')).toBe('billing (hold mode)');
    expect(await page.$$eval('#job-detail ol.next-runs li', (items) => items.length)).toBe(10);
    expect(await text('#job-detail dd[data-fact="Runs"]')).toMatch(/^completed \d+/);
    expect(await page.$$eval('#job-runs tr[data-trigger="schedule"]', (rows) => rows.length)).toBeGreaterThan(0);

    // Run now: it starts on the holder, under its token, and shows in the history as a manual run.
    await clickInRow(`${row} button:not(.secondary)`);
    await page.waitForFunction(() => /^Run now of BillingJob\.charge: started on /.test(document.getElementById('run-now-result')!.textContent!), { timeout: 35_000 });
    const started = /started on (\S+) under token (\d+)/.exec(await text('#run-now-result'))!;
    expect(started[1]).toBe(holder);
    await page.waitForFunction((node) => Array.from(document.querySelectorAll('#job-runs tr[data-trigger="manual"]')).some((tr) => tr.textContent!.includes(node)), { timeout: 20_000 }, holder);
    expect(await page.$eval('#job-runs tr[data-trigger="manual"]', (tr) => tr.textContent)).toContain(started[2]);
    // The section alone, without the sticky navigation over it.
    await page.$eval('#sections', (nav) => ((nav as HTMLElement).style.position = 'static'));
    await (await page.$('#jobs'))!.screenshot({ path: join(SHOTS, 'console-jobs.png') });
    await page.$eval('#sections', (nav) => ((nav as HTMLElement).style.position = ''));

    // Paused: the row says so, and Run now is refused with the reason code.
    await clickInRow('tr[data-name="billing"] button.danger');
    await page.waitForSelector(`${row} .badge.paused`);
    await clickInRow(`${row} button:not(.secondary)`);
    await page.waitForFunction(() => document.getElementById('run-now-result')!.dataset.reason === 'PAUSED');
    expect(await text('#run-now-result')).toMatch(/^Run now of "BillingJob\.charge" refused \(PAUSED\)/);
    expect(await page.$eval('#run-now-result', (p) => p.className)).toBe('status error');
    await clickInRow('tr[data-name="billing"] button.secondary'); // resume
    await page.waitForFunction((r) => !document.querySelector(`${r} .badge.paused`), {}, row);

    // Pause by the job's name, from its row: the row says paused with no next run, and the job stops everywhere.
    await clickInRow(`${row} button[aria-label="Pause BillingJob.charge"]`);
    await page.waitForSelector(`${row} .badge.paused`);
    expect(await text('#run-now-result')).toBe('BillingJob.charge: paused (semaphore billing, permits 0).');
    expect(await page.$eval('#run-now-result', (p) => p.className)).toBe('status ok');
    await page.waitForFunction((r) => document.querySelector(`${r} td.next-run`)?.textContent === '-', {}, row);
    expect(await page.$(`${row} button[aria-label="Resume BillingJob.charge"]`)).not.toBeNull();
    await page.waitForSelector('tr[data-name="billing"] .badge.paused'); // its semaphore, in the definitions
    const pausedAt = nowTick();
    await eventually('reports ticks after the pause by name', () => runs('reports').some((r) => r.tick >= pausedAt + 6), { timeoutMs: 20_000, intervalMs: 200 });
    expect(runs('billing').filter((r) => r.tick >= pausedAt + 3)).toEqual([]);
    // Resume from the same row: the badge goes, the next run is back, and it runs again.
    await clickInRow(`${row} button[aria-label="Resume BillingJob.charge"]`);
    await page.waitForFunction((r) => !document.querySelector(`${r} .badge.paused`), {}, row);
    expect(await text('#run-now-result')).toMatch(/^BillingJob\.charge: resumed \(semaphore billing, permits [1-9]\d*\)\.$/);
    await page.waitForFunction((r) => / \((in \d+ s|now)\)$/.test(document.querySelector(`${r} td.next-run`)?.textContent ?? ''), {}, row);
    const resumedAt = nowTick();
    await eventually('billing to run after the resume', () => runs('billing').some((r) => r.tick > resumedAt), { timeoutMs: 20_000, intervalMs: 200 });
  });

  it('lists the runtime schedules with their last run, pauses and resumes one (its runs stop and come back), and removes one after a confirm', async () => {
    const page: Page = await browser!.newPage();
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    const cells = (row: string) => page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent ?? ''));
    const click = (selector: string) => page.$eval(selector, (button) => (button as HTMLElement).click());
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(url);
    await signIn(page);

    // The sample's two tenant schedules, with what the cluster knows of them: the last run comes from the job history.
    const acme = 'tr[data-schedule="report-acme"]';
    await page.waitForSelector(`${acme}`);
    await page.waitForSelector('tr[data-schedule="report-globex"]');
    await page.waitForFunction((r) => /^completed on app-\d+, /.test(document.querySelector(`${r} td.last-run`)?.textContent ?? ''), { timeout: 30_000 }, acme);
    const [cron, zone, handler, revision, next] = await cells(acme);
    expect([cron, zone, handler]).toEqual(['*/5 * * * * *', 'UTC', 'tenant-report']);
    expect(revision).toMatch(/^\d+$/);
    expect(next).toMatch(/ \((in [1-5] s|now)\)$/);
    await page.$eval('#sections', (nav) => ((nav as HTMLElement).style.position = 'static'));
    await (await page.$('#schedules'))!.screenshot({ path: join(SHOTS, 'console-schedules.png') });
    await page.$eval('#sections', (nav) => ((nav as HTMLElement).style.position = ''));

    // A change names the revision the row shows: edited meanwhile elsewhere (while the panel could not poll), the
    // pause is refused with REVISION_CONFLICT and the edit stands.
    const base = url.replace(/\/console$/, '');
    await page.setRequestInterception(true);
    const holdListing = (request: HTTPRequest) => void (request.method() === 'GET' && request.url().endsWith('/schedules') ? request.abort() : request.continue());
    page.on('request', holdListing);
    const edited = await fetch(`${base}/schedules/report-acme`, {
      method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ cron: '*/5 * * * * *', handler: 'tenant-report', data: { tenant: 'acme', edited: true }, duration: '15s' }),
    }).then((r) => r.json() as Promise<{ outcome: string; revision: number }>);
    expect(edited).toMatchObject({ outcome: 'updated', revision: Number(revision) + 1 });
    expect((await cells(acme))[3]).toBe(revision); // the panel still shows what it read
    await click(`${acme} button[aria-label="Pause report-acme"]`);
    await page.waitForFunction(() => document.getElementById('schedule-result')!.dataset.reason === 'REVISION_CONFLICT');
    expect(await text('#schedule-result')).toBe(`report-acme: not changed, it was edited meanwhile (now revision ${edited.revision}); look again and retry.`);
    page.off('request', holdListing);
    await page.setRequestInterception(false);
    await page.waitForFunction((r, rev) => document.querySelector(`${r} td.revision`)?.textContent === rev, {}, acme, String(edited.revision));
    expect(await page.$(`${acme} .badge.paused`)).toBeNull();

    // Pause: the row says so at the next revision, and the schedule stops firing on every instance while globex
    // (every 7 s) goes on: between two of its runs an instant of acme (every 5 s) passes, which would have run.
    await click(`${acme} button[aria-label="Pause report-acme"]`);
    await page.waitForSelector(`${acme} .badge.paused`);
    expect(await text('#schedule-result')).toBe(`report-acme: paused, revision ${edited.revision + 1}.`);
    expect((await cells(acme))[4]).toBe('paused');
    const globexRuns = runs('report-globex').length;
    await eventually('a run of globex after the pause', () => runs('report-globex').length > globexRuns, { timeoutMs: 20_000 });
    const acmeWhilePaused = runs('report-acme').length;
    const globexAfter = runs('report-globex').length;
    await eventually('another run of globex', () => runs('report-globex').length > globexAfter, { timeoutMs: 20_000 });
    expect(runs('report-acme').length).toBe(acmeWhilePaused);

    // Resume: it fires again.
    await click(`${acme} button[aria-label="Resume report-acme"]`);
    await page.waitForFunction((r) => !document.querySelector(`${r} .badge.paused`), {}, acme);
    await eventually('a run of acme after the resume', () => runs('report-acme').length > acmeWhilePaused, { timeoutMs: 20_000 });

    // Remove asks first: dismissed, nothing happens; accepted, the row goes and the schedule is gone from the API.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await click(`${acme} button.danger`);
    expect(await page.$(acme)).not.toBeNull();
    const answer = await page.evaluate(async (base) => (await fetch(`${base}/schedules/report-acme`, { credentials: 'same-origin' })).status, url.replace(/\/console$/, ''));
    expect(answer).toBe(200);
    page.once('dialog', (dialog) => void dialog.accept());
    await click(`${acme} button.danger`);
    await page.waitForFunction((r) => !document.querySelector(r), {}, acme);
    expect(await text('#schedule-result')).toMatch(/^report-acme: removed, revision \d+\.$/);
    const gone = await page.evaluate(async (base) => (await fetch(`${base}/schedules/report-acme`, { credentials: 'same-origin' })).status, url.replace(/\/console$/, ''));
    expect(gone).toBe(404);
    expect(await page.$('tr[data-schedule="report-globex"]')).not.toBeNull();
  });
});
