// The console's one way to the admin API: same origin, the session cookie, the console's header on every call.
import type { RefusalBody } from './console-api.types';

/** The page's meta tag names where the admin routes are (`<admin path>` under the app's prefixes). */
export const base = document.querySelector<HTMLMetaElement>('meta[name="gatekeeper-base"]')?.content ?? '';

/** A call that failed: its status and body, or `network` when the app gave no answer at all. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: RefusalBody,
    readonly network = false,
  ) {
    super(message);
  }
}

/** Browser clock minus the server's, from each answer's Date header: countdowns use the server's time. */
let skewMs = 0;
/** The server's time now, as far as the Date headers tell (to a second). */
export const serverNow = (): number => Date.now() - skewMs;

/** Called when a call answers 401 or 403: the page asks for the token again. */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

/** Calls the admin API at `path` (under {@link base}) and answers its JSON; a refusal or no answer throws {@link ApiError}. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(base + path, {
      method,
      credentials: 'same-origin',
      headers: { 'x-gatekeeper-console': '1', ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (error) {
    // No answer at all: the app is down, or the network between.
    throw new ApiError(`no answer from the app (${(error as Error).message})`, undefined, undefined, true);
  }
  const date = response.headers.get('date');
  if (date) skewMs = Date.now() - Date.parse(date);
  const text = await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = { message: text.slice(0, 200) };
  }
  if (response.status === 401 || response.status === 403) {
    onSignedOut();
    throw new ApiError('not signed in', response.status);
  }
  if (!response.ok) {
    const refusal = (data ?? {}) as RefusalBody;
    throw new ApiError(refusal.message || `${method} ${path}: ${response.status}`, response.status, refusal);
  }
  return data as T;
}

/** What a caught error says, whatever was thrown. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The reason code of a refusal (`PAUSED`, `REVISION_CONFLICT`, …), or `''`. */
export const reasonOf = (error: unknown): string => (error instanceof ApiError && error.body?.reason) || '';

/** A failure that means the store (503) or the app (no answer) cannot be reached, not a refusal of one call. */
export const isOutage = (error: unknown): error is ApiError => error instanceof ApiError && (error.network || error.status === 503);
