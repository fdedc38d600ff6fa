/// <reference lib="dom" />
import { Injectable, type INestApplication } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { ClusterSingleton, GatekeeperModule } from '../../lib';
import { MemoryBackend } from '../../lib/testing';
import { CapturingLogger } from '../support/capturing-logger';
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
/** Where a width's screenshot goes: the docs show the phone's and the desktop's; the laptops' are for a person to look at. */
const shotsOf = (width: string) => (width === 'phone' || width === 'desktop' ? SHOTS : join(tmpdir(), 'gatekeeper-console-shots'));
const nowTick = () => Math.floor(Date.now() / 1000);
const WIDTHS = [
  { name: 'phone-small', width: 360, height: 740 }, { name: 'phone', width: 390, height: 844 }, { name: 'laptop', width: 1100, height: 800 },
  { name: 'laptop-wide', width: 1280, height: 800 }, { name: 'desktop', width: 1440, height: 900 }, { name: 'desktop-wide', width: 1920, height: 1080 },
] as const;

/** Signs `page` in with `token` if it asks for it (a page of the same browser shares the session cookie). */
async function signIn(page: Page, token = TOKEN): Promise<void> {
  await page.waitForSelector('#sign-in:not([hidden]), #main:not([hidden])');
  if (await page.$('#sign-in:not([hidden])')) {
    await page.type('#token', token);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#main:not([hidden])');
  }
}

/**
 * Every control of the page an operator acts with (the buttons of the tables' rows, the sections' buttons, fields
 * and selects) checked where it is: not clipped by a scrolling box before anything scrolls (an action three
 * screens to the right of a phone's table, a Remove cut off at a desktop's), within the viewport's width once
 * scrolled into view, nothing scrolled sideways to get there, and on top at its centre (what a tap there hits).
 * One synchronous pass in the page: the rows the 2 s poll re-renders cannot change under it.
 */
function checkControls(page: Page): Promise<{ checked: number; problems: string[]; scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const name = (e: Element) => {
      const row = e.closest('tr');
      const where = row ? ` in ${(row as HTMLElement).dataset.job ?? (row as HTMLElement).dataset.schedule ?? (row as HTMLElement).dataset.name ?? row.rowIndex}` : '';
      return `${e.tagName.toLowerCase()} "${e.getAttribute('aria-label') ?? e.textContent?.trim() ?? (e as HTMLInputElement).name}"${where}`;
    };
    const controls = Array.from(document.querySelectorAll('.top button, .top select, #bar a, main button, main input, main select, main textarea'))
      .filter((e) => e.getClientRects().length > 0 && !e.closest('dialog'));
    const scrollers = () => Array.from(document.querySelectorAll('*')).filter((e) => e.scrollLeft > 0).map((e) => `${e.tagName.toLowerCase()}.${e.className}`);
    for (const control of controls) {
      const before = control.getBoundingClientRect();
      for (let box = control.parentElement; box && box !== document.body; box = box.parentElement) {
        if (getComputedStyle(box).overflowX === 'visible') continue;
        const clip = box.getBoundingClientRect();
        if (before.left < clip.left - 0.5 || before.right > clip.right + 0.5) problems.push(`${name(control)}: clipped by ${box.tagName.toLowerCase()}.${box.className} (${Math.round(before.left)}..${Math.round(before.right)} outside ${Math.round(clip.left)}..${Math.round(clip.right)})`);
      }
      control.scrollIntoView({ block: 'center', inline: 'nearest' });
      const box = control.getBoundingClientRect();
      if (box.left < 0 || box.right > window.innerWidth) problems.push(`${name(control)}: off screen sideways (${Math.round(box.left)}..${Math.round(box.right)} of ${window.innerWidth})`);
      const sideways = scrollers();
      if (sideways.length) problems.push(`${name(control)}: reached only by scrolling ${sideways.join(', ')} sideways`);
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      const label = control.closest('label');
      if (!hit || (hit !== control && !control.contains(hit) && !(label !== null && hit.closest('label') === label))) {
        problems.push(`${name(control)}: covered by ${hit ? hit.outerHTML.slice(0, 100) : 'nothing'}`);
      }
      for (const e of Array.from(document.querySelectorAll('*'))) if (e.scrollLeft > 0) e.scrollLeft = 0;
    }
    window.scrollTo(0, 0);
    return { checked: controls.length, problems, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth };
  });
}

/** Where each section's heading lands when its link in the sticky bar is followed: below the bar, on screen. */
async function headingsAfterJumps(page: Page): Promise<Array<{ id: string; top: number; barBottom: number; visible: boolean }>> {
  const found = [];
  for (const id of ['jobs', 'schedules', 'definitions', 'permits', 'cluster', 'allocations', 'tasks']) {
    await page.$eval(`nav a[href="#${id}"]`, (a) => (a as HTMLElement).click());
    found.push(await page.$eval(`#${id} h2`, (h2, section) => {
      const top = h2.getBoundingClientRect().top;
      const barBottom = (document.getElementById('bar') ?? document.querySelector('nav'))!.getBoundingClientRect().bottom;
      return { id: section, top: Math.round(top), barBottom: Math.round(barBottom), visible: top >= barBottom - 0.5 && h2.getBoundingClientRect().bottom <= window.innerHeight };
    }, id));
  }
  return found;
}

/**
 * What an operator meets on the page, read in one pass: the first section shown (and linked), every Pause or Resume
 * that acts on the runtime schedule `schedule` (by its job's, its schedule's or its semaphore's row) with the section
 * it is in, the Definitions rows of its semaphore, and whether each filter's placeholder fits its field (the text
 * measured in the field's own font against the room inside its padding).
 */
