/**
 * A connection string or URL (PostgreSQL, Redis) without its password, for messages. Text that is no URL (a typo
 * such as `postgress//user:secret@host/db`) is shown as it is, with what looks like a password masked the same way.
 */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/([^\s:/@]*):[^\s@/]*@/, '$1:***@');
  }
}
