import { ValidationPipe } from '@nestjs/common';
import { IsOptional, IsString } from 'class-validator';
import { ListPetsQueryDto } from '../pets/dto/list-pets-query.dto.js';
import { ApiError } from '../errors/api-error.js';
import { ApiValidationPipe } from './api-validation.pipe.js';

/** A query DTO without @PureQuery: its rules might read something besides the query. */
class UnmarkedQueryDto {
  @IsOptional()
  @IsString()
  q?: string;
}

const query = { type: 'query', metatype: ListPetsQueryDto, data: undefined } as const;

describe('ApiValidationPipe on queries', () => {
  it('answers a repeated accepted query with an equal, separate DTO', async () => {
    const pipe = new ApiValidationPipe();
    const first = (await pipe.transform({ limit: '20', status: 'sold' }, query)) as ListPetsQueryDto;
    first.limit = 'changed by a handler';
    const second = (await pipe.transform({ limit: '20', status: 'sold' }, query)) as ListPetsQueryDto;
    expect(second).toBeInstanceOf(ListPetsQueryDto);
    expect(second).not.toBe(first);
    expect({ ...second }).toEqual({
      ...((await new ApiValidationPipe().transform({ limit: '20', status: 'sold' }, query)) as object),
    });
    expect(second.limit).toBe('20');
    expect(second.status).toBe('sold');
  });

  it('refuses a bad query every time, with its own error', async () => {
    const pipe = new ApiValidationPipe();
    for (let i = 0; i < 3; i++) {
      await expect(pipe.transform({ limit: '101' }, query)).rejects.toMatchObject({
        status: 400,
        code: 'invalid_parameter',
        details: [{ field: 'limit', message: 'limit must be an integer from 1 to 100' }],
      });
    }
    await expect(pipe.transform({ limit: ['20', '20'] }, query)).rejects.toBeInstanceOf(ApiError);
    await expect(pipe.transform({ limit: '20', colour: 'red' }, query)).rejects.toMatchObject({
      code: 'unknown_parameter',
    });
  });

  it('does not confuse queries that concatenate alike', async () => {
    const pipe = new ApiValidationPipe();
    await expect(pipe.transform({ status: 'sold' }, query)).resolves.toMatchObject({ status: 'sold' });
    await expect(pipe.transform({ status: 'soldx' }, query)).rejects.toMatchObject({ code: 'invalid_parameter' });
    await expect(pipe.transform({ cursor: 'abc', limit: '2' }, query)).resolves.toMatchObject({
      cursor: 'abc',
      limit: '2',
    });
    await expect(pipe.transform({ cursor: 'abc;limit=2' }, query)).rejects.toMatchObject({ code: 'invalid_parameter' });
  });

  it('validates a @PureQuery DTO once per distinct accepted query, and an unmarked DTO every time', async () => {
    const validated = jest.spyOn(ValidationPipe.prototype, 'transform');
    try {
      const pipe = new ApiValidationPipe();
      for (let i = 0; i < 3; i++) await pipe.transform({ limit: '20' }, query);
      expect(validated).toHaveBeenCalledTimes(1);
      await pipe.transform({ limit: '21' }, query);
      expect(validated).toHaveBeenCalledTimes(2);

      validated.mockClear();
      const unmarked = { type: 'query', metatype: UnmarkedQueryDto, data: undefined } as const;
      for (let i = 0; i < 3; i++) await expect(pipe.transform({ q: 'x' }, unmarked)).resolves.toEqual({ q: 'x' });
      expect(validated).toHaveBeenCalledTimes(3);
    } finally {
      validated.mockRestore();
    }
  });
});
