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

  @ApiProperty({
    description: "The response's X-Request-Id: quote it to support, with or without the headers.",
    example: '0b6a8c9e-3f5d-4d2b-9a7e-6f1c2d3e4f50',
  })
  requestId: string;

  @ApiPropertyOptional({ type: [ErrorDetailDto], description: 'Per-field problems of a 400.' })
  details?: ErrorDetailDto[];
}
