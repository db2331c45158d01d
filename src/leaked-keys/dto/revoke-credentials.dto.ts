import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString } from 'class-validator';
import { MAX_REPORTED_SECRETS } from '../leaked-key-reports.js';

/** The body of revokeCredentials. Unknown fields are refused. */
@ApiSchema({ name: 'CredentialsRevocation' })
export class RevokeCredentialsDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string' },
    minItems: 1,
    maxItems: MAX_REPORTED_SECRETS,
    description: `1 to ${MAX_REPORTED_SECRETS} strings found exposed: API keys (\`ask2_…\`, \`ask_…\`) or anything that looks like one.`,
    example: ['ask2_0AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxY'],
  })
  // class-validator checks the rules bottom up: the type first, each string last.
  @IsString({ each: true, message: 'credentials must hold only strings' })
  @ArrayMaxSize(MAX_REPORTED_SECRETS, { message: `credentials must hold at most ${MAX_REPORTED_SECRETS} strings` })
  @ArrayMinSize(1, { message: 'credentials must hold at least 1 string' })
  @IsArray({ message: 'credentials must be an array of strings' })
  credentials!: string[];
}

/** The answer of revokeCredentials: the same whatever the strings were. */
@ApiSchema({ name: 'CredentialsRevocationReceipt' })
export class CredentialsReceiptDto {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: MAX_REPORTED_SECRETS,
    description: 'How many strings were received (not how many were keys, which the answer never tells).',
    example: 1,
  })
  received!: number;
}
