/*
 * A real network with a link a test can cut: Linux network namespaces joined by veth pairs, for fault tests that
 * partition Hazelcast members from each other (test/faults/network-partition.spec.ts). Needs root and iproute2
 * (`ip netns`); without them `TwoSidedNetwork.create` fails and says so (a partition test must not pass by skipping).
 *
 *        left side                                                right side
 *   [ns <p>-m0  10.77.0.10]--veth--+                    +--veth--[ns <p>-m1  10.77.0.11]
 *   root namespace 10.77.0.1 ---[bridge <p>-left]==trunk==[bridge <p>-right]--veth--[ns <p>-m2  10.77.0.12]
 *                                                        +--veth--[ns <p>-nr  10.77.0.13]
 *
 * One /24 across two bridges in the root namespace, joined by one veth pair (the trunk). Every host is a namespace
 * of its own with one address (and its own `lo` up, so a member can also talk to itself); the root namespace, where
 * jest and its in-process nodes run, has an address on the bridge of the side it is given. `cut()` sets the trunk
 * down: the sides lose each other at layer 2 (packets are dropped, nothing is reset: members only learn of it from
 * missing heartbeats, as in a real partition), while every host keeps its own side, the root namespace included.
 * `heal()` sets it up again. No routing, no forwarding and no packet filter are involved.
 */
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'hazelcast-client';
import type { NodeProcess } from '../harness/node-process';
import { eventually } from './eventually';
import { tsScriptArgs } from './ts-script';

export type Side = 'left' | 'right';

/** A host of the network: a namespace with one address on one side. */
export interface NetnsHost {
  name: string;
  namespace: string;
  address: string;
  side: Side;
}

/** Runs `ip` and returns its output; a failure names the command and what `ip` said. */
function ip(...args: string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(`\`ip ${args.join(' ')}\` failed: ${(stderr || message).trim()}`, { cause: error });
  }
}

/** Like {@link ip}, for clean-up: what is already gone is fine. */
function ipQuietly(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

/** Two bridged sides joined by one trunk link; see the picture at the top of this file. */
export class TwoSidedNetwork {
  private destroyed = false;

  private constructor(
    private readonly prefix: string,
    readonly hosts: readonly NetnsHost[],
    /** The root namespace's address (where jest runs), on `rootSide`. */
    readonly rootAddress: string,
    readonly rootSide: Side,
  ) {}

  /**
   * Creates the namespaces, bridges and links, after removing whatever a killed earlier run with the same `prefix`
   * left behind (its names are this run's). `subnet` is the first three octets; hosts get .10, .11, ... in order,
   * the root namespace .1. Throws, saying why, if this machine cannot do it (not root, no `ip netns`).
   */
  static create({ prefix, subnet, hosts, rootSide }: { prefix: string; subnet: string; hosts: Array<{ name: string; side: Side }>; rootSide: Side }): TwoSidedNetwork {
    if (prefix.length > 6) throw new RangeError(`prefix "${prefix}" is too long for interface names (15 characters)`);
    const net = new TwoSidedNetwork(
      prefix,
      hosts.map((h, i) => ({ name: h.name, namespace: `${prefix}-${h.name}`, address: `${subnet}.${10 + i}`, side: h.side })),
      `${subnet}.1`,
      rootSide,
    );
    net.removeLinks();
    try {
      if (typeof process.getuid === 'function' && process.getuid() !== 0) throw new Error(`this process runs as uid ${process.getuid()}, not root`);
      for (const side of ['left', 'right'] as const) {
        ip('link', 'add', net.bridge(side), 'type', 'bridge');
        ip('link', 'set', net.bridge(side), 'up');
      }
      ip('link', 'add', net.trunk('left'), 'type', 'veth', 'peer', 'name', net.trunk('right'));
      for (const side of ['left', 'right'] as const) {
        ip('link', 'set', net.trunk(side), 'master', net.bridge(side));
        ip('link', 'set', net.trunk(side), 'up');
      }
      ip('addr', 'add', `${net.rootAddress}/24`, 'dev', net.bridge(rootSide));
      for (const host of net.hosts) {
        const outside = `${prefix}-${host.name}`; // the root end of the host's veth, a port of its side's bridge
        ip('netns', 'add', host.namespace);
        ip('link', 'add', outside, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', host.namespace);
        ip('link', 'set', outside, 'master', net.bridge(host.side));
        ip('link', 'set', outside, 'up');
        ip('-n', host.namespace, 'link', 'set', 'lo', 'up');
        ip('-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', 'eth0');
        ip('-n', host.namespace, 'link', 'set', 'eth0', 'up');
      }
    } catch (error) {
      net.removeLinks();
      throw new Error('A real network partition needs root and iproute2 with network namespaces (`ip netns`, veth, bridge); '
        + `setting up the test network failed: ${(error as Error).message}`, { cause: error });
    }
    return net;
  }

  host(name: string): NetnsHost {
    const host = this.hosts.find((h) => h.name === name);
    if (!host) throw new RangeError(`no host ${name} (hosts: ${this.hosts.map((h) => h.name).join(', ')})`);
    return host;
  }

  /** Starts `command` inside `host`'s namespace. `ip netns exec` execs in place: the child's pid is the command's. */
  spawnIn(host: string, command: string, args: string[], options: SpawnOptions): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.host(host).namespace, command, ...args], options);
  }

  /** Cuts the trunk: the two sides no longer reach each other; each host still reaches its own side. */
  cut(): void {
    ip('link', 'set', this.trunk('left'), 'down');
  }

  /** Joins the sides again. */
  heal(): void {
    ip('link', 'set', this.trunk('left'), 'up');
  }

  /**
   * Removes everything: kills what still runs inside the namespaces (by pid, as `ip netns pids` lists them: only
   * processes this test started live there), then deletes namespaces, veths and bridges. Safe to call twice.
   */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.removeLinks();
  }

  private removeLinks(): void {
    const hosts = this.hosts.map((h) => h.namespace);
    const existing = new Set(safeList());
    for (const namespace of hosts.filter((n) => existing.has(n))) {
      for (const pid of safePids(namespace)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // exited meanwhile
        }
      }
      ipQuietly('netns', 'del', namespace);
    }
    for (const host of this.hosts) ipQuietly('link', 'del', `${this.prefix}-${host.name}`);
    ipQuietly('link', 'del', this.trunk('left')); // deletes its peer too
    for (const side of ['left', 'right'] as const) ipQuietly('link', 'del', this.bridge(side));
  }

  private bridge(side: Side): string {
    return `${this.prefix}-${side}`;
  }

  private trunk(side: Side): string {
    return `${this.prefix}-trunk-${side[0]}`;
  }
}

