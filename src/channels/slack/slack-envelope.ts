/**
 * What Slack hands the platform, whichever way it came (Socket Mode or the Events API over
 * HTTP): an envelope of a type, its body, and how to acknowledge it.
 */

/** Tells Slack the envelope was taken (a slash command's answer as its payload). */
export type Ack = (response?: Record<string, unknown>) => Promise<void>;

/** An envelope as Socket Mode's client reports it (`slack_event`). */
export interface SocketEnvelope {
  type: string;
  body: unknown;
  ack: Ack;
  retry_num?: number;
}

export interface SlackEnvelope {
  type: "events_api" | "interactive" | "slash_commands" | string;
  body: unknown;
  /** Tells Slack it was taken (a slash command's answer as its payload). */
  ack: Ack;
  /** Slack sent it before: it may be answered already. */
  retry: boolean;
}
