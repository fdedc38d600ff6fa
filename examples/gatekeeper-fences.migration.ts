import type { MigrationInterface, QueryRunner } from 'typeorm';
import { fenceTableSql } from 'nestjs-gatekeeper/fencing';

/** A TypeORM migration of yours that creates the fence table (`npx typeorm migration:run` runs it with the others). */
export class GatekeeperFences1764230400000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(fenceTableSql(queryRunner.connection.options.type === 'postgres' ? 'postgres' : 'mysql'));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE gatekeeper_fences');
  }
}
