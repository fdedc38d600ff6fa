/*
 * A TCP proxy in front of one member's client port, so a test can break the network between clients and that
 * member only: delay, blackhole or reset its connections while the other members stay reachable. Members
 * advertise the proxy's address to clients (advanced network, see ControlledCluster.start(n, { proxied: true })),
 * so smart clients reach each member through its own proxy and nothing else.
 *
 * A fault applies to every connection, or with `{ pid }` to the connections of one client process only (Linux:
 * the owner is read from /proc), so one node can be cut off while others and the operator keep working.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { canResolvePids, tcpSocketsOf } from './proc-net';

/** What the proxy does with a connection's bytes. */
export type ProxyMode = { kind: 'pass' } | { kind: 'delay'; ms: number } | { kind: 'blackhole' };

/** Which connections a fault applies to: all (default), or those of one client process. */
export interface ProxyScope {
  pid?: number;
}

/** A proxied connection, for assertions. */
export interface ProxyConnection {
  id: number;
  /** The client's local port (its end of the connection). */
  clientPort: number;
  /** The owning process, once a pid-scoped fault or query resolved it. */
  pid?: number;
  openedAt: number;
  bytesUp: number;
  bytesDown: number;
}

type Marker = 'end' | 'destroy';
interface Item { data: Buffer | Marker; at: number }

/**
 * One direction of a connection. Bytes are queued with their arrival time and delivered in order when the
 * connection's current mode allows: at once (pass), `ms` after arrival (delay) or not yet (blackhole; they are
 * delivered on heal, as TCP would retransmit them once the network is back). No backpressure: test traffic is small.
 */
class Lane {
  private readonly queue: Item[] = [];
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly out: Socket,
    private readonly mode: () => ProxyMode,
    private readonly delivered: (bytes: number) => void,
  ) {}

  push(data: Buffer | Marker): void {
    this.queue.push({ data, at: Date.now() });
    this.pump();
  }

  pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      const mode = this.mode();
      if (mode.kind === 'blackhole') return;
      const due = this.queue[0].at + (mode.kind === 'delay' ? mode.ms : 0);
      const wait = due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        return;
      }
      const { data } = this.queue.shift()!;
      if (this.out.destroyed) continue;
      if (data === 'end') this.out.end();
      else if (data === 'destroy') this.out.destroy();
      else {
        this.out.write(data);
        this.delivered(data.length);
      }
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

interface Link extends ProxyConnection {
  client: Socket;
  upstream: Socket;
  lanes: Lane[];
}

/** A proxy listening on 127.0.0.1 and forwarding to `target` (settable later; until then connections are refused). */
export class TcpProxy {
  private readonly links = new Map<number, Link>();
  private readonly pidModes = new Map<number, ProxyMode>();
  private defaultMode: ProxyMode = { kind: 'pass' };
  private nextId = 1;
  /** Connections accepted so far, including closed ones. */
  accepted = 0;

  private server?: Server;
  private listenPort = 0;

  private constructor(private target?: { host: string; port: number }) {}

