import { readFileSync } from 'node:fs';
import type { NestExpressApplication } from '@nestjs/platform-express';
import yaml from 'js-yaml';
import request from 'supertest';
import { startTestApp } from '../support/app.js';
import { createTestDatabase, TestDatabase } from '../support/databases.js';

/*
 * The alerting rules (deploy/prometheus/alerts.yml) and the Grafana dashboard
 * (deploy/grafana/dashboards/animal-store.json) name only metrics the service exports: a renamed
 * metric fails here, not silently in production. Redis is configured (an address that refuses
 * connections), so the metrics that exist only with Redis are exported too.
 */

/** Series Prometheus adds itself for every target, not the service. */
const PROMETHEUS_OWN = new Set(['up']);

const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'clamp_min',
  'clamp_max',
  'abs',
  'le',
  'inf',
  'nan',
]);

/** The metric names of a PromQL expression: identifiers outside label matchers, groupings, strings and ranges. */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$__\w+/g, ' ');
  const names = bare.match(/[A-Za-z_:][\w:]*/g) ?? [];
  return [...new Set(names.filter((n) => !PROMQL_WORDS.has(n.toLowerCase())))];
}

interface RuleFile {
  groups: { rules: { alert?: string; expr: string; annotations?: Record<string, string> }[] }[];
}

/** The anchors a Markdown renderer (GitHub's) gives a file's headings: lower case, punctuation dropped, spaces as '-'. */
function headingAnchors(markdown: string): Set<string> {
  return new Set(
    (markdown.match(/^#{1,6} .+$/gm) ?? []).map((heading) =>
      heading
        .replace(/^#+ /, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

const alertingRules = () =>
  (yaml.load(readFileSync('deploy/prometheus/alerts.yml', 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

describe('monitoring: alerting rules and dashboard against the exported metrics', () => {
  let db: TestDatabase;
  let app: NestExpressApplication;
  let exported: Set<string>;

  beforeAll(async () => {
    db = await createTestDatabase('embedded');
    app = await startTestApp(db, { env: { REDIS_URL: 'redis://127.0.0.1:1', REDIS_CONNECT_TIMEOUT_MS: '50' } });
    const res = await request(app.getHttpServer()).get('/metrics');
    expect(res.status).toBe(200);
    exported = new Set(
      (res.text.match(/^# TYPE \S+ \S+$/gm) ?? []).flatMap((line) => {
        const [, , name, type] = line.split(' ');
        return type === 'histogram' || type === 'summary'
          ? [name, `${name}_bucket`, `${name}_count`, `${name}_sum`]
          : [name];
      }),
    );
  });

  afterAll(async () => {
    await app?.close();
    await db?.drop();
  });

  it('finds the metric names of an expression', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job="a", route=~"/v1/.*"}[5m]))) > 0.5',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNames('min by (instance) (rate_limit_redis_shared{job="x"}) == 0 or up == 0')).toEqual([
      'rate_limit_redis_shared',
      'up',
    ]);
  });

  it('every alerting rule names only exported metrics, and each names one', () => {
    const rules = alertingRules();
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'AnimalStoreHighErrorRate',
        'AnimalStoreHighLatency',
        'AnimalStoreManyRateLimitRefusals',
        'AnimalStoreRateLimitsPerInstance',
        'AnimalStoreDatabaseUnavailable',
        'AnimalStoreNotReady',
        'AnimalStoreBalancerErrors',
        'AnimalStoreNoInstanceUp',
      ]),
    );
    const unknown = rules.flatMap((r) =>
      metricNames(r.expr)
        // haproxy_*: the balancer's exporter, checked against HAProxy by the cluster test.
        .filter((n) => !exported.has(n) && !PROMETHEUS_OWN.has(n) && !n.startsWith('haproxy_'))
        .map((n) => `${r.alert}: ${n}`),
    );
    expect(unknown).toEqual([]);
    for (const rule of rules)
      expect({ alert: rule.alert, names: metricNames(rule.expr).length > 0 }).toEqual({
        alert: rule.alert,
        names: true,
      });
  });

  it('every alert has a runbook_url whose section exists in docs/operations.md', () => {
    const anchors = headingAnchors(readFileSync('docs/operations.md', 'utf8'));
    expect(anchors).toContain('animalstorehigherrorrate');
    const rules = alertingRules();
    expect(rules.length).toBeGreaterThanOrEqual(9);
    const broken = rules
      .map((r) => ({ alert: r.alert, url: r.annotations?.runbook_url }))
      .filter(({ url }) => {
        const [path, anchor, ...rest] = (url ?? '').split('#');
        return path !== 'docs/operations.md' || anchor === undefined || rest.length > 0 || !anchors.has(anchor);
      });
    expect(broken).toEqual([]);
  });

  it('the dashboard shows key refusals by reason and bans started', () => {
    const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/animal-store.json', 'utf8')) as Dashboard;
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs).toContain('sum by (reason) (rate(api_key_refusals_total{job="animal-store"}[$__rate_interval]))');
    expect(exprs).toContain('sum by (plan) (increase(rate_limit_bans_total{job="animal-store"}[$__rate_interval]))');
  });

  it('every panel of the dashboard queries only exported metrics', () => {
    const dashboard = JSON.parse(readFileSync('deploy/grafana/dashboards/animal-store.json', 'utf8')) as Dashboard;
    const unknown = dashboard.panels.flatMap((p) =>
      p.targets.flatMap((t) =>
        metricNames(t.expr)
          // haproxy_*: the balancer's exporter, checked against HAProxy by the cluster test.
          .filter((n) => !exported.has(n) && !PROMETHEUS_OWN.has(n) && !n.startsWith('haproxy_'))
          .map((n) => `${p.title}: ${n}`),
      ),
    );
    expect(unknown).toEqual([]);
    expect(dashboard.panels.length).toBeGreaterThanOrEqual(8);
  });
});
