import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import {
  errorScoreResult,
  SCORE_CONTRACT_VERSION,
  type ScoreClient,
  type ScoreRequest,
  type ScoreResult,
} from '@guard/domain';
import { newId, type Logger } from '@guard/platform';
import { inSpan, SpanKind, traceCarrier, tracingActive } from '@guard/platform/tracing';
import { deadlineSignal, ScoreDeadlineError } from '@guard/scoring';
import {
  DEFAULT_SCORE_REPLY_PREFIX,
  DEFAULT_SCORE_REQUEST_STREAM,
  ENVELOPE_FIELD,
  ScoreReplyEnvelope,
  type ScoreRequestEnvelope,
} from '@guard/contracts/score-envelope';
import {
  closeConnection,
  envelopeOf,
  latch,
  openScoreConnection,
  parseJson,
  readUntil,
} from './redis-connection.js';
import { ScorerUnavailableError } from './scorer-unavailable-error.js';

export interface RedisScoreClientOptions {
  redisUrl: string;
  /**
   * How long a call waits for its answer: the envelope's deadline is now + this. Past it the call
   * rejects with ScoreDeadlineError, as the in-process engine's deadline does.
   */
  timeoutMs: number;
  /** Default `guard:score:requests`. */
  requestStream?: string;
  /** Default `guard:score:reply:`; this client reads `<prefix><podId>`. */
  replyStreamPrefix?: string;
  /** Names this client's reply stream; default host name, pid and a random part. */
  podId?: string;
  /**
   * Requests waiting or being scored (the request stream's length) from which new calls are
   * refused with ScorerUnavailableError. Default 1000.
   */
  maxQueue?: number;
  /** How long one blocking read of the reply stream waits before it is sent again. Default 2000. */
  blockMs?: number;
  logger?: Logger;
}

interface Waiting {
  request: ScoreRequest;
  resolve: (result: ScoreResult) => void;
  reject: (err: unknown) => void;
}

/**
 * Checks the backlog and adds the request in one step, on the server: one round trip per call,
 * and no window between the check and the add in which other pods fill the queue past its bound
 * (a cached XLEN would allow both). Scorers delete entries once answered, so XLEN is exactly the
 * requests waiting or in progress. Answers the backlog (a number) when full, else the entry id.
 * MAXLEN ~ is only a safety net for a queue nobody drains; `maxQueue` bounds it first.
 */
const BOUNDED_XADD = `
local queued = redis.call('XLEN', KEYS[1])
if queued >= tonumber(ARGV[1]) then return queued end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', ARGV[3], ARGV[4])
`;
const BOUNDED_XADD_SHA = createHash('sha1').update(BOUNDED_XADD).digest('hex');

/**
 * The scoring port over Redis Streams, on the API pod: each call adds a request envelope to the
 * request stream and waits for the reply on this pod's own reply stream.
 *
 * Replies come on a stream per pod, not on a pub/sub channel: a stream keeps what arrives while
 * the reader reconnects (a Redis failover, a network blip) and the reader goes on from the last
 * id it saw, whereas a pub/sub message published during the gap is lost and its caller would
 * wait out its whole deadline. The reader trims what it has read, scorers cap the stream's length
 * and give it a TTL, so a stream whose pod is gone disappears on its own.
 */
export class RedisScoreClient implements ScoreClient {
  readonly podId: string;
  readonly requestStream: string;
  readonly replyStream: string;
  readonly maxQueue: number;
  readonly stats = {
    sent: 0,
    answered: 0,
    /** Calls refused because the queue was full. */
    refused: 0,
    timedOut: 0,
    /** Replies for no waiting call: late (after the deadline) or duplicates of a reclaimed request. */
    unmatched: 0,
    invalid: 0,
  };
  private readonly timeoutMs: number;
  private readonly maxLen: number;
  private readonly blockMs: number;
  private readonly logger: Logger | undefined;
  private readonly commands: Redis;
  private readonly replies: Redis;
  private readonly waiting = new Map<string, Waiting>();
  private lastReplyId = '0-0';
  private started = false;
  private closed = false;
  private reading: Promise<void> = Promise.resolve();
  private readonly closing = latch();

  constructor(options: RedisScoreClientOptions) {
    this.podId = options.podId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.requestStream = options.requestStream ?? DEFAULT_SCORE_REQUEST_STREAM;
    this.replyStream = `${options.replyStreamPrefix ?? DEFAULT_SCORE_REPLY_PREFIX}${this.podId}`;
    this.timeoutMs = options.timeoutMs;
    this.maxQueue = options.maxQueue ?? 1000;
    this.maxLen = Math.max(10_000, this.maxQueue * 10);
    this.blockMs = options.blockMs ?? 2_000;
    this.logger = options.logger;
    const name = `guard-score-client:${this.podId}`;
    this.commands = openScoreConnection(options.redisUrl, name, 'commands', this.logger);
    this.replies = openScoreConnection(
      options.redisUrl,
      `${name}:replies`,
      'blocking',
      this.logger,
    );
  }

  /**
   * Connects and starts reading replies. Rejects when Redis cannot be reached at first; the client
   * keeps reconnecting all the same, and calls made before it is back are refused with
   * ScorerUnavailableError, so a pod may start and report itself not ready (`ready()`) meanwhile.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const connected = Promise.all([this.commands.connect(), this.replies.connect()]);
    // The reading connection queues its XREAD until it is connected, however long that takes.
    this.reading = this.readReplies();
    await connected;
  }

  /** Both connections are up: calls can be sent and answered. */
  ready(): boolean {
    return !this.closed && this.commands.status === 'ready' && this.replies.status === 'ready';
  }

  get inFlight(): number {
    return this.waiting.size;
  }

