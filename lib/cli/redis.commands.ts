import type { Command } from 'commander';
import { RedisBackend } from '../backends/redis/redis-backend';
import { StoreUnavailableError } from '../core/errors/store-unavailable.error';
import { parseCliConnection, type RawCliConnectionOptions } from './cli-connection';
import { asUsageError, NothingDeclaredError } from './cli-errors';
import { redactedUrl } from '../core/redacted-url';

/**
 * Adds `redis init`: declares a prefix of a Redis that no node used yet new, so its first permits need no recovery
 * wait (a Redis found without the library's keys is otherwise taken for one that lost them).
 */
export function addRedisCommands(program: Command, print: (json: unknown, text: string) => void): void {
  const redis = program.command('redis').description('the Redis backend: a new deployment');
  redis
    .command('init')
    .description(
      'declare the map prefix new on a Redis no node used yet: its semaphores are granted at once instead of waiting one permit ' +
        'duration (a Redis without the library\'s keys looks like one that restarted without its data). Run it before the first ' +
        'node starts; refused, writing nothing and exiting 1, once a node used the prefix. Needs --redis-url (or GATEKEEPER_REDIS_URL)',
    )
    .action(async () => {
      let url: string;
      let backend: RedisBackend;
      const { connectTimeout, ...raw } = program.opts<RawCliConnectionOptions>();
      try {
        const connection = parseCliConnection({ ...raw, connectTimeout, backend: 'redis' });
        url = connection.redisUrl!;
        backend = new RedisBackend({
          url,
          mapPrefix: connection.mapPrefix,
          callTimeoutMs: connection.connectTimeout,
          connection: { connectTimeout: connection.connectTimeout, connectionName: 'nestjs-gatekeeper cli' },
        });
      } catch (error) {
        throw asUsageError(error);
      }
      let declared: boolean;
      try {
        declared = await backend.declareFresh();
      } catch (error) {
        if (error instanceof StoreUnavailableError) throw new StoreUnavailableError(`cannot reach Redis at ${redactedUrl(url)}: ${error.message}`, { cause: error });
        throw error;
      }
      if (!declared) {
        throw new NothingDeclaredError(`Prefix "${backend.mapPrefix}" is in use already (or was found lost): nothing declared; `
          + 'semaphores rebuilt after a loss wait out one permit duration (exit 1: run it once, before the first node starts)');
      }
      print({ prefix: backend.mapPrefix, declared }, `Declared prefix "${backend.mapPrefix}" new: first grants need no recovery wait.`);
    });
}
