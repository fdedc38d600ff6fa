import type { ILogger } from 'hazelcast-client';

/** What the client logs when a member answered but refused its authentication (another cluster name, credentials). */
const REFUSED = /Error during initial connection to (\S+) .*cluster name on the client does not match/;

/**
 * The client's logger as it is, also telling `refused` the address of every member that answered but refused this
 * client: the client logs it as a warning among its connection attempts, and fails only with "unable to connect".
 */
export function refusalTap(logger: ILogger, refused: (address: string) => void): ILogger {
  const heard = (message: unknown) => {
    const found = typeof message === 'string' ? REFUSED.exec(message) : null;
    if (found) refused(found[1]);
  };
  return {
    log: (level, objectName, message, furtherInfo) => {
      heard(message);
      logger.log(level, objectName, message, furtherInfo);
    },
    error: (objectName, message, furtherInfo) => logger.error(objectName, message, furtherInfo),
    warn: (objectName, message, furtherInfo) => {
      heard(message);
      logger.warn(objectName, message, furtherInfo);
    },
    info: (objectName, message, furtherInfo) => logger.info(objectName, message, furtherInfo),
    debug: (objectName, message, furtherInfo) => logger.debug(objectName, message, furtherInfo),
    trace: (objectName, message, furtherInfo) => logger.trace(objectName, message, furtherInfo),
  };
}
