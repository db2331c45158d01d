import { Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AdminSessionsService } from '../../admin-sessions/admin-sessions.service.js';
import { AdminTokensService } from '../../admin-tokens/admin-tokens.service.js';
import { adminConfig, type AdminConfig } from '../../config/admin.config.js';
import { ApiError } from '../../errors/api-error.js';
import { AdminPublic } from '../admin-auth.guard.js';
import { checkSameOrigin, secureCookie, sessionCookie } from './console-session.guard.js';
import { SIGN_IN_PATH, safeNext } from './console-paths.js';
import { signInPage } from './console-views.js';
import { FormBody } from './form-body.interceptor.js';
import type { Html } from './html.js';

export function sendHtml(res: Response, status: number, body: Html): void {
  res.status(status).setHeader('Content-Type', 'text/html; charset=utf-8');
  res.send(body.text);
}

/** One message for every refused token: it says nothing about which tokens exist. */
export const REFUSED_TOKEN = 'That is not a valid admin token: it is unknown or has been revoked.';

/**
 * Signing in to the console: an admin token (checked as the admin API checks a bearer token,
 * within the same budget of unknown tokens per address) starts a session held in a cookie.
 */
@ApiExcludeController()
@AdminPublic()
@Controller(SIGN_IN_PATH)
export class ConsoleSignInController {
  constructor(
    private readonly tokens: AdminTokensService,
    private readonly sessions: AdminSessionsService,
    @Inject(adminConfig.token) private readonly config: AdminConfig,
  ) {}

  @Get()
  show(@Query('next') next: unknown, @Res() res: Response): void {
    sendHtml(res, 200, signInPage(safeNext(typeof next === 'string' ? next : undefined)));
  }

  @Post()
  @HttpCode(303)
  @FormBody()
  async signIn(@Req() req: Request & { body: URLSearchParams }, @Res() res: Response): Promise<void> {
    checkSameOrigin(req, this.config);
    const next = safeNext(req.body.get('next') ?? undefined);
    const token = (req.body.get('token') ?? '').trim();
    let info;
    try {
      info = token === '' ? null : await this.tokens.authenticate(token, req.ip ?? '');
    } catch (err) {
      // Past the address's budget of unknown tokens (429), or the instance's (503).
      if (!(err instanceof ApiError)) throw err;
      for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
      return sendHtml(res, err.status, signInPage(next, err.message));
    }
    if (info === null) return sendHtml(res, 401, signInPage(next, REFUSED_TOKEN));
    const id = await this.sessions.start(info.id);
    res.setHeader('Set-Cookie', sessionCookie(id, this.sessions.maxAgeSeconds, secureCookie(this.config, req)));
    res.status(303).setHeader('Location', next);
    res.end();
  }
}
