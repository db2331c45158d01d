import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PET_STATUSES, PetStatus } from '../pet-status.js';

/** An animal as returned (interface, "Pet"). Identifiers are exact int64 JSON numbers. */
@ApiSchema({ name: 'Pet' })
export class PetDto {
  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, example: 1, description: 'Assigned by the service on creation.' })
  id: bigint;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'Rex' })
  name: string;

  @ApiProperty({ type: 'integer', format: 'int64', minimum: 1, example: 7 })
  categoryId: bigint;

  @ApiProperty({ enum: PET_STATUSES, enumName: 'PetStatus' })
  status: PetStatus;
}
