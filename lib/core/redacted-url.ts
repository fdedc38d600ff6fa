/**
 * A connection string or URL (PostgreSQL, Redis) without its password, for messages. Text that is no URL (a typo
 * such as `postgress//user:secret@host/db`, a keyword string `host=db password=secret`) is shown as it is, with what
 * looks like a password masked the same way.
 */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    // user:secret@ of a URL mistyped, and libpq's password=secret of a keyword string.
    return url.replace(/([^\s:/@]*):[^\s@/]*@/, '$1:***@').replace(/(password\s*=\s*)('[^']*'|\S+)/gi, '$1***');
  }
}
