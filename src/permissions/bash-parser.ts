/**
 * The bash grammar the gate reads commands with: tree-sitter-bash, run by web-tree-sitter
 * (WebAssembly, no native build). Loading it costs tens of milliseconds, so it is loaded only
 * when a bash command is first judged (`loadBashParser`, awaited once by the caller) and kept;
 * after that, parsing is synchronous and takes microseconds, and the gate stays a pure function.
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

/** The loaded parser; throws `BashParserNotLoadedError` before `loadBashParser` resolved. */
export function bashParser(): BashParser {
  if (loaded === undefined) throw new BashParserNotLoadedError();
  return loaded;
}

async function load(): Promise<BashParser> {
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
