import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TaskService } from 'nestjs-gatekeeper';
import { typeormExecutor } from 'nestjs-gatekeeper/fencing';

@Injectable()
export class OrderService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly tasks: TaskService,
  ) {}

  /** The order and its shipping task commit together, or neither does (PostgreSQL backend, same database). */
  async place(id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query('INSERT INTO orders (id) VALUES ($1)', [id]);
      await this.tasks.submit({ type: 'ship', name: id, data: { order: id } }, { transaction: typeormExecutor(manager) });
    });
  }
}
