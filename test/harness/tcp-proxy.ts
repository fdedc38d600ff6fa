/*
 * A TCP proxy in front of one member's client port, so a test can break the network between clients and that
 * member only: delay, blackhole or reset its connections while the other members stay reachable. Members
 * advertise the proxy's address to clients (advanced network, see ControlledCluster.start(n, { proxied: true })),
 * so smart clients reach each member through its own proxy and nothing else.
 *
 * A fault applies to every connection, or with `{ pid }` to the connections of one client process only (Linux:
 * the owner is read from /proc), so one node can be cut off while others and the operator keep working; with
 * `{ direction }` to one direction only (`'toClient'`: the member gets every request and applies it, its answers
 * and events are held), so a write can land while its answer does not come back.
 *
 * The proxy also reads the Hazelcast client protocol's message boundaries on the member-to-client direction (frames:
 * int32 length, uint16 flags; a message ends with a frame flagged final), so one kind of message can be held back
 * while every other passes: `holdBackupAcks` holds the backup acknowledgements a member sends a smart client, which
 * the client waits for before it completes a write whose backup that member keeps (the write landed, its answer is
 * late, while the events and answers of every other call keep flowing).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { canResolvePids, tcpSocketsOf } from './proc-net';

/** What the proxy does with a connection's bytes. */
export type ProxyMode = { kind: 'pass' } | { kind: 'delay'; ms: number } | { kind: 'blackhole' };

/** A direction of a proxied connection: client to member (requests), member to client (answers, events). */
export type ProxyDirection = 'toMember' | 'toClient';

/** Which connections a fault applies to: all (default), or those of one client process; both directions (default) or one. */
export interface ProxyScope {
  pid?: number;
  direction?: ProxyDirection | 'both';
}

const DIRECTIONS: readonly ProxyDirection[] = ['toMember', 'toClient'];
const PASS: ProxyMode = { kind: 'pass' };

/** Hazelcast client protocol: a frame's header (int32 length including it, uint16 flags), and the flags read here. */
const FRAME_HEADER_BYTES = 6;
const IS_FINAL_FLAG = 1 << 13;
const IS_BACKUP_EVENT_FLAG = 1 << 7;

/**
 * Cuts the bytes of one direction into Hazelcast client messages as they stream by, handing every piece on at once
 * with whether the message it belongs to is held (`hold` is asked with the flags of a message's first frame). While
 * `holding()` says no hold is on, nothing waits, not even a frame header split across reads (so a stream that is not
 * frames passes unharmed); under a hold, such a header waits for its other bytes. A length below the header's says
 * the stream is not frames: it is handed on unread from there.
 */
export class MessageSplitter {
  private header = Buffer.alloc(0);
  /** How many bytes of `header` were handed on already (passed: no hold was on when they came). */
  private headerSent = 0;
  /** Bytes of the current frame's body still to come. */
  private left = 0;
  private finalFrame = false;
  private atMessageStart = true;
  private held = false;
  private unframed = false;

  constructor(
    private readonly holding: () => boolean,
    private readonly hold: (flags: number) => boolean,
    private readonly emit: (bytes: Buffer, held: boolean) => void,
  ) {}

  feed(chunk: Buffer): void {
    if (this.unframed) return this.emit(chunk, false);
    const pieces: Array<{ bytes: Buffer; held: boolean }> = [];
    const out = (bytes: Buffer, held: boolean) => {
      if (bytes.length === 0) return;
      const last = pieces.at(-1);
      if (last && last.held === held) last.bytes = Buffer.concat([last.bytes, bytes]);
      else pieces.push({ bytes, held });
    };
    let i = 0;
    while (i < chunk.length) {
      if (this.left > 0) {
        const take = Math.min(this.left, chunk.length - i);
        out(chunk.subarray(i, i + take), this.held);
        i += take;
        this.left -= take;
        if (this.left === 0 && this.finalFrame) this.atMessageStart = true;
        continue;
      }
      const take = Math.min(FRAME_HEADER_BYTES - this.header.length, chunk.length - i);
      this.header = Buffer.concat([this.header, chunk.subarray(i, i + take)]);
      i += take;
      // Header bytes of a message that cannot be held (no hold on, or a later frame of one decided) go on at once.
      const decided = !this.atMessageStart || !this.holding();
      if (decided || this.headerSent > 0) {
        out(this.header.subarray(this.headerSent), this.atMessageStart ? false : this.held);
        this.headerSent = this.header.length;
      }
      if (this.header.length < FRAME_HEADER_BYTES) break;
      const length = this.header.readInt32LE(0);
      const flags = this.header.readUInt16LE(4);
      const unsent = this.header.subarray(this.headerSent);
      const partlySent = this.headerSent > 0;
      this.header = Buffer.alloc(0);
      this.headerSent = 0;
      if (length < FRAME_HEADER_BYTES) {
        this.unframed = true;
        out(Buffer.concat([unsent, chunk.subarray(i)]), false);
        break;
      }
      if (this.atMessageStart) {
        this.held = !partlySent && this.hold(flags);
        this.atMessageStart = false;
      }
      out(unsent, this.held);
      this.left = length - FRAME_HEADER_BYTES;
      this.finalFrame = (flags & IS_FINAL_FLAG) !== 0;
      if (this.left === 0 && this.finalFrame) this.atMessageStart = true;
    }
    for (const piece of pieces) this.emit(piece.bytes, piece.held);
  }

  /** Header bytes still waiting are handed on as they are (the stream ends). */
  flush(): void {
    if (this.header.length > this.headerSent) this.emit(this.header.subarray(this.headerSent), false);
    this.header = Buffer.alloc(0);
    this.headerSent = 0;
  }
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
  /** The member-to-client lane, and the messages held back from it (see `holdBackupAcks`). */
  down?: Lane;
  held: Buffer[];
}

