import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';
import {
  activeTraceId,
  contextOf,
  inSpan,
  SpanKind,
  startTracing,
  traceCarrier,
  tracingActive,
  tracingWanted,
  type Tracing,
} from './tracing.js';

const logger = createLogger({ level: 'silent', logContent: false, name: 'test' });

describe('tracingWanted', () => {
  it('is on by default only where asked (distributed roles), off in embedded mode', () => {
    expect(tracingWanted({}, true).on).toBe(true);
    expect(tracingWanted({}, false)).toEqual({
      on: false,
      reason: expect.stringContaining('OTEL_TRACES_EXPORTER=otlp') as string,
    });
  });

  it('follows the standard variables', () => {
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }, false).on).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, false).on).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318' }, false).on).toBe(
      true,
    );
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'none' }, true).on).toBe(false);
    expect(
      tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, true).on,
    ).toBe(false);
  });

  it('refuses an exporter it does not ship, naming what it takes', () => {
    expect(() => tracingWanted({ OTEL_TRACES_EXPORTER: 'zipkin' }, true)).toThrow(
      /only "otlp" and "none" are supported, got "zipkin"/,
    );
  });
});

describe('startTracing', () => {
  let tracing: Tracing | undefined;
  afterEach(async () => {
    await tracing?.shutdown();
    tracing = undefined;
  });

  it('registers nothing when off: spans do not record and no context is propagated', async () => {
    tracing = await startTracing({ serviceName: 's', defaultOn: false, logger, env: {} });
    expect(tracing.enabled).toBe(false);
    expect(tracingActive()).toBe(false);
    await inSpan('x', {}, async (span) => {
      expect(span.isRecording()).toBe(false);
      expect(traceCarrier()).toEqual({});
      expect(activeTraceId()).toBeUndefined();
    });
  });

  it('records spans with their parents, and carries the context across a carrier', async () => {
    const exporter = new InMemorySpanExporter();
    tracing = await startTracing({
      serviceName: 'guard-test',
      defaultOn: true,
      logger,
      env: {},
      exporter,
    });
    expect(tracingActive()).toBe(true);
    let carrier: Record<string, string> = {};
    let traceId: string | undefined;
    await inSpan('outer', { kind: SpanKind.SERVER }, async () => {
      traceId = activeTraceId();
      carrier = traceCarrier();
    });
    expect(carrier.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    // The receiving side: a span whose parent is the one the carrier names.
    await inSpan('inner', { kind: SpanKind.CONSUMER, parent: contextOf(carrier) }, async () => {
      throw new Error('boom');
    }).catch(() => undefined);

    const [outer, inner] = exporter.getFinishedSpans();
    expect(outer!.name).toBe('outer');
    expect(outer!.resource.attributes['service.name']).toBe('guard-test');
    expect(inner!.spanContext().traceId).toBe(traceId);
    expect(inner!.parentSpanContext?.spanId).toBe(outer!.spanContext().spanId);
    expect(inner!.status).toEqual({ code: 2, message: 'boom' });
    expect(inner!.events[0]?.name).toBe('exception');
  });

  it('lets OTEL_SERVICE_NAME name the service', async () => {
    const exporter = new InMemorySpanExporter();
    process.env.OTEL_SERVICE_NAME = 'named-by-env';
    try {
      tracing = await startTracing({
        serviceName: 'guard-test',
        defaultOn: true,
        logger,
        exporter,
      });
      await inSpan('x', {}, async () => undefined);
      expect(exporter.getFinishedSpans()[0]!.resource.attributes['service.name']).toBe(
        'named-by-env',
      );
    } finally {
      delete process.env.OTEL_SERVICE_NAME;
    }
  });
});
