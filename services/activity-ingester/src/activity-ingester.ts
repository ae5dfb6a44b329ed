import {
  Partitioners,
  type Consumer,
  type EachBatchPayload,
  type Kafka,
  type KafkaMessage,
  type Producer,
} from 'kafkajs';
import type { Activity, ActivityStore } from '@guard/domain';
import type { Logger } from '@guard/platform';
import {
  contextOf,
  failSpan,
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingActive,
} from '@guard/platform/tracing';
import { deadLetterHeaders, parseActivityMessage, type PoisonReason } from './activity-message.js';

export const INGESTER_GROUP_ID = 'guard-activity-ingester';

export interface ActivityIngesterOptions {
  /** A client made with `kafkaLogCreator` (or silent): the ingester logs through `logger`. */
  kafka: Kafka;
  store: ActivityStore;
  logger: Logger;
  /** Default `guard.activity.v1`. */
  topic?: string;
  /** Default `<topic>.dlq`. */
  dlqTopic?: string;
  /** Default `guard-activity-ingester`. */
  groupId?: string;
  /** Messages written (and committed) per store call; a fetched batch is cut into chunks. */
  chunkSize?: number;
  /** Partitions processed at the same time by this process (kafkajs `partitionsConsumedConcurrently`). */
  partitionsConsumedConcurrently?: number;
  /**
   * How long the group waits for a member that stopped heartbeating (a killed process) before
   * giving its partitions to the others. kafkajs' default is 30 s.
   */
  sessionTimeoutMs?: number;
  /** Longest wait between retries of a failing store write, DLQ send or commit. */
  maxRetryBackoffMs?: number;
  /**
   * How long the consumer may stay out of its group (crashed, rejoining) before `live()` says
   * false and the orchestrator restarts the process. Default five minutes.
   */
  maxDownMs?: number;
}

/** Where the ingester's time goes; the benchmark prints it. Times are milliseconds. */
export interface IngesterStats {
  batches: number;
  chunks: number;
  written: number;
  poisoned: number;
  /** Store writes, DLQ sends and commits that failed and were retried. */
  retries: number;
  parseMs: number;
  writeMs: number;
  dlqMs: number;
  commitMs: number;
  /** Epoch ms of the first and the last successful store write. */
  firstWriteAt: number | null;
  lastWriteAt: number | null;
}

/**
 * The ingester role: a consumer group on the activity topic that writes each activity to the
 * ActivityStore. At-least-once, with no duplicates in the store: offsets are committed only
 * after the chunk they close was written (and its poison messages dead-lettered), and a chunk
 * delivered again after a crash writes the same rows again, by id. A failing write is retried
 * (heartbeating, so the group keeps the partition) until it succeeds, the partition is taken
 * away, or the ingester stops; nothing is skipped.
 */
export class ActivityIngester {
  readonly topic: string;
  readonly dlqTopic: string;
  readonly groupId: string;
  readonly stats: IngesterStats = {
    batches: 0,
    chunks: 0,
    written: 0,
    poisoned: 0,
    retries: 0,
    parseMs: 0,
    writeMs: 0,
    dlqMs: 0,
    commitMs: 0,
    firstWriteAt: null,
    lastWriteAt: null,
  };

  private readonly kafka: Kafka;
  private readonly store: ActivityStore;
  private readonly logger: Logger;
  private readonly chunkSize: number;
  private readonly concurrency: number;
  private readonly sessionTimeoutMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxDownMs: number;
  private readonly producer: Producer;
  private consumer: Consumer | null = null;
  /** Consumers that crashed: kafkajs has disconnected them, and they are replaced. */
  private readonly crashed = new WeakSet<Consumer>();
  private restarting = false;
  /** Since when the consumer has been out of the group (crashed, restarting); null while in it. */
  private downSince: number | null = null;
  private joined = false;
  private failing = false;
  private stopping: Promise<void> | null = null;

