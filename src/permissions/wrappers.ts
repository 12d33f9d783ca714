/**
 * Programs that run another command given in their words. `valued`: options
 * that take a value; `positional`: words between the options and the command
 * (timeout's duration, ssh's host); `stopAt`: options after which nothing is
 * wrapped (`command -v`); `starts`: the wrapper starts the command in a way of
 * its own (another process, time or host), so the command is never known to be
 * read-only; `line`: the words are joined and run by a shell (watch, ssh).
 */
interface Wrapper {
  valued: Set<string>;
  positional?: number;
  stopAt?: Set<string>;
  starts?: boolean;
  line?: boolean;
}

const plain = (valued: string[] = [], extra: Partial<Wrapper> = {}): Wrapper => ({
  valued: new Set(valued),
  ...extra,
});

export const WRAPPERS: Record<string, Wrapper> = {
  env: plain(["-u", "--unset", "-C", "--chdir"]),
  nohup: plain(),
  nice: plain(["-n", "--adjustment"]),
  ionice: plain(["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"]),
  time: plain(["-f", "--format", "-o", "--output"]),
  command: plain([], { stopAt: new Set(["-v", "-V"]) }),
  builtin: plain(),
  exec: plain(["-a"]),
  timeout: plain(["-s", "--signal", "-k", "--kill-after"], { positional: 1 }),
  stdbuf: plain(["-i", "-o", "-e", "--input", "--output", "--error"]),
  busybox: plain(),
  toybox: plain(),
  setsid: plain([], { starts: true }),
  taskset: plain([], { positional: 1, starts: true }),
  chrt: plain([], { positional: 1, starts: true }),
  flock: plain(["-w", "--timeout", "-E", "--conflict-exit-code"], { positional: 1, starts: true }),
  strace: plain(["-o", "-e", "-p", "-s", "-u", "-a", "-b", "-E", "-I", "-O", "-S", "-X"], {
    starts: true,
  }),
  ltrace: plain(["-o", "-e", "-p", "-s", "-u", "-a", "-n"], { starts: true }),
  watch: plain(["-n", "--interval", "-q", "--equexit"], { starts: true, line: true }),
  chroot: plain(["--userspec", "--groups"], { positional: 1, starts: true }),
  unshare: plain(["-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w", "--wd"], {
    starts: true,
  }),
  nsenter: plain(["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-r", "-w"], {
    starts: true,
  }),
  "systemd-run": plain(
    [
      "-p",
      "--property",
      "-u",
      "--unit",
      "--uid",
      "--gid",
      "-E",
      "--setenv",
      "--description",
      "--slice",
      "-M",
      "--machine",
      "--working-directory",
      "--on-active",
      "--on-calendar",
    ],
    { starts: true },
  ),
  "dbus-run-session": plain(["--config-file", "--dbus-daemon"], { starts: true }),
  "xvfb-run": plain(
    [
      "-n",
      "--server-num",
      "-s",
      "--server-args",
      "-f",
      "--auth-file",
      "-e",
      "--error-file",
      "-p",
      "--xauth-protocol",
    ],
    { starts: true },
  ),
  screen: plain(["-S", "-c", "-e", "-h", "-p", "-T", "-t", "-X"], { starts: true }),
  parallel: plain(
    [
      "-j",
      "-P",
      "--jobs",
      "-S",
      "--sshlogin",
      "--joblog",
      "--results",
      "-a",
      "--arg-file",
      "-d",
      "--delimiter",
      "-I",
      "--tmpdir",
      "--timeout",
    ],
    { starts: true, line: true },
  ),
  ssh: plain(
    [
      "-b",
      "-c",
      "-D",
      "-E",
      "-e",
      "-F",
      "-I",
      "-i",
      "-J",
      "-L",
      "-l",
      "-m",
      "-O",
      "-o",
      "-p",
      "-Q",
      "-R",
      "-S",
      "-W",
      "-w",
      "-B",
    ],
    { positional: 1, starts: true, line: true },
  ),
  xargs: plain(
    [
      "-I",
      "-L",
      "-n",
      "-P",
      "-s",
      "-d",
      "-E",
      "-a",
      "--arg-file",
      "--delimiter",
      "--max-args",
      "--max-procs",
      "--max-lines",
      "--replace",
      "--eof",
      "--max-chars",
    ],
    { starts: true },
  ),
};

/** The wrapped command's words, or undefined when `program` wraps nothing. */
export function peelWrapper(program: string, args: string[]): string[] | undefined {
  const wrapper = WRAPPERS[program];
  if (wrapper === undefined) return undefined;
  let index = 0;
  while (index < args.length) {
    const word = args[index]!;
    if (wrapper.stopAt?.has(word)) return undefined;
    if (word === "--") {
      index += 1;
      break;
    }
    if (!word.startsWith("-") || word === "-") break;
    const name = word.includes("=") ? word.slice(0, word.indexOf("=")) : word;
    index += 1;
    if (wrapper.valued.has(name) && !word.includes("=")) index += 1;
  }
  index += wrapper.positional ?? 0;
  const words = args.slice(index);
  if (program === "parallel") {
    const end = words.findIndex((word) => word.startsWith(":::"));
    return end === -1 ? words : words.slice(0, end);
  }
  return words;
}
