import { commitsAfterTakeover, lateWrites, staleWrites, type FencedWriteEvent, type LeaseLapsedEvent, type ResourceRowsEvent } from './fenced-writes';

const write = (node: string, token: number, phase: FencedWriteEvent['phase'], at: number): FencedWriteEvent => ({ type: 'write', at, node, pid: 1, resource: 'ledger', token, phase });
const rows = (...r: Array<[string, number]>): ResourceRowsEvent => ({ type: 'resource', at: 99, node: 'test', pid: 1, resource: 'ledger', rows: r.map(([node, token]) => ({ node, token })) });

describe('staleWrites', () => {
  it('finds none when every write is in token order, and a refused one is no write', () => {
    expect(staleWrites([write('a', 3, 'checked', 1), write('b', 4, 'committed', 2), write('a', 3, 'refused', 3), rows(['b', 4])])).toEqual([]);
    expect(staleWrites([write('a', 3, 'committed', 1), write('a', 3, 'committed', 2), write('b', 4, 'committed', 3), rows(['a', 3], ['a', 3], ['b', 4])])).toEqual([]);
  });

  it('finds a row of an older holder after a newer one, in the database\'s order and in the holders\'', () => {
    expect(staleWrites([write('b', 4, 'committed', 2), write('a', 3, 'committed', 3), rows(['b', 4], ['a', 3])])).toEqual([
      { resource: 'ledger', node: 'a', token: 3, after: 4 },
      { resource: 'ledger', node: 'a', token: 3, after: 4 },
    ]);
  });
});

describe('lateWrites', () => {
  const lapsed = (token: number, at: number): LeaseLapsedEvent => ({ type: 'lapsed', at, node: 'test', pid: 1, token });
  it('finds a write committed with a token after its permit lapsed, and none before or refused', () => {
    expect(lateWrites([write('a', 3, 'committed', 1), lapsed(3, 2), write('a', 3, 'refused', 3)])).toEqual([]);
    expect(lateWrites([lapsed(3, 2), write('a', 3, 'committed', 3)])).toEqual([write('a', 3, 'committed', 3)]);
  });
});

describe('commitsAfterTakeover', () => {
  it('finds an older holder\'s commit told after a newer holder checked its lease, and none before it or refused', () => {
    expect(commitsAfterTakeover([write('a', 3, 'fenced', 1), write('a', 3, 'committed', 2), write('b', 4, 'checked', 3), write('b', 4, 'committed', 4)])).toEqual([]);
    expect(commitsAfterTakeover([write('a', 3, 'fenced', 1), write('b', 4, 'checked', 2), write('a', 3, 'refused', 3), write('b', 4, 'committed', 4)])).toEqual([]);
    expect(commitsAfterTakeover([write('a', 3, 'fenced', 1), write('b', 4, 'checked', 2), write('a', 3, 'committed', 3)])).toEqual([write('a', 3, 'committed', 3)]);
  });
});
