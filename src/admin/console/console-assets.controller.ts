import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from '../../errors/api-error.js';
import { AdminPublic } from '../admin-auth.guard.js';
import { consoleAssets } from './console-assets.js';
import { ASSETS_PATH } from './console-paths.js';

/** The console's scripts and styles (its own and uPlot's), served by this listener: no CDN. Open: they hold no data. */
@ApiExcludeController()
@AdminPublic()
@Controller(ASSETS_PATH)
export class ConsoleAssetsController {
  private readonly assets = consoleAssets();

  @Get(':file')
  file(@Param('file') file: string, @Res() res: Response): void {
    const asset = this.assets.get(file);
    if (asset === undefined) throw new ApiError('not_found', 'No such console asset.');
    res.status(200).setHeader('Content-Type', asset.type);
    res.send(asset.body);
  }
}
