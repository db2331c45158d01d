import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches, ValidateIf } from 'class-validator';
import { INT64_MAX } from '../../json/int64.js';
import { IsPositiveInt64 } from '../../http/validators.js';
import { PET_STATUSES, PetStatus } from '../pet-status.js';

/** The request body of createPet (interface, "NewPet"). Unknown fields, `id` included, are refused. */
@ApiSchema({ name: 'NewPet' })
export class CreatePetDto {
  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Rex', description: 'Not blank; no control characters.' })
  @IsString({ message: 'name must be a string' })
  @Length(1, 255, { message: 'name must be 1 to 255 characters long' })
  @Matches(/\S/, { message: 'name must not be blank' })
  // NUL cannot be stored by PostgreSQL, and a lone surrogate cannot be encoded as UTF-8 without
  // silently changing it; other control characters have no place in a name.
  // eslint-disable-next-line no-control-regex
  @Matches(/^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/, {
    message: 'name must not contain control characters or unpaired surrogates',
  })
  name: string;

  // An exact JSON number in the served document (a bigint, written by the lossless writer).
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number, example: 7 })
  @IsPositiveInt64()
  categoryId: number | bigint;

  @ApiPropertyOptional({ enum: PET_STATUSES, enumName: 'PetStatus', default: 'available' })
  // Omitted means the default; an explicit null is not a PetStatus.
  @ValidateIf((o: CreatePetDto) => o.status !== undefined)
  @IsIn(PET_STATUSES, { message: `status must be one of ${PET_STATUSES.join(', ')}` })
  status?: PetStatus;
}
