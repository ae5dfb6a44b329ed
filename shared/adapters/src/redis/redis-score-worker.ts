import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import {
  SCORE_CONTRACT_VERSION,
  type ScoreClient,
  type ScoreRequest,
  type ScoreResult,
} from '@guard/domain';
import type { Logger } from '@guard/platform';
import { contextOf, inSpan, SpanKind, SpanStatusCode } from '@guard/platform/tracing';
import { deadlineSignal, ScoreDeadlineError } from '@guard/scoring';
import {
  DEFAULT_SCORE_REQUEST_STREAM,
  DEFAULT_SCORER_GROUP,
  ENVELOPE_FIELD,
  parseScoreEnvelope,
  type ScoreReplyEnvelope,
  type ScoreReplyErrorCode,
} from '@guard/contracts/score-envelope';
import {
  closeConnection,
  envelopeOf,
  latch,
  openScoreConnection,
  readUntil,
} from './redis-connection.js';

export interface RedisScoreWorkerOptions {
  redisUrl: string;
  /** The scoring core (the ScoreEngine of @guard/scoring is this port). */
  engine: ScoreClient;
  logger: Logger;
  /** Default `guard:score:requests`. */
  requestStream?: string;
  /** Default `scorers`. */
  group?: string;
  /** This worker's name in the group; default host name, pid and a random part. */
  consumer?: string;
  /** Requests scored at once. Default 8. */
  concurrency?: number;
  /** Entries pending this long on another consumer are taken over (XAUTOCLAIM). Default 5000. */
  claimIdleMs?: number;
  /** How long one XREADGROUP waits; a stop waits at most this for the read to end. Default 1000. */
  blockMs?: number;
  /** Length cap of a reply stream (MAXLEN ~). Default 10000. */
  replyMaxLen?: number;
  /** A reply stream nobody writes to for this long is deleted (PEXPIRE). Default 60000. */
  replyTtlMs?: number;
}

interface Entry {
  id: string;
  fields: string[] | null;
}

/** After this long without a successful read the worker reports itself not live. */
const LIVE_WITHOUT_READ_MS = 5 * 60_000;

/**
 * The scorer pod's side of the scoring transport: a consumer of the request stream's group that
 * scores each request with `engine` within the envelope's deadline, adds the answer to the
 * envelope's `reply_to` stream, then acknowledges and deletes the entry (so that the stream's
 * length is the backlog the clients bound). Entries left pending by a dead consumer are taken
 * over after `claimIdleMs` and answered while their deadline lasts.
 */
export class RedisScoreWorker {
  readonly consumer: string;
  readonly group: string;
  readonly requestStream: string;
  readonly stats = {
    scored: 0,
    /** Answered `deadline_exceeded`: expired before or while scoring. */
    expired: 0,
    /** Answered with an error: unsupported version, invalid request, scoring failure. */
    failed: 0,
    /** Entries taken over from other consumers (XAUTOCLAIM). */
    reclaimed: 0,
    /** Reclaimed entries already past their deadline: acknowledged without an answer. */
    droppedExpired: 0,
    /** Entries without a readable envelope: nobody to answer, acknowledged and dropped. */
    unreadable: 0,
  };
  private readonly engine: ScoreClient;
  private readonly logger: Logger;
  private readonly concurrency: number;
  private readonly claimIdleMs: number;
  private readonly blockMs: number;
  private readonly replyMaxLen: number;
  private readonly replyTtlMs: number;
  private readonly commands: Redis;
  private readonly reader: Redis;
  /** Entries being handled, by entry id: what this worker holds, heartbeats and waits for. */
  private readonly inFlight = new Map<string, Promise<void>>();
  private slotFreed: (() => void) | null = null;
  /** Scorings running now, and those waiting for one to end (reads and takeovers can overlap). */
  private scoring = 0;
  private readonly waitingToScore: (() => void)[] = [];
  private groupReady = false;
  private lastReadAt = Date.now();
  private stopping = false;
  private reading: Promise<void> = Promise.resolve();
  private readonly readCut = latch();
  private claimTimer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> = Promise.resolve();
  private claimRunning = false;
  private stopped: Promise<void> | null = null;

