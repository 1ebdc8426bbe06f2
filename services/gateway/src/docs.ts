import express, { Router } from "express";
import { getAbsoluteFSPath } from "swagger-ui-dist";

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

/** /docs: the API reference rendered from /openapi.json by Swagger UI, served from the npm package (no CDN). */
export function docsRouter(): Router {
  const router = Router();
  router.get("/docs", (_req, res) => {
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(getAbsoluteFSPath(), { index: false, maxAge: "1d" }));
  return router;
}
