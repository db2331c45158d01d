import { readFileSync } from 'node:fs';
import path from 'node:path';
import { limitsFor, MAX_CUSTOM_LIMIT, PLAN_LIMITS } from './plans.js';

describe('plan limits', () => {
  it('are the interface table, and an enterprise key carries its own', () => {
    expect(PLAN_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 300, perDay: 10_000 },
      business: { perMinute: 1000, perDay: 100_000 },
    });
    expect(limitsFor('pro', null, null)).toEqual({ perMinute: 300, perDay: 10_000 });
    expect(limitsFor('enterprise', 5000, 2_000_000)).toEqual({ perMinute: 5000, perDay: 2_000_000 });
    expect(() => limitsFor('enterprise', null, 5)).toThrow();
  });

  it('take enterprise limits up to the number the manuals and the admin OpenAPI document state', () => {
    const root = path.join(__dirname, '../..');
    for (const page of ['docs/api-keys.md', 'docs/admin-api.md']) {
      const text = readFileSync(path.join(root, page), 'utf8').replace(/\s+/g, ' ');
      const stated = [...text.matchAll(/\b1 to ([\d,]+), per minute not above per day/g)].map((m) => m[1]);
      expect({ page, stated }).toEqual({ page, stated: [MAX_CUSTOM_LIMIT.toLocaleString('en-US')] });
    }
    const document = JSON.parse(readFileSync(path.join(root, 'test/admin-openapi.snapshot.json'), 'utf8')) as {
      components: { schemas: Record<string, { properties: Record<string, { maximum?: number }> }> };
    };
    for (const schema of ['NewApiKey', 'ApiKeyChange']) {
      for (const field of ['perMinute', 'perDay']) {
        expect({ schema, field, maximum: document.components.schemas[schema].properties[field].maximum }).toEqual({
          schema,
          field,
          maximum: MAX_CUSTOM_LIMIT,
        });
      }
    }
  });
});
