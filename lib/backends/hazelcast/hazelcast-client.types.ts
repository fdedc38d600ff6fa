/**
 * The hazelcast-client types the module's options and the CLI name, re-exported from the one folder that imports the
 * client: the rest of the library names them through here, and never loads the client for them.
 */
export type { Client, ClientConfig, ILogger } from 'hazelcast-client';
