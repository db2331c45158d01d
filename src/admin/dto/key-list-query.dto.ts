import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PLANS } from '../../api-keys/plans.js';
import { PureQuery } from '../../http/api-validation.pipe.js';
import { KEY_STATES } from './key.dto.js';
import { AdminListQueryDto } from './list-query.dto.js';

/** The longest search text: a whole version 2 key (70 characters) fits. */
export const MAX_SEARCH_LENGTH = 100;

/** Query of the key list: a page, and the filters (search, plan, state), each at most once. */
@PureQuery()
export class KeyListQueryDto extends AdminListQueryDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_SEARCH_LENGTH,
    description:
      'A part of the name (case-insensitive), or the first characters of a key as pasted from a leak report (the whole key will do).',
    example: 'acme',
  })
  @IsOptional()
  @IsString({ message: 'search must be given once' })
  @Length(1, MAX_SEARCH_LENGTH, { message: `search must be 1 to ${MAX_SEARCH_LENGTH} characters` })
  search?: string;

  @ApiPropertyOptional({ enum: PLANS, description: 'Only keys on this plan.' })
  @IsOptional()
  @IsString({ message: 'plan must be given once' })
  @IsIn(PLANS, { message: `plan must be one of ${PLANS.join(', ')}` })
  plan?: string;

  @ApiPropertyOptional({ enum: KEY_STATES, description: 'Only keys in this state now.' })
  @IsOptional()
  @IsString({ message: 'state must be given once' })
  @IsIn(KEY_STATES, { message: `state must be one of ${KEY_STATES.join(', ')}` })
  state?: string;
}
