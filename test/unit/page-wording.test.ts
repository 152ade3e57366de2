/**
 * What a newcomer reads on the pages (issue 33 item 6): no Markdown left as literal backticks on
 * the home page, the soul registration counted the same way everywhere, a reference that Swagger UI
 * shows without its "dialect not supported" box, and sign-in and consent pages that name the service.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { consentPage, loginPage } from '../../auth/interactions/pages.ts';
import { openApiDocument, siteOpenApiDocument } from '../../servers/adapters/openapi.ts';
import { loadConfig, projectRoot, SERVICE_TITLE } from '../../servers/config.ts';
import { homePage } from '../../servers/pages/home.ts';
import { robotSoulPage } from '../../servers/pages/robot-soul.ts';
import { operations } from '../../servers/registry.ts';

const config = loadConfig({ env: {} });

/** The text a reader sees: tags, scripts, styles and code blocks taken out. */
const visibleText = (page: string): string =>
  page
    .replace(/<(script|style|pre|code)\b[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ');

describe('page wording', () => {
  it('shows code spans of operation descriptions as code on the home page, never as backticks', () => {
    const { html } = homePage(operations, config);
    expect(visibleText(html)).not.toContain('`');
    // The description that used to show literal backticks is there, its field as code.
    expect(html).toContain('create an account from <code>email</code>');
  });

  it('counts the soul registration the same way on the registry page and the robot soul page', () => {
    const { html, markdown } = robotSoulPage(config);
    expect(html).toContain('Register in two calls and a signature');
    expect(markdown).not.toMatch(/three calls/i);
    const souls = readFileSync(path.join(projectRoot, 'servers', 'pages', 'souls.ts'), 'utf8');
    expect(souls).toContain('Registration takes two calls');
    // The script checks each answer and registers a handle of its own each run (no TypeError on a 409).
    expect(markdown).toContain('if (!res.ok) throw new Error');
    expect(markdown).toMatch(/const handle = `my-robot-\$\{randomBytes/);
  });

  it("declares OpenAPI's own base dialect, which Swagger UI supports, in every document", () => {
    const documents = [
      siteOpenApiDocument(operations, config),
      ...(['cs', 'public_api', 'functions'] as const).map((s) => openApiDocument(s, operations, config)),
    ];
    for (const document of documents)
      expect(document.jsonSchemaDialect).toBe('https://spec.openapis.org/oas/3.1/dialect/base');
  });

  it('names the service on the sign-in and consent pages', () => {
    const login = loginPage({ action: '/i/1', csrf: 'c', clientName: 'My agent' });
    const consent = consentPage({
      action: '/i/1',
      csrf: 'c',
      clientName: 'My agent',
      clientId: 'client',
      redirectHost: 'localhost',
      scopes: ['openid'],
      email: 'owner@example.com',
    });
    for (const page of [login, consent]) {
      expect(page).toContain(`<title>`);
      expect(page).toMatch(new RegExp(`<title>[^<]* - ${SERVICE_TITLE}</title>`));
      expect(visibleText(page)).toContain(SERVICE_TITLE);
    }
    expect(visibleText(login)).toContain(`your ${SERVICE_TITLE} account`);
  });
});