  constructor(options: ActivityIngesterOptions) {
    this.topic = options.topic ?? 'guard.activity.v1';
    this.dlqTopic = options.dlqTopic ?? `${this.topic}.dlq`;
    this.groupId = options.groupId ?? INGESTER_GROUP_ID;
    this.kafka = options.kafka;
    this.store = options.store;
    this.logger = options.logger.child({ component: 'activity-ingester' });
    this.chunkSize = options.chunkSize ?? 1000;
    this.concurrency = options.partitionsConsumedConcurrently ?? 4;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? 30_000;
    this.maxBackoffMs = options.maxRetryBackoffMs ?? 5_000;
    this.maxDownMs = options.maxDownMs ?? 300_000;
    this.producer = options.kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: false,
      // Dead letters keep their original key, so one org's stay in order on one partition.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  }

  /** Creates the activity and dead-letter topics where they do not exist. */
  async ensureTopics(partitions: number, replicationFactor = -1): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [this.topic, this.dlqTopic].map((topic) => ({
          topic,
          numPartitions: partitions,
          replicationFactor,
        })),
      });
    } finally {
      await admin.disconnect();
    }
  }

  /** Connects and joins the group; rejects when the broker cannot be reached at all. */
  async start(): Promise<void> {
    await this.producer.connect();
    const consumer = this.newConsumer();
    this.consumer = consumer;
    try {
      await this.run(consumer);
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Graceful stop: the batches in progress finish (each chunk written and committed), the
   * consumer leaves the group so its partitions move at once, then the connections close.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.consumer?.disconnect();
      await this.producer.disconnect();
      this.logger.info({ ...this.stats }, 'ingester stopped');
    })();
    return this.stopping;
  }

  /** Alive: not out of the consumer group for longer than `maxDownMs` (a restart may help). */
  live(): boolean {
    return this.downSince === null || Date.now() - this.downSince < this.maxDownMs;
  }

  /** Ready: in the group, not stopping, and the last store write did not fail. */
  ready(): boolean {
    return this.joined && !this.stopping && !this.failing;
  }

  private newConsumer(): Consumer {
    const consumer = this.kafka.consumer({
      groupId: this.groupId,
      sessionTimeout: this.sessionTimeoutMs,
      // A quiet topic is polled often enough that an activity lands within a fraction of a second.
      maxWaitTimeInMs: 250,
      // Topics are created by the operator or `ensureTopics`, never by a consumer's metadata call.
      allowAutoTopicCreation: false,
      // kafkajs restarts a crashed consumer from a timer whose failure is an unhandled rejection
      // and ends the restarts (a broker still down when the timer fires). The ingester restarts
      // crashed consumers itself, for as long as it runs (`restart`).
      retry: { restartOnFailure: async () => false },
    });
    const { GROUP_JOIN, CRASH } = consumer.events;
    consumer.on(GROUP_JOIN, (e) => {
      this.joined = true;
      this.downSince = null;
      this.logger.info(
        { memberId: e.payload.memberId, assignment: e.payload.memberAssignment },
        'joined the consumer group',
      );
    });
    consumer.on(CRASH, (e) => {
      this.crashed.add(consumer);
      if (consumer !== this.consumer || this.stopping) return;
      this.joined = false;
      this.downSince ??= Date.now();
      this.logger.warn({ err: e.payload.error }, 'consumer crashed; starting a new one');
      void this.restart();
    });
    return consumer;
  }

  private async run(consumer: Consumer): Promise<void> {
    await consumer.connect();
    // A new group starts at the beginning: activities produced before the first ingester ran
    // are ingested too. A known group resumes at its committed offsets.
    await consumer.subscribe({ topic: this.topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.concurrency,
      eachBatch: (payload) => this.eachBatch(payload),
    });
  }

  /** Replaces a crashed consumer, with backoff, until one runs or the ingester stops. */
  private async restart(): Promise<void> {
    if (this.restarting) return;
    this.restarting = true;
    try {
      for (let attempt = 0; !this.stopping; attempt++) {
        await sleep(Math.min(this.maxBackoffMs, 500 * 2 ** attempt));
        if (this.stopping) return;
        const consumer = this.newConsumer();
        this.consumer = consumer;
        try {
          await this.run(consumer);
        } catch (err) {
          const level = attempt >= 10 ? 'error' : 'warn';
          this.logger[level]({ err, attempt }, 'consumer could not rejoin; trying again');
          await consumer.disconnect().catch(() => undefined);
          continue;
        }
        // It may have crashed again already; then this loop goes on instead of its CRASH handler.
        if (!this.crashed.has(consumer)) {
          this.logger.info({ attempt }, 'consumer restarted');
          return;
        }
      }
    } finally {
      this.restarting = false;
    }
  }

  private async eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, isStale } = payload;
    this.stats.batches++;
    for (let i = 0; i < batch.messages.length; i += this.chunkSize) {
      // Stopping: finish the batch (each chunk is quick when the store answers). Stale: the
      // partition was taken away or sought; what is not committed is someone else's now.
      if (isStale()) return;
      const chunk = batch.messages.slice(i, i + this.chunkSize);
      if (!(await this.processChunk(payload, chunk))) return;
    }
  }

  /**
   * `writeChunk`, with a consumer span per message when tracing: each a child of the API pod's
   * producer span named in the message's headers, ended once the chunk is written and committed.
   */
  private async processChunk(payload: EachBatchPayload, chunk: KafkaMessage[]): Promise<boolean> {
    if (!tracingActive()) return this.writeChunk(payload, chunk);
    const { topic, partition } = payload.batch;
    const spans = chunk.map((message) =>
      tracer().startSpan(
        `process ${topic}`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'process',
            'messaging.destination.name': topic,
            'messaging.destination.partition.id': String(partition),
            'messaging.kafka.offset': Number(message.offset),
            'messaging.consumer.group.name': this.groupId,
          },
        },
        contextOf(message.headers),
      ),
    );
    try {
      const done = await this.writeChunk(payload, chunk);
      if (!done) {
        for (const span of spans) {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: 'not committed: read again later',
          });
        }
      }
      return done;
    } catch (err) {
      for (const span of spans) failSpan(span, err);
      throw err;
    } finally {
      for (const span of spans) span.end();
    }
  }

  /** Writes, dead-letters and commits one chunk; false when it gave up (stopping or stale). */
  private async writeChunk(payload: EachBatchPayload, chunk: KafkaMessage[]): Promise<boolean> {
    const { batch, heartbeat, resolveOffset, commitOffsetsIfNecessary } = payload;
    const { topic, partition } = batch;
    this.stats.chunks++;

    let t = performance.now();
    const valid: Activity[] = [];
    const poison: { message: KafkaMessage; reason: PoisonReason; detail: string }[] = [];
    for (const message of chunk) {
      const parsed = parseActivityMessage(message);
      if (parsed.ok) valid.push(parsed.activity);
      else poison.push({ message, reason: parsed.reason, detail: parsed.detail });
    }
    this.stats.parseMs += performance.now() - t;

    if (poison.length > 0) {
      t = performance.now();
      const failedAt = new Date();
      const sent = await this.retrying(payload, 'dead-letter', () =>
        this.producer.send({
          topic: this.dlqTopic,
          acks: -1,
          messages: poison.map(({ message, reason, detail }) => ({
            key: message.key,
            value: message.value,
            headers: deadLetterHeaders(
              message.headers,
              reason,
              detail,
              { topic, partition, offset: message.offset, timestamp: message.timestamp },
              failedAt,
            ),
          })),
        }),
      );
      this.stats.dlqMs += performance.now() - t;
      if (!sent) return false;
      this.stats.poisoned += poison.length;
      for (const p of poison) {
        this.logger.warn(
          { topic, partition, offset: p.message.offset, reason: p.reason, detail: p.detail },
          'poison message sent to the dead-letter topic',
        );
      }
    }

    if (valid.length > 0) {
      t = performance.now();
      const written = await this.retrying(payload, 'store write', () => this.store.record(valid));
      this.stats.writeMs += performance.now() - t;
      if (!written) return false;
      this.stats.written += valid.length;
      const now = Date.now();
      this.stats.firstWriteAt ??= now;
      this.stats.lastWriteAt = now;
    }

    // The committed offset is the next one to read. Committed through the batch's own call: the
    // consumer's `commitOffsets` skips the commit once a stop has begun, and a stop is exactly
    // when the last chunk's commit matters.
    const last = chunk[chunk.length - 1]!.offset;
    const next = (BigInt(last) + 1n).toString();
    t = performance.now();
    const committed = await this.retrying(payload, 'offset commit', () =>
      commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next }] }] }),
    );
    this.stats.commitMs += performance.now() - t;
    if (!committed) return false;
    resolveOffset(last);
    await heartbeatUnlessRebalancing(heartbeat);
    return true;
  }

  /**
   * Runs `step` until it succeeds, heartbeating meanwhile so a slow or failing store does not
   * cost the partition. Gives up (false) only when the partition is no longer ours or the
   * ingester is stopping: the uncommitted messages are then read again, by us or another member.
   */
  private async retrying(
    payload: EachBatchPayload,
    what: string,
    step: () => Promise<unknown>,
  ): Promise<boolean> {
    const { heartbeat, isRunning, isStale, batch } = payload;
    for (let attempt = 0; ; attempt++) {
      const beat = setInterval(() => void heartbeat().catch(() => undefined), 1_000);
      try {
        await step();
        if (attempt > 0) this.logger.info({ what, attempt }, `${what} succeeded after retrying`);
        if (what === 'store write') this.failing = false;
        return true;
      } catch (err) {
        // The group moved on: kafkajs rejoins when the error reaches it, and whoever owns the
        // partition next reads the uncommitted messages again.
        if (isRebalancing(err)) throw err;
        if (what === 'store write') this.failing = true;
        if (!isRunning() || isStale()) {
          this.logger.warn(
            { err, what, topic: batch.topic, partition: batch.partition },
            `${what} failed while stopping; the chunk will be read again`,
          );
          return false;
        }
        this.stats.retries++;
        // Warn first, error once it persists: then someone must look at the store or broker.
        const level = attempt >= 10 ? 'error' : 'warn';
        this.logger[level](
          { err, what, attempt, topic: batch.topic, partition: batch.partition },
          `${what} failed; retrying`,
        );
        await sleep(Math.min(this.maxBackoffMs, 100 * 2 ** attempt));
        await heartbeatUnlessRebalancing(heartbeat);
      } finally {
        clearInterval(beat);
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const REBALANCING = new Set([
  'REBALANCE_IN_PROGRESS',
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'FENCED_INSTANCE_ID',
]);

function isRebalancing(err: unknown): boolean {
  return REBALANCING.has((err as { type?: string } | null)?.type ?? '');
}

/** A heartbeat that fails because the broker is away is harmless; a rebalance must end the batch. */
async function heartbeatUnlessRebalancing(heartbeat: () => Promise<void>): Promise<void> {
  try {
    await heartbeat();
  } catch (err) {
    if (isRebalancing(err)) throw err;
  }
}
