import { defineConfig, type ConfigOf } from './define-config.js';
import { int, oneOf, optional, str, url, type Reader } from './env.js';

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/**
 * OpenTelemetry traces, read from the standard OTEL_* variables: exported over OTLP/HTTP (JSON)
 * when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, off otherwise.
 */
export const tracingConfig = defineConfig('tracing', (env) => {
  const disabled = oneOf(env, 'OTEL_SDK_DISABLED', ['true', 'false'], 'false') === 'true';
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  const traces = url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']);
  // The base endpoint gets the signal's path; the traces endpoint is used as given (the spec's rule).
  const endpoint = traces ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  const protocol =
    optional(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? optional(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/json';
  if (protocol !== 'http/json') {
    env.problem(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/json (the exporter this service ships), got "${protocol.slice(0, 100)}"`,
      'OTEL_EXPORTER_OTLP_PROTOCOL',
    );
  }
  const sampler = oneOf<SamplerName>(env, 'OTEL_TRACES_SAMPLER', SAMPLERS, 'parentbased_always_on');
  return {
    /** Where spans are sent (…/v1/traces); undefined: tracing is off and costs nothing. */
    otlpTracesEndpoint: disabled ? undefined : endpoint,
    otlpHeaders: keyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
    serviceName: str(env, 'OTEL_SERVICE_NAME', 'animal-store-api'),
    resourceAttributes: keyValues(env, 'OTEL_RESOURCE_ATTRIBUTES'),
    sampler,
    /** The ratio of the traceidratio samplers (0 to 1). */
    samplerRatio: ratio(env, 'OTEL_TRACES_SAMPLER_ARG'),
    /** How long finished spans wait to be sent in a batch. */
    batchDelayMs: int(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0, 600_000),
  };
});
export type TracingConfig = ConfigOf<typeof tracingConfig>;

/** `key=value,key=value` with URL-encoded values (the OTEL_* lists' format). */
function keyValues(env: Reader, name: string): Record<string, string> {
  const raw = optional(env, name);
  if (raw === undefined) return {};
  const pairs: Record<string, string> = {};
  for (const entry of raw.split(',')) {
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).trim() : '';
    if (key === '') {
      env.problem(`${name} must be a comma-separated list of key=value`, name);
      return {};
    }
    try {
      pairs[key] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      env.problem(`${name} must be a comma-separated list of key=value (URL-encoded values)`, name);
      return {};
    }
  }
  return pairs;
}

function ratio(env: Reader, name: string): number {
  const raw = optional(env, name);
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || n < 0 || n > 1) {
    env.problem(`${name} must be a number from 0 to 1, got "${raw.slice(0, 100)}"`, name);
    return 1;
  }
  return n;
}
