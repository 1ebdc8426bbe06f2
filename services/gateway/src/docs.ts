import { Router } from "express";
import { getAbsoluteFSPath } from "swagger-ui-dist";
import { listedFiles } from "@locus/http";

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Locus API reference</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });`;

/**
 * The page's own script and styles only. Swagger UI sets inline styles on its elements, and shows
 * the schema's pictures as data: URLs.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join("; ");

/** The two files of swagger-ui-dist the page uses; the rest of its folder (the petstore demo) is not served. */
const ASSETS: Record<string, string> = {
  "swagger-ui.css": "text/css",
  "swagger-ui-bundle.js": "text/javascript",
};

/** /docs: the API reference rendered from /openapi.json by Swagger UI, served from the npm package (no CDN). */
export function docsRouter(): Router {
  const router = Router();
  router.get("/docs", (_req, res) => {
    res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    res.setHeader("X-Frame-Options", "DENY");
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.get("/docs/assets/:file", listedFiles(getAbsoluteFSPath(), ASSETS, "1d"));
  return router;
}
