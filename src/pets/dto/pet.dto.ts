import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { INT64_MAX } from '../../json/int64.js';
import { PET_STATUSES, PetStatus } from '../pet-status.js';

/** int64 bounds of an identifier; the maximum is a bigint, an exact number in the served document. */
const ID_RANGE = { type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number } as const;

/** An animal as returned. Identifiers are exact int64 JSON numbers (docs/api.md, "Identifiers (int64)"). */
@ApiSchema({ name: 'Pet' })
export class PetDto {
  @ApiProperty({ ...ID_RANGE, example: 1, description: 'Assigned by the service on creation.' })
  id: bigint;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Rex' })
  name: string;

  @ApiProperty({ ...ID_RANGE, example: 7 })
  categoryId: bigint;

  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus' })
  status: PetStatus;
}
