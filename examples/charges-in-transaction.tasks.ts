import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TaskHandler, type TaskContext } from 'nestjs-gatekeeper';
import { typeormExecutor } from 'nestjs-gatekeeper/fencing';

@Injectable()
export class ChargeTasks {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The charge and the task's completion commit together, fenced by the claim (PostgreSQL backend, same database): a
   * run whose claim was lost meanwhile commits nothing, and the task runs again elsewhere. Charged exactly once.
   */
  @TaskHandler('charge')
  async charge(data: { invoice: string }, context: TaskContext): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('INSERT INTO charges (invoice) VALUES ($1)', [data.invoice]);
      await context.completeIn(typeormExecutor(manager), { charged: data.invoice });
    });
  }
}
