import { Logger } from '@nestjs/common';
import type { GatekeeperService } from 'nestjs-gatekeeper';

const logger = new Logger('Jobs');

/** One line per run, saying which node ran which job under which fencing token (the e2e test reads these). */
export function logRun(gatekeeper: GatekeeperService, job: string, detail = ''): void {
  const permit = gatekeeper.currentPermit();
  const tick = Math.floor(Date.now() / 1000);
  logger.log(
    `ran ${job} on ${gatekeeper.identity.acquirer} (group ${gatekeeper.identity.group}, fencing token ${permit?.fencingToken}, tick ${tick})${detail}`,
  );
}
