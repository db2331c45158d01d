import { Inject, Injectable, Logger } from '@nestjs/common';
import { hashApiKey } from '../api-keys/api-key-format.js';
import { ApiKeysService, LEAK_OUTCOMES, type LeakOutcome } from '../api-keys/api-keys.service.js';
import type { Actor } from '../audit/audit.js';
import { apiKeysConfig, type ApiKeysConfig } from '../config/api-keys.config.js';
import { leakedKeysConfig, type LeakedKeysConfig } from '../config/leaked-keys.config.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { reportedKeys, tokenHash, type GithubReportEntry, type ReportSource } from './leaked-key-reports.js';

/** A secret's outcome, or `invalid`: not a key this service could have issued, dropped unlooked. */
export type ReportOutcome = LeakOutcome | 'invalid';

/** GitHub's label of one reported token. */
export interface GithubLabel {
  token_hash: string;
  label: 'true_positive' | 'false_positive';
}

const ACTORS: Record<ReportSource, Actor> = {
  credentials_revoke: { kind: 'system', name: 'credential-revocation' },
  github: { kind: 'system', name: 'secret-scanning' },
};

/**
 * What a report of leaked keys does (docs/api-keys.md, "When a key leaks"), whoever sends it:
 * the strings that are not keys of ours by their form are dropped without I/O, the rest hashed
 * and handed to ApiKeysService.recordLeaks (revoked or marked as LEAKED_KEY_ACTION says, each
 * with its audit entry), and every outcome counted in leaked_key_reports_total.
 */
@Injectable()
export class LeakedKeysService {
  private readonly logger = new Logger('LeakedKeys');

  constructor(
    private readonly keys: ApiKeysService,
    private readonly metrics: MetricsService,
    @Inject(apiKeysConfig.token) private readonly apiKeys: ApiKeysConfig,
    @Inject(leakedKeysConfig.token) private readonly config: LeakedKeysConfig,
  ) {
    for (const source of Object.keys(ACTORS))
      for (const outcome of [...LEAK_OUTCOMES, 'invalid']) metrics.leakedKeysReported(source, outcome, 0);
  }

  /**
   * POST /v1/credentials/revoke: how many strings were received. The count is all the answer
   * says, whatever the strings were, so it tells no caller which of them were keys.
   */
  async revokeCredentials(credentials: readonly string[]): Promise<{ received: number }> {
    await this.report('credentials_revoke', credentials);
    return { received: credentials.length };
  }

  /**
   * GitHub's verified report: per match, the SHA-256 of its token and whether it is a key of ours
   * (revoked or marked by this report or known as leaked, revoked or inactive before).
   */
  async githubReport(entries: readonly GithubReportEntry[]): Promise<GithubLabel[]> {
    // A report names one URL per match; a key found in several places is recorded with the first.
    const urls = new Map<string, string | undefined>();
    for (const { token, url } of entries) if (!urls.has(token)) urls.set(token, url);
    const outcomes = new Map<string, ReportOutcome>();
    for (const [url, tokens] of groupBy([...urls], ([, url]) => url)) {
      const found = await this.report(
        'github',
        tokens.map(([token]) => token),
        url,
      );
      for (const [token, outcome] of found) outcomes.set(token, outcome);
    }
    return entries.map(({ token }) => {
      const outcome = outcomes.get(token);
      const ours = outcome !== undefined && outcome !== 'invalid' && outcome !== 'not_found';
      return { token_hash: tokenHash(token), label: ours ? 'true_positive' : 'false_positive' };
    });
  }

  /** The outcome of each distinct string reported, and every outcome counted. */
  private async report(
    source: ReportSource,
    strings: readonly string[],
    url?: string,
  ): Promise<Map<string, ReportOutcome>> {
    const outcomes = new Map<string, ReportOutcome>(strings.map((s) => [s, 'invalid']));
    const keys = reportedKeys([...outcomes.keys()], this.apiKeys.apiKeyChecksumSecret);
    if (keys.length > 0) {
      const hashes = keys.map((key) => hashApiKey(key, this.apiKeys.apiKeyPepper));
      const byHash = await this.keys.recordLeaks(hashes, {
        actor: ACTORS[source],
        url,
        revoke: this.config.leakedKeyAction === 'revoke',
      });
      keys.forEach((key, i) => outcomes.set(key, byHash.get(hashes[i]) ?? 'not_found'));
    }
    const counts = new Map<ReportOutcome, number>();
    for (const outcome of outcomes.values()) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
    for (const [outcome, count] of counts) this.metrics.leakedKeysReported(source, outcome, count);
    const acted = (counts.get('revoked') ?? 0) + (counts.get('notified') ?? 0);
    if (acted > 0)
      this.logger.warn(`a report from ${source} recorded ${acted} leaked API key(s) (${this.config.leakedKeyAction})`);
    return outcomes;
  }
}

function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}
