/**
 * A response as the admin routes set headers on it: Express's `Response` and Fastify's `FastifyReply` both have
 * `header(name, value)`; a bare `http.ServerResponse` has `setHeader`.
 */
export interface HeaderTarget {
  header?(name: string, value: string): unknown;
  setHeader?(name: string, value: string): unknown;
}

/** Sets a header on an Express or a Fastify response alike. */
export function setResponseHeader(response: HeaderTarget, name: string, value: string): void {
  if (typeof response.header === 'function') response.header(name, value);
  else response.setHeader?.(name, value);
}
