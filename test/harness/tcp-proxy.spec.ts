import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { eventually } from '../support/eventually';
import { within } from './deadline';
import { MessageSplitter, TcpProxy } from './tcp-proxy';

/** Hazelcast client protocol frames: int32 length (header included), uint16 flags, then the content. */
const FINAL = 1 << 13;
const BACKUP_EVENT = 1 << 7;
const UNFRAGMENTED = (1 << 15) | (1 << 14);
function frame(flags: number, content: string): Buffer {
  const header = Buffer.alloc(6);
  header.writeInt32LE(6 + Buffer.byteLength(content), 0);
  header.writeUInt16LE(flags, 4);
  return Buffer.concat([header, Buffer.from(content)]);
}
/** A backup acknowledgement (an event flagged as a backup event), an answer, and a message of two frames. */
const ACK = frame(UNFRAGMENTED | FINAL | (1 << 9) | BACKUP_EVENT, 'ack-of-call-7');
const ANSWER = frame(UNFRAGMENTED | FINAL, 'answer-to-call-8');
const TWO_FRAMES = Buffer.concat([frame(UNFRAGMENTED, 'first'), frame(FINAL, '')]);

/** The proxy's modes against a local echo server (no Hazelcast): fast and exact. */
describe('TcpProxy', () => {
  let echo: Server;
  let proxy: TcpProxy;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    echo = createServer((s) => s.on('error', () => undefined).pipe(s));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
  });
  beforeEach(async () => {
    proxy = await TcpProxy.listen({ target: { host: '127.0.0.1', port: (echo.address() as { port: number }).port } });
  });
  afterEach(async () => {
    sockets.forEach((s) => s.destroy());
    await proxy.close();
  });
  afterAll(() => new Promise((resolve) => echo.close(resolve)));

  /** A client that collects what comes back. */
  async function client() {
    const socket = connect(proxy.port, '127.0.0.1');
    sockets.push(socket);
    await once(socket, 'connect');
    let received = '';
    socket.on('data', (d) => (received += String(d)));
    socket.on('error', () => undefined);
    const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)));
    return { socket, received: () => received, closed };
  }

  it('passes bytes both ways and tells which process owns a connection', async () => {
    const c = await client();
    c.socket.write('hello');
    await eventually('the echo', () => c.received() === 'hello');
    expect(proxy.connections({ pid: process.pid })).toEqual([expect.objectContaining({ pid: process.pid, bytesUp: 5, bytesDown: 5 })]);
    expect(proxy.connections({ pid: 1 })).toEqual([]);
  });

  it('delays both directions, keeping the order', async () => {
    const c = await client();
    proxy.delay(150);
    const started = Date.now();
    c.socket.write('a');
    setTimeout(() => c.socket.write('b'), 20);
    await eventually('the delayed echo', () => c.received() === 'ab', { timeoutMs: 2000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('blackholes: holds the bytes and keeps the socket open; heal delivers them', async () => {
    const c = await client();
    proxy.blackhole();
    c.socket.write('held');
    expect(await within(c.closed, 300)).toMatchObject({ settled: false });
    expect(c.received()).toBe('');
    proxy.heal();
    await eventually('the held bytes', () => c.received() === 'held');
  });

  it('applies a fault to one pid only', async () => {
    const c = await client();
    proxy.blackhole({ pid: 1 }); // some other process
    c.socket.write('free');
    await eventually('the echo', () => c.received() === 'free');
    proxy.blackhole({ pid: process.pid });
    const late = await client(); // new connections of that process get the fault too
    late.socket.write('x');
    c.socket.write('!');
    expect(await within(eventually('anything', () => late.received() || c.received() !== 'free', { timeoutMs: 300 }), 400))
      .toMatchObject({ settled: true, error: expect.any(Error) });
    proxy.heal({ pid: process.pid });
    await eventually('both echoes', () => late.received() === 'x' && c.received() === 'free!');
  });

  it('holds one direction only: the member gets every byte, its answers wait for heal', async () => {
    const c = await client();
    proxy.blackhole({ pid: process.pid, direction: 'toClient' });
    c.socket.write('landed');
    await eventually('the bytes at the member', () => proxy.connections()[0]?.bytesUp === 6);
    expect(await within(eventually('an answer', () => c.received() !== '', { timeoutMs: 300 }), 400)).toMatchObject({ error: expect.any(Error) });
    proxy.heal({ pid: process.pid, direction: 'toClient' });
    await eventually('the held answer', () => c.received() === 'landed');

    proxy.blackhole({ direction: 'toMember' });
    c.socket.write('!');
    expect(await within(eventually('the byte at the member', () => proxy.connections()[0].bytesUp === 7, { timeoutMs: 300 }), 400))
      .toMatchObject({ error: expect.any(Error) });
    proxy.heal();
    await eventually('the echo', () => c.received() === 'landed!');
  });

  it('holds the backup acknowledgements a member sends, passing every other message, and delivers them on heal', async () => {
    const c = await client();
    proxy.holdBackupAcks({ pid: process.pid });
    // The echo plays the member: what the client writes comes back as the member's messages.
    c.socket.write(Buffer.concat([ACK, ANSWER, TWO_FRAMES]));
    await eventually('the other messages', () => c.received() === String(Buffer.concat([ANSWER, TWO_FRAMES])));
    expect(await within(eventually('the acknowledgement', () => c.received().length > ANSWER.length + TWO_FRAMES.length, { timeoutMs: 300 }), 400))
      .toMatchObject({ error: expect.any(Error) });
    proxy.heal({ pid: process.pid });
    await eventually('the acknowledgement, after them', () => c.received() === String(Buffer.concat([ANSWER, TWO_FRAMES, ACK])));
    c.socket.write(ACK);
    await eventually('a later acknowledgement, no longer held', () => c.received().endsWith(String(Buffer.concat([ACK, ACK]))));
  });

  it('holds nothing back, not even a split header, while no hold is on', () => {
    const out: Buffer[] = [];
    const splitter = new MessageSplitter(() => false, () => true, (bytes, hold) => !hold && out.push(bytes));
    const stream = Buffer.concat([ACK, ANSWER]);
    for (let i = 0; i < stream.length; i++) {
      splitter.feed(stream.subarray(i, i + 1));
      expect(Buffer.concat(out)).toEqual(stream.subarray(0, i + 1));
    }
  });

  it('cuts messages at their boundaries however the bytes are split', () => {
    const stream = Buffer.concat([ANSWER, ACK, TWO_FRAMES, ACK, ANSWER]);
    for (let cut = 0; cut <= stream.length; cut++) {
      for (const step of [1, 3, 7]) {
        const passed: Buffer[] = [];
        const held: Buffer[] = [];
        const splitter = new MessageSplitter(() => true, (flags) => (flags & BACKUP_EVENT) !== 0, (bytes, hold) => (hold ? held : passed).push(bytes));
        splitter.feed(stream.subarray(0, cut));
        for (let i = cut; i < stream.length; i += step) splitter.feed(stream.subarray(i, Math.min(stream.length, i + step)));
        expect(Buffer.concat(passed)).toEqual(Buffer.concat([ANSWER, TWO_FRAMES, ANSWER]));
        expect(Buffer.concat(held)).toEqual(Buffer.concat([ACK, ACK]));
      }
    }
  });

  it('resets the current connections and accepts new ones', async () => {
    const c = await client();
    await eventually('the connection', () => proxy.connections().length === 1);
    expect(proxy.reset()).toBe(1);
    await c.closed;
    const next = await client();
    next.socket.write('again');
    await eventually('the echo', () => next.received() === 'again');
  });

  it('refuses connections while down and accepts them again on the same port', async () => {
    proxy.refuse();
    const refused = connect(proxy.port, '127.0.0.1');
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
    await proxy.admit();
    const c = await client();
    c.socket.write('up');
    await eventually('the echo', () => c.received() === 'up');
  });
});
