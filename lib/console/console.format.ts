// How the console writes times: time left, durations, "5 s ago", and instants always with their zone, the
// browser's own (with the offset of that instant, so a daylight-saving change shows) or UTC, as chosen in the
// header and kept in this browser.
import { serverNow } from './console.api';

/**
 * A fencing token as people read it: its digits in threes, a thin space between (where a narrow cell may wrap),
 * `1 795 827 936 504 000`. The attribute `title` of its cell keeps it whole for copying (`tokenCell`).
 */
export const token = (value: number | string): string => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009');

/** Time left: `expired`, `12 s`, `3 min 5 s`. */
export const seconds = (ms: number): string => (ms <= 0 ? 'expired' : ms < 60000 ? `${Math.ceil(ms / 1000)} s` : `${Math.floor(ms / 60000)} min ${Math.ceil((ms % 60000) / 1000)} s`);

/** A duration as the admin API takes it back: `1h`, `30m`, `15s`, `250ms`. */
export const duration = (ms: number): string => (ms % 3600000 === 0 ? `${ms / 3600000}h` : ms % 60000 === 0 ? `${ms / 60000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** How long a run took: `-`, `250 ms`, `1.5 s`. */
export const took = (ms: number | undefined): string => (ms === undefined ? '-' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

// The server's time is known to a second (its Date header), so nothing closer than that is told apart.
/** `just now`, `5 s ago`. */
export const ago = (ms: number): string => (serverNow() - ms < 1000 ? 'just now' : `${seconds(serverNow() - ms)} ago`);
/** `now`, `in 2 s`. */
export const until = (ms: number): string => (ms - serverNow() < 1000 ? 'now' : `in ${seconds(ms - serverNow())}`);

const ZONE_KEY = 'gatekeeper-console-zone';
const pad = (n: number): string => String(n).padStart(2, '0');

function savedUtc(): boolean {
  try {
    return localStorage.getItem(ZONE_KEY) === 'utc';
  } catch {
    return false;
  }
}

/** The zone instants are shown in, and how they are written. */
export const times: {
  utc: boolean;
  choose(utc: boolean): void;
  zone(ms: number, utc?: boolean): string;
  parts(ms: number): { date: string; time: string };
  at(ms: number | undefined): string;
  clock(ms: number | undefined): string;
} = {
  /** Whether instants show in UTC (else in the browser's zone). */
  utc: savedUtc(),

  /** Shows instants in UTC or in the browser's zone from now on, and keeps the choice in this browser. */
  choose(utc: boolean): void {
    times.utc = utc;
    try {
      localStorage.setItem(ZONE_KEY, utc ? 'utc' : 'local');
    } catch {
      // not kept: this page shows it all the same
    }
  },

  /** `UTC` or `UTC+01:00`: the zone an instant is shown in. */
  zone(ms: number, utc = times.utc): string {
    if (utc) return 'UTC';
    const offset = -new Date(ms).getTimezoneOffset();
    return `UTC${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  },

  parts(ms: number): { date: string; time: string } {
    const d = new Date(ms);
    const u = times.utc;
    return {
      date: `${u ? d.getUTCFullYear() : d.getFullYear()}-${pad((u ? d.getUTCMonth() : d.getMonth()) + 1)}-${pad(u ? d.getUTCDate() : d.getDate())}`,
      time: `${pad(u ? d.getUTCHours() : d.getHours())}:${pad(u ? d.getUTCMinutes() : d.getMinutes())}:${pad(u ? d.getUTCSeconds() : d.getSeconds())}`,
    };
  },

  /** Date, time and zone: `2025-03-30 02:30:00 UTC+02:00`. */
  at(ms: number | undefined): string {
    if (ms === undefined || ms === null) return '-';
    const { date, time } = times.parts(ms);
    return `${date} ${time} ${times.zone(ms)}`;
  },

  /** Time and zone when on today's date (in the zone shown), else as {@link times.at}: what a table cell shows. */
  clock(ms: number | undefined): string {
    if (ms === undefined || ms === null) return '-';
    const { date, time } = times.parts(ms);
    return date === times.parts(serverNow()).date ? `${time} ${times.zone(ms)}` : times.at(ms);
  },
};
