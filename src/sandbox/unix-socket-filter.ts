/**
 * A seccomp filter (classic BPF, as `prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)` takes it) that
 * makes `socket(AF_UNIX, ...)` fail with EACCES, so that no command in the sandbox reaches a
 * host service through a unix socket file, wherever the file is (a docker socket under $HOME).
 * `socketpair` stays allowed (pipes between a program's own processes), as do other families.
 *
 * Why a filter and not mounts over the socket files: seccomp cannot judge a `connect` by the
 * path, but it can refuse the socket itself; finding every socket file in the visible trees
 * would walk the home folder at each start (and miss one made later), and bubblewrap before
 * 0.9 cannot mount over a socket file at all. Abstract sockets are already out of reach in the
 * sandbox's own network namespace. The runner installs the filter on each command (its
 * children), not on itself: its bridge to the domain proxy is a unix socket. Claude Code's
 * sandbox refuses unix sockets the same way on Linux. Naming sockets in
 * `sandbox.network.allowUnixSockets`, or `allowAllUnixSockets`, lifts the filter.
 */

const LOAD_WORD = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_EQUAL = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_AT_LEAST = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const RETURN = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff0000; // SECCOMP_RET_ALLOW
const REFUSE = 0x00050000 | 13; // SECCOMP_RET_ERRNO | EACCES
const AF_UNIX = 1;
/** Offsets in `struct seccomp_data`: the syscall number, the architecture, the first argument's low word. */
const NUMBER = 0;
const ARCH = 4;
const FIRST_ARGUMENT = 16;

interface Architecture {
  /** AUDIT_ARCH_* of the native calls. */
  audit: number;
  /** The `socket` call's number there. */
  socket: number;
  /** The `prctl` call's number there (the runner installs the filter with it). */
  prctl: number;
  /** x86_64 also takes x32 calls (numbers from 0x40000000) and i386 ones (another arch). */
  compat?: { x32From: number; audit: number; calls: number[] };
}

const ARCHITECTURES: Record<string, Architecture> = {
  x64: {
    audit: 0xc000003e,
    socket: 41,
    prctl: 157,
    // i386 `socketcall` (102) and `socket` (359): refused whatever the family.
    compat: { x32From: 0x40000000, audit: 0x40000003, calls: [102, 359] },
  },
  arm64: { audit: 0xc00000b7, socket: 198, prctl: 167 },
};

type Step = { code: number; k: number; yes?: string; no?: string } | { label: string };

/** Lays out `steps`, turning each jump's labels into the forward offsets BPF takes. */
function assemble(steps: Step[]): Buffer {
  const positions = new Map<string, number>();
  let count = 0;
  for (const step of steps) {
    if ("label" in step) positions.set(step.label, count);
    else count += 1;
  }
  const program = Buffer.alloc(count * 8);
  let index = 0;
  for (const step of steps) {
    if ("label" in step) continue;
    const offset = (label: string | undefined): number =>
      label === undefined ? 0 : (positions.get(label) as number) - index - 1;
    program.writeUInt16LE(step.code, index * 8);
    program.writeUInt8(offset(step.yes), index * 8 + 2);
    program.writeUInt8(offset(step.no), index * 8 + 3);
    program.writeUInt32LE(step.k >>> 0, index * 8 + 4);
    index += 1;
  }
  return program;
}

/** The filter's instructions for `arch` (`process.arch`'s names), or undefined where rudder has none. */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const target = ARCHITECTURES[arch];
  if (target === undefined) return undefined;
  const compat = target.compat;
  const steps: Step[] = [
    { code: LOAD_WORD, k: ARCH },
    { code: JUMP_EQUAL, k: target.audit, no: compat === undefined ? "allow" : "compat" },
    { code: LOAD_WORD, k: NUMBER },
    ...(compat === undefined ? [] : [{ code: JUMP_AT_LEAST, k: compat.x32From, yes: "refuse" }]),
    { code: JUMP_EQUAL, k: target.socket, no: "allow" },
    { code: LOAD_WORD, k: FIRST_ARGUMENT },
    { code: JUMP_EQUAL, k: AF_UNIX, yes: "refuse", no: "allow" },
  ];
  if (compat !== undefined) {
    steps.push(
      { label: "compat" },
      { code: JUMP_EQUAL, k: compat.audit, no: "allow" },
      { code: LOAD_WORD, k: NUMBER },
      ...compat.calls.map((call) => ({ code: JUMP_EQUAL, k: call, yes: "refuse" })),
    );
  }
  steps.push({ label: "allow" }, { code: RETURN, k: ALLOW });
  steps.push({ label: "refuse" }, { code: RETURN, k: REFUSE });
  return assemble(steps);
}

/** Whether `policy` shuts unix sockets away: unless the settings name some, or all. */
export function filtersUnixSockets(policy: {
  allowAllUnixSockets: boolean;
  allowUnixSockets: readonly string[];
}): boolean {
  return !policy.allowAllUnixSockets && policy.allowUnixSockets.length === 0;
}

/** The runner's two arguments for the filter: its instructions in hex and `prctl`'s number, or `-` and 0 for none. */
export function unixSocketFilterArgs(
  enabled: boolean,
  arch: string = process.arch,
): [string, string] {
  const filter = enabled ? unixSocketFilter(arch) : undefined;
  const prctl = ARCHITECTURES[arch]?.prctl;
  return filter === undefined || prctl === undefined
    ? ["-", "0"]
    : [filter.toString("hex"), String(prctl)];
}
