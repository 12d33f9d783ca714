// Bundles the `rudder` executable (src/cli.ts) into dist/cli.js plus lazily loaded chunks, after
// tsc has emitted dist/. Loading one bundled file instead of a few hundred ES modules
// is most of what `rudder run` costs before its first model request.
// Only dist/cli.js, dist/cli-chunk-*.js and dist/cli-run*.cjs are written; the library entries
// (dist/index.js, dist/agent, dist/gateway) stay as tsc emitted them.
// dist/cli-run.cjs is `rudder run` again, as one CommonJS module written as a function
// expression: dist/cli.js compiles it with V8's code cache (src/cli/load-run-bundle.ts), which
// Node 20 keeps for no ES module. Its first line names a hash of its text, which keys that cache.
// Run: node scripts/bundle-cli.mjs (part of `npm run build`).
import { createHash } from "node:crypto";
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
 * file, dist/<path>.js, relative to the bundle's own location (`bundleUrl`, an expression):
 * paths such as `new URL("../../package.json", import.meta.url)` or the walk up to the package
 * root keep meaning what they mean in the tsc output (and under tsx).
 * With `importCall`, each `import("package")` left to Node (the externals, the built-ins) calls
 * that function instead: a vm.Script's own import() needs an experimental loader on Node 20.
 */
const asEmitted = (bundleUrl, importCall) => ({
  name: "as-emitted",
  setup(context) {
    context.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(source + sep)) return undefined;
      let text = readFileSync(args.path, "utf8");
      if (importCall !== undefined) {
        text = text.replace(/(?<!typeof\s*)\bimport\((?=["'][^./])/g, `${importCall}(`);
      }
      if (!text.includes("import.meta")) return { contents: text, loader: "ts" };
      const emitted = relative(source, args.path).split(sep).join("/").replace(/\.ts$/, ".js");
      const folder = dirname(emitted);
      const url = `new URL(${JSON.stringify(`./${emitted}`)}, ${bundleUrl}).href`;
      const folderUrl = `new URL(${JSON.stringify(folder === "." ? "./" : `./${folder}/`)}, ${bundleUrl})`;
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
});

for (const name of readdirSync(dist)) {
  if (/^cli-(chunk-.*\.js|run(-mcp)?\.cjs)(\.map)?$/.test(name)) rmSync(join(dist, name));
}

/** Options both bundles share. */
const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  // Whitespace and syntax only: names stay readable in the stack of an internal error.
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: true,
  external: EXTERNAL,
  logLevel: "warning",
};

await build({
  entryPoints: { cli: join(source, "cli.ts") },
  ...common,
  outdir: dist,
  splitting: true,
  chunkNames: "cli-chunk-[hash]",
  format: "esm",
  plugins: [asEmitted("import.meta.url")],
  // Bundled CommonJS dependencies call require() for Node's built-ins.
  banner: {
    js: 'import { createRequire as __rudderCreateRequire } from "node:module";\nconst require = __rudderCreateRequire(import.meta.url);',
  },
});
chmodSync(join(dist, "cli.js"), 0o755);

/**
 * The MCP SDK's modules rudder imports, by the name each has in dist/cli-run-mcp.cjs. With zod
 * and ajv they are half of the run path's code (~430 KB), needed only by a run with MCP servers:
 * the run bundle requires them from that file of their own, when a server is first connected.
 */
const MCP_SDK = { "client/index.js": "client", "shared/stdio.js": "stdio", "types.js": "types" };
const MCP_BUNDLE = "./cli-run-mcp.cjs";
const mcpSdkApart = {
  name: "mcp-sdk-apart",
  setup(context) {
    context.onResolve({ filter: /^\.\/cli-run-mcp\.cjs$/ }, (args) => ({
      path: args.path,
      external: true,
    }));
    context.onResolve({ filter: /^@modelcontextprotocol\/sdk\// }, (args) => ({
      path: args.path.slice("@modelcontextprotocol/sdk/".length),
      namespace: "mcp-sdk",
    }));
    context.onLoad({ filter: /.*/, namespace: "mcp-sdk" }, (args) => {
      const name = MCP_SDK[args.path];
      if (name === undefined) {
        return { errors: [{ text: `@modelcontextprotocol/sdk/${args.path}: add it to MCP_SDK` }] };
      }
      return { contents: `module.exports = require(${JSON.stringify(MCP_BUNDLE)}).${name};` };
    });
  },
};
await build({
  ...common,
  stdin: {
    contents: Object.entries(MCP_SDK)
      .map(([path, name]) => `export * as ${name} from "@modelcontextprotocol/sdk/${path}";`)
      .join("\n"),
    resolveDir: root,
    sourcefile: "mcp-sdk.js",
  },
  outfile: join(dist, MCP_BUNDLE),
  format: "cjs",
});

// The placeholder keeps its length when the hash replaces it, so the source map stays true.
const HASH_PLACEHOLDER = "0".repeat(16);
const runBundle = await build({
  ...common,
  entryPoints: [join(source, "cli", "run.ts")],
  outfile: join(dist, "cli-run.cjs"),
  format: "cjs",
  write: false,
  plugins: [asEmitted("__rudderBundleUrl", "__rudderImport"), mcpSdkApart],
  // A function expression for src/cli/load-run-bundle.ts to compile as a vm.Script: the
  // module's own wrapper, written here rather than joined to the text at each start (a copy).
  // Strict as the ES modules it is made of (esbuild's own "use strict" comes after the banner).
  banner: {
    js: `// rudder-run-bundle ${HASH_PLACEHOLDER}\n(function (exports, require, module, __filename, __dirname, __rudderImport) {"use strict";\nconst __rudderBundleUrl = require("node:url").pathToFileURL(__filename).href;`,
  },
  footer: { js: "})" },
});
for (const file of runBundle.outputFiles) {
  let text = file.text;
  if (file.path.endsWith(".cjs")) {
    const left = /\bimport\(/.exec(text);
    if (left !== null) {
      throw new Error(
        `dist/cli-run.cjs: an import() it cannot run: ${text.slice(left.index - 80, left.index + 80)}`,
      );
    }
    const hash = createHash("sha256").update(text).digest("hex").slice(0, HASH_PLACEHOLDER.length);
    text = text.replace(HASH_PLACEHOLDER, hash);
  }
  writeFileSync(file.path, text);
}
