export interface Redirect {
  /** The operator as written without its fd, e.g. `>`, `>>`, `<`, `>&`, `<<`, `<<<`. */
  op: string;
  /** The word after it (unquoted), e.g. a file name, `1` for `2>&1`, a heredoc delimiter. */
  target: string;
  /** What a heredoc (`<<`) or here-string (`<<<`) feeds to the command's input. */
  body?: string;
}

/** One command of a command line, after quotes, wrappers and assignments are removed. */
export interface SimpleCommand {
  /** Unquoted words; a program given by path is reduced to its basename (`/bin/rm` -> `rm`). */
  argv: string[];
  redirects: Redirect[];
  /** The program as written, when `argv[0]` was reduced from a path (`./bin/deploy`). */
  programAsWritten?: string;
  /** Leading `NAME=value` words, which can change what runs (`PATH=...`, `LD_PRELOAD=...`). */
  assignments?: string[];
  /**
   * How the command is run when the line does not run it directly: the script of
   * `bash -c`, `eval`, a heredoc fed to a shell, or a command that `xargs`, `find -exec`,
   * `watch`, `script -c` and the like start. Such a command is judged, but it is never
   * known to be read-only.
   */
  via?: string;
  /**
   * Why a word of the command is not understood, when one is not: an expansion that runs
   * code (`$(...)`, `${x@P}`, an array subscript) or whose value the gate cannot know.
   */
  unknown?: string;
  /** Words the shell would match against file names (an unquoted `*`, `?` or `[`), after expansion. */
  globbed?: string[];
}