  score(request: ScoreRequest, signal?: AbortSignal): Promise<ScoreResult> {
    if (!tracingActive()) return this.send(request, signal);
    // The producer span's context travels in the envelope; the scorer's span is its child.
    return inSpan(
      `send ${this.requestStream}`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'redis',
          'messaging.operation.type': 'send',
          'messaging.destination.name': this.requestStream,
        },
      },
      () => this.send(request, signal, traceCarrier()),
    );
  }

  private send(
    request: ScoreRequest,
    signal?: AbortSignal,
    trace?: Record<string, string>,
  ): Promise<ScoreResult> {
    if (this.closed)
      return Promise.reject(new ScorerUnavailableError('the score client is closed'));
    if (this.commands.status !== 'ready') {
      return Promise.reject(
        new ScorerUnavailableError('Redis cannot be reached', { redis: this.commands.status }),
      );
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const id = newId();
    const envelope: ScoreRequestEnvelope = {
      v: SCORE_CONTRACT_VERSION,
      id,
      reply_to: this.replyStream,
      deadline_ms: Date.now() + this.timeoutMs,
      ...(trace?.traceparent ? { trace } : {}),
      request,
    };
    return new Promise<ScoreResult>((resolve, reject) => {
      const { signal: deadline, clear } = deadlineSignal(this.timeoutMs, signal);
      const done = () => {
        this.waiting.delete(id);
        deadline.removeEventListener('abort', onDeadline);
        clear();
      };
      const onDeadline = () => {
        done();
        if (signal?.aborted) return reject(signal.reason);
        this.stats.timedOut++;
        reject(new ScoreDeadlineError(this.timeoutMs));
      };
      deadline.addEventListener('abort', onDeadline, { once: true });
      // Waiting before the add: the reply may be read before the add's own answer arrives.
      this.waiting.set(id, {
        request,
        resolve: (result) => {
          done();
          resolve(result);
        },
        reject: (err) => {
          done();
          reject(err);
        },
      });
      this.enqueue(JSON.stringify(envelope)).catch((err: unknown) =>
        this.waiting.get(id)?.reject(err),
      );
    });
  }

  /** Stops reading replies and rejects every call still waiting. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of [...this.waiting.values()]) {
      w.reject(new ScorerUnavailableError('the score client is closed'));
    }
    // Nothing the blocking read could still return has a caller: cut it off.
    this.closing.open();
    this.replies.disconnect();
    await this.reading;
    if (this.commands.status === 'ready') {
      await this.commands.del(this.replyStream).catch(() => undefined);
    }
    await closeConnection(this.commands);
  }

  private async enqueue(payload: string): Promise<void> {
    let added: unknown;
    try {
      added = await this.boundedAdd(payload);
    } catch (err) {
      throw new ScorerUnavailableError('Redis cannot be reached', undefined, { cause: err });
    }
    if (typeof added === 'number') {
      this.stats.refused++;
      throw new ScorerUnavailableError('the scoring queue is full', {
        queued: added,
        max_queue: this.maxQueue,
      });
    }
    this.stats.sent++;
  }

  private async boundedAdd(payload: string): Promise<unknown> {
    const args = [this.maxQueue, this.maxLen, ENVELOPE_FIELD, payload];
    try {
      return await this.commands.evalsha(BOUNDED_XADD_SHA, 1, this.requestStream, ...args);
    } catch (err) {
      // The script cache is empty after a Redis restart: send the script once, then by hash.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return await this.commands.eval(BOUNDED_XADD, 1, this.requestStream, ...args);
    }
  }

  private async readReplies(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        const read = await readUntil(
          this.replies.xread(
            'COUNT',
            512,
            'BLOCK',
            this.blockMs,
            'STREAMS',
            this.replyStream,
            this.lastReplyId,
          ),
          this.closing.promise,
        );
        if (this.closed) return;
        failures = 0;
        const entries = read?.[0]?.[1] ?? [];
        for (const [entryId, fields] of entries) {
          this.lastReplyId = entryId;
          this.onReply(fields);
        }
        if (entries.length > 0 && this.commands.status === 'ready') {
          // What was read is not needed again; MINID ~ keeps at most one macro node more.
          this.commands
            .xtrim(this.replyStream, 'MINID', '~', this.lastReplyId)
            .catch(() => undefined);
        }
      } catch (err) {
        if (this.closed) return;
        if (failures++ === 0) this.logger?.warn({ err }, 'reading score replies failed; retrying');
        await sleep(Math.min(1_000, 50 * 2 ** failures));
      }
    }
  }

  private onReply(fields: string[] | null): void {
    const json = parseJson(envelopeOf(fields));
    const parsed = ScoreReplyEnvelope.safeParse(json);
    if (!parsed.success) {
      this.stats.invalid++;
      this.logger?.warn({ issues: parsed.error.issues.slice(0, 3) }, 'invalid score reply dropped');
      // Its id may still be readable: that caller gets an error result now, not a timeout later.
      const id =
        typeof json === 'object' && json !== null && 'id' in json && typeof json.id === 'string'
          ? json.id
          : undefined;
      const w = id === undefined ? undefined : this.waiting.get(id);
      w?.resolve(errorScoreResult(w.request, new Error('the scorer sent an invalid reply')));
      return;
    }
    const reply = parsed.data;
    const w = this.waiting.get(reply.id);
    if (!w) {
      this.stats.unmatched++;
      return;
    }
    this.stats.answered++;
    if (reply.ok) return w.resolve(reply.result);
    if (reply.error.code === 'deadline_exceeded') {
      this.stats.timedOut++;
      return w.reject(new ScoreDeadlineError(this.timeoutMs));
    }
    w.resolve(errorScoreResult(w.request, new Error(reply.error.message)));
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
