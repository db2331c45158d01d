import { Body, Controller, Headers, HttpCode, Logger, Post, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../auth/public.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { JsonBody, parseJsonBytes } from '../http/json-body.interceptor.js';
import { NoQueryParametersPipe } from '../http/no-query-parameters.pipe.js';
import { MetricsService } from '../metrics/metrics.service.js';
import { GithubPublicKeys } from './github-public-keys.service.js';
import { MAX_REPORT_BODY_BYTES, parseGithubReport } from './leaked-key-reports.js';
import { LeakedKeysService, type GithubLabel } from './leaked-keys.service.js';

/**
 * GitHub's secret scanning partner endpoint (docs/operations.md, "GitHub secret scanning"): a
 * report signed by GitHub's current key over its raw body, answered with a label per token.
 * Registered only while SECRET_SCANNING_GITHUB_KEYS is set; GitHub's interface, not this API's,
 * so it is left out of the OpenAPI document.
 */
@ApiExcludeController()
@Controller('v1/secret-scanning')
export class GithubSecretScanningController {
  private readonly logger = new Logger('SecretScanning');

  constructor(
    private readonly keys: GithubPublicKeys,
    private readonly leakedKeys: LeakedKeysService,
    private readonly metrics: MetricsService,
  ) {}

  @Post('github')
  @HttpCode(200)
  @Public()
  @JsonBody({ maxBytes: MAX_REPORT_BODY_BYTES, raw: true })
  async report(
    @Body() body: Buffer | undefined,
    @Headers('github-public-key-identifier') keyId: string | undefined,
    @Headers('github-public-key-signature') signature: string | undefined,
    @Query(NoQueryParametersPipe) _query: void,
  ): Promise<GithubLabel[]> {
    const raw = body ?? Buffer.alloc(0);
    const refusal = await this.keys.check(raw, keyId, signature);
    if (refusal !== undefined) {
      this.metrics.leakedKeyReportRefused('github', 'invalid_signature');
      this.logger.warn(
        `refused a secret scanning report: signature ${refusal} (key ${JSON.stringify(keyId?.slice(0, 100))})`,
      );
      throw new ApiError(
        'invalid_signature',
        'The report is not signed by a current GitHub secret scanning key: Github-Public-Key-Identifier and Github-Public-Key-Signature must verify over the body.',
        { headers: { 'WWW-Authenticate': 'Github-Public-Key-Signature realm="secret-scanning"' } },
      );
    }
    return this.leakedKeys.githubReport(parseGithubReport(parseJsonBytes(raw)));
  }
}
