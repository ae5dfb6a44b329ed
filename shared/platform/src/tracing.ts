import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';

/**
 * OpenTelemetry traces (docs/operations.md, "Traces"). The SDK is configured by the standard
 * `OTEL_*` variables (exporter endpoint, headers, sampler, batch sizes); this module decides only
 * whether it runs. The distributed roles trace unless told not to; the embedded server traces only
 * when an exporter is named, so that `npm start` sends nothing anywhere.
 *
 * When tracing is off nothing is registered: the API's tracer hands out non-recording spans and
 * the propagator writes no headers, so the instrumented code costs next to nothing.
 */

const TRACER = '@guard/service';
/** How long a stopping process waits for its last spans to be exported. */
const SHUTDOWN_FLUSH_MS = 2_000;
let active = false;

/** Whether this process records spans (a provider is registered). */
export const tracingActive = (): boolean => active;

export interface Tracing {
  readonly enabled: boolean;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** Why tracing is on or off for these variables; exported for the tests. */
export function tracingWanted(
  env: Record<string, string | undefined>,
  defaultOn: boolean,
): { on: boolean; reason: string } {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') {
    return { on: false, reason: 'OTEL_SDK_DISABLED=true' };
  }
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.includes('none')) return { on: false, reason: 'OTEL_TRACES_EXPORTER=none' };
  const unknown = exporters.filter((e) => e !== 'otlp');
  if (unknown.length > 0) {
    throw new Error(
      `OTEL_TRACES_EXPORTER: only "otlp" and "none" are supported, got "${unknown.join(',')}"`,
    );
  }
  if (exporters.length > 0) return { on: true, reason: 'OTEL_TRACES_EXPORTER=otlp' };
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) {
    return { on: true, reason: 'an OTLP endpoint is set' };
  }
  return defaultOn
    ? { on: true, reason: 'on by default in distributed mode' }
    : { on: false, reason: 'off by default in embedded mode (set OTEL_TRACES_EXPORTER=otlp)' };
}

/**
 * Starts the process's tracer provider when `tracingWanted` says so: OTLP over HTTP (JSON or
 * protobuf per `OTEL_EXPORTER_OTLP_PROTOCOL`; the exporter package reads the endpoint and headers),
 * batched, W3C trace context propagation, `service.name` from `OTEL_SERVICE_NAME` or `serviceName`.
 */
export async function startTracing(options: {
  serviceName: string;
  defaultOn: boolean;
  logger: Logger;
  env?: Record<string, string | undefined>;
  /** Tests: spans go here, one at a time as they end, instead of to the OTLP exporter. */
  exporter?: SpanExporter;
}): Promise<Tracing> {
  const env = options.env ?? process.env;
  const wanted = tracingWanted(env, options.defaultOn);
  if (!wanted.on || active) {
    options.logger.debug({ reason: wanted.reason }, 'tracing off');
    return { enabled: false, shutdown: async () => undefined };
  }
  // Loaded only here: a process that does not trace never loads the SDK.
  const [
    { OTLPTraceExporter },
    resources,
    { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor },
  ] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = resources;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the role's name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ ['service.name']: options.serviceName }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [
      options.exporter
        ? new SimpleSpanProcessor(options.exporter)
        : new BatchSpanProcessor(new OTLPTraceExporter()),
    ],
  });
  provider.register();
  active = true;
  options.logger.info(
    {
      reason: wanted.reason,
      service_name: resource.attributes['service.name'],
      endpoint: withoutCredentials(
        env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
          env.OTEL_EXPORTER_OTLP_ENDPOINT ??
          'http://localhost:4318',
      ),
    },
    'tracing on',
  );
  return {
    enabled: true,
    shutdown: async () => {
      // Spans still buffered get a bounded moment to reach the collector: one that is away must
      // not hold a stopping pod for the exporter's retries.
      let timer: NodeJS.Timeout | undefined;
      const flushed = await Promise.race([
        provider.shutdown().then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), SHUTDOWN_FLUSH_MS);
        }),
      ]);
      clearTimeout(timer);
      if (!flushed) {
        options.logger.warn(
          { within_ms: SHUTDOWN_FLUSH_MS },
          'tracing: buffered spans not exported before stopping',
        );
      }
      trace.disable();
      propagation.disable();
      context.disable();
      active = false;
    },
  };
}

/** An endpoint as it may be logged: user and password, if any, left out. */
function withoutCredentials(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return '(not a URL)';
  }
}

export const tracer = () => trace.getTracer(TRACER);

const NOT_RECORDING = trace.wrapSpanContext({
  traceId: '00000000000000000000000000000000',
  spanId: '0000000000000000',
  traceFlags: 0,
});

/**
 * Runs `fn` in a new span (a child of `parent`, by default the active context) and ends the span
 * when `fn` settles; a throw marks it as an error. Without tracing, `fn` runs with a span that
 * records nothing.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!active) return fn(NOT_RECORDING);
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span as failed by `err`. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: err instanceof Error ? err.message : String(err),
  });
}

/** The W3C trace context (`traceparent`, `tracestate`) of `ctx`; empty when nothing is traced. */
export function traceCarrier(ctx: Context = context.active()): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (active) propagation.inject(ctx, carrier);
  return carrier;
}

/** The context that a received carrier (headers, an envelope's `trace`) names, to parent a span. */
export function contextOf(
  carrier: Record<string, string | Buffer | (string | Buffer)[] | undefined> | undefined,
): Context {
  if (!active || !carrier) return ROOT_CONTEXT;
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(carrier)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined) flat[k.toLowerCase()] = String(first);
  }
  return propagation.extract(ROOT_CONTEXT, flat);
}

/** The trace id of the active span, for log lines; undefined when nothing is recorded. */
export function activeTraceId(): string | undefined {
  if (!active) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

export { SpanKind, SpanStatusCode, context as otelContext, trace as otelTrace };
export type { Span, Context as TraceContext };
