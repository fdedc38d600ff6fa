import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { eventually } from '../support/eventually';
import { within } from './deadline';
import { TcpProxy } from './tcp-proxy';

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
