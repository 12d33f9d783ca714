/**
 * The bash grammar the gate reads commands with: tree-sitter-bash, run by web-tree-sitter
 * (WebAssembly, no native build). Loading it costs tens of milliseconds, so it is loaded only
 * when a command with shell syntax is first judged (`loadBashParser`, awaited once by the
 * caller) or about to be (the command streaming in shows syntax: agent/model-call.ts), and
 * kept (a line of plain words needs no grammar: plain-command.ts); after that,
 * parsing is synchronous and takes microseconds, and the gate stays a pure function.
 * It is compiled by V8's baseline compiler alone (`--liftoff-only`, set as it loads).
 */
import { createRequire } from "node:module";
import type { Node, Parser } from "web-tree-sitter";

export type SyntaxNode = Node;

/** Parses one command line and hands its tree to `read`; the tree is freed when `read` returns. */
export interface BashParser {
  parse<T>(line: string, read: (root: SyntaxNode) => T): T;
}

/** Thrown when a command is judged before `loadBashParser` has finished: a programmer error. */
export class BashParserNotLoadedError extends Error {
  constructor() {
    super("the bash parser is not loaded: await loadBashParser() before judging a bash command");
    this.name = "BashParserNotLoadedError";
  }
}

let loading: Promise<BashParser> | undefined;
let loaded: BashParser | undefined;

/** Loads the grammar once; later calls return the same parser. */
export function loadBashParser(): Promise<BashParser> {
  loading ??= load().then(
    (parser) => {
      loaded = parser;
      return parser;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** Whether the grammar has been asked for yet, and whether it is ready. */
export function bashParserStatus(): "not loaded" | "loading" | "loaded" {
  if (loaded !== undefined) return "loaded";
  return loading === undefined ? "not loaded" : "loading";
}

/** The loaded parser; throws `BashParserNotLoadedError` before `loadBashParser` resolved. */
export function bashParser(): BashParser {
  if (loaded === undefined) throw new BashParserNotLoadedError();
  return loaded;
}

async function load(): Promise<BashParser> {
  // V8's baseline WebAssembly compiler only: optimizing the 1.3 MB grammar in the background
  // held the main thread in a lock for seconds on a busy machine (a one-shot's first bash call
  // took 4 s instead of 0.3 s under load, bench/startup.ts), while a parse stays microseconds.
  const { setFlagsFromString } = await import("node:v8");
  setFlagsFromString("--liftoff-only");
  const { Parser: ParserClass, Language } = await import("web-tree-sitter");
  await ParserClass.init();
  const require = createRequire(import.meta.url);
  const language = await Language.load(require.resolve("tree-sitter-bash/tree-sitter-bash.wasm"));
  const parser: Parser = new ParserClass();
  parser.setLanguage(language);
  return {
    parse(line, read) {
      const tree = parser.parse(line);
      if (tree === null) throw new Error("the bash parser returned no tree");
      try {
        return read(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
