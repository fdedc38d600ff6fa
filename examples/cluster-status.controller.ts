import { Controller, Get } from '@nestjs/common';
import { ClusterService } from 'nestjs-gatekeeper';

@Controller('cluster')
export class ClusterStatusController {
  constructor(private readonly cluster: ClusterService) {}

  /** Who is here: every live app instance (not Hazelcast members), from this node's view, with no round trip. */
  @Get('participants')
  participants() {
    return this.cluster.participants().map(({ acquirer, group, instance, startedAt, version }) => ({
      acquirer, group, instance, version, upSeconds: Math.round((Date.now() - startedAt) / 1000),
    }));
  }

  /** The seed's cluster status: am I the leader, who is, who is here (needs an election, e.g. elections: ['leader']). */
  @Get('status')
  status() {
    const { current, leader, isLeader, epoch, participants } = this.cluster.status();
    return { me: current?.acquirer, isLeader, leader: leader?.acquirer, epoch, participants: participants.map((p) => p.acquirer) };
  }
}
