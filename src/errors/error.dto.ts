import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ERROR_CODES } from './api-error.js';

@ApiSchema({ name: 'ErrorDetail' })
export class ErrorDetailDto {
  @ApiProperty({ example: 'name' })
  field: string;

  @ApiProperty({ example: 'name must be 1 to 255 characters long' })
  message: string;
}

/** The one error body of the service (docs/api.md, "Errors"). */
@ApiSchema({ name: 'Error' })
export class ErrorDto {
  @ApiProperty({ enum: ERROR_CODES, description: 'Machine-readable error code.', example: 'validation_failed' })
  code: string;

  @ApiProperty({ description: 'Human-readable description.', example: 'name must be a string' })
  message: string;

  @ApiProperty({ type: 'integer', description: 'The HTTP status code of the response.', example: 400 })
  status: number;

  @ApiPropertyOptional({ type: [ErrorDetailDto], description: 'Per-field problems of a 400.' })
  details?: ErrorDetailDto[];
}
