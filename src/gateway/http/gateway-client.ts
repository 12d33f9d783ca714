import type { Disposition, PermissionRequestInfo, PermissionVerdict } from "../events.js";
import type { PairingRequest } from "../store/source-store.js";
import type { ChannelRecord, ScheduleRecord } from "../store/store.js";

export interface GatewayClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:4317`. */
  url: string;
  /** The bearer token (the content of `<dataDir>/token`; see `readToken`). */
  token: string;
  fetch?: typeof fetch;
}

/** A failed API call: the HTTP status and the gateway's `{error}` text. */
export class GatewayRequestError extends Error {
  override readonly name = "GatewayRequestError";
  readonly status: number;

  constructor(status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
  }
}

export interface GatewayClient {
  /** A fresh single-use code for the page's link (`<url>/#code=<code>`), valid 10 minutes. */
  createLinkCode(): Promise<{ code: string; expiresAt: string }>;
  sendMessage(channelId: string, text: string): Promise<{ id: string; disposition: Disposition }>;
  /** The channels, most recent first (`GET /api/channels`). */
  listChannels(): Promise<Array<ChannelRecord & { binding: string; inflight: boolean }>>;
  /**
   * Removes a channel (`DELETE /api/channels/:id`): resolves with the line saying what went;
   * throws `GatewayRequestError` 404 (none) or 409 (a turn runs, uncommitted work, held by
   * another worker: `force` goes past the first two).
   */
  removeChannel(channelId: string, force?: boolean): Promise<{ text: string }>;
  listSchedules(): Promise<ScheduleRecord[]>;
  addSchedule(schedule: { cron: string; channel: string; prompt: string }): Promise<ScheduleRecord>;
  /** False when there was no such schedule. */
  removeSchedule(scheduleId: string): Promise<boolean>;
  /** Runs a paused schedule again; throws `GatewayRequestError` 404 when there is none. */
  resumeSchedule(scheduleId: string): Promise<ScheduleRecord>;
  /** Permission requests of a channel's agent waiting for a person. */
  listPermissionRequests(channelId: string): Promise<PermissionRequestInfo[]>;
  /** Answers one; throws `GatewayRequestError` 404 (unknown, expired) or 409 (decided). */
  decidePermission(
    channelId: string,
    requestId: string,
    decision: PermissionVerdict,
    message?: string,
  ): Promise<void>;
  /** Pairing codes waiting and people let in, of every chat source. */
  listPairings(): Promise<PairingRequest[]>;
  /** Lets in whoever was given `code`; throws `GatewayRequestError` 404 when none waits. */
  approvePairing(source: string, code: string): Promise<PairingRequest>;
}

/** The small API client `rudder send` and `rudder schedule` use. Throws `GatewayRequestError`. */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const base = options.url.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new GatewayRequestError(
        0,
        `cannot reach the gateway at ${base}: is "rudder serve" running there? (--url or RUDDER_URL names another)`,
        { cause: error },
      );
    }
    const payload = (await response.json().catch(() => ({}))) as { error?: string };
    if (!response.ok) {
      throw new GatewayRequestError(
        response.status,
        payload.error ?? `${method} ${path} answered ${response.status}`,
      );
    }
    return payload as T;
  }

  return {
    createLinkCode: () => call("POST", "/api/link-codes"),
    sendMessage: (channelId, text) =>
      call("POST", `/api/channels/${encodeURIComponent(channelId)}/messages`, { text, via: "cli" }),
    listChannels: async () =>
      (
        await call<{ channels: Array<ChannelRecord & { binding: string; inflight: boolean }> }>(
          "GET",
          "/api/channels",
        )
      ).channels,
    removeChannel: (channelId, force = false) =>
      call("DELETE", `/api/channels/${encodeURIComponent(channelId)}${force ? "?force=1" : ""}`),
    listSchedules: async () =>
      (await call<{ schedules: ScheduleRecord[] }>("GET", "/api/schedules")).schedules,
    addSchedule: async (schedule) =>
      (await call<{ schedule: ScheduleRecord }>("POST", "/api/schedules", schedule)).schedule,
    listPermissionRequests: async (channelId) =>
      (
        await call<{ requests: PermissionRequestInfo[] }>(
          "GET",
          `/api/channels/${encodeURIComponent(channelId)}/permissions`,
        )
      ).requests,
    decidePermission: async (channelId, requestId, decision, message) => {
      await call(
        "POST",
        `/api/channels/${encodeURIComponent(channelId)}/permissions/${encodeURIComponent(requestId)}`,
        { decision, ...(message === undefined ? {} : { message }) },
      );
    },
    listPairings: async () =>
      (await call<{ pairings: PairingRequest[] }>("GET", "/api/pairings")).pairings,
    approvePairing: async (source, code) =>
      (
        await call<{ pairing: PairingRequest }>(
          "POST",
          `/api/pairings/${encodeURIComponent(source)}/${encodeURIComponent(code)}`,
        )
      ).pairing,
    resumeSchedule: async (scheduleId) =>
      (
        await call<{ schedule: ScheduleRecord }>(
          "POST",
          `/api/schedules/${encodeURIComponent(scheduleId)}/resume`,
        )
      ).schedule,
    removeSchedule: async (scheduleId) => {
      try {
        await call("DELETE", `/api/schedules/${encodeURIComponent(scheduleId)}`);
        return true;
      } catch (error) {
        if (error instanceof GatewayRequestError && error.status === 404) return false;
        throw error;
      }
    },
  };
}
