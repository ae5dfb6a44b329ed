import type { Admin, Kafka } from 'kafkajs';

/** Per partition: the topic's end offset and the group's committed offset (`-1`: none yet). */
export interface PartitionOffsets {
  partition: number;
  high: string;
  low: string;
  committed: string | undefined;
}

/**
 * Messages in the topic the group has not committed yet, summed over partitions. A partition the
 * group never committed counts from its first retained message.
 */
export function lagOf(partitions: PartitionOffsets[]): number {
  let lag = 0;
  for (const p of partitions) {
    const high = Number(p.high);
    const committed = Number(p.committed ?? '-1');
    const from = committed < 0 ? Number(p.low) : committed;
    lag += Math.max(0, high - from);
  }
  return lag;
}

// A scrape every few seconds from several Prometheus replicas should not each ask the brokers.
const CACHE_MS = 5000;

/**
 * The consumer group's lag on its topic, asked of the brokers (admin offsets) when scraped, at
 * most once every few seconds. The admin client connects on first use.
 */
export class ConsumerLag {
  private admin: Admin | null = null;
  private cached: { at: number; lag: Promise<number> } | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly topic: string,
    private readonly groupId: string,
  ) {}

  read(): Promise<number> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < CACHE_MS) return this.cached.lag;
    const lag = this.fetch();
    this.cached = { at: now, lag };
    // A failure is not kept: the next scrape asks again.
    lag.catch(() => {
      if (this.cached?.lag === lag) this.cached = null;
    });
    return lag;
  }

  async close(): Promise<void> {
    const admin = this.admin;
    this.admin = null;
    await admin?.disconnect();
  }

  private async fetch(): Promise<number> {
    if (!this.admin) {
      const admin = this.kafka.admin();
      await admin.connect();
      this.admin = admin;
    }
    const [ends, groups] = await Promise.all([
      this.admin.fetchTopicOffsets(this.topic),
      this.admin.fetchOffsets({ groupId: this.groupId, topics: [this.topic] }),
    ]);
    const committed = new Map(
      (groups.find((g) => g.topic === this.topic)?.partitions ?? []).map((p) => [
        p.partition,
        p.offset,
      ]),
    );
    return lagOf(
      ends.map((e) => ({
        partition: e.partition,
        high: e.high,
        low: e.low,
        committed: committed.get(e.partition),
      })),
    );
  }
}
