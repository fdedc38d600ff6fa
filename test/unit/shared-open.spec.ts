import { SharedOpen } from '../../lib/store/shared-open';

describe('SharedOpen', () => {
  it('starts once for every user that opens, and stops when the last one closes', async () => {
    const calls: string[] = [];
    const shared = new SharedOpen(async () => void calls.push('start'), async () => void calls.push('stop'));
    await Promise.all([shared.open(), shared.open()]);
    await shared.open();
    expect(calls).toEqual(['start']);
    await shared.close();
    await shared.close();
    expect(calls).toEqual(['start']);
    expect(shared.isOpen()).toBe(true);
    await shared.close();
    expect(calls).toEqual(['start', 'stop']);
    expect(shared.isOpen()).toBe(false);
    await shared.close();
    expect(calls).toEqual(['start', 'stop']);
  });

  it('undoes a failed start for those that waited on it, and starts again at the next open', async () => {
    let fail = true;
    let starts = 0;
    const shared = new SharedOpen(async () => {
      starts++;
      if (fail) throw new Error('unreachable');
    }, async () => undefined);
    await expect(Promise.all([shared.open(), shared.open()])).rejects.toThrow('unreachable');
    expect(shared.isOpen()).toBe(false);
    fail = false;
    await shared.open();
    expect(starts).toBe(2);
    expect(shared.isOpen()).toBe(true);
  });
});
