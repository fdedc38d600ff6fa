import { Logger } from '@nestjs/common';
import type { GatekeeperService } from 'nestjs-gatekeeper';

const logger = new Logger('Jobs');

/**
 * One line per run, saying which node ran which job under which fencing token (the e2e test reads these): the
 * running permit's, or the one given (a leader's epoch).
 */
export function logRun(gatekeeper: GatekeeperService, job: string, detail = '', token = gatekeeper.currentPermit()?.fencingToken): void {
  const tick = Math.floor(Date.now() / 1000);
  logger.log(`ran ${job} on ${gatekeeper.identity.acquirer} (group ${gatekeeper.identity.group}, fencing token ${token}, tick ${tick})${detail}`);
}
