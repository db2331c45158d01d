import { QUOTA_READS_PER_MINUTE, QuotaReads } from './quota-reads.js';

const T = Date.parse('2026-11-22T12:00:10Z');

describe('QuotaReads', () => {
  it('grants a key its reads of a UTC minute, then the seconds until the next minute', () => {
    const reads = new QuotaReads();
    for (let i = 0; i < QUOTA_READS_PER_MINUTE; i++) expect(reads.take('key:1', T)).toBe(0);
    expect(reads.take('key:1', T)).toBe(50);
    expect(reads.take('key:1', T + 49_500)).toBe(1);
    // Another key has its own budget; the next minute brings a new one.
    expect(reads.take('key:2', T)).toBe(0);
    expect(reads.take('key:1', Date.parse('2026-11-22T12:01:00Z'))).toBe(0);
  });
});
