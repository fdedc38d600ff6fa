import {
  Body, Controller, Delete, Get, Header, HttpCode, HttpException, Inject, NotFoundException, Post, Req, Res, UseGuards, type Type,
} from '@nestjs/common';
import { ApplicationConfig, ModulesContainer } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { GATEKEEPER_OPTIONS } from '../gatekeeper.constants';
import { messages } from '../gatekeeper.messages';
import type { ResolvedGatekeeperOptions } from '../options/gatekeeper.options';
import { adminBase } from './admin-startup.notice';
import { ADMIN_CHALLENGE, CONSOLE_SESSION_COOKIE, ConsolePage, GatekeeperAdminGuard } from './gatekeeper-admin.guard';
import { setResponseHeader, type HeaderTarget } from './http-platform';

/**
 * The web console's files, built from lib/console by scripts/build-console.mjs into the package's dist/console:
 * three levels up from this file, whether it runs compiled (dist/nest/admin) or from its source (lib/nest/admin, in
 * the repository's tests and sample). Read once each; nothing is downloaded.
 */
const CONSOLE_FILES = join(__dirname, '..', '..', '..', 'dist', 'console');
const assets = new Map<string, string>();
function asset(name: 'console.html' | 'console.css' | 'console.client.js'): string {
  let text = assets.get(name);
  if (text === undefined) {
    try {
      text = readFileSync(join(CONSOLE_FILES, name), 'utf8');
    } catch (error) {
      throw new Error(`The web console's ${name} is not in ${CONSOLE_FILES} (npm run build writes it): ${(error as Error).message}`);
    }
    assets.set(name, text);
  }
  return text;
}

/** The sign-in's body: the token, as text (anything else is a wrong token). */
const SIGN_IN = z.object({ token: z.string() });

/** A request as the console reads it. */
interface ConsoleRequest {
  readonly method: string;
  readonly protocol?: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/**
 * Builds the web console's controller, put under `<admin path>/console` at bootstrap: the page and its files, and
 * (with a token) the sign-in that turns the token into a session cookie. The page's data and actions are the admin
 * API's routes, behind the same guard. With a guard of yours, the page itself is behind it too.
 */
export function createConsoleController(): Type {
  @Controller('gatekeeper/console')
  class ConsoleController {
    constructor(
      @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
      private readonly guard: GatekeeperAdminGuard,
      private readonly appConfig: ApplicationConfig,
      private readonly modules: ModulesContainer,
    ) {}

    /**
     * Where the admin routes are, and the only path the session cookie is sent to: `admin.path` under the app's
     * global prefix and the module's `RouterModule` path, as Nest registered the routes.
     */
    private get base(): string {
      return adminBase(this.options, this.appConfig, this.modules);
    }

    /** The console page (with a token, it asks for the token until the session cookie is set). */
    @Get()
    @UseGuards(GatekeeperAdminGuard)
    @ConsolePage()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Cache-Control', 'no-store')
    @Header('Content-Security-Policy', "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
    page(): string {
      return asset('console.html').replaceAll('{{base}}', this.base);
    }

    @Get('console.css')
    @Header('Content-Type', 'text/css; charset=utf-8')
    styles(): string {
      return asset('console.css');
    }

    /** The console's script: lib/console's views, bundled for the browser. */
    @Get('console.client.js')
    @Header('Content-Type', 'text/javascript; charset=utf-8')
    script(): string {
      return asset('console.client.js');
    }

    /** Whether this browser is signed in (`{ signIn: 'token' | 'guard' }`), or 401. */
    @Get('session')
    @Header('Cache-Control', 'no-store')
    state(@Req() request: ConsoleRequest, @Res({ passthrough: true }) response: HeaderTarget): { signedIn: true; signIn: 'token' | 'guard' } {
      if (!this.guard.tokenMode) return { signedIn: true, signIn: 'guard' };
      if (!this.guard.allows({ headers: request.headers, method: 'GET' })) {
        setResponseHeader(response, 'WWW-Authenticate', ADMIN_CHALLENGE);
        throw new HttpException({ message: 'sign in with the admin token', signIn: 'token' }, 401);
      }
      return { signedIn: true, signIn: 'token' };
    }

    /** Signs in with the admin token: sets the session cookie (HttpOnly, SameSite=Strict, for the admin routes only). */
    @Post('session')
    @HttpCode(204)
    signIn(@Body() body: unknown, @Req() request: ConsoleRequest, @Res({ passthrough: true }) response: HeaderTarget): void {
      if (!this.guard.tokenMode) throw new HttpException({ message: 'this console signs in through the app\'s own guard' }, 404);
      const given = SIGN_IN.safeParse(body);
      if (!given.success || !this.guard.isToken(given.data.token)) {
        // A sign-in form's answer to a wrong secret: 401 (what the page shows as "Wrong token"), with the challenge.
        setResponseHeader(response, 'WWW-Authenticate', ADMIN_CHALLENGE);
        throw new HttpException({ message: 'wrong token' }, 401);
      }
      const secure = request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
      setResponseHeader(response, 'Set-Cookie', `${CONSOLE_SESSION_COOKIE}=${this.guard.sessionValue}; Path=${this.base}; HttpOnly; SameSite=Strict${secure}`);
    }

    /** Signs out: clears the session cookie. */
    @Delete('session')
    @HttpCode(204)
    signOut(@Res({ passthrough: true }) response: HeaderTarget): void {
      setResponseHeader(response, 'Set-Cookie', `${CONSOLE_SESSION_COOKIE}=; Path=${this.base}; HttpOnly; SameSite=Strict; Max-Age=0`);
    }
  }
  return ConsoleController;
}

/**
 * Put under `<admin path>/console` instead of the console when `admin.console` is off: the page's address answers
 * 404 with a message naming the option, rather than Nest's bare "Cannot GET". It says nothing else (no guard:
 * whoever can reach the API's 401 learns no more here).
 */
export function createConsoleOffController(): Type {
  @Controller('gatekeeper/console')
  class ConsoleOffController {
    constructor(
      @Inject(GATEKEEPER_OPTIONS) private readonly options: ResolvedGatekeeperOptions,
      private readonly appConfig: ApplicationConfig,
      private readonly modules: ModulesContainer,
    ) {}

    @Get()
    page(): never {
      throw new NotFoundException(messages.consoleOff(adminBase(this.options, this.appConfig, this.modules)));
    }
  }
  return ConsoleOffController;
}
