import { OutageNotice } from '../../lib/nest/signals/outage-notice';

describe('OutageNotice', () => {
  it('warns once when calls start failing, then says at debug at most every 30 s how many failed, and once when back', () => {
    let now = 0;
    const lines: string[] = [];
    const logger = { warn: (m: string) => lines.push(`WARN ${m}`), log: (m: string) => lines.push(`LOG ${m}`), debug: (m: string) => lines.push(`DEBUG ${m}`) };
    const notice = new OutageNotice(logger, 'Runtime schedules', 'armed schedules keep firing', () => now);
    // A call a second for a minute and a half of outage.
    for (; now <= 90_000; now += 1_000) notice.failed('connection closed');
    notice.succeeded();
    notice.succeeded();
    expect(lines).toEqual([
      'WARN Runtime schedules: cannot reach the store (connection closed); armed schedules keep firing',
      'DEBUG Runtime schedules: still failing (30 call(s) since the last line): connection closed',
      'DEBUG Runtime schedules: still failing (30 call(s) since the last line): connection closed',
      'DEBUG Runtime schedules: still failing (30 call(s) since the last line): connection closed',
      'LOG Runtime schedules: the store answers again',
    ]);
  });
});