/** A proxy listening on 127.0.0.1 and forwarding to `target` (settable later; until then connections are refused). */
export class TcpProxy {
  private readonly links = new Map<number, Link>();
  private readonly pidModes = new Map<number, Partial<Record<ProxyDirection, ProxyMode>>>();
  private readonly defaultModes: Record<ProxyDirection, ProxyMode> = { toMember: PASS, toClient: PASS };
  /** Whose backup acknowledgements are held: everyone's, or those of these pids. */
  private holdAllAcks = false;
  private readonly pidAckHolds = new Set<number>();
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

  /** Forward every byte `ms` later (both directions, unless the scope names one). */
  delay(ms: number, scope: ProxyScope = {}): void {
    this.setMode({ kind: 'delay', ms }, scope);
  }

  /** Accept and hold bytes, forward nothing, keep sockets open: a dead network. Held bytes flow again on heal. */
  blackhole(scope: ProxyScope = {}): void {
    this.setMode({ kind: 'blackhole' }, scope);
  }

  /**
   * Holds back the backup acknowledgements the member sends (messages flagged as backup events), every other message
   * passing: a smart client completes a write only once the members keeping its backups acknowledged it, so a write
   * whose backup this member keeps lands, and its answer waits until {@link heal} delivers them (or the client's
   * backup timeout, 5 s by default, fails the call). Applies to connections open now and later.
   */
  holdBackupAcks(scope: Pick<ProxyScope, 'pid'> = {}): void {
    if (scope.pid === undefined) this.holdAllAcks = true;
    else {
      this.requirePids();
      this.pidAckHolds.add(scope.pid);
      this.resolveOwners(scope.pid);
    }
  }

  /**
   * Back to pass-through: for everyone (lifting every pid-scoped fault too), or for one pid's connections (in both
   * directions, or the one named). Held backup acknowledgements are delivered, in order, and no longer held.
   */
  heal(scope: ProxyScope = {}): void {
    const directions = directionsOf(scope);
    if (scope.pid === undefined) {
      for (const direction of directions) {
        this.defaultModes[direction] = PASS;
        for (const modes of this.pidModes.values()) delete modes[direction];
      }
      this.holdAllAcks = false;
      this.pidAckHolds.clear();
    } else {
      this.setMode(PASS, scope);
      this.pidAckHolds.delete(scope.pid);
    }
    for (const link of this.links.values()) if (!this.holdsAcksOf(link)) this.release(link);
    this.pumpAll();
  }

  /** Destroys the current connections in scope with a TCP RST on both sides; new connections are accepted. */
  reset(scope: ProxyScope = {}): number {
    const victims = this.select(scope);
    for (const link of victims) {
      for (const lane of link.lanes) lane.stop();
      link.held.length = 0;
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

  private setMode(mode: ProxyMode, scope: ProxyScope): void {
    const { pid } = scope;
    if (pid === undefined) {
      for (const direction of directionsOf(scope)) this.defaultModes[direction] = mode;
    } else {
      this.requirePids();
      const modes = this.pidModes.get(pid) ?? {};
      for (const direction of directionsOf(scope)) modes[direction] = mode;
      this.pidModes.set(pid, modes);
      this.resolveOwners(pid);
    }
    this.pumpAll();
  }

  private modeOf(link: Link, direction: ProxyDirection): ProxyMode {
    return (link.pid !== undefined && this.pidModes.get(link.pid)?.[direction]) || this.defaultModes[direction];
  }

  private holdsAcksOf(link: Link): boolean {
    return this.holdAllAcks || (link.pid !== undefined && this.pidAckHolds.has(link.pid));
  }

  /** Delivers the messages held back from `link`, ahead of anything that comes after. */
  private release(link: Link): void {
    for (const bytes of link.held.splice(0)) link.down?.push(bytes);
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
      client, upstream, lanes: [], held: [],
    };
    const up = new Lane(upstream, () => this.modeOf(link, 'toMember'), (n) => (link.bytesUp += n));
    const down = new Lane(client, () => this.modeOf(link, 'toClient'), (n) => (link.bytesDown += n));
    link.lanes = [up, down];
    link.down = down;
    this.links.set(link.id, link);
    // A new connection of a process under a pid-scoped fault gets that fault from its first byte.
    for (const pid of new Set([...this.pidModes.keys(), ...this.pidAckHolds])) this.resolveOwners(pid, [link]);
    // The member's messages, cut at their boundaries: a backup acknowledgement under a hold is kept aside.
    const fromMember = new MessageSplitter(
      () => this.holdsAcksOf(link),
      (flags) => (flags & IS_BACKUP_EVENT_FLAG) !== 0 && this.holdsAcksOf(link),
      (bytes, held) => (held && this.holdsAcksOf(link) ? link.held.push(bytes) : down.push(bytes)),
    );

    client.on('data', (chunk: Buffer) => up.push(chunk));
    upstream.on('data', (chunk: Buffer) => fromMember.feed(chunk));
    // FIN and errors travel like bytes, so a blackholed client does not learn that the member went away.
    client.on('end', () => up.push('end'));
    upstream.on('end', () => {
      fromMember.flush();
      down.push('end');
    });
    client.on('close', (hadError) => hadError && up.push('destroy'));
    upstream.on('close', (hadError) => hadError && down.push('destroy'));
    const forget = () => {
      if (client.destroyed && upstream.destroyed) this.links.delete(link.id);
    };
    client.on('close', forget);
    upstream.on('close', forget);
  }
}

function directionsOf({ direction = 'both' }: ProxyScope): readonly ProxyDirection[] {
  return direction === 'both' ? DIRECTIONS : [direction];
}
