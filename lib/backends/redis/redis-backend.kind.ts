import { ENV } from '../../core/env-vars';
import { redisUrlProblem } from './redis-backend.check';
import type { ServerBackendKind } from '../../store/server-backend';
import { RedisBackend } from './redis-backend';
import { describeRedisLostData, isRestartWithoutKnownLoss } from './redis-incarnation';
import type { RedisBackendOptions } from './redis-backend.options';

/**
 * The module's Redis backend, made from its `redis` option (the URL from `GATEKEEPER_REDIS_URL` when it names no
 * connection), a loss of data and an unsafe configuration reported as errors (a restart that kept every write the node
 * had seen as a warning) and its warnings as warnings, unless the option says where they go.
 */
export const REDIS_BACKEND: ServerBackendKind<RedisBackendOptions> = {
  option: 'redis',
  urlVariable: ENV.redisUrl,
  connectionFields: ['url', 'connection', 'client'],
  urlProblem: redisUrlProblem,
  withUrl: (options, url) => ({ ...options, url }),
  create: (options, reports) => new RedisBackend({
    onLostData: (report) => {
      if (isRestartWithoutKnownLoss(report)) reports.warn(describeRedisLostData(report));
      else reports.error(describeRedisLostData(report));
    },
    onWarning: (message) => reports.warn(message),
    onUnsafeConfig: (message) => reports.error(message),
    ...options,
  }),
};
