/**
 * A small argument parser that accepts both `--flag value` and
 * `--flag=value`, because hosts such as the Claude Agent SDK pass the second
 * form. Failures are data: a one-line error for the user.
 */

export type FlagType = "string" | "boolean" | "list";

export interface FlagSpec {
  type: FlagType;
  /** One-letter alias, without the dash. */
  short?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export interface ParsedArgs {
  flags: Record<string, string | boolean | string[]>;
  positionals: string[];
  /** Flags nobody asked for; only collected when `ignoreUnknown` is set. */
  ignored: string[];
}

export type ParseResult = { ok: true; args: ParsedArgs } | { ok: false; error: string };

export interface ParseOptions {
  /** Skip unknown flags (with their `=value`) instead of failing. */
  ignoreUnknown?: boolean;
  /** Unknown flags known to take a separate value, so the value is skipped too. */
  unknownWithValue?: ReadonlySet<string>;
}

export function parseArgs(
  argv: readonly string[],
  specs: FlagSpecs,
  options: ParseOptions = {},
): ParseResult {
  const flags: ParsedArgs["flags"] = {};
  const positionals: string[] = [];
  const ignored: string[] = [];
  const byShort = new Map(
    Object.entries(specs).flatMap(([name, spec]) =>
      spec.short ? [[spec.short, name] as const] : [],
    ),
  );

  for (let index = 0; index < argv.length; index++) {
    const token = argv[index] as string;
    if (token === "--") {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      positionals.push(token);
      continue;
    }
    const equals = token.indexOf("=");
    const rawName = equals === -1 ? token : token.slice(0, equals);
    const inlineValue = equals === -1 ? undefined : token.slice(equals + 1);
    const name = rawName.startsWith("--") ? rawName.slice(2) : byShort.get(rawName.slice(1));
    const spec = name === undefined ? undefined : specs[name];
    if (name === undefined || spec === undefined) {
      if (!options.ignoreUnknown) return { ok: false, error: `unknown option ${rawName}` };
      ignored.push(rawName);
      const next = argv[index + 1];
      if (
        inlineValue === undefined &&
        options.unknownWithValue?.has(rawName) &&
        next !== undefined
      ) {
        index++;
      }
      continue;
    }
    if (spec.type === "boolean") {
      if (inlineValue !== undefined && !["true", "false"].includes(inlineValue)) {
        return { ok: false, error: `option ${rawName} takes no value (got "${inlineValue}")` };
      }
      flags[name] = inlineValue !== "false";
      continue;
    }
    let value = inlineValue;
    if (value === undefined) {
      const next = argv[index + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-")) {
        return { ok: false, error: `option ${rawName} needs a value` };
      }
      value = next;
      index++;
    }
    if (spec.type === "list") {
      // Kept whole: rule lists like `Bash(git commit *),Read` are split by
      // their own parser, which knows about parentheses.
      const previous = flags[name];
      flags[name] = [...(Array.isArray(previous) ? previous : []), value];
    } else {
      flags[name] = value;
    }
  }
  return { ok: true, args: { flags, positionals, ignored } };
}

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const value = args.flags[name];
  return typeof value === "string" ? value : undefined;
}

export function booleanFlag(args: ParsedArgs, name: string): boolean {
  return args.flags[name] === true;
}

export function listFlag(args: ParsedArgs, name: string): string[] {
  const value = args.flags[name];
  return Array.isArray(value) ? value : [];
}

/**
 * A command's flags, or the exit code the command ends with: a bad flag prints
 * `rudder <command>: <error>` and the usage on stderr (2); `--help` prints the usage on
 * stdout (0). Every command takes `--help` (`-h`), so it need not be in `specs`.
 */
export function commandArgs(
  command: string,
  argv: readonly string[],
  specs: FlagSpecs,
  usage: string,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream },
  options?: ParseOptions,
): ParsedArgs | number {
  const parsed = parseArgs(argv, { help: { type: "boolean", short: "h" }, ...specs }, options);
  if (!parsed.ok) {
    io.stderr.write(`rudder ${command}: ${parsed.error}\n${usage}\n`);
    return 2;
  }
  if (parsed.args.flags.help === true) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  return parsed.args;
}
