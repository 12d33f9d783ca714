import type { ProcessPool } from "../agents/agent-process.js";
import type { ChannelState } from "./channel-state.js";

/** What `AgentSlots` is given by its router. */
export interface AgentSlotsOptions {
  pool: ProcessPool;
  /** Whether the channel's kept process may be stopped to make room (its agent is idle). */
  evictable: (channelId: string) => boolean;
  /** The channel got its slot: its held messages (and commands) go now. */
  admit: (channel: ChannelState) => void;
  /** Told why a channel begins to wait (the memory floor, `--max-agents`). */
  logger?: ((line: string) => void) | undefined;
}

/**
 * The channels waiting for an agent process while the worker is at `--max-agents`, in the
 * order they began to wait. A channel that waits holds its messages in its backlog (they are
 * stored, `received`); when a process is gone its slot goes to the first channel waiting, and
 * while channels wait, idle kept processes are stopped to make room for them. A channel with a
 * kept process never waits: its turn needs no new process.
 */
export class AgentSlots {
  readonly #options: AgentSlotsOptions;
  readonly #waiting = new Set<ChannelState>();
  #waking = false;
  #wakeAgain = false;

  constructor(options: AgentSlotsOptions) {
    this.#options = options;
    options.pool.watchRoom(() => this.wake());
  }

  /** Whether a turn of the channel must wait now: it waits already, or no process is free. */
  mustWait(channel: ChannelState): boolean {
    return this.#waiting.has(channel) || !this.#options.pool.hasRoom(channel.id);
  }

  waiting(channel: ChannelState): boolean {
    return this.#waiting.has(channel);
  }

  /** How many channels wait. */
  get size(): number {
    return this.#waiting.size;
  }

  /** The channel waits (after those already waiting) for a process. */
  wait(channel: ChannelState): void {
    if (!this.#waiting.has(channel)) {
      const why = this.#options.pool.shortage?.(channel.id);
      if (why !== undefined) this.#options.logger?.(`gateway: channel ${channel.id} waits: ${why}`);
    }
    this.#waiting.add(channel);
    this.wake();
  }

  /**
   * Gives the free slots to the channels waiting longest, then asks the pool to stop as many
   * idle kept processes as channels still wait (below the memory floor, the pool stops one even
   * when none waits). Called when a process is gone, when the memory floor's reading says
   * memory is short or no longer is, and when a channel's agent goes idle (its kept process
   * may be stopped now).
   */
  wake(): void {
    if (this.#waking) {
      this.#wakeAgain = true;
      return;
    }
    this.#waking = true;
    try {
      do {
        this.#wakeAgain = false;
        for (const channel of this.#waiting) {
          if (!this.#options.pool.hasRoom(channel.id)) break;
          this.#waiting.delete(channel);
          this.#options.admit(channel);
        }
      } while (this.#wakeAgain);
      this.#options.pool.makeRoom(this.#options.evictable, this.#waiting.size);
    } finally {
      this.#waking = false;
    }
  }

  /** The channel no longer waits (it has nothing left to start). */
  leave(channel: ChannelState): void {
    this.#waiting.delete(channel);
  }

  /** Forgets the waiting channels (the router is closed; their messages stay in the store). */
  clear(): void {
    this.#waiting.clear();
  }
}
