import { readFile, stat } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

const notBuiltPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>rudder</title></head>
<body><h1>rudder gateway</h1>
<p>The web page is not built. Run <code>npm run build</code> in <code>web/</code>
(or <code>npm start</code>), then reload. The HTTP API under <code>/api</code> works meanwhile.</p>
</body></html>
`;

async function fileIfPresent(path: string): Promise<Buffer | null> {
  try {
    if (!(await stat(path)).isFile()) return null;
    return await readFile(path);
  } catch {
    return null;
  }
}

/**
 * Serves the built page from `root` (normally `web/dist`): the file the path
 * names, else `index.html` (the page routes on the client), else, when the
 * page was never built, a short page saying so. Paths cannot leave `root`.
 */
export async function serveStatic(root: string, urlPath: string): Promise<Response> {
  const relative = normalize(decodeURIComponent(urlPath)).replace(/^([/\\])+/, "");
  const candidate = join(root, relative);
  const inside = candidate === root || candidate.startsWith(root.endsWith(sep) ? root : root + sep);
  const file = inside && relative !== "" ? await fileIfPresent(candidate) : null;
  if (file) {
    const type = contentTypes[extname(candidate).toLowerCase()] ?? "application/octet-stream";
    return new Response(new Uint8Array(file), { headers: { "content-type": type } });
  }
  const index = await fileIfPresent(join(root, "index.html"));
  if (index) {
    return new Response(new Uint8Array(index), {
      headers: { "content-type": contentTypes[".html"]!, "cache-control": "no-cache" },
    });
  }
  return new Response(notBuiltPage, { headers: { "content-type": contentTypes[".html"]! } });
}