  constructor(options: RedisScoreWorkerOptions) {
    this.engine = options.engine;
    this.logger = options.logger;
    this.requestStream = options.requestStream ?? DEFAULT_SCORE_REQUEST_STREAM;
    this.group = options.group ?? DEFAULT_SCORER_GROUP;
    this.consumer =
      options.consumer ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.claimIdleMs = options.claimIdleMs ?? 5_000;
    this.blockMs = options.blockMs ?? 1_000;
    this.replyMaxLen = options.replyMaxLen ?? 10_000;
    this.replyTtlMs = options.replyTtlMs ?? 60_000;
    const name = `guard-scorer:${this.consumer}`;
    this.commands = openScoreConnection(options.redisUrl, name, 'commands', this.logger);
    this.reader = openScoreConnection(options.redisUrl, `${name}:reads`, 'blocking', this.logger);
  }

  /** Connects, joins the group (creating it), then reads and reclaims until `stop()`. */
  async start(): Promise<void> {
    try {
      await Promise.all([this.commands.connect(), this.reader.connect()]);
      await this.ensureGroup();
    } catch (err) {
      this.commands.disconnect();
      this.reader.disconnect();
      throw err;
    }
    this.lastReadAt = Date.now();
    this.reading = this.readLoop();
    // Half the idle time: an entry of a dead consumer waits at most 1.5 x claimIdleMs.
    this.claimTimer = setInterval(
      () => {
        // One tick at a time: a slow one (Redis away) is not queued up behind.
        if (this.stopping || this.claimRunning) return;
        this.claimRunning = true;
        this.claiming = this.claimTick().finally(() => (this.claimRunning = false));
      },
      Math.max(50, Math.floor(this.claimIdleMs / 2)),
    );
    this.logger.info(
      { stream: this.requestStream, group: this.group, consumer: this.consumer },
      'scoring requests from the stream',
    );
  }

  /** Reads again within a few minutes: a worker that cannot is restarted by its orchestrator. */
  live(): boolean {
    return Date.now() - this.lastReadAt < LIVE_WITHOUT_READ_MS;
  }

  /** Requests queued in the stream, not yet answered (answered ones are deleted): the backlog. */
  backlog(): Promise<number> {
    return this.commands.xlen(this.requestStream);
  }

  /**
   * Seconds since the oldest request still in the stream was added (its entry id is the time it
   * was added); 0 when the stream is empty. How far behind the scorers are.
   */
  async backlogAgeSeconds(): Promise<number> {
    const [oldest] = await this.commands.xrange(this.requestStream, '-', '+', 'COUNT', 1);
    if (!oldest) return 0;
    const addedMs = Number(oldest[0].split('-')[0]);
    return Math.max(0, (Date.now() - addedMs) / 1e3);
  }

  /** In the group, connected, not stopping. */
  ready(): boolean {
    return (
      this.groupReady &&
      !this.stopping &&
      this.commands.status === 'ready' &&
      this.reader.status === 'ready'
    );
  }

  get busy(): number {
    return this.inFlight.size;
  }

