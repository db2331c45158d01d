import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { AUDIT_ACTIONS } from '../../audit/audit.js';
import { PureQuery } from '../../http/api-validation.pipe.js';
import { AdminListQueryDto } from './list-query.dto.js';

/** Query of the audit log: a page, and the filters (actor, action, keyId), each at most once. */
@PureQuery()
export class AuditListQueryDto extends AdminListQueryDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    description: 'Only entries of this actor, exactly as entries show it (`ops-alice`, `cli:alice`).',
  })
  @IsOptional()
  @IsString({ message: 'actor must be given once' })
  @Length(1, 200, { message: 'actor must be 1 to 200 characters' })
  actor?: string;

  @ApiPropertyOptional({ enum: AUDIT_ACTIONS, description: 'Only entries of this action.' })
  @IsOptional()
  @IsString({ message: 'action must be given once' })
  @IsIn(AUDIT_ACTIONS, { message: `action must be one of ${AUDIT_ACTIONS.join(', ')}` })
  action?: string;

  @ApiPropertyOptional({
    type: 'string',
    pattern: '^[1-9][0-9]{0,18}$',
    description: 'Only entries about the API key with this id.',
  })
  @IsOptional()
  @IsString({ message: 'keyId must be given once' })
  @Matches(/^[1-9][0-9]{0,18}$/, { message: 'keyId must be an integer from 1 to 9223372036854775807' })
  keyId?: string;
}
