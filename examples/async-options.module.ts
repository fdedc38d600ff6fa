import { Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { GatekeeperModule } from 'nestjs-gatekeeper';

const SITES = ['production', 'dr-site'];

/** This node's site, checked: a missing or mistyped SITE stops start-up instead of leaving the node in a group where nothing runs. */
function site(config: ConfigService): string {
  const value = config.getOrThrow<string>('SITE');
  if (!SITES.includes(value)) throw new Error(`SITE must be one of ${SITES.join(', ')}, got "${value}"`);
  return value;
}

@Module({
  imports: [
    ConfigModule.forRoot(),
    GatekeeperModule.forRootAsync({
      imports: [ConfigModule],
      inject: [ConfigService],
      useFactory: (config: ConfigService) => ({
        // getOrThrow names a missing variable; the cluster comes from GATEKEEPER_HZ_MEMBERS / GATEKEEPER_HZ_CLUSTER_NAME.
        identity: { group: site(config), acquirer: config.getOrThrow<string>('POD_NAME') },
        definitionsPolicy: 'keep',
        autoDefine: false,
        definitions: [{ name: 'billing', duration: '1m', groupPattern: 'production' }],
      }),
    }),
  ],
})
export class AppModule {}
