/**
 * A seccomp filter (classic BPF, as bubblewrap's `--add-seccomp-fd` loads it) that keeps
 * a sandboxed command from making a setuid or setgid file: every system call that sets a
 * file's mode (chmod and kin, a created file's mode in open and kin, mknod) fails with EPERM
 * when the mode holds S_ISUID or S_ISGID. The file would be the host's, owned by the
 * sandbox's user (root, when rudder runs as root), and the bit works outside the sandbox.
 * `openat2` (whose mode sits in a struct the filter cannot read) and `io_uring_setup` (whose
 * operations bypass seccomp) fail with ENOSYS, so programs fall back to the calls the filter
 * sees; a foreign system-call ABI (32-bit calls on x86-64) fails as a whole.
 * File capabilities need CAP_SETFCAP, which the sandbox does not have (`--cap-drop ALL`).
 */

/** One system call that takes a mode: its number, which argument the mode is, and whether it only counts with O_CREAT/O_TMPFILE. */
interface ModeCall {
  number: number;
  modeArgument: number;
  /** The argument holding open flags: the mode is only read when a file is created. */
  flagsArgument?: number;
}

interface ArchitectureTable {
  /** `AUDIT_ARCH_*` of the ABI the filter admits. */
  audit: number;
  /** Above this, a number belongs to another ABI sharing the architecture (x32). */
  foreignFrom?: number;
  modeCalls: ModeCall[];
  /** Calls refused outright with ENOSYS. */
  refused: number[];
}

const TABLES: Partial<Record<NodeJS.Architecture, ArchitectureTable>> = {
  x64: {
    audit: 0xc000003e,
    foreignFrom: 0x40000000,
    modeCalls: [
      { number: 90, modeArgument: 1 }, // chmod
      { number: 91, modeArgument: 1 }, // fchmod
      { number: 268, modeArgument: 2 }, // fchmodat
      { number: 452, modeArgument: 2 }, // fchmodat2
      { number: 2, modeArgument: 2, flagsArgument: 1 }, // open
      { number: 257, modeArgument: 3, flagsArgument: 2 }, // openat
      { number: 85, modeArgument: 1 }, // creat
      { number: 133, modeArgument: 1 }, // mknod
      { number: 259, modeArgument: 2 }, // mknodat
    ],
    refused: [437, 425], // openat2, io_uring_setup
  },
  arm64: {
    audit: 0xc00000b7,
    modeCalls: [
      { number: 52, modeArgument: 1 }, // fchmod
      { number: 53, modeArgument: 2 }, // fchmodat
      { number: 452, modeArgument: 2 }, // fchmodat2
      { number: 56, modeArgument: 3, flagsArgument: 2 }, // openat
      { number: 33, modeArgument: 2 }, // mknodat
    ],
    refused: [437, 425],
  },
};

const LOAD_WORD = 0x20;
const JUMP_EQUAL = 0x15;
const JUMP_GREATER_EQUAL = 0x35;
const JUMP_ANY_BIT = 0x45;
const RETURN = 0x06;
const ALLOW = 0x7fff0000;
const ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** `seccomp_data`: the call's number, its ABI, then six 64-bit arguments (the low half first here). */
const NUMBER_OFFSET = 0;
const ARCH_OFFSET = 4;
const argumentOffset = (index: number): number => 16 + 8 * index;
const SETUID_SETGID = 0o6000;
/** O_CREAT and O_TMPFILE (which includes O_DIRECTORY): the flags with which open reads its mode. */
const CREATING = 0o100 | 0o20200000;

type Instruction = [code: number, jumpTrue: number, jumpFalse: number, value: number];

function program(table: ArchitectureTable): Instruction[] {
  const refuse = (errno: number): Instruction => [RETURN, 0, 0, ERRNO | errno];
  const code: Instruction[] = [
    [LOAD_WORD, 0, 0, ARCH_OFFSET],
    [JUMP_EQUAL, 1, 0, table.audit],
    refuse(ENOSYS),
    [LOAD_WORD, 0, 0, NUMBER_OFFSET],
  ];
  if (table.foreignFrom !== undefined) {
    code.push([JUMP_GREATER_EQUAL, 0, 1, table.foreignFrom], refuse(ENOSYS));
  }
  for (const number of table.refused) code.push([JUMP_EQUAL, 0, 1, number], refuse(ENOSYS));
  for (const call of table.modeCalls) {
    const flags = call.flagsArgument;
    // Each check leaves the call's number in the accumulator for the next one, or ends.
    const body: Instruction[] = [];
    if (flags !== undefined) {
      body.push([LOAD_WORD, 0, 0, argumentOffset(flags)], [JUMP_ANY_BIT, 0, 4, CREATING]);
    }
    body.push(
      [LOAD_WORD, 0, 0, argumentOffset(call.modeArgument)],
      [JUMP_ANY_BIT, 0, 1, SETUID_SETGID],
      refuse(EPERM),
      [LOAD_WORD, 0, 0, NUMBER_OFFSET],
    );
    // A created file's flags check skips the mode check and the refusal, to the reload.
    if (flags !== undefined) body[1] = [JUMP_ANY_BIT, 0, 3, CREATING];
    code.push([JUMP_EQUAL, 0, body.length, call.number], ...body);
  }
  code.push([RETURN, 0, 0, ALLOW]);
  return code;
}

/**
 * The filter for this machine's architecture as bytes of `struct sock_filter`, or undefined
 * where rudder has no table for it (then no filter is loaded).
 */
export function privilegeFilter(
  architecture: NodeJS.Architecture = process.arch,
): Buffer | undefined {
  const table = TABLES[architecture];
  if (table === undefined) return undefined;
  const code = program(table);
  const bytes = Buffer.alloc(code.length * 8);
  code.forEach(([operation, jumpTrue, jumpFalse, value], index) => {
    bytes.writeUInt16LE(operation, index * 8);
    bytes.writeUInt8(jumpTrue, index * 8 + 2);
    bytes.writeUInt8(jumpFalse, index * 8 + 3);
    bytes.writeUInt32LE(value >>> 0, index * 8 + 4);
  });
  return bytes;
}
