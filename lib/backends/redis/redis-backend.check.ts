import { nameProblem } from '../../core/names';
import { invalidOption } from '../../core/errors/input.errors';
import { redactedUrl } from '../../core/redacted-url';
import type { RedisBackendOptions } from './redis-backend.options';

/**
 * The Redis backend's options checked before anything connects, each problem named by its option: one of `client`,
 * `url` or `connection`; a map prefix that is a valid name without braces (it is the keys' hash tag); a whole number
 * of replicas to wait for, and none on a Redis Cluster client. Returns the prefix and the replica count to use.
 */
export function checkRedisOptions(options: RedisBackendOptions): { mapPrefix: string; minReplicas: number } {
  if (!options.client && options.url === undefined && options.connection === undefined) {
    throw invalidOption('redis', 'give client, url or connection');
  }
  const urlIssue = options.url === undefined ? undefined : redisUrlProblem(options.url);
  if (urlIssue !== undefined) throw invalidOption('redis.url', urlIssue);
  const mapPrefix = options.mapPrefix ?? 'gatekeeper';
  const prefixProblem = nameProblem(mapPrefix) ?? (/[{}]/.test(mapPrefix) ? `must be without { or }, got ${JSON.stringify(mapPrefix)}` : undefined);
  if (prefixProblem !== undefined) throw invalidOption('redis.mapPrefix', prefixProblem);
  const minReplicas = options.minReplicas ?? 0;
  if (!Number.isInteger(minReplicas) || minReplicas < 0) throw invalidOption('redis.minReplicas', `must be a whole number of replicas, 0 or more, got ${JSON.stringify(options.minReplicas)}`);
  if (minReplicas > 0 && (options.client as { isCluster?: boolean } | undefined)?.isCluster) {
    // WAIT counts the replicas of the node it is sent to; a Cluster client sends it to any node.
    throw invalidOption('redis.minReplicas', 'is not supported on a Redis Cluster client (WAIT would reach a node other than the one written); use 0');
  }
  return { mapPrefix, minReplicas };
}

/**
 * Why `url` cannot be a Redis URL, or `undefined`: `redis://` or `rediss://`, a socket path (starting with `/`), or
 * `host:port`. Anything else, ioredis reads as something else (`redis//user:pw@cache:6379` as a socket on a host
 * called `redis`), so it is refused here, shown without its password.
 */
export function redisUrlProblem(url: string): string | undefined {
  const text = url.trim();
  if (/^rediss?:\/\//i.test(text) || text.startsWith('/') || /^[^\s:/@]+:\d+$/.test(text)) return undefined;
  return `must be a URL such as redis://user:password@host:6379/0 (rediss:// for TLS, or a socket path starting with /), got ${JSON.stringify(redactedUrl(text))}`;
}
