import { bigint, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** The fence table in your Drizzle schema (PostgreSQL), so `drizzle-kit generate` puts it in your migrations. */
export const gatekeeperFences = pgTable('gatekeeper_fences', {
  resource: text('resource').primaryKey(),
  token: bigint('token', { mode: 'number' }).notNull(),
  fencedAt: timestamp('fenced_at', { withTimezone: true }).notNull().defaultNow(),
});
