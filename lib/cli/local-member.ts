import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV } from '../core/env-vars';
import { GatekeeperError } from '../core/errors/gatekeeper.error';

/*
 * A local Hazelcast member from the installed package: the open-source member jar downloaded once from Maven
 * Central (checked against its published SHA-1) into a cache directory, run with the JDK on the PATH. For local
 * development only: one member on loopback.
 */

/** The member version the library is tested against. */
export const DEFAULT_HAZELCAST_VERSION = '5.6.0';
const MAVEN_CENTRAL = 'https://repo1.maven.org/maven2';
const MAIN_CLASS = 'com.hazelcast.core.server.HazelcastMemberStarter';
const HOST = '127.0.0.1';

/** Where the jar comes from and goes. */
export interface JarSource {
  readonly version: string;
  /** A Maven repository's base URL (`GATEKEEPER_MAVEN_REPOSITORY`, else Maven Central). */
  readonly repository: string;
  /** Where jars are kept between runs (`GATEKEEPER_CACHE_DIR`, else `$XDG_CACHE_HOME/nestjs-gatekeeper`, else `~/.cache/nestjs-gatekeeper`). */
  readonly cacheDir: string;
}

/** The jar source from the environment, with the defaults above. */
export function jarSourceFromEnv(env: NodeJS.ProcessEnv, version = env[ENV.hzVersion] || DEFAULT_HAZELCAST_VERSION): JarSource {
  const cacheDir = env[ENV.cacheDir] || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'nestjs-gatekeeper');
  return { version, repository: (env[ENV.mavenRepository] || MAVEN_CENTRAL).replace(/\/+$/, ''), cacheDir };
}

/** A local member could not be fetched or started; the message says what to do instead. */
export class LocalMemberError extends GatekeeperError {}

const VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;
const DOWNLOAD_TIMEOUT_MS = 300_000;

/**
 * The member jar's path, downloaded and checked first if it is not cached. The jar's SHA-1 is kept beside it and
 * checked again on every start, so a cached jar that was cut short or altered is fetched anew.
 */
export async function memberJar(source: JarSource, log: (line: string) => void): Promise<string> {
  if (!VERSION.test(source.version)) throw new LocalMemberError(`GATEKEEPER_HZ_VERSION: '${source.version}' is not a version such as ${DEFAULT_HAZELCAST_VERSION}`);
  const jar = join(source.cacheDir, `hazelcast-${source.version}.jar`);
  const [cached, recorded] = await Promise.all([readFile(jar).catch(() => undefined), readFile(`${jar}.sha1`, 'utf8').catch(() => undefined)]);
  if (cached && recorded && sha1Of(cached) === recorded.trim()) return jar;
  const url = `${source.repository}/com/hazelcast/hazelcast/${source.version}/hazelcast-${source.version}.jar`;
  log(`Downloading ${url} (once; kept in ${source.cacheDir})`);
  const [body, sha1] = await Promise.all([download(url), download(`${url}.sha1`)]);
  const expected = sha1.toString('utf8').trim().split(/\s+/)[0].toLowerCase();
  const actual = sha1Of(body);
  if (actual !== expected) throw new LocalMemberError(`${url}: SHA-1 is ${actual}, but the repository publishes ${expected}; nothing was kept`);
  await mkdir(source.cacheDir, { recursive: true });
  const partial = `${jar}.${process.pid}.partial`;
  try {
    await writeFile(partial, body);
    await rename(partial, jar); // atomic: a concurrent run sees the whole jar or none
    await writeFile(`${jar}.sha1`, `${actual}\n`);
  } finally {
    await rm(partial, { force: true });
  }
  return jar;
}

function sha1Of(bytes: Buffer): string {
  return createHash('sha1').update(bytes).digest('hex');
}

/** Whether nothing listens on 127.0.0.1:`port` (a member already there would be joined, not started). */
export async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

