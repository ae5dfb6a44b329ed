import { context, isSpanContextValid, propagation, trace, type Context } from '@opentelemetry/api';
import { Kafka, Partitioners, logLevel, type Message, type Producer } from 'kafkajs';
import { ACTIVITY_SCHEMA_VERSION, ActivityRecord } from '@guard/contracts';
import type { Activity, ActivitySink } from '@guard/domain';
import type { Logger } from '@guard/platform';
import { failSpan, SpanKind, tracer, tracingActive } from '@guard/platform/tracing';
import { kafkaLogCreator } from './kafka-log.js';

/** The versioned activity topic (docs/activity-stream.md). */
export const ACTIVITY_TOPIC = 'guard.activity.v1';

export interface KafkaActivitySinkOptions {
  brokers: string[];
  clientId: string;
  /** Default `guard.activity.v1`. */
  topic?: string;
  /**
   * How long the first publish of an idle sink waits for company before its batch is sent.
   * Default 0: sent once this turn of the event loop is done (what was published in it goes
   * along); under load batches grow anyway, since what arrives while a batch is in flight goes in
   * the next one. Every millisecond here is added to each answer of an idle API pod.
   */
  lingerMs?: number;
  /** Most messages in one `sendBatch`. */
  maxBatch?: number;
  /**
   * Most bytes (values, keys, headers) in one `sendBatch`. Kept under the broker's default
   * `message.max.bytes` (1 MiB), which a batch that lands on one partition must fit in.
   */
  maxBatchBytes?: number;
  /**
   * How long a batch is retried (broker down, leader moving) before its publishes reject. As the
   * Java client's `delivery.timeout.ms`.
   */
  deliveryTimeoutMs?: number;
  /** kafkajs' own log lines go here (retried states at `warn`); silent without one. */
  logger?: Logger;
}

interface Pending {
  id: string;
  message: Message;
  bytes: number;
  done: () => void;
  fail: (err: unknown) => void;
}

/** What the sink has done so far; the benchmark reads it to say where the time goes. */
export interface KafkaActivitySinkStats {
  published: number;
  batches: number;
  /** Whole batches sent again after a failed attempt (the broker gone, a leader moving). */
  retries: number;
  /** Publishes rejected: invalid activities and batches that ran out of delivery time. */
  failed: number;
  /** Wall time spent inside `sendBatch`, milliseconds. */
  sendMs: number;
  /** Time spent validating and serialising on `publish`, milliseconds. */
  encodeMs: number;
}

const SCHEMA_VERSION = String(ACTIVITY_SCHEMA_VERSION);

/**
 * Publishes activities to Kafka: key = org id (one org's activities stay in order on one
 * partition), value = the JSON of the activity as `ActivityRecord` validates it, headers
 * `schema-version`, `content-type` and the W3C trace context of the publishing call.
 *
 * The producer is idempotent with acks from all in-sync replicas, so a send retried after a lost
 * answer is not written twice. Publishes are collected while a batch is in flight (or, when the
 * sink is idle, for `lingerMs`) and sent as one `sendBatch`; `publish` resolves once the broker
 * has acknowledged its batch and rejects only when the batch could not be delivered within
 * `deliveryTimeoutMs`. One batch is in flight at a time: the idempotent producer numbers each
 * partition's batches in sequence, and a later batch must not overtake one being retried.
 */
export class KafkaActivitySink implements ActivitySink {
  readonly topic: string;
  readonly stats: KafkaActivitySinkStats = {
    published: 0,
    batches: 0,
    retries: 0,
    failed: 0,
    sendMs: 0,
    encodeMs: 0,
  };

  private readonly kafka: Kafka;
  private readonly lingerMs: number;
  private readonly maxBatch: number;
  private readonly maxBatchBytes: number;
  private readonly deliveryTimeoutMs: number;
  private readonly logger: Logger | undefined;
  private producer: Producer;
  private connected: Promise<void> | null = null;
  private pending: Pending[] = [];
  private timer: { cancel: () => void } | null = null;
  private sending: Promise<void> | null = null;
  private closed = false;

