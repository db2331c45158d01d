import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PLANS, type Plan } from '../../api-keys/plans.js';

@ApiSchema({ name: 'RateLimitWindow', description: 'One rate-limit window of the API key.' })
export class RateLimitWindowDto {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'Requests allowed in the window.', example: 300 })
  limit: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Requests left in the current window: the next counted request spends one, and its X-RateLimit-Remaining (when it describes this window) is this minus one.',
    example: 297,
  })
  remaining: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Unix time (seconds) at which the current window resets, as in X-RateLimit-Reset.',
    example: 1795867260,
  })
  reset: number;
}

@ApiSchema({ name: 'RateLimitWindows', description: 'The windows of the API key: a UTC minute and a UTC day.' })
export class RateLimitWindowsDto {
  @ApiProperty({ type: RateLimitWindowDto })
  minute: RateLimitWindowDto;

  @ApiProperty({ type: RateLimitWindowDto })
  day: RateLimitWindowDto;
}

@ApiSchema({ name: 'RateLimitBan', description: 'A temporary ban of the API key (too many requests while limited).' })
export class RateLimitBanDto {
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Unix time (seconds) at which the ban ends and requests can succeed again.',
    example: 1795867320,
  })
  until: number;
}

/** The caller's own quota (GET /v1/rate_limit, docs/rate-limits.md). */
@ApiSchema({ name: 'RateLimit' })
export class RateLimitDto {
  @ApiProperty({ enum: PLANS, enumName: 'Plan', description: 'The plan of the API key.' })
  plan: Plan;

  @ApiProperty({ type: RateLimitWindowsDto })
  limits: RateLimitWindowsDto;

  @ApiProperty({
    type: RateLimitBanDto,
    nullable: true,
    description: 'The ban in force, or null.',
  })
  banned: RateLimitBanDto | null;
}
