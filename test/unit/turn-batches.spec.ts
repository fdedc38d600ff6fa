import { TurnBatches } from '../../lib/store/turn-batches';

interface W {
  readonly key: string;
  readonly timeoutMs: number | undefined;
}

/** A batcher whose own calls land every write whose key does not start with 'x', recording each call. */
function batcher(most = 256) {
  const calls: string[][] = [];
  const batches = new TurnBatches<W>(async (writes) => {
    calls.push(writes.map((w) => w.key));
    return writes.map((w) => !w.key.startsWith('x'));
  }, most);
  return { batches, calls };
}

const write = (key: string, timeoutMs?: number): W => ({ key, timeoutMs });

describe('TurnBatches: writes asked for in one turn, and a call that takes them along', () => {
  it('a call of another kind takes the turn\'s writes in its own round trip, and tells each write its outcome', async () => {
    const { batches, calls } = batcher();
    const rode: Array<{ keys: string[]; timeoutMs: number | undefined }> = [];
    const a = batches.write(write('a', 500));
    const x = batches.write(write('x', 200));
    const reserve = batches.alongside(async (writes, timeoutMs) => {
      rode.push({ keys: writes.map((w) => w.key), timeoutMs });
      return { landed: writes.map((w) => w.key === 'a'), claimed: ['next'] };
    });
    await expect(reserve).resolves.toEqual({ landed: [true, false], claimed: ['next'] });
    await expect(a).resolves.toBe(true);
    await expect(x).resolves.toBe(false);
    expect(rode).toEqual([{ keys: ['a', 'x'], timeoutMs: 200 }]);
    expect(calls).toEqual([]); // no write call of its own
  });

  it('with no write asked for, the call goes alone; past the first batch, writes go in calls of their own', async () => {
    const { batches, calls } = batcher(2);
    const alone = await batches.alongside(async (writes) => ({ landed: [], took: writes.length }));
    expect(alone.took).toBe(0);
    const writes = ['a', 'b', 'c'].map((key) => batches.write(write(key)));
    const took = await batches.alongside(async (rode) => ({ landed: rode.map(() => true), keys: rode.map((w) => w.key) }));
    expect(took.keys).toEqual(['a', 'b']);
    await expect(Promise.all(writes)).resolves.toEqual([true, true, true]);
    expect(calls).toEqual([['c']]);
  });

  it('a call that fails fails every write it took, with its error', async () => {
    const { batches } = batcher();
    const lost = new Error('connection lost');
    const a = batches.write(write('a'));
    const reserve = batches.alongside(async () => {
      throw lost;
    });
    await expect(reserve).rejects.toBe(lost);
    await expect(a).rejects.toBe(lost);
  });
});
