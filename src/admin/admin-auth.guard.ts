import { CanActivate, ExecutionContext, Injectable, SetMetadata, createParamDecorator } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AdminTokensService } from '../admin-tokens/admin-tokens.service.js';
import type { Actor } from '../audit/audit.js';
import { ApiError } from '../errors/api-error.js';
import { requestContext } from '../request-context/request-context.js';

const ADMIN_PUBLIC = 'animal-store.admin-public';

/** Marks an admin listener route open without a token (its OpenAPI document only). */
export const AdminPublic = (): MethodDecorator & ClassDecorator => SetMetadata(ADMIN_PUBLIC, true);

/** The admin token the request was made with (its id and name): the actor of the changes it makes. */
export const AdminActor = createParamDecorator((_data: unknown, ctx: ExecutionContext): Actor => {
  const { adminActor: name, adminTokenId: tokenId } = requestContext(ctx.switchToHttp().getRequest<Request>());
  if (name === undefined || tokenId === undefined) {
    throw new Error('AdminActor on a route the admin token guard did not check');
  }
  return { kind: 'admin_token', tokenId, name };
});

const BEARER = /^Bearer ([^\s]+)$/i;

/**
 * The admin API's only guard, global on its application: every route but the document needs
 * `Authorization: Bearer <admin token>` of a live token. Missing: 401 missing_admin_token;
 * anything else (an unknown or revoked token, an API key, a malformed header): 401
 * invalid_admin_token. Well-formed tokens this instance has never found are looked up within a
 * budget per client address (AdminTokensService.authenticate): past it, 429 rate_limit_exceeded.
 * The token's name becomes the request's actor.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: AdminTokensService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.reflector.getAllAndOverride<boolean>(ADMIN_PUBLIC, [context.getHandler(), context.getClass()])) {
      return true;
    }
    const req = context.switchToHttp().getRequest<Request>();
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') {
      throw new ApiError(
        'missing_admin_token',
        'An admin token is required: send it as "Authorization: Bearer <token>".',
      );
    }
    const token = BEARER.exec(header)?.[1];
    const info = token === undefined ? null : await this.tokens.authenticate(token, req.ip ?? '');
    if (info === null) {
      throw new ApiError('invalid_admin_token', 'The admin token is not valid: it is unknown or has been revoked.');
    }
    Object.assign(requestContext(req), { adminActor: info.name, adminTokenId: info.id });
    return true;
  }
}
