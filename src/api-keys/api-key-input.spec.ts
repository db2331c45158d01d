import fc from 'fast-check';
import { ApiKeyInputError, checkExpiry, checkKeyChange, MAX_EXPIRY_MS } from './api-key-input.js';
import { MAX_CUSTOM_LIMIT, PLANS } from './plans.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const FREE = { plan: 'free' as const, perMinute: null, perDay: null };
const ENTERPRISE = { plan: 'enterprise' as const, perMinute: 10, perDay: 100 };

describe('checkKeyChange (the rules of a change, for the key tool and the admin API alike)', () => {
  it('changes only what is given', () => {
    expect(checkKeyChange({}, FREE, NOW)).toEqual({});
    expect(checkKeyChange({ name: '  Acme  ' }, FREE, NOW)).toEqual({ name: 'Acme' });
    expect(checkKeyChange({ plan: 'pro' }, ENTERPRISE, NOW)).toEqual({ plan: 'pro', perMinute: null, perDay: null });
    expect(checkKeyChange({ expiresAt: null }, FREE, NOW)).toEqual({ expiresAt: null });
  });

  it('keeps an enterprise key’s other limit, and asks both of a key moving to enterprise', () => {
    expect(checkKeyChange({ perDay: 500 }, ENTERPRISE, NOW)).toEqual({
      plan: 'enterprise',
      perMinute: 10,
      perDay: 500,
    });
    expect(() => checkKeyChange({ perDay: 5 }, ENTERPRISE, NOW)).toThrow(/cannot exceed/);
    expect(() => checkKeyChange({ plan: 'enterprise', perMinute: 5 }, FREE, NOW)).toThrow(/needs both/);
    expect(() => checkKeyChange({ perMinute: 5 }, FREE, NOW)).toThrow(/fixed limits/);
    expect(() => checkKeyChange({ plan: 'gold' }, FREE, NOW)).toThrow(/plan must be one of/);
  });

  it('takes an expiry in the future, at most ten years ahead', () => {
    const soon = new Date(NOW.getTime() + 1);
    expect(checkExpiry(soon, NOW)).toBe(soon);
    expect(() => checkExpiry(NOW, NOW)).toThrow(/in the future/);
    expect(() => checkExpiry(new Date(NOW.getTime() + MAX_EXPIRY_MS + 1), NOW)).toThrow(/3650 days/);
    expect(() => checkExpiry(new Date(NaN), NOW)).toThrow(ApiKeyInputError);
  });

  it('either refuses a change with ApiKeyInputError or returns a key every rule holds for (property)', () => {
    const limit = fc.oneof(fc.integer({ min: -5, max: 2 * MAX_CUSTOM_LIMIT }), fc.double(), fc.constant(undefined));
    fc.assert(
      fc.property(
        fc.record(
          {
            name: fc.string({ maxLength: 120 }),
            plan: fc.oneof(fc.constantFrom(...PLANS), fc.string({ maxLength: 12 })),
            perMinute: limit,
            perDay: limit,
            expiresAt: fc.oneof(fc.constant(null), fc.date({ noInvalidDate: false })),
          },
          { requiredKeys: [] },
        ),
        fc.constantFrom(FREE, ENTERPRISE),
        (change, current) => {
          let checked;
          try {
            checked = checkKeyChange(change as Parameters<typeof checkKeyChange>[0], current, NOW);
          } catch (err) {
            expect(err).toBeInstanceOf(ApiKeyInputError);
            return;
          }
          const plan = checked.plan ?? current.plan;
          const perMinute = checked.perMinute === undefined ? current.perMinute : checked.perMinute;
          const perDay = checked.perDay === undefined ? current.perDay : checked.perDay;
          expect(PLANS).toContain(plan);
          if (plan === 'enterprise') {
            expect(Number.isInteger(perMinute) && Number.isInteger(perDay)).toBe(true);
            expect((perMinute as number) >= 1 && (perMinute as number) <= (perDay as number)).toBe(true);
            expect(perDay as number).toBeLessThanOrEqual(MAX_CUSTOM_LIMIT);
          } else if (checked.plan !== undefined) {
            expect([checked.perMinute, checked.perDay]).toEqual([null, null]);
          }
          if (checked.name !== undefined) expect(checked.name.trim()).toBe(checked.name);
          if (checked.expiresAt) expect(checked.expiresAt.getTime()).toBeGreaterThan(NOW.getTime());
        },
      ),
    );
  });
});
