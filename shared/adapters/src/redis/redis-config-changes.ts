import type { Redis } from 'ioredis';
import type { ConfigChanges } from '@guard/domain';
import type { Logger } from '@guard/platform';

export const CONFIG_CHANGES_CHANNEL = 'guard:config:changes';

/**
 * Notice of changes to orgs, keys and policies across pods, over Redis pub/sub: a pod that writes
 * one publishes on one channel (`announce`, wired to the stores by `announceWrites`), and every
 * pod counts what it hears; the caches of the request path drop what they hold when the count
 * moves (ConfigChanges). Delivery takes milliseconds, so a key revoked on one pod stops working on
 * all of them at once. A pod that lost its subscription (Redis restarted) cannot know what it
 * missed, so getting it back counts as a change too; while Redis is away the caches' TTL bounds
 * how stale a pod can be.
 */
export class RedisConfigChanges implements ConfigChanges {
  private count = 0;

  /**
   * @param subscriber a connection of its own: once subscribed, it can do nothing else.
   * @param publisher any command connection.
   */
  constructor(
    private readonly subscriber: Redis,
    private readonly publisher: Redis,
    private readonly logger?: Logger,
    private readonly channel = CONFIG_CHANGES_CHANNEL,
  ) {
    subscriber.on('message', (channel: string) => {
      if (channel === this.channel) this.count++;
    });
    // ioredis subscribes again by itself after a reconnect; whatever was sent meanwhile is lost.
    subscriber.on('ready', () => {
      this.count++;
    });
  }

  async start(): Promise<void> {
    if (this.subscriber.status === 'wait') await this.subscriber.connect();
    await this.subscriber.subscribe(this.channel);
  }

  version(): number {
    return this.count;
  }

  /** Tells every pod (this one included) that something changed. Never throws. */
  announce(): void {
    this.publisher.publish(this.channel, '1').catch((err: unknown) => {
      this.logger?.warn(
        { err },
        'could not announce a config change; other pods see it within their cache TTL',
      );
    });
  }
}
