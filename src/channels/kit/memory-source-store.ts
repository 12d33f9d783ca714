import { randomUUID } from "node:crypto";
import type {
  ChannelGrant,
  NewOutbound,
  OutboundEntry,
  PairingRequest,
  SourceStore,
} from "../../gateway/store/source-store.js";

const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/**
 * A `SourceStore` in memory, for a chat source whose gateway lends it none (an embedder's
 * own context, a test): the same contract as the stores' tables, lost at a restart.
 */
export function memorySourceStore(): SourceStore {
  const entries = new Map<string, OutboundEntry>();
  const pairings: PairingRequest[] = [];
  const grants: ChannelGrant[] = [];
  const deliveries = new Set<string>();
  const now = () => new Date().toISOString();
  const copy = (entry: OutboundEntry | undefined) => (entry ? { ...entry } : null);
  const change = (id: string, fields: Partial<OutboundEntry>) => {
    const entry = entries.get(id);
    if (entry) Object.assign(entry, fields, { updatedAt: now() });
    return entry;
  };
  const live = (request: PairingRequest) => Date.parse(request.expiresAt) > Date.now();
  const add = (fields: NewOutbound): OutboundEntry => {
    const stamp = now();
    const entry: OutboundEntry = {
      ...fields,
      id: randomUUID(),
      target: fields.target ?? null,
      origin: fields.origin ?? null,
      state: "pending",
      platformId: null,
      mayRepeat: false,
      attempts: 0,
      nextAt: stamp,
      createdAt: stamp,
      updatedAt: stamp,
    };
    entries.set(entry.id, entry);
    return { ...entry };
  };
  const known = (origin: string | undefined) =>
    origin !== undefined && [...entries.values()].some((entry) => entry.origin === origin);
  return {
    outbound: {
      recordAll: async (list) => list.filter((fields) => !known(fields.origin)).map(add),
      record: async (fields) => {
        const values = [...entries.values()];
        if (fields.action === "edit") {
          const waiting = values.find(
            (entry) =>
              entry.action === "edit" &&
              entry.target === fields.target &&
              entry.state === "pending",
          );
          if (waiting) return copy(change(waiting.id, { body: fields.body }));
        }
        return known(fields.origin) ? null : add(fields);
      },
      get: async (id) => copy(entries.get(id)),
      claim: async (id) => {
        const entry = entries.get(id);
        if (entry?.state !== "pending") return null;
        return copy(change(id, { state: "sending", attempts: entry.attempts + 1 }));
      },
      sent: async (id, platformId) => void change(id, { state: "sent", platformId }),
      retry: async (id, nextAt) => {
        if (entries.get(id)?.state !== "sent") {
          change(id, { state: "pending", nextAt: nextAt.toISOString() });
        }
      },
      giveUp: async (id) => void change(id, { state: "given_up" }),
      unsent: async (source) =>
        [...entries.values()]
          .filter((entry) => entry.source === source && /^(pending|sending)$/.test(entry.state))
          .map((entry) => ({ ...entry })),
      unrecorded: async () => [],
    },
    deliveries: {
      claim: async (source, key) => {
        const known = deliveries.size;
        deliveries.add(JSON.stringify([source, key]));
        return deliveries.size > known;
      },
      finish: async () => {},
      release: async (source, key) => void deliveries.delete(JSON.stringify([source, key])),
      channels: async () => [],
    },
    pairings: {
      request: async (fields, ttlMs, maxPending) => {
        const waiting = pairings.filter(
          (request) => request.source === fields.source && !request.approvedAt && live(request),
        );
        const mine = waiting.find((request) => request.userId === fields.userId);
        if (mine) return { ...mine };
        if (waiting.length >= maxPending) return null;
        let code = "";
        for (let index = 0; index < 8; index++) {
          code += CODE_ALPHABET[Math.floor(Math.random() * CODE_ALPHABET.length)];
        }
        const request: PairingRequest = {
          ...fields,
          code,
          createdAt: now(),
          expiresAt: new Date(Date.now() + ttlMs).toISOString(),
          approvedAt: null,
          approvedBy: null,
        };
        pairings.push(request);
        return { ...request };
      },
      list: async (source) =>
        pairings
          .filter((request) => source === undefined || request.source === source)
          .filter((request) => request.approvedAt !== null || live(request))
          .map((request) => ({ ...request })),
      approve: async (source, code, by) => {
        const request = pairings.find(
          (candidate) =>
            candidate.source === source &&
            candidate.code === code.trim().toUpperCase() &&
            candidate.approvedAt === null &&
            live(candidate),
        );
        if (!request) return null;
        request.approvedAt = now();
        request.approvedBy = by;
        return { ...request };
      },
      approved: async (source) => [
        ...new Set(
          pairings
            .filter((request) => request.source === source && request.approvedAt !== null)
            .map((request) => request.userId),
        ),
      ],
    },
    grants: {
      add: async (grant) => {
        const known = grants.some(
          (other) =>
            other.channelId === grant.channelId &&
            other.toolName === grant.toolName &&
            other.command === grant.command,
        );
        if (!known) grants.push({ ...grant, createdAt: now() });
      },
      list: async (channelId) => grants.filter((grant) => grant.channelId === channelId),
    },
  };
}
