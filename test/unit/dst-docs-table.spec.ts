import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CronTrigger } from '../../lib/nest/schedule-metadata/cron-trigger';

/**
 * The daylight-saving table of docs/time-zones.md, read from the page and checked against the library: on each row's
 * local day, the instants the expression fires at (first ones, last one, how many) are the ones the table lists.
 */
interface Row { zone: string; cron: string; day: string; fires: string; line: string }

function tableRows(): Row[] {
  const page = readFileSync(join(__dirname, '../../docs/time-zones.md'), 'utf8');
  const table = page.slice(page.indexOf('<!-- dst-table'));
  const rows: Row[] = [];
  for (const line of table.split('\n').slice(1)) {
    if (!line.startsWith('|')) {
      if (rows.length > 0) break;
      continue;
    }
    const [zone, cron, day, fires] = line.split('|').slice(1).map((cell) => cell.trim());
    if (!/^\d{4}-\d\d-\d\d$/.test(day)) continue; // the header and its rule
    rows.push({ zone, cron: cron.replace(/`/g, ''), day, fires, line });
  }
  return rows;
}

function trigger(cron: string, zone: string): CronTrigger {
  const made = CronTrigger.fromExpression(cron, zone);
  if (typeof made === 'string') throw new Error(made);
  return made;
}

/** The instants of `row`'s local day: from its local midnight to the next. */
function firesOnDay(row: Row): number[] {
  const midnights = trigger('0 0 0 * * *', row.zone).next(Date.parse(`${row.day}T00:00:00Z`) - 14 * 3600_000 - 1, 2);
  return trigger(row.cron, row.zone).next(midnights[0] - 1, 200).filter((at) => at < midnights[1]);
}

const hhmm = (at: number) => new Date(at).toISOString().slice(11, 16);

describe('the daylight-saving table in docs/time-zones.md', () => {
  const rows = tableRows();

  it('has the rows it is known to have', () => {
    expect(rows.length).toBeGreaterThanOrEqual(10);
  });

  it.each(rows)('$zone $cron on $day fires $fires', (row) => {
    const fires = firesOnDay(row);
    const count = /\((\d+) runs\)|^(\d+) runs$/.exec(row.fires);
    const [listed, last] = row.fires.replace(/\(\d+ runs\)|^\d+ runs$/, '').split('…').map((part) => part.split(',').map((t) => t.trim()).filter(Boolean));
    expect({ row: row.line, count: fires.length }).toEqual({ row: row.line, count: count ? Number(count[1] ?? count[2]) : listed.length });
    expect(fires.slice(0, listed.length).map(hhmm)).toEqual(listed);
    if (last?.length) expect(hhmm(fires.at(-1)!)).toBe(last[0]);
  });
});