  /** Starts listening on 127.0.0.1:`port` (default: any free port). */
  static async listen({ port = 0, target }: { port?: number; target?: { host: string; port: number } } = {}): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.open(port);
    return proxy;
  }

  /** The port clients connect to (kept across {@link refuse} and {@link admit}). */
  get port(): number {
    return this.listenPort;
  }

  /** `127.0.0.1:<port>`, the address clients use. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Where connections go (a member's real client port); existing connections keep their target. */
  setTarget(address: string): void {
    const [host, port] = address.split(':');
    this.target = { host, port: Number(port) };
  }

  /** Forward every byte `ms` later, both directions. */
  delay(ms: number, scope: ProxyScope = {}): void {
    this.setMode({ kind: 'delay', ms }, scope);
  }

  /** Accept and hold bytes, forward nothing, keep sockets open: a dead network. Held bytes flow again on heal. */
  blackhole(scope: ProxyScope = {}): void {
    this.setMode({ kind: 'blackhole' }, scope);
  }

  /** Back to pass-through: for everyone (lifting every pid-scoped fault too), or for one pid's connections. */
  heal(scope: ProxyScope = {}): void {
    if (scope.pid === undefined) {
      this.defaultMode = { kind: 'pass' };
      this.pidModes.clear();
      this.pumpAll();
    } else {
      this.setMode({ kind: 'pass' }, scope);
    }
  }

  /** Destroys the current connections in scope with a TCP RST on both sides; new connections are accepted. */
  reset(scope: ProxyScope = {}): number {
    const victims = this.select(scope);
    for (const link of victims) {
      for (const lane of link.lanes) lane.stop();
      link.client.resetAndDestroy();
      link.upstream.resetAndDestroy();
      this.links.delete(link.id);
    }
    return victims.length;
  }

  /** Open connections in scope. */
  connections(scope: ProxyScope = {}): ProxyConnection[] {
    return this.select(scope).map(({ id, clientPort, pid, openedAt, bytesUp, bytesDown }) => ({ id, clientPort, pid, openedAt, bytesUp, bytesDown }));
  }

  /**
   * Stops accepting: new connections are refused (ECONNREFUSED), open ones are left alone. For a member that is
   * down: accepting and then closing would look like a member that hangs up during the handshake, which stalls a
   * Node client's start for its heartbeat timeout (60 s).
   */
  refuse(): void {
    this.server?.close();
    this.server = undefined;
  }

  /** Accepts connections again, on the same port. */
  async admit(): Promise<void> {
    if (!this.server) await this.open(this.listenPort);
  }

  /** Stops listening and drops every connection. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.reset();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  private async open(port: number): Promise<void> {
    // allowHalfOpen: a FIN from one side is forwarded (in order, after its bytes) rather than answered at once.
    const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.accept(socket));
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
    this.listenPort = (server.address() as { port: number }).port;
  }

  private setMode(mode: ProxyMode, { pid }: ProxyScope): void {
    if (pid === undefined) this.defaultMode = mode;
    else {
      this.requirePids();
      this.pidModes.set(pid, mode);
      this.resolveOwners(pid);
    }
    this.pumpAll();
  }

  private modeOf(link: Link): ProxyMode {
    return (link.pid !== undefined && this.pidModes.get(link.pid)) || this.defaultMode;
  }

  private select({ pid }: ProxyScope): Link[] {
    if (pid === undefined) return [...this.links.values()];
    this.requirePids();
    this.resolveOwners(pid);
    return [...this.links.values()].filter((l) => l.pid === pid);
  }

  /** Tags the connections whose client end belongs to `pid` (matching local and remote port, as the kernel lists them). */
  private resolveOwners(pid: number, links: Iterable<Link> = this.links.values()): void {
    const untagged = [...links].filter((l) => l.pid === undefined);
    if (untagged.length === 0) return;
    const ends = new Set(tcpSocketsOf(pid).filter((s) => s.remotePort === this.port).map((s) => s.localPort));
    for (const link of untagged) if (ends.has(link.clientPort)) link.pid = pid;
  }

  private requirePids(): void {
    if (!canResolvePids()) throw new Error('pid-scoped proxy faults need Linux /proc/net/tcp');
  }

  private pumpAll(): void {
    for (const link of this.links.values()) for (const lane of link.lanes) lane.pump();
  }

  private accept(client: Socket): void {
    this.accepted++;
    client.on('error', () => undefined);
    if (!this.target) {
      client.resetAndDestroy(); // no member behind this proxy yet (ControlledCluster sets it once members are up)
      return;
    }
    const upstream = connect({ ...this.target, allowHalfOpen: true, noDelay: true });
    upstream.on('error', () => undefined);
    const link: Link = {
      id: this.nextId++, clientPort: client.remotePort ?? 0, openedAt: Date.now(), bytesUp: 0, bytesDown: 0,
      client, upstream, lanes: [],
    };
    const mode = () => this.modeOf(link);
    const up = new Lane(upstream, mode, (n) => (link.bytesUp += n));
    const down = new Lane(client, mode, (n) => (link.bytesDown += n));
    link.lanes = [up, down];
    this.links.set(link.id, link);
    // A new connection of a process under a pid-scoped fault gets that fault from its first byte.
    for (const pid of this.pidModes.keys()) this.resolveOwners(pid, [link]);

    client.on('data', (chunk: Buffer) => up.push(chunk));
    upstream.on('data', (chunk: Buffer) => down.push(chunk));
    // FIN and errors travel like bytes, so a blackholed client does not learn that the member went away.
    client.on('end', () => up.push('end'));
    upstream.on('end', () => down.push('end'));
    client.on('close', (hadError) => hadError && up.push('destroy'));
    upstream.on('close', (hadError) => hadError && down.push('destroy'));
    const forget = () => {
      if (client.destroyed && upstream.destroyed) this.links.delete(link.id);
    };
    client.on('close', forget);
    upstream.on('close', forget);
  }
}
