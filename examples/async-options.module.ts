import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from './config';
import { GatekeeperModule } from 'nestjs-gatekeeper';

@Module({
  imports: [
    GatekeeperModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        identity: { group: config.get('SITE'), acquirer: config.get('POD_NAME') },
        hazelcast: {
          clientConfig: { clusterName: config.get('HZ_CLUSTER'), network: { clusterMembers: config.get('HZ_MEMBERS').split(',') } },
        },
        definitionsPolicy: 'keep',
        autoDefine: false,
        definitions: [{ name: 'billing', duration: '2m', groupPattern: 'production' }],
      }),
    }),
  ],
})
export class AppModule {}
