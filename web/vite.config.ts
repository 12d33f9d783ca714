import { defineConfig } from "vite";

/**
 * The page is built to static files in `web/dist`, which the gateway serves
 * at `/`. `npx vite web` serves it for development, forwarding `/api` to a
 * gateway on the default port (start it with `--allowed-hosts localhost:5173`, the `Host`
 * the proxy forwards).
 */
export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // Everything is local: no external fonts, scripts or CDNs.
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:4317" },
  },
});