async function download(url: string): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (error) {
    throw new LocalMemberError(`cannot download ${url}: ${(error as Error).message} (set GATEKEEPER_MAVEN_REPOSITORY to a reachable Maven mirror)`, { cause: error });
  }
  if (!response.ok) throw new LocalMemberError(`cannot download ${url}: HTTP ${response.status} (check GATEKEEPER_HZ_VERSION and GATEKEEPER_MAVEN_REPOSITORY)`);
  return Buffer.from(await response.arrayBuffer());
}

/** A running local member. */
export interface LocalMember {
  readonly address: string;
  readonly process: ChildProcess;
  /** Resolves with the exit code once the JVM is gone. */
  readonly exited: Promise<number | null>;
  /** Stops it gracefully (SIGTERM runs Hazelcast's shutdown hook), killing it after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<number | null>;
  /** The last lines of its log, for an error message. */
  logTail(): Promise<string>;
}

/** Starts one member on 127.0.0.1:`port` in cluster `clusterName`; does not wait until it accepts clients. */
export async function startLocalMember(jar: string, { port, clusterName }: { port: number; clusterName: string }): Promise<LocalMember> {
  const dir = await mkdtemp(join(tmpdir(), 'nestjs-gatekeeper-member-'));
  const config = join(dir, 'hazelcast.yaml');
  const logFile = join(dir, 'member.log');
  // JSON strings are valid YAML scalars: no quoting bugs.
  await writeFile(config, [
    'hazelcast:',
    `  cluster-name: ${JSON.stringify(clusterName)}`,
    '  network:',
    `    port: { port: ${port}, auto-increment: false }`,
    '    join:',
    '      auto-detection: { enabled: false }',
    '      multicast: { enabled: false }',
    `      tcp-ip: { enabled: true, member-list: [${JSON.stringify(`${HOST}:${port}`)}] }`,
    '',
  ].join('\n'));
  const java = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    // Its own process group: a Ctrl-C in the terminal reaches this CLI, which stops the member in order.
    child = spawn(java, [
      '-Xmx512m', '-Dhazelcast.phone.home.enabled=false', '-Dhazelcast.shutdownhook.policy=GRACEFUL',
      '-Dhazelcast.socket.bind.any=false', `-Dhazelcast.local.localAddress=${HOST}`,
      '--add-modules', 'java.se', '--add-exports', 'java.base/jdk.internal.ref=ALL-UNNAMED',
      ...['java.base/java.lang', 'java.base/sun.nio.ch', 'java.management/sun.management', 'jdk.management/com.sun.management.internal']
        .flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]),
      `-Dhazelcast.config=${config}`, '-cp', jar, MAIN_CLASS,
    ], { stdio: ['ignore', out, out], detached: true });
  } finally {
    closeSync(out);
  }
  try {
    await once(child, 'spawn');
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new LocalMemberError(
      `cannot run "${java}" (${(error as Error).message}): a local member needs a Java 17+ runtime on the PATH or in JAVA_HOME. ` +
        `Without Java, run the official image instead: docker run --rm -p ${port}:5701 -e HZ_CLUSTERNAME=${clusterName} hazelcast/hazelcast:${DEFAULT_HAZELCAST_VERSION}`,
      { cause: error },
    );
  }
  const tail = async () => (await readFile(logFile, 'utf8').catch(() => '')).trimEnd().split('\n')
    .filter((l) => !/^\s+(at |\.\.\. \d+ more)/.test(l)).slice(-8).map((l) => `    ${l}`).join('\n');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let logged = '';
  const cleaned = exited.then(async (code) => {
    logged = await tail();
    await rm(dir, { recursive: true, force: true });
    return code;
  });
  const onExit = () => child.kill('SIGKILL'); // never leave a JVM behind if this process exits
  process.once('exit', onExit);
  void cleaned.then(() => process.removeListener('exit', onExit));
  return {
    address: `${HOST}:${port}`,
    process: child,
    exited: cleaned,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await cleaned;
      } finally {
        clearTimeout(timer);
      }
    },
    async logTail() {
      return child.exitCode === null && child.signalCode === null ? tail() : (await cleaned, logged);
    },
  };
}
