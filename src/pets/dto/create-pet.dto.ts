import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsString, ValidateIf } from 'class-validator';
import { INT64_MAX } from '../../json/int64.js';
import { IsName, IsPositiveInt64 } from '../../http/validators.js';
import { NAME_MAX_CODE_POINTS } from '../pet-name.js';
import { PET_STATUSES, PetStatus } from '../pet-status.js';

/** The request body of createPet (docs/api.md, "Requests"). Unknown fields, `id` included, are refused. */
@ApiSchema({ name: 'NewPet' })
export class CreatePetDto {
  @ApiProperty({
    minLength: 1,
    maxLength: NAME_MAX_CODE_POINTS,
    example: 'Rex',
    description:
      '1 to 255 Unicode code points; at least one visible character; no control characters, line separators, ' +
      'bidirectional embedding/override/isolate controls or unpaired surrogates.',
  })
  @IsString({ message: 'name must be a string' })
  @IsName(NAME_MAX_CODE_POINTS)
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
