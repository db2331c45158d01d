import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { PureQuery } from '../../http/api-validation.pipe.js';

/** Query of the admin API's lists (keys, audit log): a page size and the cursor of a `Link`. */
@PureQuery()
export class AdminListQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: 20,
    description: 'Maximum number of items returned.',
  })
  @IsOptional()
  @IsString({ message: 'limit must be given once' })
  @Matches(/^(?:100|[1-9][0-9]?)$/, { message: 'limit must be an integer from 1 to 100' })
  limit?: string;

  @ApiPropertyOptional({ description: 'Opaque position from the `Link: rel="next"` header of the previous page.' })
  @IsOptional()
  @IsString({ message: 'cursor must be given once' })
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'cursor is not a cursor this service issued' })
  cursor?: string;
}
