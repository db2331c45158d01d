import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type TextMapGetter,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import type { TracingConfig } from '../config/tracing.config.js';
import { clientText } from '../logging/app-logger.js';
import { containsSecret, redactSecrets } from '../logging/redact-secrets.js';

/**
 * OpenTelemetry traces, instrumented by hand at three places: one SERVER span per request (the
 * request edge), and CLIENT spans under it for each PostgreSQL query (the pool's client) and each
 * Redis round trip of the rate limiter. Not the auto-instrumentations: they patch http, express,
 * pg and ioredis for every process and add spans per middleware; the request's three layers are
 * what an operator follows, and each costs one check when tracing is off.
 *
 * Off (no OTLP endpoint): `tracer` stays undefined, the SDK is never loaded, and every hook
 * below returns at its first line.
 */
let tracer: Tracer | undefined;
let stopTracing: (() => Promise<void>) | undefined;

/** Whether tracing is on (an OTLP endpoint is configured and the SDK started). */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** W3C Trace Context (traceparent, tracestate), the propagation format every tracer speaks. */
let propagator: TextMapPropagator | undefined;

/**
 * Starts exporting spans as `config` says, for the whole process (OpenTelemetry's context is
 * process-wide); resolves to a function that flushes and stops. A second call while started
 * is refused. Off: nothing is loaded, and the stop function does nothing.
 */
export async function startTracing(config: TracingConfig): Promise<() => Promise<void>> {
  if (config.otlpTracesEndpoint === undefined) return async () => {};
  if (tracer !== undefined) throw new Error('tracing is already started in this process');
  const [
    {
      BasicTracerProvider,
      BatchSpanProcessor,
      ParentBasedSampler,
      TraceIdRatioBasedSampler,
      AlwaysOnSampler,
      AlwaysOffSampler,
    },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { AsyncLocalStorageContextManager },
    { W3CTraceContextPropagator },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
  ]);
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  const root = { always_on: new AlwaysOnSampler(), always_off: new AlwaysOffSampler(), traceidratio: ratio };
  const [parentBased, kind] = config.sampler.startsWith('parentbased_')
    ? [true, config.sampler.slice('parentbased_'.length) as keyof typeof root]
    : [false, config.sampler as keyof typeof root];
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    sampler: parentBased ? new ParentBasedSampler({ root: root[kind] }) : root[kind],
    spanProcessors: [
      new BatchSpanProcessor(new OTLPTraceExporter({ url: config.otlpTracesEndpoint, headers: config.otlpHeaders }), {
        scheduledDelayMillis: config.batchDelayMs,
      }),
    ],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagator = new W3CTraceContextPropagator();
  tracer = provider.getTracer('animal-store-api');
  stopTracing = async () => {
    tracer = undefined;
    propagator = undefined;
    stopTracing = undefined;
    try {
      await provider.shutdown();
    } finally {
      context.disable();
    }
  };
  return stopTracing;
}

/**
 * The request headers the propagator reads, except a value shaped like one of our secrets: the
 * incoming `tracestate` is client text that the span carries to the collector as it is, so one
 * holding a secret is left out (the trace is still continued from `traceparent`, which is hex).
 */
const SECRET_FREE_HEADERS: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => defaultTextMapGetter.keys(carrier),
  get: (carrier, key) => {
    const value = defaultTextMapGetter.get(carrier, key);
    if (value === undefined) return undefined;
    return (Array.isArray(value) ? value : [value]).some(containsSecret) ? undefined : value;
  },
};

/**
 * The SERVER span of a request, continuing the trace of an incoming `traceparent`; undefined
 * while tracing is off. Named and finished by endRequestSpan once the route is known. Its
 * `url.path` and `url.query` are the request target as the client sent it, with every
 * secret-shaped string redacted and at most MAX_LOGGED_CHARS of each, as in the access line.
 */
export function startRequestSpan(method: string, target: string, headers: Record<string, unknown>): Span | undefined {
  if (tracer === undefined || propagator === undefined) return undefined;
  const parent = propagator.extract(ROOT_CONTEXT, headers, SECRET_FREE_HEADERS);
  const q = target.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': method,
    'url.path': clientText(q === -1 ? target : target.slice(0, q)),
  };
  if (q !== -1) attributes['url.query'] = clientText(target.slice(q + 1));
  return tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
}

/** Runs `fn` (the rest of the request's handling) with `span` as the active span, so queries become its children. */
export function withSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Names and ends a request's span: `GET /v1/pets/{petId}`, its status and the API key's id (never the key). */
export function endRequestSpan(
  span: Span,
  method: string,
  route: string,
  status: number | undefined,
  keyId: string | undefined,
): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
  if (status !== undefined) span.setAttribute('http.response.status_code', status);
  if (keyId !== undefined) span.setAttribute('app.api_key.id', keyId);
  if (status === undefined || status >= 500)
    span.setStatus({ code: SpanStatusCode.ERROR, message: status === undefined ? 'client closed request' : undefined });
  span.end();
}

/**
 * A CLIENT span (a query, a Redis command) under the active request's span; undefined while
 * tracing is off or outside a sampled request (no orphan spans for health checks or migrations).
 */
export function startClientSpan(name: string, attributes: Attributes): Span | undefined {
  if (tracer === undefined) return undefined;
  const active = context.active();
  if (trace.getSpan(active)?.isRecording() !== true) return undefined;
  return tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, active);
}

/** Ends a client span, marking it failed when `err` is given. */
export function endClientSpan(span: Span, err?: unknown): void {
  if (err !== undefined && err !== null) {
    // A database error may quote a value of the request (a key in a violated constraint's detail).
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: redactSecrets(err instanceof Error ? err.message : String(err)),
    });
  }
  span.end();
}

/** Runs `fn` in a CLIENT span (when tracing is on and a sampled request is active). */
export async function inClientSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  const span = startClientSpan(name, attributes);
  if (span === undefined) return fn();
  try {
    const result = await fn();
    span.end();
    return result;
  } catch (err) {
    endClientSpan(span, err);
    throw err;
  }
}
