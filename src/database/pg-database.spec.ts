import fc from 'fast-check';
import pg from 'pg';
import { int64 } from '../../test/support/arbitraries.js';
import { parseInt8, statementQueries } from './pg-database.js';

describe('parseInt8', () => {
  it('gives every int64 exactly: a number while a double holds it, else a bigint (property)', () => {
    fc.assert(
      fc.property(int64, (value) => {
        const parsed = parseInt8(value.toString());
        expect(BigInt(parsed)).toBe(value);
        expect(typeof parsed).toBe(
          value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? 'number' : 'bigint',
        );
      }),
    );
    expect(parseInt8('9007199254740993')).toBe(9007199254740993n);
    expect(parseInt8('9223372036854775807')).toBe(9223372036854775807n);
  });
});

/**
 * Canary for statementQueries: its configs hold name, text and types on their prototype, which
 * pg's Query reads only because pg's copy of a config keeps the prototype. A failure here means
 * a pg upgrade copies configs another way, and Database.query would send no text.
 */
describe('statementQueries', () => {
  const statement = { name: 'pets_list', text: 'SELECT 1 WHERE $1::int IS NOT NULL' };

  it.each([
    [true, 'pets_list'],
    [false, undefined],
  ])('gives pg a query of the statement (named %s): its name, text, values and int8 parsers', (named, name) => {
    const queryOf = statementQueries(named);
    const query = new pg.Query(queryOf(statement, [7])) as unknown as Record<string, unknown>;
    expect(query.name).toBe(name);
    expect(query.text).toBe(statement.text);
    expect(query.values).toEqual([7]);
    const types = query.types as pg.CustomTypesConfig;
    expect(types.getTypeParser(pg.types.builtins.INT8, 'text')).toBe(parseInt8);
    // Each query has its own values over the statement's one prototype.
    const other = queryOf(statement, [8]);
    expect(other.values).toEqual([8]);
    expect(Object.getPrototypeOf(other)).toBe(Object.getPrototypeOf(queryOf(statement, [7])));
    expect(Object.keys(other)).toEqual(['values']);
  });
});