function safeList(): string[] {
  try {
    return ip('netns', 'list').split('\n').map((line) => line.split(' ')[0]).filter(Boolean);
  } catch {
    return [];
  }
}

function safePids(namespace: string): number[] {
  try {
    return ip('netns', 'pids', namespace).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const REPO_ROOT = resolve(__dirname, '../..');
const HAZELCAST_PORT = 5701;

/** The member jar, as scripts/hazelcast.mjs caches it (fetched with mvn if it is not there yet). */
function memberJar(): string {
  return execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/hazelcast.mjs'), 'fetch'], { encoding: 'utf8' }).trim().split('\n').pop()!;
}

/** A member JVM running in a host's namespace. */
export interface NetnsMember {
  host: string;
  /** `address:5701`, where clients and the other members reach it. */
  address: string;
  pid: number;
  /** Its stdout and stderr (the member's log). */
  logFile: string;
  /** Whether its JVM is still running. */
  running(): boolean;
  /** SIGTERM (graceful), SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

/** Options of {@link startNetnsMembers}. */
export interface NetnsMembersOptions {
  clusterName: string;
  /** A member configuration file every member imports (maps, split-brain protection); none if undefined. */
  config?: string;
  /** Member properties (`hazelcast.max.no.heartbeat.seconds`, ...). */
  properties?: Record<string, string | number>;
  logDir: string;
}

/**
 * Starts one member in each of `hosts`' namespaces, each on its own address, joined by TCP-IP to all of them (as
 * scripts/hazelcast.mjs starts members on 127.0.0.1, with the same JVM flags for a fast start). Does not wait for
 * them to form a cluster: see {@link waitForMembers}.
 */
export async function startNetnsMembers(net: TwoSidedNetwork, hosts: string[], options: NetnsMembersOptions): Promise<NetnsMember[]> {
  const jar = memberJar();
  const memberList = hosts.map((h) => `${net.host(h).address}:${HAZELCAST_PORT}`);
  mkdirSync(options.logDir, { recursive: true });
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const members = hosts.map((name): NetnsMember => {
    const { address } = net.host(name);
    const configDir = mkdtempSync(join(tmpdir(), 'gatekeeper-netns-'));
    const file = join(configDir, 'hazelcast.yaml');
    const properties = Object.fromEntries(Object.entries(options.properties ?? {}).map(([k, v]) => [k, String(v)]));
    // JSON strings and objects are valid YAML flow scalars and mappings: no quoting bugs.
    writeFileSync(file, `hazelcast:
  cluster-name: ${JSON.stringify(options.clusterName)}${options.config ? `\n  import: ${JSON.stringify([resolve(options.config)])}` : ''}
  properties: ${JSON.stringify(properties)}
  network:
    port: { port: ${HAZELCAST_PORT}, auto-increment: false }
    interfaces: { enabled: true, interfaces: ${JSON.stringify([address])} }
    join:
      auto-detection: { enabled: false }
      multicast: { enabled: false }
      tcp-ip: { enabled: true, connection-timeout-seconds: 1, member-list: ${JSON.stringify(memberList)} }
`);
    const logFile = join(options.logDir, `netns-member-${name}.log`);
    const out = openSync(logFile, 'a');
    writeSync(out, `\n==== ${new Date().toISOString()} starting member ${address}:${HAZELCAST_PORT} (${options.clusterName}) in namespace ${net.host(name).namespace}\n`);
    let child: ChildProcess;
    try {
      child = net.spawnIn(name, java, [
        '-Xmx512m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1',
        '--add-modules', 'java.se', '--add-exports', 'java.base/jdk.internal.ref=ALL-UNNAMED',
        ...['java.base/java.lang', 'java.base/sun.nio.ch', 'java.management/sun.management', 'jdk.management/com.sun.management.internal']
          .flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]),
        '-Dhazelcast.phone.home.enabled=false', '-Dhazelcast.wait.seconds.before.join=0',
        '-Dhazelcast.shutdownhook.policy=GRACEFUL', '-Dhazelcast.logging.type=jdk',
        `-Dhazelcast.local.localAddress=${address}`, `-Dhazelcast.config=${file}`,
        '-cp', jar, 'com.hazelcast.core.server.HazelcastMemberStarter',
      ], { stdio: ['ignore', out, out] });
    } finally {
      closeSync(out);
    }
    // The JVM reads its configuration at start; the file goes when the JVM does.
    const exited = once(child, 'exit').catch(() => undefined).then(() => rmSync(configDir, { recursive: true, force: true }));
    const running = () => child.exitCode === null && child.signalCode === null;
    return {
      host: name,
      address: `${address}:${HAZELCAST_PORT}`,
      pid: child.pid!,
      running,
      stop: async (timeoutMs = 10_000) => {
        if (!running()) return;
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        try {
          await exited;
        } finally {
          clearTimeout(timer);
        }
      },
      logFile,
    };
  });
  return members;
}

/**
 * How many members the member at `address` counts in its cluster, asked by a short-lived client connected to that
 * member only (no smart routing). Throws if it cannot be reached within `timeoutMs`.
 */
export async function membersSeenBy(clusterName: string, address: string, timeoutMs = 2_000): Promise<number> {
  const client = await Client.newHazelcastClient({
    clusterName,
    network: { clusterMembers: [address], smartRouting: false, connectionTimeout: timeoutMs },
    connectionStrategy: { connectionRetry: { clusterConnectTimeoutMillis: timeoutMs, initialBackoffMillis: 200, maxBackoffMillis: 500 } },
    properties: { 'hazelcast.logging.level': 'OFF' },
  });
  try {
    return client.getCluster().getMembers().length;
  } finally {
    await client.shutdown().catch(() => undefined);
  }
}

/**
 * Waits until every one of `members` counts `count` members in its cluster; fails at once, naming its log, if one of
 * them exited.
 */
export async function waitForMembers(clusterName: string, members: NetnsMember[], count: number, timeoutMs: number): Promise<void> {
  const outcome = await eventually(`${count} members seen from each of ${members.map((m) => m.address).join(', ')}`, async () => {
    const dead = members.find((m) => !m.running());
    if (dead) return { dead };
    const seen = await Promise.all(members.map((m) => membersSeenBy(clusterName, m.address).catch(() => 0)));
    if (seen.some((n) => n !== count)) throw new Error(`members seen: ${seen.join(', ')}`);
    return {};
  }, { timeoutMs, intervalMs: 200 });
  if (outcome.dead) throw new Error(`member ${outcome.dead.address} exited while starting; see ${outcome.dead.logFile}`);
}

/**
 * Starts a fixture app script (TypeScript, printing READY when booted) as a node process inside `host`'s namespace,
 * as startNodeProcess (test/harness/node-process.ts) does in the root one, and waits until it is READY.
 */
export async function startNodeIn(net: TwoSidedNetwork, host: string, script: string, name: string, env: NodeJS.ProcessEnv): Promise<NodeProcess> {
  const child = net.spawnIn(host, process.execPath, tsScriptArgs(script), {
    env: { ...process.env, ...env, NODE_NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c) => (output += String(c)));
  child.stderr?.on('data', (c) => (output += String(c)));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const exit = once(child, 'exit').catch(() => undefined);
  await eventually(`${name} to start in namespace ${net.host(host).namespace}`, () => {
    if (exited()) throw new Error(`${name} exited: ${output}`);
    return output.includes('READY');
  }, { timeoutMs: Number(process.env.APP_START_TIMEOUT_MS ?? 30_000), intervalMs: 100 });
  return {
    name,
    pid: child.pid!,
    output: () => output,
    exited,
    freeze: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    kill: async () => {
      if (exited()) return;
      child.kill('SIGKILL');
      await exit;
    },
    terminate: async () => {
      if (!exited()) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await exit;
      }
      return child.exitCode;
    },
  };
}