  constructor(options: KafkaActivitySinkOptions) {
    this.topic = options.topic ?? ACTIVITY_TOPIC;
    this.lingerMs = options.lingerMs ?? 0;
    this.maxBatch = options.maxBatch ?? 1000;
    this.maxBatchBytes = options.maxBatchBytes ?? 900 * 1024;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
    this.logger = options.logger;
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: options.logger ? logLevel.INFO : logLevel.NOTHING,
      ...(options.logger ? { logCreator: kafkaLogCreator(options.logger) } : {}),
      // Short, bounded retries inside kafkajs; the sink retries the whole batch until its
      // delivery time is up (see `deliver`).
      retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 5 },
    });
    this.producer = this.newProducer();
  }

  publish(activity: Activity): Promise<void> {
    if (this.closed) return Promise.reject(new Error('KafkaActivitySink is closed'));
    const t0 = performance.now();
    const parsed = ActivityRecord.safeParse(activity);
    if (!parsed.success) {
      this.stats.failed++;
      const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
      return Promise.reject(
        new Error(`activity ${activity.id} does not match ActivityRecord: ${issues.join('; ')}`),
      );
    }
    const value = JSON.stringify(parsed.data);
    // A producer span (when tracing) from now until the broker acknowledges the batch; the
    // ingester's span is its child through the headers.
    const span = tracingActive()
      ? tracer().startSpan(`send ${this.topic}`, {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.system': 'kafka',
            'messaging.operation.type': 'send',
            'messaging.destination.name': this.topic,
            'messaging.kafka.message.key': activity.org_id,
            'guard.activity_id': activity.id,
          },
        })
      : undefined;
    // Captured now, in the publishing call's context: the batch is sent later, from a timer.
    const headers: Record<string, string> = {
      'schema-version': SCHEMA_VERSION,
      'content-type': 'application/json',
      ...traceHeaders(span ? trace.setSpan(context.active(), span) : context.active()),
    };
    let bytes = Buffer.byteLength(value) + Buffer.byteLength(activity.org_id) + 64;
    for (const [k, v] of Object.entries(headers)) bytes += k.length + v.length;
    this.stats.encodeMs += performance.now() - t0;
    if (bytes > this.maxBatchBytes) {
      this.stats.failed++;
      const err = new Error(
        `activity ${activity.id} is ${bytes} bytes, over the ${this.maxBatchBytes} limit`,
      );
      if (span) {
        failSpan(span, err);
        span.end();
      }
      return Promise.reject(err);
    }
    return new Promise<void>((done, fail) => {
      this.pending.push({
        id: activity.id,
        message: { key: activity.org_id, value, headers },
        bytes,
        done: span
          ? () => {
              span.end();
              done();
            }
          : done,
        fail: span
          ? (err: unknown) => {
              failSpan(span, err);
              span.end();
              fail(err);
            }
          : fail,
      });
      this.schedule();
    });
  }

  /** Sends everything published so far and waits until each batch is acknowledged or failed. */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.sending) {
      this.startSending();
      await this.sending;
    }
  }

  /** Connects ahead of the first publish (optional: the first batch connects otherwise). */
  async connect(): Promise<void> {
    await this.ensureConnected();
  }

  /** Flushes, then disconnects; later publishes reject. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await this.producer.disconnect();
  }

  private newProducer(): Producer {
    return this.kafka.producer({
      idempotent: true,
      // kafkajs numbers an idempotent producer's batches per partition as it sends them; two
      // requests in flight on one connection could be answered out of that order.
      maxInFlightRequests: 1,
      createPartitioner: Partitioners.DefaultPartitioner,
      retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 5 },
    });
  }

  private ensureConnected(): Promise<void> {
    this.connected ??= this.producer.connect().catch((err: unknown) => {
      this.connected = null;
      throw err;
    });
    return this.connected;
  }

  private schedule(): void {
    if (this.sending) return; // the running send loop takes it next
    if (this.pending.length >= this.maxBatch) this.startSending();
    else if (!this.timer) {
      const send = () => this.startSending();
      if (this.lingerMs === 0) {
        const handle = setImmediate(send);
        this.timer = { cancel: () => clearImmediate(handle) };
      } else {
        const handle = setTimeout(send, this.lingerMs);
        this.timer = { cancel: () => clearTimeout(handle) };
      }
    }
  }

  private startSending(): void {
    if (this.timer) {
      this.timer.cancel();
      this.timer = null;
    }
    if (this.sending || this.pending.length === 0) return;
    this.sending = this.sendLoop().finally(() => {
      this.sending = null;
      if (this.pending.length > 0) this.schedule();
    });
  }

  // What arrives while a batch is in flight has waited long enough: it goes in the next batch
  // at once, so under load batches grow with the broker's answer time instead of the linger.
  private async sendLoop(): Promise<void> {
    while (this.pending.length > 0) await this.deliver(this.takeBatch());
  }

  private takeBatch(): Pending[] {
    let n = 0;
    let bytes = 0;
    while (n < this.pending.length && n < this.maxBatch) {
      bytes += this.pending[n]!.bytes;
      if (n > 0 && bytes > this.maxBatchBytes) break;
      n++;
    }
    return this.pending.splice(0, n);
  }

  private async deliver(batch: Pending[]): Promise<void> {
    const deadline = Date.now() + this.deliveryTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      const t0 = performance.now();
      try {
        await this.ensureConnected();
        // The same messages, keys and order on every attempt: the idempotent producer gives a
        // retried batch the sequence numbers of the first, so the broker drops what it already
        // has instead of writing it twice.
        await this.producer.sendBatch({
          acks: -1,
          topicMessages: [{ topic: this.topic, messages: batch.map((b) => b.message) }],
        });
        this.stats.sendMs += performance.now() - t0;
        this.stats.batches++;
        this.stats.published += batch.length;
        for (const b of batch) b.done();
        return;
      } catch (err) {
        this.stats.sendMs += performance.now() - t0;
        const retriable = isRetriable(err);
        if (retriable && Date.now() < deadline && !this.closed) {
          this.stats.retries++;
          this.logger?.warn(
            { err, attempt, messages: batch.length, topic: this.topic },
            'activity batch not acknowledged, sending it again',
          );
          await sleep(Math.min(2_000, 100 * 2 ** attempt));
          continue;
        }
        // Given up: the producer's sequence numbers no longer say what the broker holds, so a
        // fresh producer (new producer id) sends from here on.
        await this.resetProducer();
        if (!retriable && batch.length > 1) {
          // One message the broker refuses must not fail the publishes it shared a batch with.
          for (const b of batch) await this.deliver([b]);
          return;
        }
        this.stats.failed += batch.length;
        this.logger?.error(
          { err, messages: batch.length, ids: batch.slice(0, 5).map((b) => b.id) },
          'activity batch could not be delivered',
        );
        for (const b of batch) b.fail(err);
        return;
      }
    }
  }

  private async resetProducer(): Promise<void> {
    const old = this.producer;
    this.producer = this.newProducer();
    this.connected = null;
    await old.disconnect().catch(() => undefined);
  }
}

/**
 * Whether sending the same batch again may succeed. kafkajs marks an exhausted retry of a
 * transient error (the broker restarting) `retriable: false`; what counts is the error it
 * wraps. Refused for good: a message the broker will never take, a topic that is not there.
 */
function isRetriable(err: unknown): boolean {
  if (!(err instanceof Error)) return true;
  if (err.name === 'KafkaJSNumberOfRetriesExceeded') return true;
  let cause: unknown = err;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  if (err.name === 'KafkaJSNonRetriableError' && cause === err) return false;
  return (cause as { retriable?: boolean }).retriable !== false;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * W3C trace context of an OpenTelemetry context: what the configured propagator writes,
 * or, where none is registered but a span context is active, `traceparent`/`tracestate` built
 * from it. Empty when no trace is active.
 */
function traceHeaders(ctx: Context): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const out: Record<string, string> = {};
  if (carrier.traceparent) {
    out.traceparent = carrier.traceparent;
    if (carrier.tracestate) out.tracestate = carrier.tracestate;
    return out;
  }
  const span = trace.getSpanContext(ctx);
  if (!span || !isSpanContextValid(span)) return out;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, '0');
  out.traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
  const state = span.traceState?.serialize();
  if (state) out.tracestate = state;
  return out;
}
