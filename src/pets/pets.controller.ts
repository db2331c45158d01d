import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyAuth } from '../auth/api-key-auth.decorator.js';
import { ApiErrorResponses } from '../errors/api-responses.decorator.js';
import { ApiError } from '../errors/api-error.js';
import { JsonBody } from '../http/json-body.interceptor.js';
import { NoQueryParametersPipe } from '../http/no-query-parameters.pipe.js';
import { INT64_MAX, toPositiveInt64 } from '../json/int64.js';
import { declarePlainJson } from '../json/json-codec.js';
import { publicUrlsConfig, type PublicUrlsConfig } from '../config/public-urls.config.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/idempotency-key.js';
import type { IdempotentCall } from '../idempotency/idempotent-call.js';
import { Idempotent, IdempotentCallParam } from '../idempotency/idempotent.decorator.js';
import { Deprecated } from '../deprecation/deprecation.js';
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET } from './get-pet-deprecation.js';
import { CreatePetDto } from './dto/create-pet.dto.js';
import { ListPetsQueryDto } from './dto/list-pets-query.dto.js';
import { PetDto } from './dto/pet.dto.js';
import { nextPageLink, pageRequest } from './paging.js';
import { ParsePetIdPipe } from './parse-pet-id.pipe.js';
import type { NewPet, Pet } from './pets.repository.js';
import { PetsService } from './pets.service.js';

@ApiTags('pets')
@ApiExtraModels(PetDto)
@ApiErrorResponses(429, 500, 503)
@Controller('v1/pets')
export class PetsController {
  constructor(
    private readonly pets: PetsService,
    @Inject(publicUrlsConfig.token) private readonly config: PublicUrlsConfig,
  ) {}

  @Get()
  @ApiKeyAuth({ scope: 'pets:read', operation: 'listPets' })
  @ApiOperation({
    operationId: 'listPets',
    summary: 'List animals',
    description: 'Ordered by id. When more animals follow, the `Link` header carries the next page (rel="next").',
  })
  @ApiResponse({
    status: 200,
    description: 'A page of animals, a bare array.',
    schema: { $ref: '#/components/schemas/Pets' },
    headers: {
      Link: { description: 'RFC 8288 link to the next page, when there is one.', schema: { type: 'string' } },
    },
  })
  @ApiErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] })
  async list(@Query() query: ListPetsQueryDto, @Res({ passthrough: true }) res: Response): Promise<Pet[]> {
    const request = pageRequest(query);
    const page = await this.pets.list(request);
    const link = nextPageLink(this.config.publicBaseUrl, request, page.nextAfter);
    if (link !== undefined) res.setHeader('Link', link);
    return declarePage(page.pets);
  }

  @Post()
  @HttpCode(201)
  @ApiKeyAuth({ scope: 'pets:write', operation: 'createPet' })
  @ApiOperation({
    operationId: 'createPet',
    summary: 'Add an animal',
    description:
      'Stores the animal and answers 201 with it, its assigned id and its `Location`. `status` defaults to `available`. Send an `Idempotency-Key` to make retries safe.',
  })
  @ApiResponse({
    status: 201,
    description: 'The stored animal with its assigned id.',
    type: PetDto,
    headers: {
      Location: { description: 'URL of the new animal.', schema: { type: 'string' } },
      [IDEMPOTENT_REPLAYED_HEADER]: {
        description:
          'Present, `true`, when this is the replayed response of an earlier request with the same Idempotency-Key.',
        schema: { type: 'string', enum: ['true'] },
      },
    },
  })
  @ApiErrorResponses(
    { status: 400, codes: ['validation_failed', 'malformed_json', 'invalid_parameter', 'unknown_parameter'] },
    413,
    415,
  )
  @Idempotent('createPet')
  @JsonBody()
  async create(
    @Body() body: CreatePetDto,
    @Query(NoQueryParametersPipe) _query: void,
    @Res({ passthrough: true }) res: Response,
    @IdempotentCallParam() idempotency?: IdempotentCall,
  ): Promise<Pet> {
    const pet: NewPet = {
      name: body.name,
      categoryId: toPositiveInt64(body.categoryId) as bigint, // validated by IsPositiveInt64
      status: body.status ?? 'available',
    };
    const { pet: created, location } = await this.pets.create(pet, idempotency);
    res.setHeader('Location', location);
    return created;
  }

  @Get(':petId')
  @ApiKeyAuth({ scope: 'pets:read', operation: 'getPet' })
  @Deprecated({
    deprecatedAt: GET_PET_DEPRECATED_AT,
    sunset: GET_PET_SUNSET,
    successor: '/pets',
    gone: `GET /pets/{petId} was removed on ${GET_PET_SUNSET.toUTCString()}; use GET /pets with the status filter.`,
  })
  @ApiOperation({
    operationId: 'getPet',
    summary: 'Get an animal (deprecated)',
    description: `Deprecated; removed on ${GET_PET_SUNSET.toUTCString()} (410 from then on). Use GET /pets with the status filter.`,
    deprecated: true,
  })
  @ApiParam({
    name: 'petId',
    description: 'Identifier of the animal.',
    schema: { type: 'integer', format: 'int64', minimum: 1, maximum: INT64_MAX as unknown as number },
  })
  @ApiResponse({ status: 200, description: 'The animal.', type: PetDto })
  @ApiErrorResponses({ status: 400, codes: ['invalid_parameter', 'unknown_parameter'] }, 404, 410)
  async findOne(
    @Param('petId', ParsePetIdPipe) petId: bigint,
    @Query(NoQueryParametersPipe) _query: void,
  ): Promise<Pet> {
    const pet = await this.pets.findOne(petId);
    if (!pet) throw new ApiError('not_found', `No animal has id ${petId}.`);
    return pet;
  }
}

/**
 * A page as the JSON writer's plain kind: each row holds its four columns, strings and int64s
 * (a number, or a bigint beyond 2^53), so the writer need not scan it.
 */
function declarePage(pets: Pet[]): Pet[] {
  let withBigint = false;
  for (let i = 0; i < pets.length && !withBigint; i++)
    withBigint = typeof pets[i].id === 'bigint' || typeof pets[i].categoryId === 'bigint';
  return declarePlainJson(pets, withBigint);
}
