import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

/**
 * What a cron schedule fires across daylight-saving transitions (cron 4.x through @nestjs/schedule, as the runner
 * and the runtime schedules read it), with no clock but the instants given: each UTC instant at most once, and no
 * fire lost or doubled by the shift. A fixed-hour job runs once on both transition days (in the spring gap at the
 * first instant after it, in the repeated autumn hour only at its first occurrence); a job whose hour is a wildcard
 * runs on every distinct UTC instant (the repeated hour's instants are new instants; the gap's do not exist).
 */
const TABLE: Array<{ zone: string; cron: string; transition: string; from: string; to: string; fires: string[] }> = [
  { zone: 'Europe/Berlin', cron: '0 30 2 * * *', transition: 'spring gap', from: '2026-03-28T00:00:00Z', to: '2026-03-30T03:00:00Z',
    fires: ['2026-03-28T01:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '0 30 2 * * *', transition: 'autumn repeat', from: '2026-10-24T00:00:00Z', to: '2026-10-26T03:00:00Z',
    fires: ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '0 */15 * * * *', transition: 'spring gap', from: '2026-03-29T00:40:00Z', to: '2026-03-29T01:20:00Z',
    fires: ['2026-03-29T00:45:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:15:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '0 */15 * * * *', transition: 'autumn repeat', from: '2026-10-24T23:50:00Z', to: '2026-10-25T01:50:00Z',
    fires: ['00:00', '00:15', '00:30', '00:45', '01:00', '01:15', '01:30', '01:45'].map((t) => `2026-10-25T${t}:00.000Z`) },
  { zone: 'Europe/Berlin', cron: '0 0 * * * *', transition: 'spring gap', from: '2026-03-28T23:30:00Z', to: '2026-03-29T02:30:00Z',
    fires: ['2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '0 0 * * * *', transition: 'autumn repeat', from: '2026-10-24T23:30:00Z', to: '2026-10-25T02:30:00Z',
    fires: ['2026-10-25T00:00:00.000Z', '2026-10-25T01:00:00.000Z', '2026-10-25T02:00:00.000Z'] },
  { zone: 'Europe/Berlin', cron: '*/5 * * * * *', transition: 'spring gap', from: '2026-03-29T00:59:50Z', to: '2026-03-29T01:00:10Z',
    fires: ['00:59:55', '01:00:00', '01:00:05', '01:00:10'].map((t) => `2026-03-29T${t}.000Z`) },
  { zone: 'Europe/Berlin', cron: '*/5 * * * * *', transition: 'autumn repeat', from: '2026-10-25T00:59:50Z', to: '2026-10-25T01:00:10Z',
    fires: ['00:59:55', '01:00:00', '01:00:05', '01:00:10'].map((t) => `2026-10-25T${t}.000Z`) },
  { zone: 'America/New_York', cron: '0 30 2 * * *', transition: 'spring gap', from: '2026-03-07T00:00:00Z', to: '2026-03-09T08:00:00Z',
    fires: ['2026-03-07T07:30:00.000Z', '2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z'] },
  { zone: 'America/New_York', cron: '0 30 1 * * *', transition: 'autumn repeat', from: '2026-10-31T00:00:00Z', to: '2026-11-02T08:00:00Z',
    fires: ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z'] },
];

function trigger(cron: string, zone: string): CronTrigger {
  const made = CronTrigger.fromExpression(cron, zone);
  if (typeof made === 'string') throw new Error(made);
  return made;
}

describe('cron schedules across daylight-saving transitions', () => {
  it.each(TABLE)('$zone $cron at the $transition fires each instant once', ({ zone, cron, from, to, fires }) => {
    const t = trigger(cron, zone);
    const listed = t.next(Date.parse(from), 40).filter((at) => at <= Date.parse(to));
    expect(listed.map((at) => new Date(at).toISOString())).toEqual(fires);
    // Strictly increasing: no UTC instant twice.
    for (let i = 1; i < listed.length; i++) expect(listed[i]).toBeGreaterThan(listed[i - 1]);
    // A tick at (or up to a second before, or well after) each instant is named by that instant on every node.
    for (const at of listed) {
      expect(t.instantFor(at)).toBe(at);
      expect(t.instantFor(at - 500)).toBe(at);
      expect(t.instantFor(at + 200)).toBe(at);
    }
    // Counting what was missed across the shift counts exactly these.
    expect(t.firesBetween(Date.parse(from), Date.parse(to) + 1)).toEqual({ count: fires.length, last: Date.parse(fires.at(-1)!) });
  });

  it('refuses an unknown zone and a bad expression with the reason', () => {
    expect(CronTrigger.fromExpression('0 30 2 * * *', 'Mars/Olympus')).toMatch(/cannot be read/);
    expect(CronTrigger.fromExpression('61 * * * *', 'UTC')).toMatch(/cannot be read/);
  });
});
