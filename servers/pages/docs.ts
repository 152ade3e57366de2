/**
 * `GET {site_url}/docs`: the API reference of the whole site, rendered from `{site_url}/openapi.json`
 * by Swagger UI (swagger-ui-dist, the project's own prebuilt bundle and stylesheet, served from
 * node_modules by the service: no CDN). The page's only scripts are the bundle and a small
 * initializer file, both from the service (`script-src 'self'`); without JavaScript the page lists
 * every operation from the same document, server-rendered.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type RequestHandler } from 'express';
import { siteOpenApiDocument } from '../adapters/openapi.ts';
import type { AnyOperation } from '../operation.ts';
import type { Services } from '../services.ts';
import { html } from './html.ts';
import { layout, pageCsp } from './layout.ts';
import { sendWithFeaturedBrand } from './marketplace.ts';

export const DOCS_ASSETS_PATH = '/assets/swagger-ui';

const swaggerDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const docsCss = `.swagger-ui .info .title small{background:#4a5a6a!important}
.swagger-ui .info .title small.version-stamp{background:#1f6f2b!important}
.swagger-ui .info .title small pre{color:#fff!important;background:transparent!important}
.swagger-ui .opblock-get .opblock-summary-method{background:#0b5cad!important}
.swagger-ui .opblock-post .opblock-summary-method{background:#1f6f2b!important}
.swagger-ui .opblock-put .opblock-summary-method{background:#8a5300!important}
.swagger-ui .opblock-patch .opblock-summary-method{background:#2d5d5d!important}
.swagger-ui .opblock-delete .opblock-summary-method{background:#a11d1d!important}
.swagger-ui .info .url,.swagger-ui .info a,.swagger-ui .message .link{color:#0b5cad!important;text-decoration:underline!important}
.swagger-ui .btn.authorize{color:#1f6f2b!important;border-color:#1f6f2b!important}
.swagger-ui .btn.authorize span{color:#1f6f2b!important}.swagger-ui .btn.authorize svg{fill:#1f6f2b!important}
`;

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface OpenApiOperation {
  summary?: string;
  operationId?: string;
}

export function docsRouter(services: Services, operations: readonly AnyOperation[]): RequestHandler {
  const { config } = services;
  const router = express.Router({ strict: false });
  const site = config.site_url;
  const document = siteOpenApiDocument(operations, config) as {
    paths?: Record<string, Partial<Record<(typeof methods)[number], OpenApiOperation>>>;
    servers?: Array<{ url: string }>;
  };
  const list = Object.entries(document.paths ?? {}).flatMap(([p, item]) =>
    methods.flatMap((m) =>
      item[m] ? [{ method: m.toUpperCase(), path: p, summary: item[m]?.summary ?? '' }] : [],
    ),
  );
  const initializer = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(`${site}/openapi.json`)},
    dom_id: '#swagger-ui',
    deepLinking: false,
    defaultModelsExpandDepth: -1,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    onComplete: function () {
      var servers = document.querySelector('#servers');
      if (servers) servers.setAttribute('aria-label', 'Server');
    }
  });
  var fallback = document.getElementById('operations-fallback');
  if (fallback) fallback.hidden = true;
});
`;
  const body = html`<h1>API reference</h1>
<p>Every REST surface of the service in one OpenAPI 3.1 document: <a href="${site}/openapi.json">openapi.json</a> (<a href="${site}/openapi.yaml">YAML</a>). The interactive reference below is Swagger UI, served by this service.</p>
<div id="swagger-ui"></div>
<section id="operations-fallback" aria-labelledby="ops-h">
<h2 id="ops-h">Operations</h2>
<table><thead><tr><th scope="col">Method</th><th scope="col">Path</th><th scope="col">Summary</th></tr></thead><tbody>
${list.map((o) => html`<tr><td><code>${o.method}</code></td><td><code>${o.path}</code></td><td>${o.summary}</td></tr>`)}
</tbody></table>
</section>`;
  const page = {
    html: layout({
      config,
      path: '/docs',
      title: 'API reference',
      description: 'The API reference of every REST surface, from the whole-site OpenAPI document.',
      body,
      head: html`<link rel="stylesheet" href="${site}${DOCS_ASSETS_PATH}/swagger-ui.css">
<link rel="stylesheet" href="${site}/docs/docs.css">`,
      tail: html`<script src="${site}${DOCS_ASSETS_PATH}/swagger-ui-bundle.js"></script>
<script src="${site}/docs/init.js"></script>`,
    }),
    markdown: `# API reference\n\nOpenAPI document: ${site}/openapi.json\n\n| Method | Path | Summary |\n|---|---|---|\n${list
      .map((o) => `| ${o.method} | \`${o.path}\` | ${o.summary.replace(/\|/g, '\\|')} |`)
      .join('\n')}\n`,
    // Swagger UI sets inline styles from its bundle; scripts stay 'self' only.
    csp: pageCsp(config, { scripts: true }).replace("style-src 'self'", "style-src 'self' 'unsafe-inline'"),
  };
  router.get('/docs', (req, res, next) => {
    sendWithFeaturedBrand(services, req, res, page).catch(next);
  });
  // Contrast fixes over Swagger UI's own colours (axe-core: WCAG AA).
  router.get('/docs/docs.css', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('text/css; charset=utf-8').send(docsCss);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.set('Cache-Control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(initializer);
  });
  // Only the two files the page loads, from the package's own directory.
  for (const file of ['swagger-ui.css', 'swagger-ui-bundle.js']) {
    router.get(`${DOCS_ASSETS_PATH}/${file}`, (_req, res, next) => {
      res.set('X-Content-Type-Options', 'nosniff');
      res.sendFile(path.join(swaggerDir, file), { maxAge: '1d' }, (error) => error && next(error));
    });
  }
  return router;
}
