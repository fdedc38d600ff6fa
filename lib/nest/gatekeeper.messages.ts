import { permitMessages } from '../permits/permits.messages';
import { formatDuration } from '../core/duration';
import type { Holder } from '../permits/permit';

/** The cluster a node connects to, as its start-up lines name it. */
interface ClusterTarget {
  clusterName: string;
  members: string[];
}

/** Log and error texts, in one place (the permits' own are `permitMessages`). */
export const messages = {
  durationBelowSkew: permitMessages.durationBelowSkew,
  connecting: (target: ClusterTarget, timeoutMs: number | undefined) =>
    `Connecting to Hazelcast cluster "${target.clusterName}" at ${target.members.join(', ')}` +
    (timeoutMs === undefined ? '' : ` (start-up fails if it is not reachable within ${formatDuration(timeoutMs)}; connectTimeout)`),
  stillConnecting: (target: ClusterTarget, elapsedMs: number, timeoutMs: number | undefined) =>
    `Still waiting for Hazelcast cluster "${target.clusterName}" at ${target.members.join(', ')} after ${formatDuration(Math.round(elapsedMs / 1000) * 1000)}` +
    (timeoutMs === undefined
      ? ': every permit is denied until it is reached'
      : `; start-up fails in ${formatDuration(Math.max(1, Math.round((timeoutMs - elapsedMs) / 1000)) * 1000)}`),
  waitingForServer: (server: { name: string; address: string; source: string }, timeoutMs: number) =>
    `Waiting for ${server.name} at ${server.address} (from ${server.source}), up to ${formatDuration(timeoutMs)} (connectTimeout)`,
  stillWaitingForServer: (server: { name: string; address: string }, elapsedMs: number, timeoutMs: number, detail: string) =>
    `Still waiting for ${server.name} at ${server.address} (${formatDuration(Math.round(elapsedMs / 1000) * 1000)} of ${formatDuration(timeoutMs)}): ${detail}`,
  serverUnreachable: (server: { name: string; address: string; source: string }, failure: { kind: string; detail: string }, timeoutMs: number) => {
    const at = `${server.name} at ${server.address} (from ${server.source})`;
    if (failure.kind === 'refused-login') return `${at} refused the login: ${failure.detail}. Correct the user or password in ${server.source}`;
    if (failure.kind === 'missing-database') return `${at} has no such database: ${failure.detail}. Create it, or correct the database in ${server.source}`;
    return `Cannot reach ${at} within ${formatDuration(timeoutMs)}: ${failure.detail}. Start the server or correct the address in ${server.source}; `
      + 'to wait longer, raise connectTimeout; to boot now and deny every permit until connected, set connectInBackground: true';
  },
  connectingInBackground: (target: ClusterTarget | undefined) =>
    `Starting without waiting for the cluster (connectInBackground)${target ? `: connecting to Hazelcast cluster "${target.clusterName}" at ${target.members.join(', ')}` : ''}; ` +
    'every permit is denied (NOT_READY) until connected',
  backgroundStartFailed: (error: unknown) =>
    `Background start failed, every permit stays denied: ${(error as Error).message ?? String(error)}`,
  connected: (kind: string, holder: Holder) =>
    `Connected to the ${kind} store as ${holder.acquirer} (group ${holder.group}, instance ${holder.instance})`,
  storeClockImprecise: (kind: string, aheadMs: number, skewMs: number) =>
    `The ${kind} server's clock took ${formatDuration(Math.ceil(aheadMs))} to read, more than maxClockSkew (${formatDuration(skewMs)}): this node counts the server's time up to that much ahead (never behind), so its permits may end that much early; a slow link or a busy start, read again every 15 s`,
  adminMounted: (base: string, console: boolean) =>
    console
      ? `Admin API at ${base}, web console at ${base}/console`
      : `Admin API at ${base}; the web console is off (admin: { console: true } serves it at ${base}/console)`,
  consoleOff: (base: string) => `The web console is off: admin: { console: true } in GatekeeperModule's options serves it here (${base}/console)`,
} as const;