function layoutFindings(page: Page, schedule: string, semaphore: string) {
  return page.evaluate((id, sem) => {
    const shown = (e: Element) => e.getClientRects().length > 0;
    const keyed = (e: Element) => {
      const row = e.closest('tr') as HTMLElement | null;
      return row === null ? [] : [row.dataset.job, row.dataset.schedule, row.dataset.name];
    };
    const pauses = Array.from(document.querySelectorAll('button')).filter((b) => shown(b) && /^(Pause|Resume)$/.test(b.textContent!.trim()))
      .filter((b) => keyed(b).some((k) => k === id || k === sem)).map((b) => b.closest('section')!.id);
    const placeholders = Array.from(document.querySelectorAll<HTMLInputElement>('#jobs-filter, #schedules-filter')).map((input) => {
      const style = getComputedStyle(input);
      const context = document.createElement('canvas').getContext('2d')!;
      context.font = style.font;
      const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      return { field: input.id, text: input.placeholder, fits: context.measureText(input.placeholder).width <= room };
    });
    return {
      firstSection: Array.from(document.querySelectorAll('main > section')).filter(shown)[0]?.id,
      firstLink: document.querySelector('#sections a')?.getAttribute('href'),
      pauses,
      definitionRows: Array.from(document.querySelectorAll('#definitions-rows tr')).filter((r) => (r as HTMLElement).dataset.name === sem).length,
      placeholders,
    };
  }, schedule, semaphore);
}

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
  /** `step`, failing with the sample's last lines about `about` (what its instances said meanwhile) added. */
  const explained = async <T>(about: RegExp, step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      const lines = output.replace(ANSI, '').split('\n').filter((line) => about.test(line) || /exited|ERROR/.test(line)).slice(-25);
      throw new Error(`${(error as Error).message}\nthe sample's last lines about ${about.source}:\n${lines.join('\n')}`);
    }
  };
  /** The admin API, with the token (what another operator, or the CLI, does meanwhile). */
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url.replace(/\/console$/, '')}${path}`, {
      method, headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) }, ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON of many shapes, read by tests
    return { status: response.status, body: (await response.json()) as any };
  };

  beforeAll(async () => {
    expect(existsSync(CHROMIUM)).toBe(true); // .ci/run installs Debian's chromium
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(shotsOf('laptop'), { recursive: true });
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
    // What the three instances logged, beside the screenshots: what to read when a step here timed out.
    writeFileSync(join(SHOTS, 'sample-output.log'), output.replace(ANSI, ''));
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

    // On a phone: the same page, one column, the tables' rows as cards.
    await page.setViewport({ width: 390, height: 844 });
    await page.waitForSelector('#definitions-rows tr[data-name="billing"]');
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
    await tap('tr[data-name="billing"] button.secondary'); // resume, the same way
    await page.waitForFunction(() => !document.querySelector('tr[data-name="billing"] .badge.paused'));

    // Save sends only what was edited in the row: a change made elsewhere meanwhile (another operator, the CLI, a
    // migration answered after the row was drawn) is not written back with the row's older value.
    const acquirer = 'tr[data-name="billing"] input[name="acquirerPattern"]';
    await page.$eval(acquirer, (input) => ((input as HTMLInputElement).value = ''));
    await page.type(acquirer, '.*');
    expect((await admin('PATCH', '/definitions/billing', { groupPattern: 'production|dr-site|staging' })).status).toBe(200);
    await page.$eval('#status', (status) => (status.textContent = ''));
    await clickInRow('tr[data-name="billing"] button:not(.danger):not(.secondary)');
    await page.waitForFunction(() => document.getElementById('status')!.textContent === 'save billing: done');
    expect((await admin('GET', '/definitions/billing')).body).toMatchObject({ groupPattern: 'production|dr-site|staging', acquirerPattern: '.*' });
    expect((await admin('PATCH', '/definitions/billing', { groupPattern: 'production|dr-site' })).status).toBe(200);
  });

  it("at 360, 390, 1100, 1280, 1440 and 1920 px: every action on screen and on top with no sideways scrolling, headings below the sticky bar, a job's details right under its row", async () => {
    const page: Page = await browser!.newPage();
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(url);
    await signIn(page);
    await page.waitForSelector('tr[data-job="BillingJob.charge"]');
    await page.waitForSelector('tr[data-schedule="report-globex"]');
    await page.waitForFunction(() => document.querySelectorAll('#participants-rows tr').length === 3 && document.getElementById('allocations-list')!.textContent!.includes('12 resources'));
    // The leader's lease, as just read (not counted from the previous poll).
    await page.waitForFunction(() => /^\d+ s$|^\d+ min \d+ s$/.test(document.querySelector('#elections-rows td:last-child')?.textContent ?? ''));
    // A runtime schedule of the sample, its semaphore defined (by the nodes that run it) and its job on this node.
    const globex = 'report-globex';
    const semaphore = (await admin('GET', `/schedules/${globex}`)).body.definition.semaphore as string;
    await eventually('the schedule\'s semaphore to be defined', async () => (await admin('GET', '/definitions')).body.some((d: { name: string }) => d.name === semaphore), { timeoutMs: 10_000 });
    await page.waitForSelector(`tr[data-job="${globex}"]`);
    await page.waitForSelector('#definitions-rows tr[data-name="billing"]');
    await sleep(2_500); // a poll after the semaphore was read: what Definitions shows of it is settled
    const fill = async (field: string, value: string) => {
      await page.$eval(`#schedule-form [name="${field}"]`, (input) => ((input as HTMLInputElement).value = ''));
      await page.type(`#schedule-form [name="${field}"]`, value);
    };
    for (const { name, width, height } of WIDTHS) {
      await page.setViewport({ width, height });
      await page.waitForFunction((w) => window.innerWidth === w, {}, width);
      const controls = await checkControls(page);
      expect({ width, problems: controls.problems }).toEqual({ width, problems: [] });
      expect(controls.checked).toBeGreaterThan(40);
      expect(controls.scrollWidth).toBe(width);
      // A section's link lands its heading below the sticky bar, not under it.
      const jumps = await headingsAfterJumps(page);
      expect({ width, hidden: jumps.filter((j) => !j.visible) }).toEqual({ width, hidden: [] });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(shotsOf(name), `console-${name}.png`), fullPage: name === 'desktop' });

      // Jobs first; the runtime schedule paused in one place, its own row under Schedules (not its semaphore's row
      // under Definitions, nor its job's row); each filter's hint whole in its field.
      expect({ width, ...(await layoutFindings(page, globex, semaphore)) }).toEqual({
        width, firstSection: 'jobs', firstLink: '#jobs', pauses: ['schedules'], definitionRows: 0,
        placeholders: [{ field: 'jobs-filter', text: expect.any(String), fits: true }, { field: 'schedules-filter', text: expect.any(String), fits: true }],
      });
      expect(await page.$eval('#definitions-others', (p) => p.textContent)).toContain('Nor the semaphores of runtime schedules');
      // The job's row leads to that one Pause.
      await page.$eval(`tr[data-job="${globex}"] button[aria-label="${globex}: its schedule (pause, edit, remove)"]`, (b) => (b as HTMLElement).click());
      expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Pause ${globex}`);
      await page.evaluate(() => window.scrollTo(0, 0));

      // A cron expression the cron package refuses: the form says why, once.
      await page.$eval('#schedule-new', (b) => (b as HTMLElement).click());
      await page.waitForSelector('#schedule-form:not([hidden])');
      await fill('id', 'report-typo');
      await fill('cron', '0 0 99 * * *');
      await fill('handler', 'tenant-report');
      await fill('duration', '15s');
      await page.$eval('#schedule-save', (b) => (b as HTMLElement).click());
      await page.waitForFunction(() => document.getElementById('schedule-form-error')!.textContent !== '');
      const said = await page.$eval('#schedule-form-error', (p) => p.textContent ?? '');
      expect({ width, said, named: said.split('0 0 99 * * *').length - 1, cronWords: said.match(/cron/gi)?.length }).toEqual({
        width, said: 'Not saved: Schedule "report-typo": invalid cron: \'0 0 99 * * *\' in UTC: Field value (99) is out of range', named: 1, cronWords: 1,
      });
      await page.$eval('#schedule-cancel', (b) => (b as HTMLElement).click());
      await page.evaluate(() => window.scrollTo(0, 0));

      // Details open right under the job's row, on screen with it; its own controls pass the same checks.
      await page.$eval('tr[data-job="BillingJob.charge"] button[aria-label="Details of BillingJob.charge"]', (b) => (b as HTMLElement).click());
      await page.waitForFunction(() => document.getElementById('job-detail')?.dataset.job === 'BillingJob.charge' && document.querySelectorAll('#job-runs tr').length > 0);
      const placed = await page.evaluate(() => {
        const row = document.querySelector('tr[data-job="BillingJob.charge"]')!;
        const detail = document.getElementById('job-detail-row')!;
        const barBottom = document.getElementById('bar')!.getBoundingClientRect().bottom;
        return { under: detail.previousElementSibling === row, rowTop: row.getBoundingClientRect().top >= barBottom - 1, detailOnScreen: detail.getBoundingClientRect().top < window.innerHeight };
      });
      expect({ width, ...placed }).toEqual({ width, under: true, rowTop: true, detailOnScreen: true });
      const withDetails = await checkControls(page);
      expect({ width, problems: withDetails.problems }).toEqual({ width, problems: [] });
      // The slot strip wraps within the details at every width (a person looks at the phone's).
      await page.waitForSelector('#job-detail ol.slot-strip li');
      const strip = await page.$eval('#job-detail .slots', (box) => ({ right: box.getBoundingClientRect().right, page: document.documentElement.clientWidth }));
      expect({ width, fits: strip.right <= strip.page }).toEqual({ width, fits: true });
      if (name === 'phone') await (await page.$('#job-detail .slots'))!.screenshot({ path: join(tmpdir(), 'gatekeeper-console-shots', 'console-phone-slots.png') });
      // The details add to the row, not repeat it: no second title with the job's name, one Hide (the row's own).
      const repeated = await page.evaluate((job) => {
        const shown = (e: Element) => e.getClientRects().length > 0;
        return {
          named: Array.from(document.querySelectorAll('#job-detail *')).filter((e) => shown(e) && e.children.length === 0 && e.textContent!.trim() === job).length,
          hides: Array.from(document.querySelectorAll('button')).filter((b) => shown(b) && /^Hide/.test(b.textContent!.trim())).map((b) => (b.closest('tr') as HTMLElement).dataset.job ?? b.closest('tr')!.id),
        };
      }, 'BillingJob.charge');
      expect({ width, ...repeated }).toEqual({ width, named: 0, hides: ['BillingJob.charge'] });
      if (name === 'phone') {
        await page.$eval('tr[data-job="BillingJob.charge"]', (row) => row.scrollIntoView({ block: 'start' }));
        await page.screenshot({ path: join(SHOTS, 'console-phone-jobs.png') });
      }
      await page.$eval('tr[data-job="BillingJob.charge"] button[aria-label="Details of BillingJob.charge"]', (b) => (b as HTMLElement).click());
      await page.waitForSelector('#job-detail-row', { hidden: true });
    }
  });

  it("shows a job's description and history under its row, runs it now after a confirmation and shows how it ended, says why a paused one is refused, and pauses and resumes it by name", async () => {
    const page: Page = await browser!.newPage();
    const clickInRow = (selector: string) => page.$eval(selector, (button) => (button as HTMLElement).click());
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    await page.setViewport({ width: 1280, height: 900 });
    await page.goto(url);
    await signIn(page);

    // The panel lists the node's jobs: billing's holder, its token counting down, and its last run once written.
    const row = 'tr[data-job="BillingJob.charge"]';
    await page.waitForSelector(row);
    await explained(/billing|Billing/, () => page.waitForFunction((r) => {
      const [holderCell, , , lastRun] = Array.from(document.querySelectorAll(`${r} td`));
      return /^app-\d+$/.test(holderCell?.textContent ?? '') && /^completed schedule, /.test(lastRun?.textContent ?? '');
    }, { timeout: 30_000 }, row));
    const cells = await page.$$eval(`${row} td`, (tds) => tds.map((td) => td.textContent ?? ''));
    expect(cells[0]).toMatch(/^app-\d+$/);
    // The token in threes (a thin space between), whole in the cell's title for copying.
    expect(cells[1]).toMatch(/^\d{1,3}(\u2009\d{3})+$/);
    expect(await page.$eval(`${row} td.token`, (td) => td.getAttribute('title'))).toBe(cells[1].replace(/\u2009/g, ''));
    expect(cells[4]).toMatch(/ \((in [12] s|now)\)$/); // the next tick, at most 2 s away
    const holder = cells[0];

    // Details: the description (schedule, next 10 runs, counts) and the history, newest first, in a row right under
    // the job's own (not below the whole table).
    await clickInRow(`${row} button.secondary`);
    await page.waitForFunction(() => document.getElementById('job-detail')?.dataset.job === 'BillingJob.charge');
    expect(await page.$eval('#job-detail-row', (tr) => (tr.previousElementSibling as HTMLElement).dataset.job)).toBe('BillingJob.charge');
    expect(await page.$eval(`${row} button.secondary`, (b) => [b.textContent, b.getAttribute('aria-expanded')])).toEqual(['Hide details', 'true']);
    expect(await text('#job-detail dd[data-fact="Schedule"]')).toBe("*/2 * * * * * (zone the app's)");
    expect(await text('#job-detail dd[data-fact="Semaphore"]')).toBe('billing (hold mode)');
    expect(await page.$$eval('#job-detail ol.next-runs li', (items) => items.length)).toBe(10);
    expect(await text('#job-detail dd[data-fact="Runs"]')).toMatch(/^completed \d+/);
    expect(await page.$$eval('#job-runs tr[data-trigger="schedule"]', (rows) => rows.length)).toBeGreaterThan(0);
    // The slot strip: the newest slots, oldest first, each mark named by its instant, verdict and node.
    expect(await page.$$eval('#job-detail ol.slot-strip li[data-verdict="ran"]', (marks) => marks.length)).toBeGreaterThan(0);
    expect(await page.$eval('#job-detail ol.slot-strip li:last-child', (li) => li.getAttribute('aria-label'))).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d: ran, (completed|running), app-\d+$/);

    // Run now asks first, naming the job and where it runs: cancelled, nothing is asked of the cluster.
    const manualRuns = () => runs('billing').length;
    await clickInRow(`${row} button[aria-label="Run BillingJob.charge now"]`);
    await page.waitForSelector('#run-dialog[open]');
    expect(await text('#run-dialog-title')).toBe('Run BillingJob.charge now?');
    expect(await text('#run-dialog-what')).toContain(`on its holder (${holder})`);
    expect(await text('#run-outcome')).toBe('');
    await page.click('#run-cancel');
    await page.waitForSelector('#run-dialog:not([open])');
    expect(await text('#run-now-result')).toBe('');
    // Confirmed, it runs on the holder under its token, and the dialog says how the run ended (it waited for it).
    const before = manualRuns();
    await clickInRow(`${row} button[aria-label="Run BillingJob.charge now"]`);
    await page.waitForSelector('#run-dialog[open]');
    await page.click('#run-confirm');
    await page.waitForFunction(() => document.getElementById('run-outcome')!.dataset.outcome === 'completed', { timeout: 50_000 });
    const outcome = await text('#run-outcome');
    expect(outcome).toMatch(/^Run now of BillingJob\.charge: completed in \d+(\.\d)? m?s on app-\d+ under token [\d\u2009]+ \(started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d, request [\w-]+\)\.$/);
    expect(await text('#run-dialog-title')).toBe('Run now of BillingJob.charge: completed');
    expect(await text('#run-now-result')).toBe(outcome);
    expect(manualRuns()).toBeGreaterThan(before);
    const started = /on (\S+) under token ([\d\u2009]+)/.exec(outcome)!;
    expect(started[1]).toBe(holder);
    await page.click('#run-cancel'); // now "Close"
    await page.waitForSelector('#run-dialog:not([open])');
    await page.waitForFunction((node) => Array.from(document.querySelectorAll('#job-runs tr[data-trigger="manual"]')).some((tr) => tr.textContent!.includes(node)), { timeout: 20_000 }, holder);
    expect(await page.$eval('#job-runs tr[data-trigger="manual"]', (tr) => tr.textContent)).toContain(started[2]);

    // Paused: the row says so, and Run now (after its confirmation, which warns) is refused with the reason code.
    await clickInRow('tr[data-name="billing"] button.danger');
    await page.waitForSelector(`${row} .badge.paused`);
    await clickInRow(`${row} button[aria-label="Run BillingJob.charge now"]`);
    await page.waitForSelector('#run-dialog[open]');
    expect(await text('#run-dialog-warning')).toContain('It is paused');
    await page.click('#run-confirm');
    await page.waitForFunction(() => document.getElementById('run-now-result')!.dataset.reason === 'PAUSED');
    expect(await page.$eval('#run-outcome', (p) => (p as HTMLElement).dataset.outcome)).toBe('refused');
    await page.click('#run-cancel');
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

  it('creates a runtime schedule and edits it through the revision check, says so clearly on a stale revision, and reloads; its failed run now shows its stack', async () => {
    const page: Page = await browser!.newPage();
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    const click = (selector: string) => page.$eval(selector, (button) => (button as HTMLElement).click());
    const fill = async (name: string, value: string) => {
      await page.$eval(`#schedule-form [name="${name}"]`, (input) => ((input as HTMLInputElement).value = ''));
      await page.type(`#schedule-form [name="${name}"]`, value);
    };
    const initech = 'tr[data-schedule="report-initech"]';
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(url);
    await signIn(page);
    await page.waitForSelector('tr[data-schedule="report-acme"]');

    // Create: the editor opens above the table; a wrong field is named before anything is sent.
    await click('#schedule-new');
    await page.waitForSelector('#schedule-form:not([hidden])');
    expect(await text('#schedule-form-title')).toBe('New schedule');
    await fill('id', 'report-initech');
    await fill('cron', '0 0 4 * * *');
    await fill('timeZone', 'America/New_York');
    await fill('handler', 'tenant-report');
    await fill('duration', '15s');
    await fill('data', '{"tenant": "initech", "fail": true');
    await click('#schedule-save');
    await page.waitForFunction(() => document.getElementById('schedule-form-error')!.textContent!.startsWith('Data: not JSON'));
    expect(await page.$eval('#schedule-form [name="data"]', (t) => t.getAttribute('aria-invalid'))).toBe('true');
    await fill('data', '{"tenant": "initech", "fail": true}');
    // A bad cron is the API's 400, shown on its field.
    await fill('cron', '0 0 4 * *  * *');
    await click('#schedule-save');
    await page.waitForFunction(() => document.getElementById('schedule-form-error')!.textContent!.startsWith('Not saved: '));
    expect(await page.$eval('#schedule-form [name="cron"]', (t) => t.getAttribute('aria-invalid'))).toBe('true');
    await fill('cron', '0 0 4 * * *');
    // Its health, under More options: two successes in a row to recover (failing after one failure, the default).
    await page.$eval('#schedule-form details.more', (d) => ((d as HTMLDetailsElement).open = true));
    await fill('recoveryThreshold', '2');
    await click('#schedule-save');
    await page.waitForFunction(() => /^report-initech: created, revision \d+\.$/.test(document.getElementById('schedule-result')!.textContent!));
    expect(await page.$('#schedule-form:not([hidden])')).toBeNull();
    const created = (await admin('GET', '/schedules/report-initech')).body;
    expect(created.definition).toMatchObject({ cron: '0 0 4 * * *', timeZone: 'America/New_York', handler: 'tenant-report', data: { tenant: 'initech', fail: true }, durationMs: 15_000, paused: false, health: { failureThreshold: 1, recoveryThreshold: 2 } });
    await page.waitForFunction((r, rev) => document.querySelector(`${r} td.revision`)?.textContent === rev, {}, initech, String(created.revision));
    // Until this node has armed the new schedule (it hears it from the store), its handler cell says it does not run
    // it here: a poll or two later it does.
    await page.waitForFunction((r) => document.querySelector(`${r} td.handler`)?.textContent === 'tenant-report', { timeout: 10_000 }, initech);
    expect(await page.$$eval(`${initech} td`, (tds) => tds.slice(0, 3).map((td) => td.textContent))).toEqual(['0 0 4 * * *', 'America/New_York', 'tenant-report']);

    // Creating it again is refused: it must not exist yet (expectedRevision 0), and the editor says it does.
    await click('#schedule-new');
    await fill('id', 'report-initech');
    await fill('cron', '0 0 5 * * *');
    await fill('handler', 'tenant-report');
    await fill('duration', '15s');
    await click('#schedule-save');
    await page.waitForSelector('#schedule-conflict:not([hidden])');
    expect(await text('#schedule-conflict-text')).toBe(`Not created: a schedule "report-initech" exists already (revision ${created.revision}). Load it to edit it instead; what you typed here is replaced.`);
    expect((await admin('GET', '/schedules/report-initech')).body.definition.cron).toBe('0 0 4 * * *');
    await click('#schedule-cancel');

    // Edit: the form holds the stored definition, saved against its revision.
    await click(`${initech} button[aria-label="Edit report-initech"]`);
    await page.waitForSelector('#schedule-form:not([hidden])');
    expect(await text('#schedule-form-title')).toBe('Edit report-initech');
    expect(await text('#schedule-form-base')).toContain(`Based on revision ${created.revision}, changed by app-`);
    expect(await page.$eval('#schedule-form [name="id"]', (i) => (i as HTMLInputElement).readOnly)).toBe(true);
    expect(JSON.parse(await page.$eval('#schedule-form [name="data"]', (t) => (t as HTMLTextAreaElement).value))).toEqual({ tenant: 'initech', fail: true });
    expect(await page.$eval('#schedule-form [name="duration"]', (i) => (i as HTMLInputElement).value)).toBe('15s');
    await fill('cron', '0 30 4 * * *');
    await click('#schedule-save');
    await page.waitForFunction((rev) => document.getElementById('schedule-result')!.textContent === `report-initech: updated, revision ${rev}.`, {}, created.revision + 1);
    // The form's edit keeps the health it did not touch (the form shows it whole, and sends it back).
    expect((await admin('GET', '/schedules/report-initech')).body).toMatchObject({ revision: created.revision + 1, definition: { cron: '0 30 4 * * *', data: { tenant: 'initech', fail: true }, health: { failureThreshold: 1, recoveryThreshold: 2 } } });
    await page.waitForFunction((r) => document.querySelector(`${r} td.cron`)?.textContent === '0 30 4 * * *', {}, initech);

    // Edited meanwhile by someone else: the save is refused, said plainly, and the other edit stands; Reload shows the
    // current version, and the change made again on it is saved.
    await click(`${initech} button[aria-label="Edit report-initech"]`);
    const meanwhile = await admin('PUT', '/schedules/report-initech', { cron: '0 30 4 * * *', timeZone: 'America/New_York', handler: 'tenant-report', data: { tenant: 'initech', fail: true, by: 'someone else' }, duration: '15s', health: { recoveryThreshold: 2 } });
    expect(meanwhile.body).toMatchObject({ outcome: 'updated', revision: created.revision + 2 });
    await fill('cron', '0 45 4 * * *');
    await click('#schedule-save');
    await page.waitForSelector('#schedule-conflict:not([hidden])');
    expect(await page.$eval('#schedule-form-error', (p) => (p as HTMLElement).dataset.reason)).toBe('REVISION_CONFLICT');
    expect(await text('#schedule-conflict-text')).toBe(`Not saved: "report-initech" was changed by someone else since you opened it (you edited revision ${created.revision + 1}; it is at revision ${created.revision + 2} now). Your changes are still in the form: reload the current version (it replaces them) and make your change again.`);
    expect(await page.$eval('#schedule-form [name="cron"]', (i) => (i as HTMLInputElement).value)).toBe('0 45 4 * * *');
    expect((await admin('GET', '/schedules/report-initech')).body.definition).toMatchObject({ cron: '0 30 4 * * *', data: { by: 'someone else' } });
    await page.$eval('#bar', (bar) => ((bar as HTMLElement).style.position = 'static'));
    await (await page.$('#schedules'))!.screenshot({ path: join(SHOTS, 'console-schedule-conflict.png') });
    await page.$eval('#bar', (bar) => ((bar as HTMLElement).style.position = ''));
    await click('#schedule-reload');
    await page.waitForFunction((rev) => document.getElementById('schedule-form-base')!.textContent!.startsWith(`Based on revision ${rev},`), {}, created.revision + 2);
    expect(await page.$('#schedule-conflict:not([hidden])')).toBeNull();
    expect(await page.$eval('#schedule-form [name="cron"]', (i) => (i as HTMLInputElement).value)).toBe('0 30 4 * * *');
    expect(JSON.parse(await page.$eval('#schedule-form [name="data"]', (t) => (t as HTMLTextAreaElement).value))).toEqual({ tenant: 'initech', fail: true, by: 'someone else' });
    await fill('cron', '0 45 4 * * *');
    await click('#schedule-save');
    await page.waitForFunction((rev) => document.getElementById('schedule-result')!.textContent === `report-initech: updated, revision ${rev}.`, {}, created.revision + 3);
    expect((await admin('GET', '/schedules/report-initech')).body.definition).toMatchObject({ cron: '0 45 4 * * *', data: { by: 'someone else' } });

    // Its run now fails (the sample's handler fails a tenant whose data says so): the dialog says so with the message,
    // and the job's details, under its row, show the failed run with its stack, folded until opened.
    const job = 'tr[data-job="report-initech"]';
    await page.waitForSelector(job);
    await click(`${job} button[aria-label="Run report-initech now"]`);
    await page.waitForSelector('#run-dialog[open]');
    await page.click('#run-confirm');
    await page.waitForFunction(() => document.getElementById('run-outcome')!.dataset.outcome === 'failed', { timeout: 50_000 });
    expect(await page.$eval('#run-outcome', (p) => p.firstChild?.textContent ?? '')).toMatch(/^Run now of report-initech: failed after \S+ m?s on app-\d+ under token [\d\u2009]+ \(started .+\): the report of initech failed: its ledger is locked\.$/);
    // The run-now answer carries the stack: folded in the dialog, where it failed without opening the details.
    expect(await page.$eval('#run-outcome details.stack pre', (pre) => pre.textContent ?? '')).toMatch(/^Error: the report of initech failed: its ledger is locked\n {4}at TenantReports\.report \(/);
    await page.click('#run-details');
    await page.waitForSelector('#run-dialog:not([open])');
    await page.waitForFunction(() => document.getElementById('job-detail')?.dataset.job === 'report-initech');
    expect(await page.$eval('#job-detail-row', (tr) => (tr.previousElementSibling as HTMLElement).dataset.job)).toBe('report-initech');
    // The history comes from the cluster: the run's node writes it within its flush interval (10 s).
    await page.waitForSelector('#job-runs tr[data-trigger="manual"] details.stack', { timeout: 30_000 });
    expect(await page.$eval('#job-runs tr[data-trigger="manual"] details.stack', (d) => (d as HTMLDetailsElement).open)).toBe(false);
    await click('#job-runs tr[data-trigger="manual"] details.stack summary');
    const stack = await page.$eval('#job-runs tr[data-trigger="manual"] details.stack pre', (pre) => ({ text: pre.textContent ?? '', visible: pre.getBoundingClientRect().height > 0 }));
    expect(stack.visible).toBe(true);
    expect(stack.text).toMatch(/^Error: the report of initech failed: its ledger is locked\n {4}at TenantReports\.report \(.*tenant-reports\.ts:\d+:\d+\)\n/);
    expect(stack.text.split('\n').filter((line) => line.startsWith('    at ')).length).toBeLessThanOrEqual(20);
    expect(stack.text.length).toBeLessThanOrEqual(2_000);
    expect(await text('#job-runs tr[data-trigger="manual"] td.full')).toContain('the report of initech failed: its ledger is locked');
    expect(await text('#job-detail dd[data-fact="Last failure"]')).toContain('failed: the report of initech failed: its ledger is locked');
    // Its health (one failure in a row makes it failing, the default threshold), and its row says so once the history has it.
    await page.waitForSelector(`${job} th .badge.failing`, { timeout: 30_000 });
    expect(await page.$eval(`${job} th .badge.failing`, (b) => b.getAttribute('title') ?? '')).toMatch(/^failing since \d{4}-\d{2}-\d{2} /);
    await page.waitForFunction(() => document.querySelector('#job-detail dd[data-fact="Health"]')?.textContent?.startsWith('failing since '), { timeout: 10_000 });
    // Opened, it stays open across the 2 s polls.
    await sleep(2_500);
    expect(await page.$eval('#job-runs tr[data-trigger="manual"] details.stack', (d) => (d as HTMLDetailsElement).open)).toBe(true);
    await page.$eval('#bar', (bar) => ((bar as HTMLElement).style.position = 'static'));
    await (await page.$('#jobs'))!.screenshot({ path: join(SHOTS, 'console-jobs.png') });
    await page.$eval('#bar', (bar) => ((bar as HTMLElement).style.position = ''));
    await admin('DELETE', '/schedules/report-initech');
  });

  it('filters the jobs and schedules by name, semaphore and state, and shows every instant with its zone', async () => {
    const page: Page = await browser!.newPage();
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    const shown = (table: string, key: string) => page.$$eval(`${table} tr[data-${key}]:not(.filtered-out)`, (rows, k) => rows.map((r) => (r as HTMLElement).dataset[k]!), key);
    const filter = async (input: string, value: string) => {
      await page.$eval(input, (i) => ((i as HTMLInputElement).value = ''));
      await page.type(input, value);
    };
    // The browser in New York: instants in its zone, with the offset of that instant; or in UTC, said so.
    await page.emulateTimezone('America/New_York');
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(url);
    await signIn(page);
    const row = 'tr[data-job="BillingJob.charge"]';
    await page.waitForSelector(row);
    await page.waitForSelector('tr[data-schedule="report-globex"]');
    const all = await shown('#jobs-rows', 'job');
    expect(all.length).toBeGreaterThan(4);

    // Jobs: by name (words all match, any case), by semaphore, by state.
    await filter('#jobs-filter', 'REPORT-');
    await page.waitForFunction(() => document.getElementById('jobs-count')!.textContent!.endsWith(' shown'));
    expect(await shown('#jobs-rows', 'job')).toEqual(all.filter((j) => j.startsWith('report-')));
    expect(await text('#jobs-count')).toBe(`${all.filter((j) => j.startsWith('report-')).length} of ${all.length} shown`);
    await filter('#jobs-filter', 'billing');
    expect(await shown('#jobs-rows', 'job')).toEqual(['BillingJob.charge']);
    await filter('#jobs-filter', 'export release');
    expect(await shown('#jobs-rows', 'job')).toEqual(['ExportJob.export']);
    await filter('#jobs-filter', 'paused');
    expect(await shown('#jobs-rows', 'job')).toEqual([]);
    expect(await text('#jobs-rows tr.no-match')).toBe('No job matches “paused”.');
    expect((await admin('POST', '/jobs/ReportsJob.build/pause')).body).toMatchObject({ paused: true, semaphore: 'reports' });
    const paused = (await admin('GET', '/jobs')).body.filter((j: { paused: boolean }) => j.paused).map((j: { job: string }) => j.job);
    expect(paused).toContain('ReportsJob.build');
    // (a poll later, the paused ones show; the filter holds across the re-render)
    await page.waitForFunction((n) => document.querySelectorAll('#jobs-rows tr[data-job]:not(.filtered-out)').length === n, { timeout: 10_000 }, paused.length);
    expect(await shown('#jobs-rows', 'job')).toEqual(paused);
    for (const job of paused) await admin('POST', `/jobs/${encodeURIComponent(job)}/resume`);
    await filter('#jobs-filter', '');
    await page.waitForFunction((n) => document.querySelectorAll('#jobs-rows tr[data-job]:not(.filtered-out)').length === n, {}, all.length);

    // Schedules: by id, zone, handler or state.
    await filter('#schedules-filter', 'globex');
    expect(await shown('#schedules-rows', 'schedule')).toEqual(['report-globex']);
    await filter('#schedules-filter', 'utc tenant-report active');
    expect((await shown('#schedules-rows', 'schedule')).length).toBeGreaterThanOrEqual(2);
    await filter('#schedules-filter', 'nothing-like-this');
    expect(await text('#schedules-rows tr.no-match')).toBe('No schedule matches “nothing-like-this”.');
    await filter('#schedules-filter', '');

    // Zones: the header names the browser's, each instant says its offset (DST-aware), or UTC once chosen.
    const offset = (at: number) => new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'longOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName')!.value.replace('GMT', 'UTC');
    expect(await text('#time-zone option[value="local"]')).toBe(`America/New_York (${offset(Date.now())})`);
    const next = await page.$eval(`${row} td.next-run`, (td) => td.textContent ?? '');
    expect(next).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d ${offset(Date.now()).replace('+', '\\+')} \\((in \\d+ s|now)\\)$`));
    await page.$eval(`${row} button[aria-label="Details of BillingJob.charge"]`, (b) => (b as HTMLElement).click());
    await page.waitForFunction(() => document.querySelectorAll('#job-detail ol.next-runs li').length === 10);
    const instants = await page.$$eval('#job-detail ol.next-runs li', (items) => items.map((li) => li.textContent ?? ''));
    for (const instant of instants) expect(instant).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC-0[45]:00$/);
    const heldBy = await text('#job-detail dd[data-fact="Held by"]');
    await explained(/billing|Billing/, async () => expect(heldBy).toMatch(/until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC-0[45]:00$/));
    await page.select('#time-zone', 'utc');
    await page.waitForFunction((r) => / UTC \((in \d+ s|now)\)$/.test(document.querySelector(`${r} td.next-run`)?.textContent ?? ''), {}, row);
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#job-detail ol.next-runs li')).every((li) => / UTC$/.test(li.textContent ?? '')));
    const [first] = await page.$$eval('#job-detail ol.next-runs li', (items) => items.map((li) => li.textContent ?? ''));
    expect(first).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(Date.parse(first.replace(' UTC', 'Z').replace(' ', 'T'))).toBeGreaterThan(Date.now() - 5_000);
    expect(await page.$eval('tr[data-schedule="report-globex"] td.next-run', (td) => td.textContent)).toMatch(/^\d\d:\d\d:\d\d UTC \((in \d+ s|now)\)$/);
    // The choice is kept in this browser.
    await page.reload();
    await signIn(page);
    await page.waitForSelector(row);
    expect(await page.$eval('#time-zone', (s) => (s as HTMLSelectElement).value)).toBe('utc');
    await page.select('#time-zone', 'local');
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

/**
 * The console when the cluster's store cannot be reached, in an app of the test's own on the memory store (its
 * switch makes every call fail as an unreachable cluster's would): a banner says so and how old what is shown is,
 * instead of tables emptied or left as they were with no word; a page opened meanwhile says its tables were not
 * read; the banner goes once the store answers. Also: a run now whose run outlasts the chosen wait says it is still
 * running.
 */
describe('the web console when the store cannot be reached (headless Chromium, memory store)', () => {
  const OUTAGE_TOKEN = 'outage-console-token-0123456789';
  const backend = new MemoryBackend();
  let app: INestApplication | undefined;
  let browser: Browser | undefined;
  let url = '';

  @Injectable()
  class LedgerJobs {
    @Cron('0 */5 * * * *')
    @ClusterSingleton('ledger-close', '30s')
    async close(): Promise<void> {}

    /** Longer than the shortest wait the console offers (5 s). */
    @ClusterSingleton('ledger-rebuild', '30s')
    async rebuild(): Promise<void> {
      await sleep(8_000);
    }
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(shotsOf('laptop'), { recursive: true });
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({
        backend, membership: false, identity: { group: 'production', acquirer: 'ledger-1' },
        admin: { path: 'gatekeeper', token: OUTAGE_TOKEN, console: true }, schedules: { history: { flushInterval: '500ms' } },
      })],
      providers: [LedgerJobs],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/gatekeeper/console`;
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  }, 60_000);

  afterAll(async () => {
    backend.failCalls(undefined);
    await browser?.close();
    await app?.close();
  });

  it('puts up a banner naming the cause and the age of what is shown, keeps the tables with it, and takes it down once the store answers', async () => {
    const page: Page = await browser!.newPage();
    const text = (selector: string) => page.$eval(selector, (node) => node.textContent ?? '');
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(url);
    await signIn(page, OUTAGE_TOKEN);
    const row = 'tr[data-job="LedgerJobs.close"]';
    await page.waitForSelector(row);
    expect(await page.$('#banner:not([hidden])')).toBeNull();

    backend.failCalls('the test stopped the cluster');
    try {
      await page.waitForSelector('#banner:not([hidden])', { timeout: 10_000 });
      expect(await text('#banner-title')).toBe("The cluster's store cannot be reached (STORE_UNAVAILABLE).");
      expect(await text('#banner-text')).toMatch(/^memory store unreachable: the test stopped the cluster\. What this page shows was read at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d and may be out of date; changes fail until it answers\. Trying again every 2 s\.$/);
      expect(await text('#updated')).toBe('cluster unreachable');
      // The tables stay as last read, marked out of date, not emptied.
      expect(await page.$(row)).not.toBeNull();
      expect(await text('#jobs-error')).toBe('Jobs not updated: memory store unreachable: the test stopped the cluster');
      expect(await page.$eval('body', (b) => b.classList.contains('outage'))).toBe(true);
      // On screen wherever the operator is: the banner is in the sticky bar.
      await page.$eval('#schedules', (section) => section.scrollIntoView());
      const banner = await page.$eval('#banner', (b) => b.getBoundingClientRect().top);
      expect(banner).toBeGreaterThanOrEqual(0);
      expect(banner).toBeLessThan(100);
      for (const { name, width, height } of WIDTHS) {
        await page.setViewport({ width, height });
        await page.$eval('#jobs', (section) => section.scrollIntoView());
        await page.screenshot({ path: join(shotsOf(name), name === 'desktop' ? 'console-outage.png' : `console-outage-${name}.png`) });
        const controls = await checkControls(page);
        expect({ width, problems: controls.problems }).toEqual({ width, problems: [] });
      }

      // A page opened meanwhile says nothing could be read, and its tables say they were not read (not "no job").
      const fresh: Page = await browser!.newPage();
      await fresh.setViewport({ width: 1440, height: 900 });
      await fresh.goto(url);
      await signIn(fresh, OUTAGE_TOKEN);
      await fresh.waitForSelector('#banner:not([hidden])', { timeout: 10_000 });
      expect(await fresh.$eval('#banner-text', (b) => b.textContent)).toContain('Nothing could be read since this page opened; changes fail until it answers.');
      expect(await fresh.$eval('#jobs-rows', (b) => b.textContent)).toBe('Not read yet: memory store unreachable: the test stopped the cluster');
      expect(await fresh.$eval('#schedules-rows', (b) => b.textContent)).toBe('Not read yet: memory store unreachable: the test stopped the cluster');
      expect(await fresh.$eval('#permits-rows', (b) => b.textContent)).toBe('Not read yet.');
      await fresh.close();
    } finally {
      backend.failCalls(undefined);
    }
    await page.waitForSelector('#banner', { hidden: true, timeout: 10_000 });
    expect(await page.$eval('body', (b) => b.classList.contains('outage'))).toBe(false);
    expect(await text('#jobs-error')).toBe('');
    await page.waitForFunction(() => /^live, updated \d+ s ago$/.test(document.getElementById('updated')!.textContent!));
  });

  it('says a run now still runs when it outlasts the wait chosen in its confirmation', async () => {
    const page: Page = await browser!.newPage();
    await page.setViewport({ width: 390, height: 844 });
    await page.goto(url);
    await signIn(page, OUTAGE_TOKEN);
    const row = 'tr[data-job="LedgerJobs.rebuild"]';
    await page.waitForSelector(row);
    await page.$eval(`${row} button[aria-label="Run LedgerJobs.rebuild now"]`, (b) => (b as HTMLElement).click());
    await page.waitForSelector('#run-dialog[open]');
    await page.select('#run-wait', '5s');
    await page.click('#run-confirm');
    await page.waitForFunction(() => document.getElementById('run-outcome')!.dataset.outcome === 'asking');
    expect(await page.$eval('#run-outcome', (p) => p.textContent)).toBe('Asking the cluster to run LedgerJobs.rebuild, then waiting up to 5 s for how it ends…');
    await page.waitForFunction(() => document.getElementById('run-outcome')!.dataset.outcome === 'running', { timeout: 40_000 });
    expect(await page.$eval('#run-outcome', (p) => p.textContent)).toMatch(/^Run now of LedgerJobs\.rebuild: started on ledger-1 under token [\d\u2009]+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[+-]\d\d:\d\d, still running after 5 s; its outcome will show in its history\.$/);
    expect(await page.$eval('#run-dialog-title', (h) => h.textContent)).toBe('Run now of LedgerJobs.rebuild: still running');
    // The dialog fits the phone, its buttons on screen.
    const buttons = await page.$$eval('#run-dialog button:not([hidden])', (all) => all.map((b) => {
      const box = b.getBoundingClientRect();
      const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return { text: b.textContent, inside: box.left >= 0 && box.right <= window.innerWidth && box.bottom <= window.innerHeight, onTop: hit === b || b.contains(hit) };
    }));
    expect(buttons).toEqual([{ text: 'Show its details', inside: true, onTop: true }, { text: 'Close', inside: true, onTop: true }]);
    await page.screenshot({ path: join(SHOTS, 'console-phone-run-now.png') });
    // Its outcome comes to its history once it ends.
    await page.click('#run-details');
    await page.waitForFunction(() => document.querySelector('#job-runs tr[data-trigger="manual"] .badge.outcome')?.textContent === 'completed', { timeout: 20_000 });
  });
});
