// Bundles the `rudder` executable (src/cli.ts) into dist/cli.js plus lazily loaded chunks, after
// tsc has emitted dist/. Loading one bundled file instead of a few hundred ES modules
// is most of what `rudder run` costs before its first model request.
// Only dist/cli.js and dist/cli-chunk-*.js are written; the library entries (dist/index.js,
// dist/agent, dist/gateway) stay as tsc emitted them.
// Run: node scripts/bundle-cli.mjs (part of `npm run build`).
import { chmodSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src");
const dist = join(root, "dist");

/**
 * Packages left to Node's own resolution: native addons and what ships binaries or reads its
 * own files relative to itself. They are loaded lazily (the gateway's store, the browser tests,
 * the permission gate's bash grammar, which finds its WebAssembly beside its own module).
 */
const EXTERNAL = [
  "better-sqlite3",
  // discord.js re-exports its REST and gateway classes in a way a bundle loses.
  "discord.js",
  "playwright-core",
  "web-tree-sitter",
  // Slack's clients read their own package.json (their User-Agent) and are CommonJS.
  "@slack/socket-mode",
  "@slack/web-api",
];

/**
 * Bundled code runs from dist/cli.js or a chunk beside it, not from the file tsc would have
 * emitted. So each `import.meta.url` / `dirname` / `filename` in src/ is rewritten to name that
 * file, dist/<path>.js, relative to the bundle's own location: paths such as
 * `new URL("../../package.json", import.meta.url)` or the walk up to the package root keep
 * meaning what they mean in the tsc output (and under tsx).
 */
const importMetaAsEmitted = {
  name: "import-meta-as-emitted",
  setup(context) {
    context.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(source + sep)) return undefined;
      const text = readFileSync(args.path, "utf8");
      if (!text.includes("import.meta")) return { contents: text, loader: "ts" };
      const emitted = relative(source, args.path).split(sep).join("/").replace(/\.ts$/, ".js");
      const folder = dirname(emitted);
      const url = `new URL(${JSON.stringify(`./${emitted}`)}, import.meta.url).href`;
      const folderUrl = `new URL(${JSON.stringify(folder === "." ? "./" : `./${folder}/`)}, import.meta.url)`;
      const rewritten = text
        .replaceAll("import.meta.url", `(${url})`)
        .replaceAll("import.meta.filename", `__rudderFileURLToPath(${url})`)
        .replaceAll(
          "import.meta.dirname",
          `__rudderFileURLToPath(${folderUrl}).replace(/[\\\\/]$/, "")`,
        );
      const header = 'import { fileURLToPath as __rudderFileURLToPath } from "node:url";\n';
      return { contents: header + rewritten, loader: "ts" };
    });
  },
};

for (const name of readdirSync(dist)) {
  if (/^cli-chunk-.*\.js(\.map)?$/.test(name)) rmSync(join(dist, name));
}

await build({
  entryPoints: { cli: join(source, "cli.ts") },
  outdir: dist,
  bundle: true,
  splitting: true,
  chunkNames: "cli-chunk-[hash]",
  platform: "node",
  format: "esm",
  target: "node20",
  // Whitespace and syntax only: names stay readable in the stack of an internal error.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  external: EXTERNAL,
  plugins: [importMetaAsEmitted],
  // Bundled CommonJS dependencies call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __rudderCreateRequire } from "node:module";\nconst require = __rudderCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
chmodSync(join(dist, "cli.js"), 0o755);
