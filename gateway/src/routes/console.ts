import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import Router from '@koa/router';
import { ProblemError } from '@scada/contracts';
import { type EncodedFile, readEncodedFile, sendEncoded } from './encoded_file.ts';

/**
 * The built console (`console/build.ts` writes it; `npm run build` copies it beside each gateway bundle).
 * Read at run time, so a console built after the gateway started is served without a restart.
 */
const consoleDir = new URL('../../../console/dist/', import.meta.url);

/**
 * Scripts only from the gateway, as modules; no inline script, no eval, no inline style sheet; data only
 * from the gateway's own API and live channel. Nothing is loaded from elsewhere: plant networks have no internet.
 * Frames only from the origins an administrator allowed `Iframe` boards (`DISPLAY_FRAME_ORIGINS`), exactly those.
 */
export function consoleCspOf(frameOrigins: readonly string[] = []): string {
  return frameOrigins.length === 0 ? consoleCsp : `${consoleCsp}; frame-src ${frameOrigins.join(' ')}`;
}

/** The console's CSP when no origin may be framed. */
export const consoleCsp = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' };

/**
 * The console's files, by name, each with the compressed codings the build wrote beside it; read once when
 * all are there (a missing build is looked for again next time).
 */
type Files = { page: EncodedFile; assets: Map<string, EncodedFile> };

/** Whether a console build is in place (the root then leads to it). */
export function consoleBuilt(): boolean {
  return existsSync(new URL('index.html', consoleDir));
}

/**
 * `GET /console/` (the page, not cached, with the console's CSP) and `GET /console/assets/:file` (hashed
 * names, cached for a year), HEAD too. Each is sent Brotli- or gzip-compressed as the client's
 * `Accept-Encoding` allows (`encoded_file.ts`). A name is looked up among the build's files, never joined
 * to a path as it came.
 */
export function consoleRoutes(frameOrigins: readonly string[] = []): Router {
  const router = new Router();
  const csp = consoleCspOf(frameOrigins);
  let files: Promise<Files> | null = null;
  const load = () => {
    if (!files) {
      files = readBuild();
      files.catch(() => (files = null));
    }
    return files;
  };
  const built = async () => {
    try {
      return await load();
    } catch {
      throw new ProblemError('not_found', 'The console is not built: run `node --import tsx console/build.ts` (npm start does).');
    }
  };
  router.get('/console/', async (ctx) => {
    const { page } = await built();
    ctx.set('Content-Security-Policy', csp);
    ctx.set('Cache-Control', 'no-cache');
    sendEncoded(ctx, page);
  });
  // After the page's route: `/console` also matches `/console/` (routes are not strict about the slash).
  router.get('/console', (ctx) => {
    ctx.set('Cache-Control', 'no-cache');
    ctx.redirect('/console/');
  });
  router.get('/console/assets/:file', async (ctx) => {
    const asset = (await built()).assets.get(ctx.params.file ?? '');
    if (!asset) throw new ProblemError('not_found', `No file ${ctx.path}`);
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    sendEncoded(ctx, asset);
  });
  return router;
}

/**
 * Reads the page and every script and style sheet of the build into memory, each with its compressed
 * files (about 1 MB in all, most of it the code editor).
 */
async function readBuild(): Promise<Files> {
  const dir = new URL('assets/', consoleDir);
  const page = await readEncodedFile(new URL('index.html', consoleDir).pathname, 'text/html; charset=utf-8');
  const assets = new Map<string, EncodedFile>();
  for (const name of await readdir(dir)) {
    const type = types[name.split('.').pop() ?? ''];
    if (type) assets.set(name, await readEncodedFile(join(dir.pathname, name), type));
  }
  return { page, assets };
}
