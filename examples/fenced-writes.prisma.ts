import type { PermitLease } from 'nestjs-gatekeeper';
import { fence, prismaExecutor, type PrismaQueryable } from 'nestjs-gatekeeper/fencing';

/** The part of your generated PrismaClient this example uses (your client has it, with your models). */
interface InvoiceClient {
  $transaction<T>(fn: (tx: PrismaQueryable & InvoiceModel) => Promise<T>): Promise<T>;
}
interface InvoiceModel {
  invoice: { updateMany(args: { where: { status: string }; data: { status: string } }): Promise<unknown> };
}

/** Prisma: the tx of an interactive transaction, and its database's dialect. */
export async function chargeWithPrisma(prisma: InvoiceClient, lease: PermitLease): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await fence(prismaExecutor(tx, 'postgres'), 'invoices', lease);
    await tx.invoice.updateMany({ where: { status: 'due' }, data: { status: 'charged' } });
  });
}
