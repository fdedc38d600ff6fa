import { RequestMethod, type INestApplication } from '@nestjs/common';
import { HTTP_CODE_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatekeeperModule } from '../../lib';
import { CapturingLogger } from '../support/capturing-logger';

interface Operation {
  readonly parameters?: Array<{ name: string; in: string }>;
  readonly responses: Record<string, unknown>;
}
const doc = JSON.parse(readFileSync(join(__dirname, '../../docs/admin-api.openapi.json'), 'utf8')) as {
  openapi: string;
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
};

/** `GET /definitions/{name}` → the success status Nest answers with, for every route the module registered under `base`. */
function registeredRoutes(app: INestApplication, base: string): Map<string, number> {
  const routes = new Map<string, number>();
  const scanner = new MetadataScanner();
  for (const module of app.get(ModulesContainer).values()) {
    for (const { metatype } of module.controllers.values()) {
      if (!metatype) continue;
      const prefix = String(Reflect.getMetadata(PATH_METADATA, metatype)).replace(/^\/+|\/+$/g, '');
      if (prefix !== base && !prefix.startsWith(`${base}/`)) continue;
      for (const method of scanner.getAllMethodNames(metatype.prototype)) {
        const handler = (metatype.prototype as Record<string, object>)[method];
        const path = Reflect.getMetadata(PATH_METADATA, handler) as string | undefined;
        const verb = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (path === undefined || verb === undefined) continue;
        const full = `/${[prefix.slice(base.length), path].map((p) => p.replace(/^\/+|\/+$/g, '')).filter(Boolean).join('/')}`;
        const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (verb === RequestMethod.POST ? 201 : 200);
        routes.set(`${RequestMethod[verb]} ${full.replace(/:([A-Za-z]+)/g, '{$1}')}`, status);
      }
    }
  }
  return routes;
}

/** Every operation of the document, with the success status it promises. */
function documentedRoutes(): Map<string, number> {
  const routes = new Map<string, number>();
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [verb, operation] of Object.entries(operations)) {
      const success = Object.keys(operation.responses).filter((code) => code.startsWith('2'));
      expect([`${verb} ${path}`, success.length]).toEqual([`${verb} ${path}`, 1]);
      routes.set(`${verb.toUpperCase()} ${path}`, Number(success[0]));
    }
  }
  return routes;
}

/**
 * docs/admin-api.openapi.json describes exactly the routes the module registers (read from Nest's metadata of the
 * controllers it mounted, so a route added without the document fails here), with their success statuses and path
 * parameters.
 */
describe('the admin API\'s OpenAPI document', () => {
  let app: INestApplication;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [GatekeeperModule.forRoot({ backend: 'memory', membership: false, admin: { token: 'openapi-token-0123456789', console: true } })],
    }).setLogger(new CapturingLogger()).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app.close();
  });

  it('is OpenAPI 3.1, served under the default admin path', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0].url).toBe('/gatekeeper');
  });

  it('has every registered route, and no other, with the status Nest answers', () => {
    const registered = registeredRoutes(app, 'gatekeeper');
    expect(registered.size).toBeGreaterThan(25);
    expect([...documentedRoutes().entries()].sort()).toEqual([...registered.entries()].sort());
  });

  it('declares every path parameter', () => {
    for (const [path, operations] of Object.entries(doc.paths)) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      for (const [verb, operation] of Object.entries(operations)) {
        const declared = (operation.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name).sort();
        expect([`${verb} ${path}`, declared]).toEqual([`${verb} ${path}`, names]);
      }
    }
  });
});
