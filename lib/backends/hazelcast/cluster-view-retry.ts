import type { Client } from 'hazelcast-client';

const GUARDED = Symbol.for('nestjs-gatekeeper.clusterViewRetry');

interface ClusterViewListenerService {
  tryRegisterToRandomConnection(oldConnection: unknown): void;
  [GUARDED]?: true;
}

/**
 * Keeps the client's cluster-view listener from starving the event loop (Node client 5.6/5.7). When a connection
 * closes, the client registers that listener on another connection at random; if the registration fails, it tries
 * again at once, in the same microtask chain. A connection whose socket was reset but whose `close` event Node has
 * not yet delivered is still registered and fails every write immediately, so when the resets of two connections
 * arrive together (a proxy or firewall resetting them, every member gone with refused reconnects) the client retries
 * on it for ever: the `close` that would remove it never runs, and the process spins until it runs out of memory.
 * Each retry is put off to the next turn of the event loop, which delivers the pending `close` first. Internal to the
 * client, so looked up, not assumed: a client without it is left as it is.
 */
export function yieldClusterViewRetries(client: Client): void {
  const service = (client as unknown as { clusterViewListenerService?: Partial<ClusterViewListenerService> }).clusterViewListenerService;
  const retry = service?.tryRegisterToRandomConnection;
  if (!service || typeof retry !== 'function' || service[GUARDED]) return;
  service[GUARDED] = true;
  service.tryRegisterToRandomConnection = (oldConnection: unknown) => {
    setImmediate(() => retry.call(service, oldConnection));
  };
}