  /**
   * Takes no new requests, answers and acknowledges those in progress, then disconnects. What the
   * last read returns is scored too: nothing is left pending for others to reclaim.
   */
  stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = (async () => {
        this.stopping = true;
        clearInterval(this.claimTimer);
        this.slotFreed?.();
        // The read in progress ends within blockMs; one waiting on a lost connection is cut off
        // (whatever it would have delivered stays pending, for a takeover).
        const cut = setTimeout(() => {
          this.readCut.open();
          this.reader.disconnect();
        }, this.blockMs + 500);
        await this.reading;
        clearTimeout(cut);
        await this.claiming;
        await Promise.all(this.inFlight.values());
        await closeConnection(this.commands);
        await closeConnection(this.reader);
        this.logger.info({ consumer: this.consumer, ...this.stats }, 'scorer stopped');
      })();
    }
    return this.stopped;
  }

  private async ensureGroup(): Promise<void> {
    try {
      // From the start of the stream, not `$`: after a Redis restart clients may add requests
      // before any scorer has recreated the group, and those must be answered too. Answered
      // entries are deleted, so the start holds only unanswered ones.
      await this.commands.xgroup('CREATE', this.requestStream, this.group, '0', 'MKSTREAM');
      this.logger.info({ stream: this.requestStream, group: this.group }, 'consumer group created');
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
    this.groupReady = true;
  }

  private async readLoop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.slotFreed = resolve));
        this.slotFreed = null;
        continue;
      }
      try {
        const read = await readUntil(
          this.reader.xreadgroup(
            'GROUP',
            this.group,
            this.consumer,
            'COUNT',
            free,
            'BLOCK',
            this.blockMs,
            'STREAMS',
            this.requestStream,
            '>',
          ),
          this.readCut.promise,
        );
        failures = 0;
        this.groupReady = true;
        this.lastReadAt = Date.now();
        for (const [id, fields] of read?.[0]?.[1] ?? []) this.begin({ id, fields }, false);
      } catch (err) {
        if (this.stopping) break;
        if (err instanceof Error && err.message.startsWith('NOGROUP')) {
          // Redis restarted without persistence, or the stream was deleted: join again.
          this.groupReady = false;
          this.logger.warn({ stream: this.requestStream }, 'consumer group gone; creating it');
          const joined = await this.ensureGroup().then(
            () => true,
            () => false,
          );
          if (joined) continue;
        } else if (failures === 0) {
          this.logger.warn({ err }, 'reading score requests failed; retrying');
        }
        await sleep(Math.min(1_000, 50 * 2 ** failures++));
      }
    }
  }

  private begin(entry: Entry, reclaimed: boolean): void {
    if (this.inFlight.has(entry.id)) return;
    const work = this.handle(entry, reclaimed)
      .catch((err: unknown) => {
        // The entry stays pending: this worker or another one takes it over after claimIdleMs.
        this.logger.warn({ err, entry: entry.id }, 'score request left pending; will be retried');
      })
      .finally(() => {
        this.inFlight.delete(entry.id);
        this.slotFreed?.();
      });
    this.inFlight.set(entry.id, work);
  }

  private async handle(entry: Entry, reclaimed: boolean): Promise<void> {
    const parsed = parseScoreEnvelope(envelopeOf(entry.fields));
    if (parsed.kind === 'unreadable') {
      this.stats.unreadable++;
      this.logger.warn(
        { entry: entry.id, reason: parsed.message },
        'unreadable score request dropped',
      );
      return this.acknowledge(entry.id);
    }
    if (parsed.kind !== 'ok') {
      this.stats.failed++;
      this.logger.warn(
        { entry: entry.id, id: parsed.header.id, v: parsed.header.v, reason: parsed.message },
        'score request refused',
      );
      const code: ScoreReplyErrorCode =
        parsed.kind === 'unsupported' ? 'unsupported_version' : 'invalid_request';
      return this.answer(entry.id, parsed.header.reply_to, {
        v: SCORE_CONTRACT_VERSION,
        id: parsed.header.id,
        ok: false,
        error: { code, message: parsed.message },
      });
    }
    const { envelope } = parsed;
    const remaining = envelope.deadline_ms - Date.now();
    if (remaining <= 0 && reclaimed) {
      // Its caller gave up when the deadline passed: an answer now would be read by nobody.
      this.stats.droppedExpired++;
      this.logger.info(
        { entry: entry.id, id: envelope.id, late_ms: -remaining },
        'reclaimed score request already past its deadline; dropped',
      );
      return this.acknowledge(entry.id);
    }
    // A child of the API pod's producer span, when the envelope carries its context.
    return inSpan(
      `process ${this.requestStream}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contextOf(envelope.trace),
        attributes: {
          'messaging.system': 'redis',
          'messaging.operation.type': 'process',
          'messaging.destination.name': this.requestStream,
          'messaging.consumer.group.name': this.group,
          'messaging.message.id': entry.id,
          'guard.score.reclaimed': reclaimed,
        },
      },
      async (span) => {
        let reply: ScoreReplyEnvelope;
        if (remaining <= 0) {
          // Still answered: with clocks apart, the caller may not have given up yet.
          reply = this.failure(
            envelope.id,
            'deadline_exceeded',
            'the deadline passed before scoring',
          );
        } else {
          reply = await this.score(envelope.id, envelope.request, remaining);
        }
        if (!reply.ok) {
          span.setAttribute('error.type', reply.error.code);
          span.setStatus({ code: SpanStatusCode.ERROR, message: reply.error.message });
        }
        return this.answer(entry.id, envelope.reply_to, reply);
      },
    );
  }

  private async score(
    id: string,
    request: ScoreRequest,
    remainingMs: number,
  ): Promise<ScoreReplyEnvelope> {
    const { signal, clear } = deadlineSignal(remainingMs);
    // A slot ending is handed straight to the next waiter, so none is taken twice.
    if (this.scoring < this.concurrency) this.scoring++;
    else await new Promise<void>((resolve) => this.waitingToScore.push(resolve));
    try {
      if (signal.aborted) throw new ScoreDeadlineError(remainingMs);
      const result: ScoreResult = await this.engine.score(request, signal);
      this.stats.scored++;
      return { v: SCORE_CONTRACT_VERSION, id, ok: true, result };
    } catch (err) {
      if (err instanceof ScoreDeadlineError || signal.aborted) {
        return this.failure(id, 'deadline_exceeded', 'scoring did not finish before the deadline');
      }
      this.logger.warn({ err, id }, 'scoring failed');
      return this.failure(id, 'scoring_failed', err instanceof Error ? err.message : String(err));
    } finally {
      clear();
      const next = this.waitingToScore.shift();
      if (next) next();
      else this.scoring--;
    }
  }

  private failure(id: string, code: ScoreReplyErrorCode, message: string): ScoreReplyEnvelope {
    if (code === 'deadline_exceeded') this.stats.expired++;
    else this.stats.failed++;
    return { v: SCORE_CONTRACT_VERSION, id, ok: false, error: { code, message } };
  }

  /**
   * The reply, then the acknowledgement, in one pipeline: commands of one connection run in
   * order, so an entry is never acknowledged unless its reply was added first. A connection lost
   * on the way leaves it pending, to be answered again after a takeover (the client keeps the
   * first answer and drops the second).
   */
  private async answer(entryId: string, replyTo: string, reply: ScoreReplyEnvelope): Promise<void> {
    const results = await this.commands
      .pipeline()
      .xadd(replyTo, 'MAXLEN', '~', this.replyMaxLen, '*', ENVELOPE_FIELD, JSON.stringify(reply))
      .pexpire(replyTo, this.replyTtlMs)
      .xack(this.requestStream, this.group, entryId)
      .xdel(this.requestStream, entryId)
      .exec();
    const [added, , acked] = results ?? [];
    if (!acked || acked[0]) throw acked?.[0] ?? new Error('no answer to XACK');
    // Redis refused the reply itself (reply_to names a key of another type): nobody to answer.
    if (added?.[0]) {
      this.logger.warn({ err: added[0], entry: entryId, reply_to: replyTo }, 'reply not added');
    }
  }

  private async acknowledge(entryId: string): Promise<void> {
    const results = await this.commands
      .pipeline()
      .xack(this.requestStream, this.group, entryId)
      .xdel(this.requestStream, entryId)
      .exec();
    const acked = results?.[0];
    if (!acked || acked[0]) throw acked?.[0] ?? new Error('no answer to XACK');
  }

  /**
   * Keeps this worker's own entries from looking idle (a long scoring would otherwise be taken
   * over by another worker and scored twice), then takes over entries idle on other consumers,
   * as many as there are free slots.
   */
  private async claimTick(): Promise<void> {
    try {
      const mine = [...this.inFlight.keys()];
      if (mine.length > 0) {
        await this.commands.xclaim(
          this.requestStream,
          this.group,
          this.consumer,
          0,
          ...mine,
          'JUSTID',
        );
      }
      let cursor = '0-0';
      let taken = 0;
      do {
        const free = this.concurrency - this.inFlight.size;
        if (free <= 0 || this.stopping) break;
        const [next, entries] = (await this.commands.xautoclaim(
          this.requestStream,
          this.group,
          this.consumer,
          this.claimIdleMs,
          cursor,
          'COUNT',
          free,
        )) as [string, [string, string[] | null][]];
        cursor = next;
        for (const [id, fields] of entries) {
          if (this.inFlight.has(id)) continue;
          taken++;
          this.stats.reclaimed++;
          this.begin({ id, fields }, true);
        }
      } while (cursor !== '0-0');
      if (taken > 0) {
        this.logger.info(
          { reclaimed: taken, total_reclaimed: this.stats.reclaimed, consumer: this.consumer },
          'took over score requests left pending by another scorer',
        );
      }
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('NOGROUP')) return;
      this.logger.warn({ err }, 'reclaiming pending score requests failed');
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
