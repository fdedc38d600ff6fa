// A stand-in for @nestjs/config, so the async example compiles without it.
import { Injectable, Module } from '@nestjs/common';

@Injectable()
export class ConfigService {
  get(key: string): string {
    return process.env[key] ?? '';
  }
}

@Module({ providers: [ConfigService], exports: [ConfigService] })
export class ConfigModule {}
