import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import { PureQuery } from '../../http/api-validation.pipe.js';
import { PET_STATUSES, PetStatus } from '../pet-status.js';

/**
 * Query of listPets. Values arrive as strings; a parameter given twice arrives as an array and
 * fails IsString. Unknown parameters are refused (whitelist), so a typo cannot widen a result.
 */
@PureQuery() // class-validator's own rules only: accepted queries may be remembered
export class ListPetsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: 20,
    description: 'Maximum number of animals returned.',
  })
  @IsOptional()
  @IsString({ message: 'limit must be given once' })
  @Matches(/^(?:100|[1-9][0-9]?)$/, { message: 'limit must be an integer from 1 to 100' })
  limit?: string;

  @ApiPropertyOptional({
    enum: PET_STATUSES,
    enumName: 'PetStatus',
    description: 'Only animals with this availability.',
  })
  @IsOptional()
  @IsString({ message: 'status must be given once' })
  @IsIn(PET_STATUSES, { message: `status must be one of ${PET_STATUSES.join(', ')}` })
  status?: PetStatus;

  @ApiPropertyOptional({
    description: 'Opaque position from the `Link: rel="next"` header of the previous page.',
  })
  @IsOptional()
  @IsString({ message: 'cursor must be given once' })
  @Matches(/^[A-Za-z0-9_-]{1,64}$/, { message: 'cursor is not a cursor this service issued' })
  cursor?: string;
}
